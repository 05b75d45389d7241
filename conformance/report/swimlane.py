"""A swimlane picture (SVG) of one concurrency schedule: a lane per transaction from its begin to
its release (committed at a version, or aborted), and a lane for the table's versions, with the
versions no committed operation explains marked. Drawn from the ``schedule`` note a history check
leaves in its reproducer (operations, steps, versions); static SVG, no scripts.

What the eye should land on is the anomaly: the note names its kind but not where it is, so the
history is rebuilt from the note and judged again by the history checker, which gives the version
whose read (or creation) breaks the rule and the row. That version is drawn red with the rows it
showed, the operations involved are outlined in red, and every other version stays green or grey."""

from __future__ import annotations

import contextlib
import html
from dataclasses import dataclass
from typing import Any

from conformance.contract.iceberg import COLUMNS, OpKind, Row
from conformance.history.anomalies import Anomaly, AnomalyKind
from conformance.history.checker import SerialOrder, check
from conformance.history.events import History, OpRecord, ReadRecord

LANE_H = 46
STEP_W = 150
LEFT = 90
TOP = 44
OK, BAD, HELD, INK = "#2e7d32", "#c62828", "#1565c0", "#333"


def _step_of(steps: list[str], needle: str, default: int) -> int:
    return next((i for i, s in enumerate(steps) if needle in s), default)


def _text(x: float, y: float, s: str, fill: str = INK, size: int = 12, anchor: str = "start") -> str:
    return (
        f'<text x="{x:.0f}" y="{y:.0f}" fill="{fill}" font-size="{size}" text-anchor="{anchor}">{html.escape(s)}</text>'
    )


@dataclass(frozen=True)
class Found:
    """Where the picture marks the anomaly: the version, the row (None for a version anomaly), the
    kind shown, the operations involved and the rows of that id the read returned."""

    version: int
    row_id: str | None
    kind: str
    ops: tuple[str, ...]
    observed: tuple[Row, ...]


def _history(schedule: dict[str, Any]) -> History:
    reads = {int(v): tuple(tuple(r) for r in rows) for v, rows in (schedule.get("versions") or {}).items()}
    dangling = {int(v): tuple(d) for v, d in (schedule.get("dangling") or {}).items()}
    initial = min(reads) if reads else 0
    ops = []
    for op in schedule.get("operations") or []:
        where = None
        if op.get("where"):
            column, value = str(op["where"]).split("=", 1)
            where = (COLUMNS.index(column), value)
        ops.append(
            OpRecord(
                str(op["tx"]),
                OpKind(op["op"]),
                op.get("id"),
                tuple(op.get("values") or (None, None, None)),
                int(op.get("start") or 0),
                op.get("commit"),
                where=where,
            )  # fmt: skip
        )
    return History(
        initial_version=initial,
        initial_rows=reads.get(initial, ()),
        ops=tuple(ops),
        reads=tuple(ReadRecord(v, rows, dangling.get(v, ())) for v, rows in sorted(reads.items())),
    )


def _shown_kind(anomaly: Anomaly) -> str:
    # More rows of one id than any serial order leaves is a duplicate, whichever branch of the
    # checker named it (it says "wrong-value" when no committed operation touched the row): the
    # picture names what it shows, as the explanation beside it does.
    if len(anomaly.observed) > 1 and all(len(s) <= 1 for s in anomaly.allowed):
        return AnomalyKind.DUPLICATE_ROW.value
    return anomaly.kind.value


def find_anomaly(schedule: dict[str, Any]) -> Found | None:
    """The anomaly the note's kind names, located by judging the rebuilt history again; None when
    the note cannot be rebuilt or no order finds it (then nothing is marked, rather than a guess)."""
    try:
        history = _history(schedule)
    except (KeyError, ValueError, TypeError):
        return None
    kind = str(schedule.get("anomaly") or "")
    # The note does not say which serial order the check promised: the weakest order that finds
    # an anomaly is the one whose finding the check reported (a stronger order only adds some).
    for order in (SerialOrder.ANY, SerialOrder.WRITE_SERIALIZABLE, SerialOrder.COMMIT):
        found: list[Anomaly] = []
        with contextlib.suppress(Exception):  # a picture never breaks a report
            found = check(history, order)
        if found:
            best = next((a for a in found if a.kind.value == kind), found[0])
            return Found(best.version, best.row_id, _shown_kind(best), best.ops, best.observed)
    return None


def _label(op: dict[str, Any]) -> str:
    """ "DELETE jack", "UPDATE where color=red", "COMPACT" - never "COMPACT None"."""
    what = f"where {op['where']}" if op.get("where") else (str(op["id"]) if op.get("id") is not None else "")
    return " ".join(w for w in (str(op.get("op", "")), what, f"from v{op.get('start')}") if w)


def _row_text(row: Row) -> str:
    return f"{row[0]} ({', '.join(f'{c} {v}' for c, v in zip(COLUMNS[1:], row[1:], strict=True))})"


def swimlane_svg(schedule: dict[str, Any]) -> str | None:
    """The picture, or None when the note has no operations to draw."""
    ops: list[dict[str, Any]] = schedule.get("operations") or []
    steps: list[str] = [str(s) for s in schedule.get("steps") or []]
    if not ops:
        return None
    n_steps = max(len(steps), 2 * len(ops) + 2)
    lanes = [str(op["tx"]) for op in ops]
    found = find_anomaly(schedule)
    extra = 18 * (len(found.observed) if found else 0)  # the anomalous read's rows, under the table lane
    width = LEFT + STEP_W * n_steps + 40
    height = TOP + LANE_H * (len(lanes) + 1) + 50 + extra

    def x_of(i: int) -> float:  # step index -> x of its centre
        return LEFT + STEP_W * i + STEP_W / 2

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="system-ui,sans-serif" role="img">',
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        _text(10, 20, f"schedule: {schedule.get('table', '')}", size=13),
    ]
    if found is not None:
        where = f"the read of v{found.version}" + (f", row {found.row_id}" if found.row_id else "")
        parts.append(_text(10, 36, f"anomaly: {found.kind} in {where}", fill=BAD, size=13))
    elif schedule.get("anomaly"):
        parts.append(_text(10, 36, f"anomaly: {schedule['anomaly']}", fill=BAD, size=13))
    y: float
    for lane, name in enumerate([*lanes, "table"]):
        y = TOP + LANE_H * lane
        parts.append(f'<line x1="{LEFT}" y1="{y + LANE_H / 2}" x2="{width - 20}" y2="{y + LANE_H / 2}" stroke="#ddd"/>')
        parts.append(_text(10, y + LANE_H / 2 + 4, name, size=13))
    for lane, op in enumerate(ops):
        tx = str(op["tx"])
        begin = _step_of(steps, f"begins {tx}:", 1 + lane)
        end = _step_of(steps, f"release {tx}'s", 1 + len(ops) + lane)
        y = TOP + LANE_H * lane + LANE_H / 2
        committed = op.get("commit") is not None
        colour = OK if committed else BAD
        involved = found is not None and tx in found.ops
        outline = f'stroke="{BAD}" stroke-width="2.5"' if involved else f'stroke="{HELD}"'
        parts.append(
            f'<rect x="{x_of(begin):.0f}" y="{y - 9:.0f}" width="{max(x_of(end) - x_of(begin), 4):.0f}" height="18" '
            f'rx="4" fill="{HELD}" fill-opacity=".15" {outline}/>'
        )
        parts.append(_text(x_of(begin) + 6, y + 4, _label(op), size=11))
        outcome = f"COMMITTED v{op['commit']}" if committed else "ABORTED"
        parts.append(f'<circle cx="{x_of(end):.0f}" cy="{y:.0f}" r="7" fill="{colour}"/>')
        parts.append(_text(x_of(end) + 10, y - 12, outcome, fill=colour, size=11, anchor="middle"))
    y = TOP + LANE_H * len(ops) + LANE_H / 2
    versions = sorted(int(v) for v in (schedule.get("versions") or {}))
    made = {int(op["commit"]): str(op["tx"]) for op in ops if op.get("commit") is not None}
    read = _step_of(steps, "read v", n_steps - 1)
    for v in versions:
        if v == (versions[0] if versions else v) and v not in made:
            x, colour, note = x_of(0), INK, "set-up"
        elif v in made:
            x = x_of(_step_of(steps, f"release {made[v]}'s", read))
            colour, note = OK, f"by {made[v]}"
        else:
            x, colour, note = x_of(read), BAD, "no committed operation made it"
        if found is not None and v == found.version:
            colour = BAD
            if not note.startswith("no committed"):
                note = f"{note}; its read breaks the rule" if found.row_id else f"{note}: {found.kind}"
            # a ring around the box: the one version to look at
            parts.append(
                f'<rect x="{x - 22:.0f}" y="{y - 16:.0f}" width="44" height="32" rx="5" fill="none" '
                f'stroke="{BAD}" stroke-width="3"/>'
            )
            for i, row in enumerate(found.observed):
                parts.append(
                    _text(x, y + 52 + 18 * i, f"v{v} returns {_row_text(row)}", fill=BAD, size=11, anchor="middle")
                )
        parts.append(f'<rect x="{x - 16:.0f}" y="{y - 10:.0f}" width="32" height="20" rx="3" fill="{colour}"/>')
        parts.append(_text(x, y + 4, f"v{v}", fill="#fff", size=11, anchor="middle"))
        parts.append(_text(x, y + 24 + 12 * (v % 2), note, fill=colour, size=10, anchor="middle"))
    if steps:
        parts.append(_text(x_of(read), y - 16, steps[read] if read < len(steps) else "read", size=10, anchor="middle"))
    parts.append("</svg>")
    return "".join(parts)
