"""Built-in target ``delta-spark``: delta-spark on Spark, the Delta engine of profile ``delta-row-conflicts``."""

from __future__ import annotations

import os

from conformance.adapters.delta_spark.release import delta_jars
from conformance.adapters.spark_iceberg import session
from conformance.contract.delta_engine import DeltaEngine
from conformance.contract.target import Kind, Side, TargetBase, TargetEnv

VERSION_ENV = "LAKECERT_DELTA_SPARK_VERSION"


class DeltaSparkTarget(TargetBase):
    """Options (``targets: {delta-spark: {options: {...}}}``): ``version`` (the delta-spark release for
    Spark 4.1 under test, default the set-up's 4.4.0; another is fetched from Maven on first use and
    lakecert's held LogStore compiled against it; also from ``LAKECERT_DELTA_SPARK_VERSION``),
    ``spark`` (the PySpark 4.1 release, default the installed one; another from PyPI on first use),
    ``driver_host`` (the address executors reach lakecert's driver at: loopback by default; an
    address of this machine for a cluster elsewhere, docs/examples/spark-cluster.md),
    ``master`` (``spark.master``, default ``local[2]``) and
    ``hold_timeout_s`` (hang guard per held step)."""

    name = "delta-spark"
    kind: Kind = "third-party"
    sides: frozenset[Side] = frozenset({"engine"})
    profiles: frozenset[str] | None = frozenset({"delta-row-conflicts"})
    delta_exhaustive = False  # seconds per schedule: the directed checks only, by default
    # The model's preset of delta-spark's conflict checks (conformance/model/delta/presets.py): the
    # checks the model predicts to fail run first, one engine run per class of equivalent schedules.
    model_preset: str | None = "delta-spark"

    def __init__(
        self,
        version: str | None = None,
        master: str = "local[2]",
        hold_timeout_s: float = 120.0,
        exhaustive: bool = False,
        spark: str | None = None,
        driver_host: str = session.LOOPBACK,
    ) -> None:
        session.use_pyspark(str(spark) if spark else None)  # before the LogStore is built against it
        wanted = str(version or os.environ.get(VERSION_ENV) or session.DELTA_VERSION)
        # Fetched now if need be (a registry that lacks the release stops the run with exit 2); the
        # run's one SparkSession starts with these jars.
        self.jars = delta_jars(wanted, session.jars_dir())
        session.use_jars(delta=self.jars)
        session.use_driver_host(str(driver_host))
        self.master = master
        self.hold_timeout_s = hold_timeout_s
        self.delta_exhaustive = exhaustive

    def observed_versions(self) -> dict[str, str]:
        """Asked of the running JVM (delta-spark's package version, Spark's); before the session
        started, read from the jar's manifest and the installed pyspark."""
        seen = session.observed()
        if not seen:
            import pyspark

            from conformance.artifacts.maven import manifest_version

            seen = {"spark": f"{pyspark.__version__} (pyspark; no session started)"}
            seen["delta-spark"] = manifest_version(self.jars[0]) or "unknown"
        seen.pop("iceberg", None)  # the session's Iceberg runtime is not what this target tests
        return seen

    def version(self) -> str:
        seen = self.observed_versions()
        return f"delta-spark {seen.get('delta-spark')} on Spark {seen.get('spark')}"

    def make_delta_engine(self, env: TargetEnv) -> DeltaEngine:
        from conformance.adapters.delta_spark.engine import DeltaSparkEngine  # starts the JVM: only when used

        root = env.workdir / "delta-spark"
        root.mkdir(parents=True, exist_ok=True)
        return DeltaSparkEngine(root, self.master, self.hold_timeout_s)

    def make_catalog(self, env: TargetEnv) -> object:
        raise NotImplementedError("delta-spark has only the engine side")

    def make_client(self, catalog: object, env: TargetEnv) -> object:
        raise NotImplementedError("delta-spark has only the engine side")

    def close(self) -> None:
        from conformance.adapters.spark_iceberg.session import stop

        stop()
