"""Benchmark: the self-test (reference plus every faulty variant), wall clock and CPU.

CPU time (user + system of the self-test and every run it forks) does not depend on what else the
machine is doing, so it is the figure to compare across sessions; wall time is reported beside it
with the load average. Prints a Markdown row for docs/benchmarks.md. Not a test.

    .venv/bin/python bench/selftest.py [--repeat 1] [--jobs 0] [--complete]

``--complete`` measures the self-test's complete mode (every variant on every profile of its
side), the default before each variant ran only the checks of the rules it breaks.
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


def one_run(jobs: int, complete: bool) -> tuple[float, float, int, bool]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [sys.executable, "-m", "conformance.cli", "selftest", "--json", "--jobs", str(jobs), "--out", tmp]
            + (["--complete"] if complete else []),
            capture_output=True,
            text=True,
        )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if not proc.stdout.strip():
        raise SystemExit(f"the self-test broke (exit {proc.returncode}):\n{proc.stderr}")
    outcomes = json.loads(proc.stdout)
    # The same proof as tests/test_selftest.py: every check of the reference run is flagged by a variant.
    ran = {c for o in outcomes if not o["expected"] for c in o["checks"]}
    never = ran - {c for o in outcomes if o["expected"] for c in o["flagged_checks"]}
    return wall, cpu, len(outcomes), proc.returncode == 0 and all(o["ok"] for o in outcomes) and not never


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=0, help="parallel runs (0: CPU count)")
    parser.add_argument("--complete", action="store_true", help="the self-test's complete mode")
    args = parser.parse_args()
    for _ in range(args.repeat):
        load = os.getloadavg()[0]
        wall, cpu, runs, ok = one_run(args.jobs, args.complete)
        verdict = "yes" if ok else "NO"
        mode = "complete" if args.complete else "focused"
        print(f"| {time.strftime('%Y-%m-%d')} | {mode} | {runs} | {wall:.0f} | {cpu:.0f} | {load:.1f} | {verdict} |")


if __name__ == "__main__":
    main()
