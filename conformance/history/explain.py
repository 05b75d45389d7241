"""Plain words for anomalies: what each operation did and what the read returned."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.contract.iceberg import COLUMNS, OpKind, Row
from conformance.history.events import History, OpRecord
from conformance.history.linearized import state_before
from conformance.history.serial import RowState, full_row


def row_text(row: Row) -> str:
    cols = ", ".join(f"{c} {v}" for c, v in zip(COLUMNS[1:], row[1:], strict=True))
    return f"{row[0]} ({cols})"


def state_text(row_id: str, state: RowState) -> str:
    if not state:
        return f"no {row_id}"
    if len(state) == 1:
        return row_text(state[0])
    return f"{len(state)} rows for {row_id}: " + " and ".join(row_text(r) for r in state)


def op_text(history: History, op: OpRecord) -> str:
    """E.g. "T0 updated jack (color red→blue) at v2"; the before-values come from commit order."""
    where = f"at v{op.commit_version}" if op.committed else f"(from v{op.start_version}) but aborted"
    if op.kind is OpKind.COMPACT:
        return f"{op.name} compacted data files {where}"
    if op.kind is OpKind.METADATA:
        return f"{op.name} changed a table property {where}"
    if op.kind is OpKind.MERGE:
        return f"{op.name} merged {row_text(full_row(op.values))} into {op.id} {where}"
    if op.kind is OpKind.DELETE:
        what = op.id if op.where is None else f"rows where {op.predicate}"
        return f"{op.name} deleted {what} {where}"
    if op.kind is OpKind.INSERT:
        return f"{op.name} inserted {row_text(full_row(op.values))} {where}"
    if op.where is not None:
        sets = ", ".join(f"{COLUMNS[c]}={v}" for c, v in enumerate(op.values) if c and v is not None)
        return f"{op.name} set {sets} where {op.predicate} {where}"
    before = state_before(history, op.id or "", op.commit_version or op.start_version + 1)
    changes = []
    for c, value in enumerate(op.values):
        if c and value is not None:
            old = before[0][c] if before else None
            changes.append(f"{COLUMNS[c]} {old}→{value}" if old is not None else f"set {COLUMNS[c]} {value}")
    return f"{op.name} updated {op.id} ({', '.join(changes)}) {where}"


def names(ops: Sequence[OpRecord]) -> str:
    return "{" + ", ".join(o.name for o in ops) + "}"


def outcomes_text(row_id: str, allowed: Sequence[RowState]) -> str:
    texts = sorted(state_text(row_id, s) for s in allowed)
    return texts[0] if len(texts) == 1 else "one of: " + "; ".join(texts)


def story(history: History, ops: Sequence[OpRecord]) -> str:
    return "; ".join(op_text(history, o) for o in ops)
