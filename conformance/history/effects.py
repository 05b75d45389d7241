"""The read invariant in commit order (FizzBee's ``ConsistentRead``, spec "Consistency checking"):
every committed write's effects, the rows its predicate matched in its starting snapshot, apply
column by column in commit order, under either isolation level.

Unlike a serial order, a write is never re-evaluated against rows that committed after its
starting snapshot: a DELETE that matched nothing leaves a concurrent INSERT alone, and an UPDATE
sets only its own columns on the row as it is at its commit.
"""

from __future__ import annotations

from conformance.contract.iceberg import OpKind, Row
from conformance.history.events import History, OpRecord
from conformance.history.serial import ABSENT, RowState, full_row, set_values, touches

NO_VALUE = ""  # a column no committed write gave a value (an UPDATE of a row deleted before it committed)


def effects_state(history: History, row_id: str, version: int) -> RowState:
    """The row ``row_id`` at ``version`` when each committed write's effects apply in commit order."""
    state = tuple(sorted(r for r in history.initial_rows if r[0] == row_id))
    reads = {r.version: r.rows for r in history.reads}
    for op in history.committed:
        if (op.commit_version or 0) > version or not touches(op, row_id):
            continue
        start_rows = reads.get(op.start_version, state)  # an unread start: judge it on the row as it is
        state = _apply_effects(op, state, _matched(op, row_id, start_rows))
    return state


def _matched(op: OpRecord, row_id: str, start_rows: tuple[Row, ...]) -> tuple[Row, ...]:
    """Rows of ``row_id`` the write matched in its starting snapshot."""
    if op.kind is OpKind.INSERT:
        return ()
    return tuple(r for r in start_rows if r[0] == row_id and op.matches(r))


def _apply_effects(op: OpRecord, state: RowState, matched: tuple[Row, ...]) -> RowState:
    if op.kind is OpKind.INSERT:
        return tuple(sorted((*state, full_row(op.values))))
    if not matched:
        return state  # it matched nothing when it read: it wrote nothing for this row
    if op.kind is OpKind.DELETE:
        return ABSENT
    if op.kind is OpKind.UPDATE:
        # only the columns it sets: on a row deleted meanwhile the others have no value
        base = state or ((matched[0][0], NO_VALUE, NO_VALUE),)
        return tuple(sorted(set_values(r, op.values) for r in base))
    return state
