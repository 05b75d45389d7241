"""Serial semantics of the operations on one row, and the states serial orders can reach.

Every predicate is evaluated on one row at a time (``id = v``, or ``<column> = v`` on a non-key
column), so each row's fate depends only on the operations that touch it: the state of a row is
the (sorted) tuple of rows carrying its id, normally zero or one. An operation with a non-key
predicate touches every row; on a row that does not match it, it does nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from conformance.contract.iceberg import OpKind, Row, Values
from conformance.history.events import OpRecord

RowState = tuple[Row, ...]
ABSENT: RowState = ()


def set_values(row: Row, values: Values) -> Row:
    return (
        row[0] if values[0] is None else values[0],
        row[1] if values[1] is None else values[1],
        row[2] if values[2] is None else values[2],
    )


def full_row(values: Values) -> Row:
    """The row an INSERT adds (missing values read as empty strings)."""
    return (values[0] or "", values[1] or "", values[2] or "")


def apply(op: OpRecord, state: RowState) -> RowState:
    """The row state after ``op`` runs alone on ``state`` (``op`` touches this row's id)."""
    if op.kind is OpKind.INSERT:
        return tuple(sorted((*state, full_row(op.values))))
    if op.kind is OpKind.UPDATE:
        return tuple(sorted(set_values(r, op.values) if op.matches(r) else r for r in state))
    if op.kind is OpKind.DELETE:
        return tuple(r for r in state if not op.matches(r))
    if op.kind is OpKind.MERGE:  # Delta's upsert: update every matching row, insert when none matches
        return tuple(sorted(set_values(r, op.values) for r in state)) if state else (full_row(op.values),)
    return state  # compaction and metadata changes never change rows


def must_precede(a: OpRecord, b: OpRecord) -> bool:
    """``b`` started from a version that already held ``a``, so ``a`` comes first in any serial order."""
    return a.commit_version is not None and b.start_version >= a.commit_version


def write_serializable_precede(a: OpRecord, b: OpRecord) -> bool:
    """Delta's WriteSerializable: commit order, except that a blind append (INSERT) may be placed
    after a later-committing write that did not see it (that write never checked blind appends)."""
    if must_precede(a, b):
        return True
    if a.commit_version is None or b.commit_version is None or b.commit_version < a.commit_version:
        return False
    return not (a.kind is OpKind.INSERT and b.kind is not OpKind.INSERT)


def reachable(
    initial: RowState, ops: Sequence[OpRecord], *, writes_in_commit_order: bool = False
) -> frozenset[RowState]:
    """Row states of every serial order of ``ops`` that respects their starting versions (and,
    with ``writes_in_commit_order``, the commit order of writes other than blind appends)."""
    return _reachable(initial, tuple(ops), writes_in_commit_order)


@functools.lru_cache(maxsize=1 << 14)  # exploration asks the same question for many schedules
def _reachable(
    initial: RowState, ops: tuple[OpRecord, ...], writes_in_commit_order: bool = False
) -> frozenset[RowState]:
    n = len(ops)
    before = write_serializable_precede if writes_in_commit_order else must_precede
    preds = [sum(1 << j for j in range(n) if j != i and before(ops[j], ops[i])) for i in range(n)]

    @functools.cache
    def states(mask: int) -> frozenset[RowState]:
        if mask == 0:
            return frozenset({initial})
        out: set[RowState] = set()
        for i in range(n):
            # i can run last when it is in the set and no other member had to wait for it
            if mask >> i & 1 and not any(mask >> j & 1 and preds[j] >> i & 1 for j in range(n)):
                out.update(apply(ops[i], s) for s in states(mask & ~(1 << i)))
        return frozenset(out)

    return states((1 << n) - 1)


def in_commit_order(initial: RowState, ops: Sequence[OpRecord]) -> RowState:
    """The row state when the committed ``ops`` run in the order of their commit versions."""
    state = initial
    for op in sorted(ops, key=lambda o: o.commit_version or 0):
        state = apply(op, state)
    return state


def touches(op: OpRecord, row_id: str) -> bool:
    return op.kind not in ROW_NEUTRAL and (op.id == row_id or (op.where is not None and op.kind is not OpKind.INSERT))


ROW_NEUTRAL = frozenset({OpKind.COMPACT, OpKind.METADATA})  # operations that never change a row
