"""Helpers for lakecert's own tests: run the real CLI, read its results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def lakecert(*args: str, env: dict[str, str] | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in its own process, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=3600,  # a hang guard only: generous enough for a loaded 2-core machine
    )


def results(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "results.json").read_text())
    return data


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` by its relative path: two trees are equal byte for byte when these are."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def schedule_runs(out: Path) -> dict[str, list[list[str]]]:
    """Per Allure result (by its name), the held schedules its check ran, from its "schedules run"
    attachment: per schedule, its steps (what each writer did), without the table's line."""
    allure = out / "allure-results"
    found: dict[str, list[list[str]]] = {}
    for path in allure.glob("*-result.json"):
        data = json.loads(path.read_text())
        logs = [a for a in data.get("attachments", []) if a["name"].startswith("schedules run (")]
        found[data["name"]] = [
            [line.strip() for line in block.splitlines()[1:]]
            for a in logs
            for block in (allure / a["source"]).read_text().split("\n\n")
        ]
    return found


def start_shared_hang(out: Path, marker: Path, *, own_group: bool = False) -> subprocess.Popen[bytes]:
    """`lakecert run --jobs 2` of ``broken:SharedHangTarget``, whose listings hang: each process
    inside one leaves ``<marker>.<pid>``. SIGINT is at its default, as from a terminal (pytest-xdist's
    workers ignore it); ``own_group``: its own process group, as a terminal's foreground job."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "tests" / "adapters"),
        "BROKEN_HANG_MARKER": str(marker),
        "LAKECERT__deadlines__call_s": "900",
        "LAKECERT__deadlines__check_s": "900",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "conformance.cli", "run", "--target", "tests.adapters.broken:SharedHangTarget"]
        + ["--select", "checks/delta/catalog/test_listing.py", "--jobs", "2", "--out", str(out)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=own_group,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
