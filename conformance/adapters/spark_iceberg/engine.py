"""Spark with the Iceberg runtime as an ``IcebergEngine``, committing through an Iceberg REST catalog.

Every writer is its own Spark session (one SparkContext per run). A writer's SQL runs in a thread;
its commit request is parked by a schedule controller until the check releases it, so the
interleaving of real Spark writers is chosen by the check. The catalog is lakecert's reference REST
catalog (its controller holds the commits inside it) or any other REST catalog, Nessie included,
behind lakecert's holding proxy (the same controller, in front of it: ``catalog_access.py``). When the catalog
refuses a released commit (409), Spark refreshes, revalidates and retries on its own: the result
is whatever Spark's own conflict validation decides.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from conformance.adapters.spark_iceberg.catalog_access import CatalogAccess, open_catalog
from conformance.adapters.spark_iceberg.session import spark_session
from conformance.adapters.spark_sql import predicate, row_statement, sql_str
from conformance.contract.iceberg import (
    COLUMNS,
    CommitResult,
    NotSupported,
    Operation,
    Row,
    TableRead,
    TableSetup,
)
from conformance.contract.target import TargetEnv
from reference_impl.iceberg_rest.controller import Hold, ScheduleTimeout

NAMESPACE = "lakecert"
CATALOG = "lc"
SCHEMA_DDL = ", ".join(f"{c} string" for c in COLUMNS)


def statement(table: str, op: Operation) -> str:
    """The Spark SQL of one operation; predicates are ``id = <value>`` or ``<column> = <value>``."""
    name = f"{CATALOG}.{NAMESPACE}.{table}"
    if (row := row_statement(name, op)) is not None:
        return row
    where = predicate(op)
    filt = f", where => {sql_str(where)}" if where else ""
    return (
        f"CALL {CATALOG}.system.rewrite_data_files(table => '{NAMESPACE}.{table}', "
        f"options => map('rewrite-all', 'true', 'min-input-files', '1'){filt})"
    )


def abort_reason(e: Exception) -> str:
    """The JVM's exception when Spark raised one (e.g. Iceberg's ValidationException), not py4j's wrapper."""
    java = getattr(e, "java_exception", None)
    text = f"{java.getClass().getSimpleName()}: {java.getMessage()}" if java is not None else f"{type(e).__name__}: {e}"
    return text[:300]


@dataclass
class SparkHeld:
    """A Spark operation parked at the catalog (or finished early, if it never got there)."""

    engine: SparkIcebergEngine
    table: str
    hold: Hold
    future: Future[Any]
    start_version: int

    def release(self) -> CommitResult:
        held = self.hold.commits
        try:
            if held:
                held[0].release()
            self.future.result(timeout=self.hold.timeout_s)
        except ScheduleTimeout:
            raise
        except Exception as e:  # Spark's validation refused the commit: the operation aborted
            return CommitResult(False, None, abort_reason(e))
        finally:
            self.hold.cancel()
        self.engine.catalog.observe(self.table)
        if not held:  # it ended without asking the catalog for anything: no version is its own
            return CommitResult(False, None, "finished without a commit (nothing to change)")
        return CommitResult(True, self.engine.current_version(self.table))


class SparkIcebergEngine:
    """Spark (``spark.master`` from the config) writing Iceberg tables through the reference REST catalog."""

    def __init__(
        self,
        env: TargetEnv,
        master: str = "local[2]",
        hold_timeout_s: float = 120.0,
        second_writer: str = "spark",
        catalog: str = "reference",
        nessie: dict[str, Any] | None = None,
    ) -> None:
        self.catalog: CatalogAccess = open_catalog(env, catalog, hold_timeout_s, nessie or {}, self._read_at, NAMESPACE)
        self.controller = self.catalog.controller
        self.spark = self._with_catalog(spark_session(master))
        self.spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{NAMESPACE}")
        self._sessions: dict[int, Any] = {}
        self._sessions_lock = threading.Lock()  # schedules may run at once (``parallel``)
        # One thread per held writer: every schedule running at once may hold all of its writers.
        self._pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="spark-writer")
        self._pyiceberg = None
        if second_writer == "pyiceberg":
            from conformance.adapters.spark_iceberg.pyiceberg_writer import PyIcebergWriter

            self._pyiceberg = PyIcebergWriter(self.catalog.client_properties(), NAMESPACE)

    def _with_catalog(self, session: Any) -> Any:
        # Catalogs are session configuration: each writer's session is pointed at this engine's server.
        session.conf.set(f"spark.sql.catalog.{CATALOG}", "org.apache.iceberg.spark.SparkCatalog")
        session.conf.set(f"spark.sql.catalog.{CATALOG}.type", "rest")
        session.conf.set(f"spark.sql.catalog.{CATALOG}.uri", self.catalog.uri)
        for key, value in self.catalog.spark_properties().items():
            session.conf.set(f"spark.sql.catalog.{CATALOG}.{key}", value)
        # Other writers commit behind this session's back: never read a cached, stale table.
        session.conf.set(f"spark.sql.catalog.{CATALOG}.cache-enabled", "false")
        return session

    def _session(self, writer: int) -> Any:
        with self._sessions_lock:
            if writer not in self._sessions:
                self._sessions[writer] = self._with_catalog(self.spark.newSession())
            return self._sessions[writer]

    def _metadata(self, table: str) -> Any:
        return self.catalog.metadata(NAMESPACE, table)

    def current_version(self, table: str) -> int:
        meta = self._metadata(table)
        snap = meta.snapshot_by_id(meta.current_snapshot_id) if meta.current_snapshot_id is not None else None
        return int(snap.sequence_number) if snap is not None else 0

    def create_table(self, name: str, setup: TableSetup) -> TableRead:
        if self._pyiceberg is not None and not self._pyiceberg.writes_format(setup.format_version):
            raise NotSupported(f"format v{setup.format_version}: the second writer (pyiceberg) does not write it")
        props = {
            "format-version": str(setup.format_version),
            "write.update.mode": setup.update_mode.value,
            "write.delete.mode": setup.delete_mode.value,
            "write.merge.mode": setup.update_mode.value,
            "write.update.isolation-level": setup.isolation.value,
            "write.delete.isolation-level": setup.isolation.value,
            "write.merge.isolation-level": setup.isolation.value,
        }
        tblprops = ", ".join(f"'{k}' = '{v}'" for k, v in props.items())
        full = f"{CATALOG}.{NAMESPACE}.{name}"
        self.spark.sql(f"CREATE TABLE {full} ({SCHEMA_DDL}) USING iceberg TBLPROPERTIES ({tblprops})")
        for rows in setup.data_files:  # one append, one data file (the COALESCE hint), per group
            values = ", ".join("(" + ", ".join(sql_str(v) for v in row) + ")" for row in rows)
            self.spark.sql(f"INSERT INTO {full} SELECT /*+ COALESCE(1) */ * FROM VALUES {values}")
            self.catalog.observe(name)
        return self.read(name)

    def begin(self, table: str, writer: int, op: Operation) -> SparkHeld:
        hold = self.controller.hold(NAMESPACE, table, count=1)  # the server's hold timeout
        start = self.current_version(table)
        future = self._pool.submit(self._runner(table, writer, op))
        # Return once the commit is parked, or the operation ended without reaching the catalog.
        while not hold.commits and not future.done():
            try:
                hold.wait_held(1, timeout_s=0.2)
            except ScheduleTimeout:
                continue
        return SparkHeld(self, table, hold, future, start)

    def _runner(self, table: str, writer: int, op: Operation) -> Callable[[], object]:
        """What writer ``writer`` runs: pyiceberg's part when it is the second writer, else Spark SQL."""
        from conformance.adapters.spark_iceberg.pyiceberg_writer import PLAYS

        if self._pyiceberg is not None and writer == 1 and op.kind in PLAYS:
            writer_ = self._pyiceberg
            return lambda: writer_.run(table, op)
        session = self._session(writer)
        return lambda: session.sql(statement(table, op)).collect()

    def read(self, table: str, version: int | None = None) -> TableRead:
        version = self.current_version(table) if version is None else version
        return TableRead(0, ()) if version == 0 else self.read_versions(table, [version])[0]

    def _read_at(self, table: str, snapshot_id: int) -> tuple[Row, ...]:
        query = f"SELECT {', '.join(COLUMNS)} FROM {CATALOG}.{NAMESPACE}.{table} VERSION AS OF {snapshot_id}"
        return tuple(sorted(tuple(r) for r in self.spark.sql(query).collect()))

    def read_versions(self, table: str, versions: Sequence[int]) -> list[TableRead]:
        """Several versions in one query (one Spark job, not one per version)."""
        ids = {s.sequence_number: s.snapshot_id for s in self._metadata(table).snapshots}
        # A catalog that serves only its current snapshot (Nessie): the rows recorded while current.
        unserved = [v for v in versions if v != 0 and v not in ids]
        seen = {v: rows for v in unserved if (rows := self.catalog.seen(table, v)) is not None}
        if missing := [v for v in unserved if v not in seen]:
            raise ValueError(f"{table} has no version {missing[0]}")
        full = f"{CATALOG}.{NAMESPACE}.{table}"
        parts = [
            f"SELECT {v} AS lakecert_version, {', '.join(COLUMNS)} FROM {full} VERSION AS OF {ids[v]}"
            for v in versions
            if v in ids
        ]
        found: dict[int, list[tuple[Any, ...]]] = {v: list(seen.get(v, ())) for v in versions}
        for row in self.spark.sql(" UNION ALL ".join(parts)).collect() if parts else []:
            found[row[0]].append(tuple(row[1:]))
        return [TableRead(v, tuple(sorted(rows))) for v, rows in found.items()]

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.catalog.close()
