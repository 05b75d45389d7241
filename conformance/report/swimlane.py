"""A swimlane picture (SVG) of one concurrency schedule: a lane per transaction from its begin to
its release (committed at a version, or aborted), and a lane for the table's versions, with the
versions no committed operation explains marked. Drawn from the ``schedule`` note a history check
leaves in its reproducer (operations, steps, versions); static SVG, no scripts."""

from __future__ import annotations

import html
from typing import Any

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


def swimlane_svg(schedule: dict[str, Any]) -> str | None:
    """The picture, or None when the note has no operations to draw."""
    ops: list[dict[str, Any]] = schedule.get("operations") or []
    steps: list[str] = [str(s) for s in schedule.get("steps") or []]
    if not ops:
        return None
    n_steps = max(len(steps), 2 * len(ops) + 2)
    lanes = [str(op["tx"]) for op in ops]
    width = LEFT + STEP_W * n_steps + 40
    height = TOP + LANE_H * (len(lanes) + 1) + 50

    def x_of(i: int) -> float:  # step index -> x of its centre
        return LEFT + STEP_W * i + STEP_W / 2

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="system-ui,sans-serif" role="img">',
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        _text(10, 20, f"schedule: {schedule.get('table', '')}", size=13),
    ]
    if schedule.get("anomaly"):
        parts.append(_text(10, 36, f"anomaly: {schedule['anomaly']}", fill=BAD, size=12))
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
        parts.append(
            f'<rect x="{x_of(begin):.0f}" y="{y - 9:.0f}" width="{max(x_of(end) - x_of(begin), 4):.0f}" height="18" '
            f'rx="4" fill="{HELD}" fill-opacity=".15" stroke="{HELD}"/>'
        )
        label = f"{op.get('op', '')} {op.get('id', '')} from v{op.get('start')}"
        parts.append(_text(x_of(begin) + 6, y + 4, label, size=11))
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
        parts.append(f'<rect x="{x - 16:.0f}" y="{y - 10:.0f}" width="32" height="20" rx="3" fill="{colour}"/>')
        parts.append(_text(x, y + 4, f"v{v}", fill="#fff", size=11, anchor="middle"))
        parts.append(_text(x, y + 24 + 12 * (v % 2), note, fill=colour, size=10, anchor="middle"))
    if steps:
        parts.append(_text(x_of(read), y - 16, steps[read] if read < len(steps) else "read", size=10, anchor="middle"))
    parts.append("</svg>")
    return "".join(parts)
