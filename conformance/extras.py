"""Which optional packages (pyproject extras) a built-in target needs, checked before a run.

A core install has no Spark, pyiceberg, delta-rs or polars. Without this check a run of such a
target would not stop at the start: every check would ERROR on an import, or worse, a path client
that cannot be imported could look like one that refuses a path (a PASS it did not earn).
"""

from __future__ import annotations

import importlib.util

from conformance.config import Config, ConfigError

# target -> (modules it imports, the extras that provide them)
NEEDS: dict[str, tuple[tuple[str, ...], str]] = {
    "spark-iceberg": (("pyspark", "pyiceberg", "fastapi", "uvicorn"), "spark,iceberg"),
    "spark-pyiceberg": (("pyspark", "pyiceberg", "fastapi", "uvicorn"), "spark,iceberg"),
    "delta-rs": (("deltalake",), "clients"),
    "polars": (("polars",), "clients"),
}


def missing_modules(modules: tuple[str, ...]) -> list[str]:
    return [m for m in modules if importlib.util.find_spec(m) is None]


def require_extras(config: Config) -> None:
    """``ConfigError`` naming the extras to install when the run's built-in target lacks them; a
    target with its own ``adapter`` in the configuration is the configuration's business."""
    name = config.target
    spec = config.target_spec(name)
    if name not in NEEDS or (spec is not None and spec.adapter):
        return
    modules, extras = NEEDS[name]
    missing = missing_modules(modules)
    if missing:
        raise ConfigError(
            f"target {name} needs {', '.join(missing)}, which this install lacks: pip install 'lakecert[{extras}]'"
        )
