"""Built-in target ``delta-spark``: delta-spark on Spark, the Delta engine of profile ``delta-row-conflicts``."""

from __future__ import annotations

import os

from conformance.adapters.spark_iceberg.session import DELTA_VERSION, SPARK_VERSION, delta_jars
from conformance.contract.delta_engine import DeltaEngine
from conformance.contract.target import Kind, Side, TargetBase, TargetEnv

VERSION_ENV = "LAKECERT_DELTA_SPARK_VERSION"


class DeltaSparkTarget(TargetBase):
    """Options (``targets: {delta-spark: {options: {...}}}``): ``version`` (the delta-spark version
    the run must use, else the run stops with a configuration error; also from
    ``LAKECERT_DELTA_SPARK_VERSION``), ``master`` (``spark.master``, default ``local[2]``) and
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
    ) -> None:
        wanted = version or os.environ.get(VERSION_ENV)
        if wanted and wanted != DELTA_VERSION:
            raise ValueError(f"delta-spark {wanted} asked for, {DELTA_VERSION} is the one set up")  # exit 2
        if not delta_jars():
            raise ValueError(f"delta-spark {DELTA_VERSION} jars missing; run `make setup` (or set LAKECERT_JARS)")
        self.master = master
        self.hold_timeout_s = hold_timeout_s
        self.delta_exhaustive = exhaustive

    def version(self) -> str:
        return f"delta-spark {DELTA_VERSION} on Spark {SPARK_VERSION}"

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
