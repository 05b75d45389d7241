"""Built-in target ``spark-iceberg``: real Spark with the Iceberg runtime, as the engine under test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.adapters.spark_iceberg import session
from conformance.adapters.spark_iceberg.release import built_version, iceberg_jars
from conformance.contract.delta import Catalog, DeltaClient, NotSupported
from conformance.contract.iceberg import IcebergEngine
from conformance.contract.target import IcebergBudget, Kind, Side, TargetBase, TargetEnv


class SparkIcebergTarget(TargetBase):
    """Options (``targets: {spark-iceberg: {options: {...}}}``): ``version`` (the Iceberg release for
    Spark 4.1 under test, default the set-up's 1.11.0; another is fetched from Maven on first use),
    ``spark`` (the PySpark 4.1 release, default the one installed beside lakecert; another is
    installed from PyPI on first use),
    ``driver_host`` (the address executors reach lakecert's driver at: loopback by default; an
    address of this machine for a cluster elsewhere, docs/examples/spark-cluster.md),
    ``master`` (``spark.master``, default
    ``local[2]``; point it at a cluster for heavy runs), ``hold_timeout_s`` (how long a commit may
    wait at the catalog, and a writer may take to reach it, before the check ends in ERROR),
    ``parallel`` (held schedules run at once, each on a table of its own; 1 runs them one by one) and
    ``catalog``, the REST catalog Spark commits through: ``reference`` (lakecert's, default),
    ``nessie`` (Project Nessie started for the run, its own options under ``nessie``, as the
    ``nessie`` target's), or the ``http://`` URI of any running REST catalog; any but the reference
    is reached through lakecert's holding proxy, which holds the commits as the reference does."""

    name = "spark-iceberg"
    # One table per check and seconds per commit: the core matrix, no exhaustive schedules by default.
    iceberg_budget: IcebergBudget | None = {"matrix": "core", "exhaustive": False}
    kind: Kind = "third-party"
    sides: frozenset[Side] = frozenset({"engine"})

    second_writer = "spark"
    # The model's preset of Spark's validations (conformance/model/iceberg/presets.py): the checks
    # the model predicts to fail run first, one run per class of equivalent schedules.
    model_preset: str | None = "spark"

    def __init__(
        self,
        master: str = "local[2]",
        hold_timeout_s: float = 120.0,
        catalog: str = "reference",
        nessie: dict[str, Any] | None = None,
        parallel: int = 2,
        version: str = session.ICEBERG_VERSION,
        spark: str | None = None,
        driver_host: str = session.LOOPBACK,
    ) -> None:
        if catalog not in ("reference", "nessie") and not catalog.startswith("http://"):
            # A configuration error (exit 2), before anything starts.
            raise ValueError(f"option catalog is reference, nessie or a REST catalog's http:// URI, not {catalog!r}")
        self.master = master
        self.hold_timeout_s = hold_timeout_s
        self.catalog = catalog
        self.nessie = dict(nessie or {})
        # Held schedules run at once, each on its own table of the one session (a writer spends most
        # of a schedule waiting: for its commit's release, for Spark to plan a query).
        self.parallel_schedules = parallel
        # The release's jars (fetched now if need be: a registry that lacks it stops the run with
        # exit 2 before anything starts); the run's one SparkSession starts with them.
        self.jars = iceberg_jars(str(version), session.jars_dir())
        session.use_jars(iceberg=self.jars)
        session.use_pyspark(str(spark) if spark else None)
        session.use_driver_host(str(driver_host))

    def observed_versions(self) -> dict[str, str]:
        """Asked of the running JVM (Spark's version, Iceberg's ``IcebergBuild``); before the session
        started, read from the installed pyspark and the runtime jar's build properties."""
        seen = session.observed()
        if not seen:
            import pyspark

            seen = {"spark": f"{pyspark.__version__} (pyspark; no session started)"}
            seen["iceberg"] = built_version(self.jars[0]) or "unknown"
        seen.pop("delta-spark", None)  # the session's Delta, if any, is not what this target tests
        if self.catalog == "nessie":
            from conformance.adapters.nessie.server import VERSION, observed_version, runner_jar

            jars = self.nessie.get("jars")
            version = str(self.nessie.get("version", VERSION))
            seen["nessie"] = observed_version(runner_jar(version, Path(jars) if jars else None, fetch=False))
        return seen

    def version(self) -> str:
        seen = self.observed_versions()
        through = {"reference": "", "nessie": f", through Nessie {seen.get('nessie')}"}.get(
            self.catalog, f", through {self.catalog}"
        )
        second = f", pyiceberg {seen['pyiceberg']}" if "pyiceberg" in seen else ""  # spark-pyiceberg's
        return f"Spark {seen.get('spark')}, Iceberg {seen.get('iceberg')}{through}{second}"

    def preflight(self) -> None:
        """Starts the SparkSession in the background, so that its JVM start overlaps lakecert's own."""
        from conformance.adapters.spark_iceberg.session import start_early

        start_early(self.master)

    def make_engine(self, env: TargetEnv) -> IcebergEngine:
        from conformance.adapters.spark_iceberg.engine import SparkIcebergEngine  # starts the JVM: only when used

        return SparkIcebergEngine(
            env, self.master, self.hold_timeout_s, self.second_writer, catalog=self.catalog, nessie=self.nessie
        )

    def make_catalog(self, env: TargetEnv) -> Catalog:
        raise NotSupported("spark-iceberg has only the engine side")

    def make_client(self, catalog: Catalog, env: TargetEnv) -> DeltaClient:
        raise NotSupported("spark-iceberg has only the engine side")

    def close(self) -> None:
        from conformance.adapters.spark_iceberg.session import stop

        stop()


class SparkPyIcebergTarget(SparkIcebergTarget):
    """``spark-pyiceberg``: as ``spark-iceberg``, with pyiceberg 0.12 as the second writer (its INSERTs
    and DELETEs; UPDATEs and compactions stay with Spark)."""

    name = "spark-pyiceberg"
    second_writer = "pyiceberg"
    model_preset = None  # the model has no preset of pyiceberg's validations: every schedule runs

    def observed_versions(self) -> dict[str, str]:
        import pyiceberg

        return {**super().observed_versions(), "pyiceberg": pyiceberg.__version__}
