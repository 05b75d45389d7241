"""The linearized per-row, per-column history (value and table version) of the spec's
"Consistency checking" section: committed operations applied in commit order."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.contract.iceberg import COLUMNS
from conformance.history.events import History
from conformance.history.serial import ABSENT, RowState, apply, touches


@dataclass(frozen=True)
class ColumnHistory:
    """Values one column of one row took, with the version that wrote each (None: no row)."""

    row_id: str
    column: str
    entries: tuple[tuple[str | None, int], ...]


def row_states(history: History, row_id: str) -> list[tuple[int, RowState]]:
    """(version, state) of one row after the set-up and after each committed operation on it."""
    state = tuple(sorted(r for r in history.initial_rows if r[0] == row_id))
    out = [(history.initial_version, state)]
    for op in history.committed:
        if touches(op, row_id):
            state = apply(op, state)
            out.append((op.commit_version or 0, state))
    return out


def state_before(history: History, row_id: str, version: int) -> RowState:
    """The row's state in commit order just before ``version``."""
    earlier = [s for v, s in row_states(history, row_id) if v < version]
    return earlier[-1] if earlier else ABSENT


def linearize(history: History) -> dict[str, list[ColumnHistory]]:
    """Row id -> the history of each of its columns after the id column."""
    ids = sorted({r[0] for r in history.initial_rows} | {o.id for o in history.ops if o.id is not None})
    out: dict[str, list[ColumnHistory]] = {}
    for row_id in ids:
        states = row_states(history, row_id)
        out[row_id] = [
            ColumnHistory(row_id, column, tuple((s[0][c] if s else None, v) for v, s in states))
            for c, column in enumerate(COLUMNS)
            if c > 0
        ]
    return out
