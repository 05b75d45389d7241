"""Benchmark: wall and CPU time of the default run against the reference target.

Runs `lakecert run` (the default: every profile of the target, default budget; or ``--profile``)
N times in fresh processes, as a user would, and prints the figures as a Markdown row for
docs/benchmarks.md. CPU is the run's user + system time, which a loaded machine does not change
much. Not a test: nothing here asserts a time.

    .venv/bin/python bench/delta_profiles.py [--repeat 5] [--target reference] [--profile P,Q | --delta]
        [--jobs N|auto] [--base DIR] [--before CHECKOUT]

``--jobs`` is passed to ``lakecert run`` (processes sharing the checks; default: the run's own
default). ``--base`` is where the runs' folders go (default: the system's temporary folder): file
creation on this project's VM disk costs from 0.05 to 1 ms of kernel time depending on how many
files were deleted shortly before, so the system CPU is printed apart from the user CPU.

``--before`` times another checkout of lakecert (a ``git worktree`` of an earlier commit) in the
same session, its runs and this checkout's taking turns: this project's VMs drift by several percent
from one minute to the next, more than a small change saves, so a comparison is only fair run by
run. The other checkout's code is what ``python -m conformance.cli`` imports when started in it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def one_run(
    target: str, out: Path, profile: str | None, jobs: str | None, checkout: Path | None = None
) -> tuple[float, float, int, tuple[float, float]]:
    started = time.perf_counter()
    user_before, sys_before = _children_cpu()
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--target", target, "--out", str(out)]
        + (["--profile", profile] if profile else [])
        + (["--jobs", jobs] if jobs else []),
        capture_output=True,
        text=True,
        cwd=checkout,
    )
    wall = time.perf_counter() - started
    user_after, sys_after = _children_cpu()
    cpu = (user_after - user_before, sys_after - sys_before)
    # Exit 2 (bad usage, an unknown profile) leaves no results.json: say why instead of a traceback.
    if proc.returncode not in (0, 1) or not (out / "results.json").exists():
        raise SystemExit(f"the run broke (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    res = json.loads((out / "results.json").read_text())
    return wall, float(res["run_info"]["duration_s"]), len(res["results"]), cpu


def _children_cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime, usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--target", default="reference")
    parser.add_argument("--profile", help="comma-separated profiles (default: the target's all)")
    parser.add_argument("--delta", action="store_true", help="every Delta profile (delta-*), not the Iceberg ones")
    parser.add_argument("--jobs", help="lakecert run --jobs (default: the run's own)")
    parser.add_argument("--base", help="folder for the runs' output (default: the temporary folder)")
    parser.add_argument("--before", type=Path, help="another checkout, timed turn about with this one")
    args = parser.parse_args()
    if args.delta:
        from conformance.requirements import profiles

        args.profile = ",".join(p for p in profiles() if p.startswith("delta-"))
    checkouts: dict[str, Path | None] = {"this checkout": None}
    if args.before:
        checkouts = {f"before ({args.before})": args.before.resolve(), **checkouts}
    runs: dict[str, list[tuple[float, float, int, tuple[float, float]]]] = {name: [] for name in checkouts}
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(dir=args.base) as tmp:
        for i in range(args.repeat):
            for k, (name, checkout) in enumerate(checkouts.items()):
                out = Path(tmp) / f"{i}-{k}"
                runs[name].append(one_run(args.target, out, args.profile, args.jobs, checkout))
    print(f"machine: {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}")
    print(f"load average: {load:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"profiles: {args.profile or 'all of the target'}")
    print(f"jobs: {args.jobs or 'the run default'}; output under {args.base or tempfile.gettempdir()}")
    print(
        "| code | target | checks | runs | wall median (s) | wall min-max (s) | in-suite median (s) "
        "| CPU median (s) | of which system (s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, done in runs.items():
        walls = [w for w, _, _, _ in done]
        cpus = [u + s for _, _, _, (u, s) in done]
        systems = [s for _, _, _, (_, s) in done]
        print(
            f"| {name} | {args.target} | {done[-1][2]} | {args.repeat} | {statistics.median(walls):.2f} | "
            f"{min(walls):.2f}-{max(walls):.2f} | {statistics.median([d[1] for d in done]):.2f} "
            f"| {statistics.median(cpus):.2f} | {statistics.median(systems):.2f} |"
        )


if __name__ == "__main__":
    main()
