"""Benchmark: the self-test (reference plus every faulty variant), wall clock and CPU.

CPU time (user + system of the self-test and every run it forks) does not depend on what else the
machine is doing, so it is the figure to compare across sessions; wall time is reported beside it
with the load average. Prints a Markdown row for docs/benchmarks.md. Not a test.

    .venv/bin/python bench/selftest.py [--repeat 1] [--jobs 0]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def one_run(jobs: int) -> tuple[float, float, int, bool]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [sys.executable, "-m", "conformance.cli", "selftest", "--json", "--jobs", str(jobs), "--out", tmp],
            capture_output=True,
            text=True,
        )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    outcomes = json.loads(proc.stdout)
    return wall, cpu, len(outcomes), proc.returncode == 0 and all(o["ok"] for o in outcomes)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=0, help="parallel runs (0: CPU count)")
    args = parser.parse_args()
    for _ in range(args.repeat):
        load = os.getloadavg()[0]
        wall, cpu, runs, ok = one_run(args.jobs)
        verdict = "yes" if ok else "NO"
        print(f"| {time.strftime('%Y-%m-%d')} | {runs} | {wall:.0f} | {cpu:.0f} | {load:.1f} | {verdict} |")


if __name__ == "__main__":
    main()
