"""One SparkSession per run, with the Iceberg runtime from Maven Central (and delta-spark, when the
set-up fetched it: the ``delta-spark`` target shares this session).

The default releases are fetched by `make setup` (into ``.cache/jars``; ``LAKECERT_JARS`` points
elsewhere); a target asking for another release (option ``version``) hands its jars to ``use_jars``
before the session starts (``release.py`` of each adapter fetches them). ``spark.master`` comes from
the configuration, so heavy runs can go to a cluster. ``observed`` asks the running JVM what it runs.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path
from typing import Any

SPARK_VERSION = "4.1.4"
SPARK_LINE = "4.1"  # the Spark line the runtime jars (iceberg-spark-runtime-4.1, delta-spark_4.1) are built for
ICEBERG_VERSION = "1.11.0"
ICEBERG_RUNTIME = f"iceberg-spark-runtime-4.1_2.13-{ICEBERG_VERSION}.jar"
ICEBERG_AWS = f"iceberg-aws-bundle-{ICEBERG_VERSION}.jar"  # S3FileIO and the AWS SDK it runs on
# delta-spark for Spark 4.1, and lakecert's LogStore that holds commit files (conformance/adapters/delta_spark/java).
DELTA_VERSION = "4.4.0"
DELTA_JARS = (
    f"delta-spark_4.1_2.13-{DELTA_VERSION}.jar",
    f"delta-storage-{DELTA_VERSION}.jar",
    "lakecert-delta-logstore.jar",
)
HELD_LOG_STORE = "lakecert.delta.HeldLogStore"
DEFAULT_JARS = Path(__file__).resolve().parents[3] / ".cache" / "jars"  # `make setup` puts them in the checkout


def jars_dir() -> Path:
    """``LAKECERT_JARS`` (the run exports its ``paths.jars`` there), else the checkout's ``.cache/jars``."""
    return Path(os.environ.get("LAKECERT_JARS") or DEFAULT_JARS)


_lock = threading.Lock()
_session: Any = None
# The jars the session starts with, when a target chose a release (None: the set-up's defaults).
_chosen: dict[str, list[Path]] = {}
# The address the driver binds and gives its executors (a target's option ``driver_host``).
LOOPBACK = "127.0.0.1"
_driver_host = LOOPBACK


class SparkUnavailable(RuntimeError):
    """PySpark or the Iceberg runtime jar is not installed where the set-up puts them."""


def use_pyspark(version: str | None) -> None:
    """The PySpark (and so Spark) release the run's session starts with (a target's option ``spark``):
    the one installed beside lakecert, or another 4.1 release installed from PyPI into the version
    cache and put first on this process's path (the session's Python workers follow it: Spark finds
    its home from the ``pyspark`` package). Refused, as a set-up error, for another line than the
    runtime jars' (Spark 4.1) and once this process has imported another PySpark."""
    import importlib.metadata

    from conformance.artifacts.cache import ReleaseUnavailable
    from conformance.artifacts.pypi import installed

    if version is None or version == importlib.metadata.version("pyspark"):
        return
    if not version.startswith(SPARK_LINE + "."):
        raise ReleaseUnavailable(
            f"pyspark {version}: the Iceberg and Delta runtimes here are built for Spark {SPARK_LINE}"
        )
    if "pyspark" in sys.modules:
        raise ReleaseUnavailable(f"pyspark {version}: this process has already loaded another PySpark")
    sys.path.insert(0, str(installed("pyspark", version)))


def use_driver_host(host: str) -> None:
    """Where executors reach the driver (lakecert's process): loopback by default, so that nothing
    listens beyond this machine unless asked. A cluster on other machines needs an address of this
    machine they can reach (docs/examples/spark-cluster.md); refused once the session started elsewhere."""
    global _driver_host
    with _lock:
        if _session is not None and host != _driver_host:
            raise SparkUnavailable(f"the run's SparkSession already listens on {_driver_host}, not {host}")
        _driver_host = host


def use_jars(iceberg: list[Path] | None = None, delta: list[Path] | None = None) -> None:
    """The releases the run's session starts with; refused once it has started with others (one
    JVM per run: a second release of the same classes cannot be loaded beside the first)."""
    with _lock:
        wanted = {k: v for k, v in (("iceberg", iceberg), ("delta", delta)) if v is not None}
        if _session is not None and any(_chosen.get(k, _default(k)) != v for k, v in wanted.items()):
            raise SparkUnavailable("the run's SparkSession already runs other releases than the ones asked for")
        _chosen.update(wanted)


def _default(kind: str) -> list[Path]:
    return [jars_dir() / ICEBERG_RUNTIME, jars_dir() / ICEBERG_AWS] if kind == "iceberg" else delta_jars()


def iceberg_jars() -> list[Path]:
    if "iceberg" in _chosen:
        return _chosen["iceberg"]
    jars = [jars_dir() / ICEBERG_RUNTIME, jars_dir() / ICEBERG_AWS]
    if missing := [str(j) for j in jars if not j.exists()]:
        raise SparkUnavailable(f"{', '.join(missing)} missing; run `make setup` (or set LAKECERT_JARS)")
    return jars


def delta_jars() -> list[Path]:
    """The Delta jars, or none when the set-up did not fetch them all (then the session has no Delta)."""
    if "delta" in _chosen:
        return _chosen["delta"]
    jars = [jars_dir() / j for j in DELTA_JARS]
    return jars if all(j.exists() for j in jars) else []


def has_delta(session: Any) -> bool:
    return "io.delta.sql.DeltaSparkSessionExtension" in session.sparkContext.getConf().get("spark.sql.extensions", "")


def spark_session(master: str) -> Any:
    """The run's SparkSession, created on first use (catalogs are set per session by the engine)."""
    global _session
    with _lock:
        if _session is None:
            # Python workers run this interpreter (the venv), not whatever `python3` is on PATH.
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            try:
                from pyspark.sql import SparkSession
            except ImportError as e:
                raise SparkUnavailable("pyspark is not installed; run `make setup`") from e
            delta = delta_jars()
            extensions = ["org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"]
            builder = SparkSession.builder
            if delta:  # Delta's SQL and path tables; file:// commit files go through the held LogStore
                extensions.append("io.delta.sql.DeltaSparkSessionExtension")
                builder = builder.config(
                    "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"
                ).config("spark.delta.logStore.file.impl", HELD_LOG_STORE)
            builder = (
                builder.master(master)
                .appName("lakecert")
                # On the driver's class path, not `spark.jars`: in local mode the executor would
                # otherwise fetch a copy of the 110 MB of jars through the driver's file server.
                .config("spark.driver.extraClassPath", os.pathsep.join(str(j) for j in [*iceberg_jars(), *delta]))
                .config("spark.sql.extensions", ",".join(extensions))
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.shuffle.partitions", "2")
                # Loopback unless the target's ``driver_host`` says otherwise, and never a lookup of
                # the machine's name (which may resolve elsewhere).
                .config("spark.driver.bindAddress", _driver_host)
                .config("spark.driver.host", _driver_host)
            )
            _session = builder.getOrCreate()
            _session.sparkContext.setLogLevel("ERROR")
        return _session


def observed() -> dict[str, str]:
    """What the running session really runs, asked of the JVM itself: Spark's version, Iceberg's
    ``IcebergBuild.version()`` and delta-spark's jar version. Empty before the session started."""
    with _lock:
        session = _session
    if session is None:
        return {}
    jvm = session.sparkContext._jvm
    found = {"spark": str(session.version), "iceberg": str(jvm.org.apache.iceberg.IcebergBuild.version())}
    if has_delta(session):
        package = jvm.java.lang.Class.forName("io.delta.tables.DeltaTable").getPackage()
        found["delta-spark"] = str(package.getImplementationVersion() or "unknown")
    return found


def start_early(master: str) -> threading.Thread:
    """Start the session in the background (the JVM takes seconds) while lakecert collects and
    plans its checks; the first ``spark_session`` call waits for it. A failure here is left for
    that call to raise again, where the check that needs the session reports it."""

    def start() -> None:
        with contextlib.suppress(Exception):  # reported by the foreground call, not here
            spark_session(master)

    thread = threading.Thread(target=start, name="spark-session-start", daemon=True)
    thread.start()
    return thread


def stop() -> None:
    global _session
    with _lock:
        if _session is not None:
            _session.stop()
            _session = None
