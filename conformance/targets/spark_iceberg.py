"""Built-in target ``spark-iceberg``: real Spark with the Iceberg runtime, as the engine under test."""

from __future__ import annotations

from conformance.engines.spark_session import ICEBERG_VERSION, SPARK_VERSION
from conformance.targets.target import Kind, Side, TargetEnv


class SparkIcebergTarget:
    """Options (``targets: {spark-iceberg: {options: {...}}}``): ``master`` (``spark.master``, default
    ``local[2]``; point it at a cluster for heavy runs) and ``hold_timeout_s`` (how long a commit may
    wait at the catalog, and a writer may take to reach it, before the check ends in ERROR)."""

    name = "spark-iceberg"
    # One table per check and seconds per commit: the core matrix, no exhaustive schedules by default.
    iceberg_budget = {"matrix": "core", "exhaustive": False}
    kind: Kind = "third-party"
    sides: frozenset[Side] = frozenset({"engine"})

    second_writer = "spark"

    def __init__(self, master: str = "local[2]", hold_timeout_s: float = 120.0) -> None:
        self.master = master
        self.hold_timeout_s = hold_timeout_s

    def version(self) -> str:
        return f"Spark {SPARK_VERSION}, Iceberg {ICEBERG_VERSION}"

    def make_engine(self, env: TargetEnv) -> object:
        from conformance.engines.spark_iceberg import SparkIcebergEngine  # starts the JVM: only when used

        return SparkIcebergEngine(env, self.master, self.hold_timeout_s, self.second_writer)

    def make_catalog(self, env: TargetEnv) -> object:
        raise NotImplementedError("spark-iceberg has only the engine side")

    def make_client(self, catalog: object, env: TargetEnv) -> object:
        raise NotImplementedError("spark-iceberg has only the engine side")

    def close(self) -> None:
        from conformance.engines.spark_session import stop

        stop()


class SparkPyIcebergTarget(SparkIcebergTarget):
    """``spark-pyiceberg``: as ``spark-iceberg``, with pyiceberg 0.12 as the second writer (its INSERTs
    and DELETEs; UPDATEs and compactions stay with Spark)."""

    name = "spark-pyiceberg"
    second_writer = "pyiceberg"

    def version(self) -> str:
        import pyiceberg

        return f"{super().version()}, pyiceberg {pyiceberg.__version__}"
