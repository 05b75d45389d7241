"""Delta Kernel as the Delta engine of profile ``delta-row-conflicts``, on path-based (filesystem) tables.

The target's one driver JVM (``jvm.KernelProcess``) runs the transactions (``ConflictEngine.java``).
A writer's transaction is built on the table's latest snapshot and writes its data files; its commit
then runs on a JVM thread of its own and parks in ``HeldCommitter``, a wrapper of the table's own
committer handed to Kernel through its public ``SnapshotBuilder.withCommitter``, before it writes
``_delta_log/<version>.json``. Released, the commit is Kernel's own: a taken version makes Kernel
run its conflict checker and rebase or give up, as in production.

What Kernel 4.4's public write API builds: blind appends (INSERT) and table property changes
(METADATA). UPDATE, DELETE, MERGE and OPTIMIZE need removes or deletion vectors, which it has no
public way to write: ``begin`` raises ``NotSupported`` for them (the schedule is not run). Kernel
refuses the table property ``delta.isolationLevel`` (an unknown configuration), so its tables have
Delta's default level, WriteSerializable; a Serializable table is ``NotSupported``. Catalog-managed
tables are not built here (``DeltaSetup.catalog_managed``: ``NotSupported``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.adapters.delta_kernel.jvm import KernelFailed, KernelProcess
from conformance.contract.delta_engine import DeltaSetup, IsolationLevel, NotSupported
from conformance.contract.iceberg import CommitResult, Operation, OpKind, Row, TableRead

SUPPORTED = frozenset({OpKind.INSERT, OpKind.METADATA})
# Kernel's classification (Errors.java) of what ended a refused commit: its conflict checker said no.
CONFLICT = "conflict"


class KernelEngineError(Exception):
    """Kernel failed an engine request for a reason other than a conflict."""


def table_properties(setup: DeltaSetup) -> dict[str, str]:
    """The properties Kernel is asked to create the table with; ``NotSupported`` for what it cannot."""
    if setup.catalog_managed:
        raise NotSupported("the delta-kernel engine builds path-based (filesystem) tables only")
    if setup.isolation is not IsolationLevel.WRITE_SERIALIZABLE:
        # Kernel 4.4 rejects delta.isolationLevel (UnknownConfigurationException): only the default.
        raise NotSupported("Delta Kernel 4.4 cannot set delta.isolationLevel; its tables are WriteSerializable")
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

    def __init__(self, engine: KernelDeltaEngine, handle: int, start: int) -> None:
        self._engine = engine
        self._handle = handle
        self._start = start
        self._result: CommitResult | None = None
        # every version Kernel tried to write, in order: a retry after a taken version shows here
        self.attempts: tuple[int, ...] = ()

    @property
    def start_version(self) -> int:
        return self._start

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

    ``fault_overwrite_commits`` is for lakecert's own tests only: a faulty variant whose commit files
    overwrite a version already written (a store without put-if-absent), which the checks must catch."""

    def __init__(self, process: KernelProcess, root: Path, *, fault_overwrite_commits: bool = False) -> None:
        self._process = process
        self._root = root
        self._fault = fault_overwrite_commits

    def call(self, request: dict[str, Any]) -> Any:
        try:
            return self._process.call(request, _ignore)
        except KernelFailed as e:
            raise KernelEngineError(str(e)) from e

    def location(self, table: str) -> str:
        return (self._root / table).as_uri()

    def create_table(self, name: str, setup: DeltaSetup) -> TableRead:
        props = table_properties(setup)
        files = [[list(r) for r in rows] for rows in setup.data_files]
        try:
            self._process.call(
                {"op": "engine_create", "location": self.location(name), "properties": props, "files": files}, _ignore
            )
        except KernelFailed as e:
            raise NotSupported(f"Delta Kernel refuses a table with {props}: {e.java_class}") from e
        return self.read(name)

    def refuses(self, op: Operation) -> str | None:
        """``held_run.RefusesOperations``: what Kernel's public write API cannot build."""
        if op.kind in SUPPORTED:
            return None
        return f"Delta Kernel 4.4's public write API has no {op.kind.value} (it writes no removes or deletion vectors)"

    def begin(self, table: str, writer: int, op: Operation) -> KernelHeld:
        if (reason := self.refuses(op)) is not None:
            raise NotSupported(reason)
        operation = {"kind": op.kind.value, "values": list(op.values)}
        request = {"op": "engine_begin", "location": self.location(table), "operation": operation}
        out = self.call({**request, "fault_overwrite_commits": self._fault})
        return KernelHeld(self, int(out["handle"]), int(out["start"]))

    def read(self, table: str, version: int | None = None) -> TableRead:
        out = self.call({"op": "engine_read", "location": self.location(table), "version": version})
        rows: tuple[Row, ...] = tuple(sorted((str(r[0]), str(r[1]), str(r[2])) for r in out["rows"]))
        return TableRead(int(out["version"]), rows)

    def close(self) -> None:
        """The driver JVM is the target's (shared with the client side); it stops it."""
