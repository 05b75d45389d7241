"""Benchmark: wall time of the three Delta profiles against the reference target.

Runs `lakecert run` (all Delta profiles, default budget) N times in fresh processes, as a user
would, and prints the figures as a Markdown row for docs/benchmarks.md. Not a test: nothing here
asserts a time.

    .venv/bin/python bench/delta_profiles.py [--repeat 5] [--target reference]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def one_run(target: str, out: Path) -> tuple[float, float, int]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--target", target, "--out", str(out)],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    res = json.loads((out / "results.json").read_text())
    if proc.returncode not in (0, 1):
        raise SystemExit(f"run broke:\n{proc.stdout}\n{proc.stderr}")
    return wall, float(res["run_info"]["duration_s"]), len(res["results"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--target", default="reference")
    args = parser.parse_args()
    walls, insides = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            wall, inside, checks = one_run(args.target, Path(tmp) / str(i))
            walls.append(wall)
            insides.append(inside)
    print(f"machine: {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}")
    print("| target | checks | runs | wall median (s) | wall min-max (s) | in-suite median (s) |")
    print("|---|---|---|---|---|---|")
    print(
        f"| {args.target} | {checks} | {args.repeat} | {statistics.median(walls):.2f} | "
        f"{min(walls):.2f}-{max(walls):.2f} | {statistics.median(insides):.2f} |"
    )


if __name__ == "__main__":
    main()
