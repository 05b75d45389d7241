"""Benchmark: wall and CPU time of `lakecert report` (JUnit, the Allure HTML, the matrix) on one run.

Makes one run of the reference on all its profiles (the largest allure-results of a default run),
then times `lakecert report` on it N times in fresh processes, as a user would, with the lakecert
of ``--code`` (a checkout: its package and its .cache/ Allure). Point ``--code`` at a checkout of
an earlier commit to compare (before: Allure 2 on Java; after: Allure 3 on Node). Prints a
Markdown row for docs/benchmarks.md. CPU time counts lakecert and the Allure it starts (a JVM or
Node): on a machine other jobs load it is steadier than wall time. Not a test: nothing here asserts a time.

    .venv/bin/python bench/report.py [--repeat 5] [--code /path/to/checkout] [--from RUN_DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def _lakecert(code: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], capture_output=True, text=True, env=env)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--code", type=Path, default=HERE, help="the checkout whose lakecert to time")
    parser.add_argument("--from", dest="source", type=Path, help="an existing run directory (copied)")
    args = parser.parse_args()
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "root" / "run"
        if args.source:
            shutil.copytree(args.source, run)
        else:
            made = _lakecert(HERE, "run", "--out", str(run))
            if made.returncode not in (0, 1):
                raise SystemExit(f"run broke:\n{made.stdout}\n{made.stderr}")
        results = len(list((run / "allure-results").glob("*-result.json")))
        for _ in range(args.repeat):
            started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            proc = _lakecert(args.code, "report", str(run))
            walls.append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            # CPU of lakecert and what it starts (Allure's JVM or Node): steadier than wall time on a
            # machine other jobs load.
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            if proc.returncode != 0:
                raise SystemExit(f"report broke:\n{proc.stdout}\n{proc.stderr}")
    load = os.getloadavg()[0]
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(f"machine: {os.cpu_count()} cores, load {load:.1f}, {python}")
    print("| code | allure results | reports | wall median (s) | wall min-max (s) | CPU median (s) |")
    print("|---|---|---|---|---|---|")
    print(
        f"| {args.code} | {results} | {args.repeat} | {statistics.median(walls):.2f} | "
        f"{min(walls):.2f}-{max(walls):.2f} | {statistics.median(cpus):.2f} |"
    )


if __name__ == "__main__":
    main()
