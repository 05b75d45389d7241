"""Delta Kernel as the Delta engine of profile ``delta-row-conflicts``, on path-based (filesystem)
and catalog-managed tables.

The target's one driver JVM (``jvm.KernelProcess``) runs the transactions (``ConflictEngine.java``).
A writer's transaction is built on the table's latest snapshot and writes its data files; its commit
then runs on a JVM thread of its own and parks in ``HeldCommitter``, a wrapper of the table's own
committer handed to Kernel through its public ``SnapshotBuilder.withCommitter``, before it writes
``_delta_log/<version>.json``. Released, the commit is Kernel's own: a taken version makes Kernel
run its conflict checker and rebase or give up, as in production.

What the engine builds, as Kernel's connectors do: blind appends (INSERT) and table property
changes (METADATA) with Kernel's public write API, and copy-on-write DELETE, UPDATE and OPTIMIZE
(``ConflictEngine.rewrite``): every data file holding a row the operation's predicate matches
(``id``, or ``where`` on a non-key column; every live file for OPTIMIZE) is removed and its
remaining rows (updated ones with the operation's values set) are written to a new file. The
removes come from Kernel's internal API (``io.delta.kernel.internal.actions.AddFile.toRemoveFileRow``
and ``SingleAction.createRemoveFileSingleAction``: Kernel's public API builds adds only), so they
may change between Kernel releases; OPTIMIZE's removes and add have ``dataChange=false``. A DELETE
or UPDATE that matches no row commits nothing (Delta's ``commitIfNeeded``).

Not built (``NotSupported``, the schedule is skipped): MERGE; and any rewrite on a table with row
tracking, because Kernel's write API cannot carry a row's stable row id into the file it is copied
to (PROTOCOL.md, Row Tracking: a copied row keeps its id through the materialized row id column),
so a rewrite by it would give every surviving row a new id. Kernel writes no deletion vectors; on a
table with them enabled the rewrites are still copy-on-write, which the protocol allows (a delete
may, not must, use a deletion vector) and which is what a Kernel connector does there. Kernel
refuses the table property ``delta.isolationLevel`` (an unknown configuration), so its tables have
Delta's default level, WriteSerializable; a Serializable table is ``NotSupported``.

A failure of lakecert's own driver against the loaded jars (``jvm.KernelHarnessError``) is never
turned into ``NotSupported``: it ends the check as ERROR.

Catalog-managed tables (``DeltaSetup.catalog_managed``) live in a reference catalog of the engine's
own, served over Unity Catalog's HTTP API (``serving.ServedCatalog``): Kernel creates them as a UC
connector does (staging table, its create-table transaction), loads snapshots with the catalog's
ratified commits (``UCCatalogManagedClient.loadSnapshot``), and the hold wraps Kernel's UC
committer, so a commit parks where Kernel would propose it to the catalog; the catalog ratifies or
refuses, and Kernel's own conflict handling runs on a refusal. ``publish()`` is Kernel's public
``Snapshot.publish`` of the table's ratified commits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from conformance.adapters.delta_kernel.jvm import KernelFailed, KernelProcess
from conformance.adapters.delta_kernel.serving import UC_CATALOG, UC_SCHEMA
from conformance.contract.delta import Catalog
from conformance.contract.delta_engine import DeltaSetup, IsolationLevel, NotSupported
from conformance.contract.iceberg import CommitResult, Operation, OpKind, Row, TableRead

SUPPORTED = frozenset({OpKind.INSERT, OpKind.METADATA, OpKind.DELETE, OpKind.UPDATE, OpKind.COMPACT})
# Built as copy-on-write rewrites: they remove data files.
REWRITES = frozenset({OpKind.DELETE, OpKind.UPDATE, OpKind.COMPACT})
# Kernel's classification (Errors.java) of what ended a refused commit: its conflict checker said no.
CONFLICT = "conflict"


class KernelEngineError(Exception):
    """Kernel failed an engine request for a reason other than a conflict."""


def table_properties(setup: DeltaSetup) -> dict[str, str]:
    """The properties Kernel is asked to create the table with; ``NotSupported`` for what it cannot."""
    if setup.isolation is not IsolationLevel.WRITE_SERIALIZABLE:
        # Kernel (4.3, 4.4) rejects delta.isolationLevel (UnknownConfigurationException): only the default.
        raise NotSupported("Delta Kernel cannot set delta.isolationLevel; its tables are WriteSerializable")
    props: dict[str, str] = {}
    if setup.deletion_vectors:
        props["delta.enableDeletionVectors"] = "true"
    if setup.row_tracking:
        props["delta.enableRowTracking"] = "true"
    return props


def _ignore(event: dict[str, Any]) -> None:
    """Storage events of engine requests: the verdict comes from what each version holds."""


class KernelHeld:
    """A Kernel commit parked in the driver (or already ended without parking)."""

    def __init__(self, engine: KernelDeltaEngine, table: str, handle: int, start: int) -> None:
        self._engine = engine
        self._table = table
        self._handle = handle
        self._start = start
        self._result: CommitResult | None = None
        # every version Kernel tried to write, in order: a retry after a taken version shows here
        self.attempts: tuple[int, ...] = ()

    @property
    def start_version(self) -> int:
        return self._start

    def publish(self) -> list[int]:
        """``held_run.PublishesCommit``: Kernel publishes the table's ratified commits (this one's
        and every earlier one) into ``_delta_log``; the versions whose files it wrote."""
        return self._engine.publish(self._table)

    def release(self) -> CommitResult:
        if self._result is None:
            out = self._engine.call({"op": "engine_release", "handle": self._handle})
            self.attempts = tuple(int(v) for v in out["attempts"])
            tried = ", ".join(f"v{v}" for v in self.attempts)
            if out["committed"]:
                self._result = CommitResult(True, int(out["version"]), f"tried {tried}")
            else:
                self._result = CommitResult(False, None, f"{out['reason']} (tried {tried})")
        return self._result


class KernelDeltaEngine:
    """Tables under ``root`` (a local directory), transactions in the target's driver JVM.

    ``catalog`` is the reference catalog the driver's UC client is served (``None``: the engine
    builds path-based tables only, a catalog-managed set-up is ``NotSupported``).

    ``fault_overwrite_commits`` is for lakecert's own tests only: a faulty variant whose commit files
    overwrite a version already written (a store without put-if-absent), which the checks must catch."""

    def __init__(
        self,
        process: KernelProcess,
        root: Path,
        *,
        catalog: Catalog | None = None,
        fault_overwrite_commits: bool = False,
    ) -> None:
        self._process = process
        self._root = root
        self._catalog = catalog
        self._fault = fault_overwrite_commits
        self._managed: set[str] = set()  # the tables created catalog-managed
        self._row_tracking: set[str] = set()  # the tables created with row tracking

    def call(self, request: dict[str, Any]) -> Any:
        try:
            return self._process.call(request, _ignore)
        except KernelFailed as e:
            raise KernelEngineError(str(e)) from e

    def location(self, table: str) -> str:
        return (self._root / table).as_uri()

    def _table(self, table: str) -> dict[str, Any]:
        """How a request names the table: its location, or its UC name when it is catalog-managed."""
        if table in self._managed:
            return {"catalog_managed": True, "catalog": UC_CATALOG, "schema": UC_SCHEMA, "name": table}
        return {"location": self.location(table)}

    def create_table(self, name: str, setup: DeltaSetup) -> TableRead:
        props = table_properties(setup)
        if setup.row_tracking:
            self._row_tracking.add(name)
        if setup.catalog_managed:
            if self._catalog is None:
                raise NotSupported("this delta-kernel engine is bound to no catalog: path-based tables only")
            self._managed.add(name)
        files = [[list(r) for r in rows] for rows in setup.data_files]
        try:
            request = {"op": "engine_create", **self._table(name), "properties": props, "files": files}
            self._process.call(request, _ignore)
        except KernelFailed as e:
            raise NotSupported(f"Delta Kernel refuses a table with {props}: {e.java_class}") from e
        return self.read(name)

    def refuses(self, op: Operation) -> str | None:
        """``held_run.RefusesOperations``: what the engine does not build with Kernel, on any table."""
        if op.kind in SUPPORTED:
            return None
        return f"lakecert's Delta Kernel engine builds no {op.kind.value} (Kernel has no such operation)"

    def begin(self, table: str, writer: int, op: Operation) -> KernelHeld:
        if (reason := self.refuses(op)) is not None:
            raise NotSupported(reason)
        if op.kind in REWRITES and table in self._row_tracking:
            raise NotSupported(
                f"a copy-on-write {op.kind.value} by Delta Kernel cannot keep the rewritten rows' row ids "
                "(row tracking): Kernel's write API has no way to carry them"
            )
        operation = {
            "kind": op.kind.value,
            "id": op.id,
            "values": list(op.values),
            "where": None if op.where is None else [op.where[0], op.where[1]],
        }
        request = {"op": "engine_begin", **self._table(table), "operation": operation}
        out = self.call({**request, "fault_overwrite_commits": self._fault})
        return KernelHeld(self, table, int(out["handle"]), int(out["start"]))

    def publish(self, table: str) -> list[int]:
        """Kernel's ``Snapshot.publish`` on the table's latest snapshot; which versions it wrote into
        ``_delta_log`` is read from the table's log directory before and after, not from Kernel."""
        if table not in self._managed or self._catalog is None:
            return []
        log = Path(unquote(urlparse(self._catalog.resolve(table).location).path)) / "_delta_log"
        before = _published_versions(log)
        latest = int(self.call({"op": "engine_publish", **self._table(table)}))
        return sorted(v for v in _published_versions(log) - before if v <= latest)

    def read(self, table: str, version: int | None = None) -> TableRead:
        out = self.call({"op": "engine_read", **self._table(table), "version": version})
        rows: tuple[Row, ...] = tuple(sorted((str(r[0]), str(r[1]), str(r[2])) for r in out["rows"]))
        return TableRead(int(out["version"]), rows)

    def close(self) -> None:
        """The driver JVM is the target's (shared with the client side); it stops it."""


def _published_versions(log: Path) -> set[int]:
    """The versions with a published commit file (``_delta_log/<version>.json``)."""
    return {int(p.stem) for p in log.glob("*.json") if p.stem.isdigit()}
