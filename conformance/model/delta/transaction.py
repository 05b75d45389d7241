"""A transaction as the conflict checker sees it (Delta's ``CurrentTransactionInfo``): what it read,
the actions it will commit, and the rows it changes in files it keeps (for row-level resolution)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from conformance.contract.iceberg import Operation, OpKind, Row
from conformance.model.delta.actions import Action, Add, CommitInfo, Metadata, Remove
from conformance.model.delta.log import Snapshot, Table

DELTA_OPERATION = {
    OpKind.INSERT: "WRITE",
    OpKind.UPDATE: "UPDATE",
    OpKind.DELETE: "DELETE",
    OpKind.MERGE: "MERGE",
    OpKind.COMPACT: "OPTIMIZE",
    OpKind.METADATA: "SET TBLPROPERTIES",
}


@dataclass(frozen=True)
class Transaction:
    name: str
    op: Operation
    start_version: int
    actions: tuple[Action, ...]
    read_files: frozenset[str] = frozenset()  # paths its scan read (data skipping on file stats)
    read_whole_table: bool = False  # its predicate could match any file (MERGE's join)
    reads: bool = False  # not a blind append: it has a read predicate
    touched: dict[str, frozenset[int]] = field(default_factory=dict)  # path -> positions it changes
    read_app_ids: frozenset[str] = frozenset()  # applications whose ``txn`` version it read
    matched_ids: frozenset[str] = frozenset()  # ids of the rows its predicate matched in its snapshot

    @property
    def data_change(self) -> bool:
        return any(isinstance(a, Add | Remove) and a.data_change for a in self.actions)

    @property
    def metadata_changed(self) -> bool:
        return any(isinstance(a, Metadata) for a in self.actions)

    @property
    def removed_paths(self) -> frozenset[str]:
        return frozenset(a.path for a in self.actions if isinstance(a, Remove))

    def with_actions(self, actions: tuple[Action, ...]) -> Transaction:
        return replace(self, actions=actions)


def plan(table: Table, snap: Snapshot, name: str, op: Operation, deletion_vectors: bool) -> Transaction:
    """Run ``op`` on ``snap``: write its new data files into ``table`` and return its transaction."""
    info = CommitInfo(DELTA_OPERATION[op.kind], is_blind_append=op.kind is OpKind.INSERT)
    if op.kind is OpKind.INSERT:
        path = f"{name}-insert.parquet"
        table.write_file(path, (_full(op),))
        return Transaction(name, op, snap.version, (Add(path), info))
    if op.kind is OpKind.METADATA:
        config = (*snap.metadata.configuration, (f"lakecert.{name}", "set"))
        return Transaction(name, op, snap.version, (Metadata(tuple(sorted(config))), info), reads=False)
    if op.kind is OpKind.COMPACT:
        return _optimize(table, snap, name, op, info)
    return _row_level(table, snap, name, op, info, deletion_vectors)


def _full(op: Operation) -> Row:
    return (op.values[0] or "", op.values[1] or "", op.values[2] or "")


def _set(row: Row, op: Operation) -> Row:
    v = op.values
    return (row[0], row[1] if v[1] is None else v[1], row[2] if v[2] is None else v[2])


def _row_level(
    table: Table, snap: Snapshot, name: str, op: Operation, info: CommitInfo, deletion_vectors: bool
) -> Transaction:
    """UPDATE, DELETE and MERGE: mark or rewrite the files of the rows the predicate matches (``id = <id>``,
    or a non-key column's value for UPDATE and DELETE)."""
    live = list(table.live_rows(snap))
    # Data skipping: a file is read when its stats (all its physical rows) could hold the id.
    read = frozenset(p for p in snap.files if any(op.matches(r) for r in table.files[p]))
    if op.kind is OpKind.MERGE:
        read = frozenset(snap.files)  # the join reads the whole target
    hits = [(p, pos, r) for p, pos, r in live if op.matches(r)]
    touched: dict[str, frozenset[int]] = {}
    for p, pos, _ in hits:
        touched[p] = touched.get(p, frozenset()) | {pos}
    actions: list[Action] = []
    new_rows: list[Row] = [_set(r, op) for _, _, r in hits] if op.kind is not OpKind.DELETE else []
    if op.kind is OpKind.MERGE and not hits:
        new_rows = [_full(op)]
    for i, (path, positions) in enumerate(sorted(touched.items())):
        old = snap.files[path]
        actions.append(Remove(path, old.dv))
        rest = [(pos, r) for q, pos, r in live if q == path and pos not in positions]
        if not rest:
            continue  # every live row goes: the file goes whole
        if deletion_vectors:
            actions.append(Add(path, old.dv | positions))
        else:
            kept = f"{name}-rewrite{i}.parquet"
            table.write_file(kept, tuple(r for _, r in rest))
            actions.append(Add(kept))
    if new_rows:
        path = f"{name}-new.parquet"
        table.write_file(path, tuple(new_rows))
        actions.append(Add(path))
    return Transaction(
        name,
        op,
        snap.version,
        (*actions, info),
        read_files=read,
        read_whole_table=op.kind is OpKind.MERGE,
        reads=True,
        touched=touched,
        matched_ids=frozenset(r[0] for _, _, r in hits),
    )


def _optimize(table: Table, snap: Snapshot, name: str, op: Operation, info: CommitInfo) -> Transaction:
    """OPTIMIZE: every live file rewritten into one, deletion vectors applied; ``dataChange=false``."""
    rows = tuple(r for _, _, r in table.live_rows(snap))
    actions: list[Action] = [Remove(p, a.dv, data_change=False) for p, a in sorted(snap.files.items())]
    if rows:
        path = f"{name}-optimized.parquet"
        table.write_file(path, rows)
        actions.append(Add(path, data_change=False))
    return Transaction(name, op, snap.version, (*actions, info), read_files=frozenset(snap.files), reads=True)
