"""Find a target by name: built-in, faulty variant, entry point, or ``module:Class``."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from conformance.targets.config import Config, ConfigError
from conformance.targets.reference import ReferenceTarget
from conformance.targets.target import Target
from reference_impl.faults.registry import all_faults

ENTRY_POINT_GROUP = "lakecert.targets"
# Built-in adapters for other systems, configured like third-party ones (`targets: {uc: {options}}`).
BUILTIN_ADAPTERS = {
    "uc": "conformance.targets.uc:UCTarget",
    "spark-iceberg": "conformance.targets.spark_iceberg:SparkIcebergTarget",
    "spark-pyiceberg": "conformance.targets.spark_iceberg:SparkPyIcebergTarget",
    "delta-rs": "conformance.targets.path_clients:DeltaRsTarget",
    "delta-rs-engine": "conformance.adapters.delta_rs_engine:DeltaRsEngineTarget",
    "polars": "conformance.targets.path_clients:PolarsTarget",
    "pyarrow-dataset": "conformance.targets.path_clients:PyArrowDatasetTarget",
}
DESCRIPTIONS = {
    "uc": "any catalog speaking Unity Catalog's Delta commits API (options: url, token)",
    "spark-iceberg": "Spark with the Iceberg runtime, through the reference REST catalog (options: master)",
    "spark-pyiceberg": "spark-iceberg with pyiceberg as the second writer (its INSERTs and DELETEs)",
    "delta-rs": "delta-rs (deltalake) given only a table's path; profile delta-cm-path-access",
    "delta-rs-engine": "delta-rs writers on moto S3, commits held at the store; profile delta-row-conflicts",
    "polars": "polars read_delta / write_delta given only a table's path; profile delta-cm-path-access",
    "pyarrow-dataset": "naive reader: every Parquet file under the path, no log; profile delta-cm-path-access",
}


def _third_party_names() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def list_targets(config: Config | None = None) -> list[dict[str, Any]]:
    """Every target lakecert can run, with its kind and description."""
    rows: list[dict[str, Any]] = [
        {
            "name": "reference",
            "kind": "reference",
            "description": "correct reference catalog, client and Iceberg engine",
        }
    ]
    for f in all_faults().values():
        rows.append(
            {
                "name": f"faulty:{f.name}",
                "kind": "faulty",
                "side": f.side,
                "description": f.description,
                "breaks": list(f.breaks),
            }
        )
    for name, value in sorted(BUILTIN_ADAPTERS.items()):
        rows.append(
            {
                "name": name,
                "kind": "third-party",
                "adapter": value,
                "description": DESCRIPTIONS[name],
            }
        )
    for name, value in sorted(_third_party_names().items()):
        rows.append({"name": name, "kind": "third-party", "adapter": value})
    for name, spec in sorted((config.data["targets"] if config else {}).items()):
        rows.append({"name": name, "kind": "third-party", "adapter": spec.get("adapter")})
    return rows


def _load_class(spec: str) -> Any:
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise ConfigError(f"adapter {spec!r} must look like `package.module:Class`")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"cannot import adapter {spec!r}: {e}") from e


def build_target(name: str, config: Config) -> Target:
    """Build the named target; ``ConfigError`` for anything unknown or malformed."""
    if name == "reference":
        return ReferenceTarget()
    if name.startswith("faulty:"):
        fault = all_faults().get(name.removeprefix("faulty:"))
        if fault is None:
            raise ConfigError(f"unknown faulty variant {name!r}; see `lakecert targets`")
        return ReferenceTarget(fault)
    configured = config.data["targets"].get(name)
    if configured is not None or name in BUILTIN_ADAPTERS:
        configured = configured or {}
        adapter = configured.get("adapter", BUILTIN_ADAPTERS.get(name)) if isinstance(configured, dict) else None
        if adapter is None:
            raise ConfigError(f"targets.{name} needs an `adapter: module:Class` entry")
        cls = _load_class(str(adapter))
        options = configured.get("options") or {}
    elif name in _third_party_names():
        cls = _load_class(_third_party_names()[name])
        options = {}
    elif ":" in name:
        cls, options = _load_class(name), {}
    else:
        raise ConfigError(f"unknown target {name!r}; see `lakecert targets`")
    target = cls(**options) if options else cls()
    if not isinstance(target, Target):
        raise ConfigError(f"{name!r} does not implement the Target protocol (see docs/certify.md)")
    if not target.sides or not target.sides <= {"catalog", "client", "engine"}:
        raise ConfigError(f"{name!r}: `sides` must be a non-empty subset of {{'catalog', 'client', 'engine'}}")
    return target
