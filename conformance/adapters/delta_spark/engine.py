"""delta-spark as the Delta engine of profile ``delta-row-conflicts``, on path-based tables on local disk.

Writers are threads of the run's one SparkSession (PySpark pins a JVM thread to each Python thread).
Each writer names itself in the Spark local property ``lakecert.writer``; the session's LogStore for
``file:`` paths (``lakecert.delta.HeldLogStore``, java/) parks an armed writer's first write of
``_delta_log/<version>.json`` until the schedule releases it. Released, the write is delta-spark's
own put-if-absent: a taken version makes delta-spark run its conflict checker and retry or abort,
as in production. Delta's in-JVM commit lock (on by default for local paths, whose put-if-absent is
a check then a rename) would serialise the writers around the seam, so it is switched off
(``spark.databricks.delta.commitLock.enabled``); HeldLogStore locks just the check and rename
instead, after the park, so a commit file is still never replaced.
"""

from __future__ import annotations

import re
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.adapters.spark_iceberg.session import has_delta, spark_session
from conformance.adapters.spark_sql import row_statement, sql_str
from conformance.contract.delta_engine import DeltaSetup, NotSupported
from conformance.contract.iceberg import COLUMNS, CommitResult, Operation, OpKind, TableRead

WRITER_PROPERTY = "lakecert.writer"  # HeldLogStore.WRITER_PROPERTY
COMMIT_FILE = re.compile(r"^(\d{20})\.json$")
SCHEMA_DDL = ", ".join(f"{c} string" for c in COLUMNS)
# Session settings of delta-spark that matter here (DeltaSQLConf): no in-JVM commit lock (see above),
# and a small table-state job (its default of 50 partitions costs seconds per commit on 2 cores).
DELTA_CONF = {
    "spark.databricks.delta.commitLock.enabled": "false",
    "spark.databricks.delta.snapshotPartitions": "2",
}
CONFLICT_BASE = "org.apache.spark.sql.delta.DeltaConcurrentModificationException"


class DeltaSparkUnavailable(RuntimeError):
    """The run's SparkSession has no Delta (the set-up did not fetch delta-spark)."""


def statement(path: Path, op: Operation) -> str:
    """The Spark SQL of one operation on the table at ``path``; predicates are ``id = <value>``, or
    ``<column> = <value>`` on a non-key column (``Operation.where``).

    COMPACT is ``OPTIMIZE`` of the whole table: Delta's OPTIMIZE filters only on partition
    columns, and these tables have none (as for delta-rs, a compaction's id is not used)."""
    name = f"delta.`{path}`"
    if (row := row_statement(name, op)) is not None:
        return row
    if op.kind is OpKind.MERGE:
        source = ", ".join(f"{sql_str(v or '')} AS {c}" for c, v in zip(COLUMNS, op.values, strict=True))
        return (
            f"MERGE INTO {name} t USING (SELECT {source}) s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET color = s.color, label = s.label WHEN NOT MATCHED THEN INSERT *"
        )
    if op.kind is OpKind.COMPACT:
        return f"OPTIMIZE {name}"
    return f"ALTER TABLE {name} SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 31 days')"


def table_properties(setup: DeltaSetup) -> dict[str, str]:
    props = {"delta.isolationLevel": setup.isolation.value}
    if setup.deletion_vectors:
        props["delta.enableDeletionVectors"] = "true"
    if setup.row_tracking:
        props["delta.enableRowTracking"] = "true"
    return props


def java_class(e: BaseException) -> Any:
    """The JVM exception's class when Spark raised one, else None."""
    java = getattr(e, "java_exception", None)
    return java.getClass() if java is not None else None


def is_conflict(e: BaseException) -> bool:
    """delta-spark's conflict checker refused the commit: a subclass of DeltaConcurrentModificationException."""
    cls = java_class(e)
    while cls is not None:
        if cls.getName() == CONFLICT_BASE:
            return True
        cls = cls.getSuperclass()
    return False


def abort_reason(e: BaseException) -> str:
    java = getattr(e, "java_exception", None)
    if java is None:
        return f"{type(e).__name__}: {e}"[:300]
    return f"{java.getClass().getSimpleName()}: {str(java.getMessage()).splitlines()[0]}"[:300]


class DeltaSparkError(Exception):
    """A delta-spark operation failed for a reason other than a conflict."""


def parse_attempts(text: str) -> list[tuple[int, str]]:
    """HeldLogStore.attempts: "3:exists,4:written" -> [(3, "exists"), (4, "written")]."""
    return [(int(v), outcome) for v, outcome in (a.split(":") for a in text.split(",") if a)]


@dataclass
class DeltaSparkHeld:
    """A delta-spark operation running in its writer thread, parked at its commit-file write (or ended)."""

    engine: DeltaSparkEngine
    writer: str
    future: Future[Any]
    start: int
    _result: CommitResult | None = None

    @property
    def start_version(self) -> int:
        return self.start

    def release(self) -> CommitResult:
        if self._result is None:
            self.engine.store.release(self.writer)
            self._result = self._judge()
        return self._result

    def _judge(self) -> CommitResult:
        """What the store did decides the version: the commit file this writer wrote, if any."""
        error: BaseException | None = None
        try:
            self.future.result(timeout=self.engine.hold_timeout_s)
        except TimeoutError:
            raise
        except Exception as e:
            error = e
        written = [v for v, outcome in parse_attempts(self.engine.store.attempts(self.writer)) if outcome == "written"]
        if error is not None and not is_conflict(error):
            raise DeltaSparkError(abort_reason(error)) from error
        if written:  # it wrote a version (even if it then reported a failure): committed there
            return CommitResult(True, written[-1], "" if error is None else f"{abort_reason(error)} after writing")
        if error is not None:
            return CommitResult(False, None, abort_reason(error))
        return CommitResult(False, None, "nothing to commit: no version written")


class DeltaSparkEngine:
    """The run's SparkSession with Delta; tables under ``root``; a thread per writer."""

    def __init__(self, root: Path, master: str = "local[2]", hold_timeout_s: float = 120.0) -> None:
        self.root = root
        self.hold_timeout_s = hold_timeout_s
        self.spark = spark_session(master)
        if not has_delta(self.spark):
            raise DeltaSparkUnavailable("the SparkSession has no Delta: run `make setup` (delta-spark jars)")
        for key, value in DELTA_CONF.items():
            self.spark.conf.set(key, value)
        self.store: Any = self.spark._jvm.lakecert.delta.HeldLogStore
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="delta-spark-writer")
        self._futures: list[Future[Any]] = []

    def path(self, table: str) -> Path:
        return self.root / table

    def current_version(self, table: str) -> int:
        found = [
            int(m.group(1)) for f in (self.path(table) / "_delta_log").iterdir() if (m := COMMIT_FILE.match(f.name))
        ]
        return max(found)

    def create_table(self, name: str, setup: DeltaSetup) -> TableRead:
        from pyspark.errors import IllegalArgumentException

        if setup.catalog_managed:  # the DELTA_SPARK preset's catalog_managed=False
            raise NotSupported(
                "delta-spark runs on path-based tables here: catalog-managed tables commit through a catalog"
                " connector (Unity Catalog's), which is not available"
            )
        path = self.path(name)
        shutil.rmtree(path, ignore_errors=True)
        props = ", ".join(f"'{k}' = '{v}'" for k, v in table_properties(setup).items())
        try:
            self.spark.sql(f"CREATE TABLE delta.`{path}` ({SCHEMA_DDL}) USING delta TBLPROPERTIES ({props})")
        except IllegalArgumentException as e:  # e.g. "delta.isolationLevel must be Serializable"
            shutil.rmtree(path, ignore_errors=True)
            raise NotSupported(f"delta-spark refuses a table with {table_properties(setup)}: {abort_reason(e)}") from e
        for rows in setup.data_files:  # one append, one data file, per group
            self.spark.createDataFrame(list(rows), SCHEMA_DDL).coalesce(1).write.format("delta").mode("append").save(
                str(path)
            )
        return self.read(name)

    def begin(self, table: str, writer: int, op: Operation) -> DeltaSparkHeld:
        name = f"writer{writer}"
        start = self.current_version(table)
        self.store.arm(name)
        sql = statement(self.path(table), op)
        future = self._pool.submit(self._run, name, sql)
        self._futures.append(future)
        held = DeltaSparkHeld(self, name, future, start)
        # Parked at the commit-file write, or ended without one (nothing to commit, or an error).
        for _ in range(int(self.hold_timeout_s * 5)):
            if self.store.awaitParked(name, 200) or future.done():
                return held
        raise TimeoutError(f"{name}: delta-spark did not reach its commit within {self.hold_timeout_s}s")

    def _run(self, writer: str, sql: str) -> object:
        sc = self.spark.sparkContext
        sc.setLocalProperty(WRITER_PROPERTY, writer)  # this thread's JVM thread, read by HeldLogStore
        try:
            return self.spark.sql(sql).collect()
        finally:
            sc.setLocalProperty(WRITER_PROPERTY, None)

    def read(self, table: str, version: int | None = None) -> TableRead:
        if version is None:
            version = self.current_version(table)
        df = self.spark.read.format("delta").option("versionAsOf", version).load(str(self.path(table)))
        rows = tuple(sorted(tuple(r) for r in df.select(*COLUMNS).collect()))
        return TableRead(version, rows)

    def close(self) -> None:
        self.store.releaseAll()  # no writer stays parked
        self._pool.shutdown(wait=False, cancel_futures=True)
