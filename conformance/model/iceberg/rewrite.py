"""The WRITE_DATA_FILES step: the data and delete files an operation writes, per write mode."""

from __future__ import annotations

from conformance.contract.iceberg import Mode, OpKind, Row, TableSetup
from conformance.history.serial import full_row, set_values
from conformance.model.iceberg.files import DataFile, DeleteFile, Position
from conformance.model.iceberg.snapshot import EMPTY, Snapshot, SnapshotOp
from conformance.model.iceberg.store import ObjectStore, Stored
from conformance.model.iceberg.writer import Writer, Written

Hit = tuple[Position, Row]


def write_files(
    setup: TableSetup, writer: Writer, start: Snapshot, store: ObjectStore
) -> tuple[Written, list[tuple[str, Stored]]]:
    """What ``writer``'s operation writes, given what its scan of ``start`` found."""
    op = writer.op
    assert op is not None
    prefix = f"w{writer.index}o{writer.op_seq}"
    if op.kind is OpKind.INSERT:
        written = Written(SnapshotOp.APPEND, added_data=frozenset({f"{prefix}-d"}))
        return written, [(f"{prefix}-d", DataFile(f"{prefix}-d", (full_row(op.values),)))]
    if op.kind is OpKind.COMPACT:
        return _rewrite(prefix, writer.files, [r for _, r in writer.hits], SnapshotOp.REPLACE)
    new_rows = [set_values(r, op.values) for _, r in writer.hits] if op.kind is OpKind.UPDATE else []
    if setup.mode(op.kind) is Mode.MERGE_ON_READ:
        return _row_delta(setup, prefix, writer.hits, new_rows, start, store, op.kind)
    # copy-on-write: every data file with a matching row is rewritten whole
    touched = frozenset(p[0] for p, _ in writer.hits)
    kept = [r for p, r in store.live_rows(start) if p[0] in touched and (p, r) not in writer.hits]
    operation = SnapshotOp.OVERWRITE if kept or new_rows or not touched else SnapshotOp.DELETE
    return _rewrite(prefix, touched, kept + new_rows, operation)


def _rewrite(
    prefix: str, files: frozenset[str], rows: list[Row], operation: SnapshotOp
) -> tuple[Written, list[tuple[str, Stored]]]:
    out: list[tuple[str, Stored]] = [(f"{prefix}-d", DataFile(f"{prefix}-d", tuple(rows)))] if rows else []
    written = Written(operation, added_data=frozenset(n for n, _ in out), removed_data=files, referenced=files)
    return written, out


def _row_delta(
    setup: TableSetup,
    prefix: str,
    hits: tuple[Hit, ...],
    new_rows: list[Row],
    start: Snapshot,
    store: ObjectStore,
    kind: OpKind,
) -> tuple[Written, list[tuple[str, Stored]]]:
    out: list[tuple[str, Stored]] = [(f"{prefix}-d", DataFile(f"{prefix}-d", tuple(new_rows)))] if new_rows else []
    positions = frozenset(p for p, _ in hits)
    referenced = frozenset(f for f, _ in positions)
    removed: frozenset[str] = EMPTY
    dv_files: frozenset[str] = EMPTY
    if setup.format_version >= 3:
        # one deletion vector per data file, merged with the one the starting snapshot had
        old = {store.deletes(d).dv_for: d for d in start.delete_files if store.deletes(d).dv_for in referenced}
        for i, f in enumerate(sorted(referenced)):
            merged = frozenset(p for p in positions if p[0] == f)
            if f in old:
                merged |= store.deletes(old[f]).positions
            out.append((f"{prefix}-dv{i}", DeleteFile(f"{prefix}-dv{i}", merged, dv_for=f)))
        removed, dv_files = frozenset(old.values()), referenced
    elif positions:
        out.append((f"{prefix}-x", DeleteFile(f"{prefix}-x", positions)))
    added_deletes = frozenset(n for n, o in out if isinstance(o, DeleteFile))
    operation = SnapshotOp.OVERWRITE if new_rows or kind is OpKind.UPDATE else SnapshotOp.DELETE
    written = Written(
        operation,
        added_data=frozenset(n for n, o in out if isinstance(o, DataFile)),
        added_deletes=added_deletes,
        removed_deletes=removed,
        referenced=referenced,
        dv_files=dv_files,
    )
    return written, out
