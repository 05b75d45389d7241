"""A small in-memory Delta engine with optimistic, file-level conflict checks.

Written from Delta's PROTOCOL.md (log replay of add and remove actions, deletion vectors,
``dataChange``) and its concurrency-control page (the isolation levels and the conflict exceptions),
and from lakecert's contract (``conformance/contract/delta_engine.py``). Nothing here comes from
lakecert's reference or its checks.

A table is a list of commits (the ``_delta_log``): version N is the N-th entry, written only when
absent. A data file is immutable and named by a path; a deletion vector is the set of row positions
of a file that are deleted. An operation plans its commit from the snapshot it starts on and is held
before writing its commit file; released, it tries the next version and, when a winner took it,
checks itself against every winner as the isolation level says, then rebases (same actions, next
version) or aborts. Every decision a faulty variant replaces is a method of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from conformance.contract.delta_engine import (
    CommitResult,
    DeltaSetup,
    NotSupported,
    Operation,
    OpKind,
    Row,
    TableRead,
)

DvMap = dict[str, frozenset[int]]  # a snapshot: live file path -> its deleted row positions


class Level(StrEnum):
    """The level an operation is checked at: the table's, or snapshot isolation for OPTIMIZE
    (Delta's concurrency page: compaction never changes data, so concurrent appends cannot hurt it)."""

    SERIALIZABLE = "Serializable"
    WRITE_SERIALIZABLE = "WriteSerializable"
    SNAPSHOT = "SnapshotIsolation"


@dataclass(frozen=True)
class AddFile:
    path: str
    dv: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Commit:
    """The actions of one commit file, and the flags its commitInfo carries."""

    adds: tuple[AddFile, ...] = ()
    removes: tuple[str, ...] = ()
    data_change: bool = True
    blind_append: bool = False
    metadata: bool = False
    op: str = ""


@dataclass
class Table:
    setup: DeltaSetup
    files: dict[str, tuple[Row, ...]] = field(default_factory=dict)  # every data file ever written
    log: list[Commit] = field(default_factory=list)

    @property
    def latest(self) -> int:
        return len(self.log) - 1

    def snapshot(self, version: int) -> DvMap:
        """Replay the log up to ``version`` (PROTOCOL.md: a remove cancels the path, an add sets it)."""
        live: DvMap = {}
        for commit in self.log[: version + 1]:
            for path in commit.removes:
                live.pop(path, None)
            for add in commit.adds:
                live[add.path] = add.dv
        return live

    def live_rows(self, path: str, dv: frozenset[int]) -> list[tuple[int, Row]]:
        return [(i, r) for i, r in enumerate(self.files[path]) if i not in dv]

    def rows(self, version: int) -> tuple[Row, ...]:
        snap = self.snapshot(version)
        return tuple(sorted(r for p, dv in snap.items() for _, r in self.live_rows(p, dv)))

    def new_file(self, rows: tuple[Row, ...]) -> str:
        path = f"part-{len(self.files):05d}.parquet"
        self.files[path] = rows
        return path


@dataclass
class Pending:
    """A planned operation, held before its commit file is written."""

    table: Table
    op: Operation
    start: int
    level: Level
    read_files: frozenset[str]  # files the scan read rows of
    predicate: Operation | None  # what the operation read (None: a blind append, or no data read)
    commit: Commit | None  # None: nothing to commit
    read_rows: tuple[Row, ...] = ()  # the matched rows as read at ``start``


def full_row(op: Operation) -> Row:
    """The row an INSERT or MERGE gives."""
    a, b, c = op.values
    if a is None or b is None or c is None:
        raise ValueError(f"{op.describe()} does not give a full row")
    return (a, b, c)


def _apply(values: tuple[str | None, str | None, str | None], row: Row) -> Row:
    a, b, c = (v if v is not None else old for v, old in zip(values, row, strict=True))
    return (a, b, c)


class Held:
    def __init__(self, engine: CleanDeltaEngine, pending: Pending) -> None:
        self._engine, self._pending = engine, pending

    @property
    def start_version(self) -> int:
        return self._pending.start

    def release(self) -> CommitResult:
        return self._engine.commit(self._pending)


class CleanDeltaEngine:
    """The correct engine (file-level conflicts, as Delta documents them)."""

    version_label = "cleanroom-delta 0.1"

    def __init__(self) -> None:
        self.tables: dict[str, Table] = {}

    # -- the contract -------------------------------------------------------------------------
    def create_table(self, name: str, setup: DeltaSetup) -> TableRead:
        if getattr(setup, "catalog_managed", False):
            # No catalog here: the contract asks an engine without catalog-managed tables to say so.
            raise NotSupported("catalog-managed tables (no managing catalog in this engine)")
        if name in self.tables:
            raise ValueError(f"table {name} exists")
        table = Table(setup)
        table.log.append(Commit(metadata=True, op="CREATE TABLE"))
        for rows in setup.data_files:
            table.log.append(Commit(adds=(AddFile(table.new_file(tuple(rows))),), blind_append=True, op="WRITE"))
        self.tables[name] = table
        return TableRead(table.latest, table.rows(table.latest))

    def begin(self, table: str, writer: int, op: Operation) -> Held:
        t = self._table(table)
        return Held(self, self.plan(t, op, t.latest))

    def read(self, table: str, version: int | None = None) -> TableRead:
        t = self._table(table)
        v = t.latest if version is None else version
        if not 0 <= v <= t.latest:
            raise ValueError(f"table {table} has no version {v}")
        return TableRead(v, t.rows(v))

    def close(self) -> None:
        self.tables.clear()

    def _table(self, name: str) -> Table:
        if name not in self.tables:
            raise KeyError(f"no table {name}")
        return self.tables[name]

    # -- planning: what an operation reads and writes from its snapshot -------------------------
    def plan(self, t: Table, op: Operation, start: int) -> Pending:
        level = Level(t.setup.isolation.value)
        if op.kind is OpKind.INSERT:
            commit = Commit(adds=(AddFile(t.new_file((full_row(op),))),), blind_append=True, op="INSERT")
            return Pending(t, op, start, level, frozenset(), None, commit)
        if op.kind is OpKind.METADATA:
            return Pending(t, op, start, level, frozenset(), None, Commit(metadata=True, op="SET TBLPROPERTIES"))
        if op.kind is OpKind.COMPACT:
            return self.plan_compaction(t, op, start)
        if op.kind in (OpKind.UPDATE, OpKind.DELETE, OpKind.MERGE):
            return self.plan_row_write(t, op, start, level)
        raise NotSupported(f"operation {op.kind}")

    def plan_row_write(self, t: Table, op: Operation, start: int, level: Level) -> Pending:
        snap = t.snapshot(start)
        matcher = Operation(OpKind.UPDATE, id=op.values[0]) if op.kind is OpKind.MERGE else op
        read = frozenset(p for p, dv in snap.items() if any(matcher.matches(r) for _, r in t.live_rows(p, dv)))
        matched = tuple(r for p in sorted(read) for _, r in t.live_rows(p, snap[p]) if matcher.matches(r))
        if op.kind is OpKind.MERGE and not matched:
            commit = Commit(adds=(AddFile(t.new_file((full_row(op),))),), op="MERGE")
            return Pending(t, op, start, level, read, matcher, self.merge_insert(commit), matched)
        if not matched:
            return Pending(t, op, start, level, read, matcher, None)
        new_rows = () if op.kind is OpKind.DELETE else tuple(_apply(op.values, r) for r in matched)
        commit = self.rewrite(t, snap, read, matcher, new_rows, op.kind.value)
        return Pending(t, op, start, level, read, matcher, commit, matched)

    def merge_insert(self, commit: Commit) -> Commit:
        """A MERGE that inserts read the table first: it is no blind append."""
        return commit

    def rewrite(
        self, t: Table, snap: DvMap, read: frozenset[str], matcher: Operation, new_rows: tuple[Row, ...], op: str
    ) -> Commit:
        """Remove the matched rows of the files in ``read`` and add ``new_rows`` in a new file."""
        adds: list[AddFile] = []
        for path in sorted(read):
            live = t.live_rows(path, snap[path])
            gone = frozenset(i for i, r in live if matcher.matches(r))
            if t.setup.deletion_vectors:
                dv = self.new_dv(snap[path], gone)
                if len(dv) < len(t.files[path]):
                    adds.append(AddFile(path, dv))
            else:
                kept = tuple(r for i, r in live if i not in gone)
                if kept:
                    adds.append(AddFile(t.new_file(kept)))
        if new_rows:
            adds.append(AddFile(t.new_file(new_rows)))
        return Commit(adds=tuple(adds), removes=tuple(sorted(read)), op=op)

    def new_dv(self, old: frozenset[int], gone: frozenset[int]) -> frozenset[int]:
        """PROTOCOL.md Deletion Vectors: the new vector keeps every row the old one deleted."""
        return old | gone

    def plan_compaction(self, t: Table, op: Operation, start: int) -> Pending:
        snap = t.snapshot(start)
        chosen = frozenset(
            p for p, dv in snap.items() if op.id is None or any(r[0] == op.id for _, r in t.live_rows(p, dv))
        )
        if len(chosen) < 2 and not any(snap[p] for p in chosen):
            return Pending(t, op, start, Level.SNAPSHOT, chosen, None, None)  # nothing to compact
        rows = tuple(r for p in sorted(chosen) for _, r in t.live_rows(p, snap[p]))
        adds = (AddFile(t.new_file(rows)),) if rows else ()
        commit = Commit(adds=adds, removes=tuple(sorted(chosen)), data_change=False, op="OPTIMIZE")
        return Pending(t, op, start, Level.SNAPSHOT, chosen, None, commit)

    # -- committing -----------------------------------------------------------------------------
    def commit(self, p: Pending) -> CommitResult:
        if p.commit is None:
            return CommitResult(False, None, "nothing to commit")
        attempt = self.first_attempt(p)
        while True:
            if self.put_if_absent(p.table, attempt, p.commit):
                return CommitResult(True, attempt)
            for winner in self.winners(p, attempt):
                reason = self.conflict(p, p.table.log[winner])
                if reason:
                    retry = self.on_conflict(p, reason)
                    if retry is None:
                        return CommitResult(False, None, reason)
                    p = retry
                    break
            attempt = p.table.latest + 1

    def first_attempt(self, p: Pending) -> int:
        return p.start + 1

    def winners(self, p: Pending, attempt: int) -> range:
        """Every version committed since the attempt was planned."""
        return range(attempt, p.table.latest + 1)

    def put_if_absent(self, t: Table, version: int, commit: Commit) -> bool:
        """PROTOCOL.md: a commit file is created only when absent."""
        if version != len(t.log):
            return False
        t.log.append(commit)
        return True

    def on_conflict(self, p: Pending, reason: str) -> Pending | None:
        """Abort (None), as Delta does on a conflict exception."""
        return None

    # -- the conflict checker (Delta's concurrency page, "Conflict exceptions") ------------------
    def conflict(self, p: Pending, w: Commit) -> str:
        assert p.commit is not None
        if w.metadata:
            return "MetadataChangedException: the table's metadata changed"
        if p.predicate is not None and self.added_conflict(p, w):
            return "ConcurrentAppendException: a concurrent commit added rows this operation should have read"
        if self.delete_read_conflict(p, w):
            return "ConcurrentDeleteReadException: a concurrent commit removed a file this operation read"
        if set(w.removes) & self.own_removes(p, w):
            return "ConcurrentDeleteDeleteException: a concurrent commit removed a file this operation removes"
        return ""

    def checked_adds(self, p: Pending, w: Commit) -> tuple[AddFile, ...]:
        """WriteSerializable ignores blind appends; snapshot isolation (OPTIMIZE) ignores every add."""
        if p.level is Level.SNAPSHOT:
            return ()
        if w.blind_append and p.level is Level.WRITE_SERIALIZABLE:
            return ()
        return w.adds

    def added_conflict(self, p: Pending, w: Commit) -> bool:
        assert p.predicate is not None
        pred = p.predicate
        return any(pred.matches(r) for a in self.checked_adds(p, w) for _, r in p.table.live_rows(a.path, a.dv))

    def delete_read_conflict(self, p: Pending, w: Commit) -> bool:
        return bool(set(w.removes) & self.checked_reads(p, w))

    def checked_reads(self, p: Pending, w: Commit) -> frozenset[str]:
        return p.read_files

    def own_removes(self, p: Pending, w: Commit) -> frozenset[str]:
        assert p.commit is not None
        return frozenset(p.commit.removes)
