"""Allure's history across runs: one file per target in the ``--out`` root, so trend charts fill.

Runs land in folders of one root (``reports/<timestamp>`` by default). Each target's history is
``<root>/allure-history/<target>.jsonl``: Allure appends one line (a point) per generated report and
draws the trend and each check's earlier statuses from it. Targets keep separate files, because a
trend that mixes the reference with a vendor's catalog would say nothing.

Regenerating the report of the same run must not count it twice: the run folder remembers the id
of the point its last report added (``allure-history-id``), and that point is dropped before
Allure appends the new one. A new run into the same folder clears the marker (`lakecert run`'s
stale-artifact list), so it adds a point of its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

MARKER = "allure-history-id"


def history_file(run_dir: Path, target: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", target).strip("._") or "target"
    return run_dir.resolve().parent / "allure-history" / f"{slug}.jsonl"


def _points(history: Path) -> list[str]:
    return [line for line in history.read_text().splitlines() if line.strip()] if history.exists() else []


def _uuid(line: str) -> str | None:
    try:
        point = json.loads(line)
    except json.JSONDecodeError:
        return None
    return point.get("uuid") if isinstance(point, dict) else None


def forget_previous_report(run_dir: Path, history: Path) -> None:
    """Drop the point this run's previous report added, if any."""
    marker = run_dir / MARKER
    if not marker.exists() or not history.exists():
        return
    old = marker.read_text().strip()
    kept = [line for line in _points(history) if _uuid(line) != old]
    history.write_text("".join(f"{line}\n" for line in kept))


def remember_report(run_dir: Path, history: Path) -> int:
    """Record which point this run's report added; returns how many points the history holds."""
    points = _points(history)
    uuid = _uuid(points[-1]) if points else None
    if uuid:
        (run_dir / MARKER).write_text(uuid + "\n")
    return len(points)
