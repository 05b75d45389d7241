"""Find a target by name: built-in, faulty variant, entry point, or ``module:Class``."""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import inspect
from importlib.metadata import entry_points
from typing import Any

from conformance.config import Config, ConfigError
from conformance.contract.delta import CatalogLimits
from conformance.contract.target import Target, declared_limits
from reference_impl.faults.registry import all_faults, find_fault
from reference_impl.target import ReferenceTarget

ENTRY_POINT_GROUP = "lakecert.targets"
# Built-in adapters for other systems, configured like third-party ones (`targets: {uc: {options}}`).
BUILTIN_ADAPTERS = {
    "uc": "conformance.adapters.uc:UCTarget",
    "spark-iceberg": "conformance.adapters.spark_iceberg.target:SparkIcebergTarget",
    "spark-pyiceberg": "conformance.adapters.spark_iceberg.target:SparkPyIcebergTarget",
    "delta-rs": "conformance.adapters.path_clients:DeltaRsTarget",
    "polars": "conformance.adapters.path_clients:PolarsTarget",
    "pyarrow-dataset": "conformance.adapters.path_clients:PyArrowDatasetTarget",
    "iceberg-rest": "conformance.adapters.iceberg_rest:IcebergRestTarget",
    "delta-kernel": "conformance.adapters.delta_kernel:DeltaKernelTarget",
    "delta-rs-engine": "conformance.adapters.delta_rs_engine:DeltaRsEngineTarget",
    "delta-spark": "conformance.adapters.delta_spark:DeltaSparkTarget",
    "nessie": "conformance.adapters.nessie:NessieTarget",
}
DESCRIPTIONS = {
    "uc": "any catalog speaking Unity Catalog's Delta commits API (options: url, token)",
    "spark-iceberg": "Spark with the Iceberg runtime through a REST catalog (options: master, catalog)",
    "spark-pyiceberg": "spark-iceberg with pyiceberg as the second writer (its INSERTs and DELETEs)",
    "delta-rs": "delta-rs (deltalake) given only a table's path; profile delta-cm-path-access",
    "delta-rs-engine": "delta-rs writers on moto S3, commits held at the store; profile delta-row-conflicts",
    "delta-spark": "delta-spark 4.4.0 on Spark 4.1, commits held by a LogStore; profile delta-row-conflicts",
    "polars": "polars read_delta / write_delta given only a table's path; profile delta-cm-path-access",
    "pyarrow-dataset": "naive reader: every Parquet file under the path, no log; profile delta-cm-path-access",
    "iceberg-rest": "any Iceberg REST catalog; profile iceberg-catalog-commit (options: uri, token, warehouse_dir)",
    "delta-kernel": (
        "Delta Kernel 4.4.0 (Java) through the reference catalog served over UC's API; all client profiles,"
        " and delta-row-conflicts on path-based tables (commits held by a wrapped committer)"
    ),
    "nessie": "Project Nessie 0.99 started by lakecert (Java 21+, moto S3); profile iceberg-catalog-commit",
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
    for name, spec in sorted((config.settings.targets if config else {}).items()):
        rows.append({"name": name, "kind": "third-party", "adapter": spec.adapter})
    return rows


def _load_class(spec: str) -> Any:
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise ConfigError(f"adapter {spec!r} must look like `package.module:Class`")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"cannot import adapter {spec!r}: {e}") from e


def _takes(cls: Any, option: str) -> bool:
    """Whether the adapter class names ``option`` among its keywords."""
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == option and p.kind is not inspect.Parameter.VAR_KEYWORD for p in params)


def _check_options(name: str, cls: Any, options: dict[str, Any]) -> None:
    """Every option is a keyword the adapter class takes, else a ``ConfigError`` with its key path
    (an option the class would ignore must never run silently with the default)."""
    # The nemesis's restart hook over HTTP (docs/certify.md "The nemesis"): a shell command, never
    # empty (an empty one would "restart" nothing and let the restart checks judge a catalog that never
    # went down).
    command = options.get("restart_command")
    if command is not None and not (isinstance(command, str) and command.strip()):
        raise ConfigError(
            f"targets.{name}.options.restart_command: a shell command (a non-empty string), not {command!r}"
        )
    if "limits" in options and not _takes(cls, "limits"):
        limits_option(name, options["limits"])  # lakecert's own option (below), whatever the adapter takes
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):  # no signature to read: the call itself will say
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    takes = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if "limits" in options:
        takes.append("limits")
    for key in sorted(set(options) - set(takes)):
        raise ConfigError(
            f"targets.{name}.options.{key}: not an option of {cls.__module__}.{cls.__name__}"
            f" (it takes: {', '.join(takes) or 'none'})"
        )


LIMIT_FIELDS = tuple(f.name for f in dataclasses.fields(CatalogLimits))


def limits_option(name: str, value: object) -> CatalogLimits:
    """The target option ``limits`` (``{name_length: 200, unpublished: 10, ...}``): the catalog's
    limits as its user declares them, for an adapter that declares none or to correct one
    (docs/certify.md "Limits"); ``ConfigError`` with the key path for anything else."""
    where = f"targets.{name}.options.limits"
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: a mapping of {', '.join(LIMIT_FIELDS)} to whole numbers")
    for key, limit in value.items():
        if key not in LIMIT_FIELDS:
            raise ConfigError(f"{where}.{key}: not a limit (the limits are {', '.join(LIMIT_FIELDS)})")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
            raise ConfigError(f"{where}.{key}: {limit!r} is not a whole number of at least 1 (or null: undeclared)")
    return CatalogLimits(**value)


def _declare_limits(name: str, target: Target, given: CatalogLimits) -> None:
    """Make ``catalog_limits()`` answer the adapter's own declaration overridden, limit by limit, by
    the ``limits`` option (the user knows the deployment: a server's configured caps)."""
    own = declared_limits(target)
    merged = dataclasses.replace(own, **{f: getattr(given, f) for f in LIMIT_FIELDS if getattr(given, f) is not None})
    try:
        setattr(target, "catalog_limits", lambda: merged)  # noqa: B010 - Target declares no such member
    except AttributeError:
        raise ConfigError(f"targets.{name}.options.limits: {type(target).__name__} cannot take it") from None


def build_target(name: str, config: Config) -> Target:
    """Build the named target; ``ConfigError`` for anything unknown or malformed."""
    if name == "reference":
        return ReferenceTarget()
    if name.startswith("faulty:"):
        fault = find_fault(name.removeprefix("faulty:"))
        if fault is None:
            raise ConfigError(f"unknown faulty variant {name!r}; see `lakecert targets`")
        return ReferenceTarget(fault)
    configured = config.target_spec(name)
    if configured is not None or name in BUILTIN_ADAPTERS:
        adapter = (configured.adapter if configured else None) or BUILTIN_ADAPTERS.get(name)
        if adapter is None:
            raise ConfigError(f"targets.{name} needs an `adapter: module:Class` entry")
        cls = _load_class(adapter)
        options = config.target_options(name)
    elif name in _third_party_names():
        cls = _load_class(_third_party_names()[name])
        options = {}
    elif ":" in name:
        cls, options = _load_class(name), {}
    else:
        known = ["reference", *BUILTIN_ADAPTERS, *_third_party_names(), *config.settings.targets]
        close = difflib.get_close_matches(name, known, n=1)
        raise ConfigError(
            f"unknown target {name!r}"
            + (f" (did you mean {close[0]!r}?)" if close else "")
            + "; see `lakecert targets`"
        )
    _check_options(name, cls, options)
    # ``limits`` is lakecert's option, not the adapter's (unless the adapter takes one of that name).
    limits = options.pop("limits") if "limits" in options and not _takes(cls, "limits") else None
    try:
        target = cls(**options)
    except TypeError as e:
        # An option the adapter class does not take, or a missing one: the configuration is wrong.
        raise ConfigError(f"targets.{name}.options do not fit {cls.__module__}.{cls.__name__}: {e}") from None
    except (ValueError, OSError) as e:
        raise ConfigError(f"target {name!r} could not be built: {type(e).__name__}: {e}") from None
    if not isinstance(target, Target):
        raise ConfigError(f"{name!r} does not implement the Target protocol (see docs/certify.md)")
    if limits is not None:
        _declare_limits(name, target, limits_option(name, limits))
    sides = {"catalog", "client", "engine", "iceberg-catalog"}
    if not target.sides or not target.sides <= sides:
        raise ConfigError(f"{name!r}: `sides` must be a non-empty subset of {sorted(sides)}")
    return target
