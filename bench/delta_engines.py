"""Benchmark: profile ``delta-row-conflicts`` on a real Delta engine (``delta-spark``, ``delta-rs-engine``,
``delta-kernel``).

Runs the profile once (or reads a finished run with ``--from DIR``) and prints, from its
``results.json``: the run's wall time, the checks by outcome, the first check's time (it pays for
the engine's start, e.g. the SparkSession), the time per schedule (without the model's plan: of
the checks that ran every schedule they hold, PASS check time over its number of schedules; with
it: the checks' time over the engine runs the runner made, ``run_info.held_schedules``), and the
time to the first counterexample. ``--plan`` prints instead, from the model alone (no engine), the
engine runs the explorer's plan needs against one run per schedule, per engine preset, for every
configuration and for those the engine writes. For ``delta-kernel``, which skips the schedules
with an operation its public write API cannot build, a check's time is divided by the schedules it
ran. Not a test: nothing here asserts a time.

    .venv/bin/python bench/delta_engines.py [--target delta-spark|delta-rs-engine|delta-kernel]
        [--config FILE] [--from DIR] [--plan]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.checks.delta_conflicts import scenarios as sc
from conformance.checks.delta_conflicts.plan import PRESETS, delta_plan
from conformance.checks.explorer.plan import Planned, classes
from conformance.contract.delta_engine import DeltaSetup, IsolationLevel

REPO = Path(__file__).resolve().parents[1]

# check function -> the scenario it runs (checks/delta_conflicts/)
SCENARIOS = {
    "test_deletes_racing_writes_to_their_file": sc.RESURRECTION_PAIRS,
    "test_concurrent_writes_of_one_row": sc.DUPLICATE_PAIRS,
    "test_optimize_racing_row_writes": sc.COMPACTION_PAIRS,
    "test_serializable_write_racing_an_append": sc.SERIALIZABLE_PAIRS,
    "test_write_serializable_write_racing_a_merge": sc.WRITE_SERIALIZABLE_PAIRS,
    "test_aborted_writes_leave_no_trace": sc.ABORT_PAIRS,
    "test_commits_get_their_own_versions": sc.VERSION_PAIRS,
    "test_every_two_operation_schedule": sc.EVERY_TWO_OPERATION_SCHEDULE,
    "test_loser_checks_unpublished_winners": sc.UNPUBLISHED_WINNERS,
    "test_loser_checks_before_proposing_again": sc.PUBLISHED_WINNERS,
}
SCHEDULES = {function: len(scenario.schedules) for function, scenario in SCENARIOS.items()}
# the checks whose schedules say when commits are published: run once on a catalog-managed table
PUBLISHING = {"test_loser_checks_unpublished_winners", "test_loser_checks_before_proposing_again"}


def schedules_run(target: str, test: str) -> int:
    """The schedules a PASS check ran: on a catalog-managed table (``-cm``) other checks run each
    schedule with both publication lags; Kernel skips the schedules it cannot build."""
    function = _function(test)
    sliced = re.search(r"-(\d+)of(\d+)\]$", test)  # one part of a check cut into parts (sc.slices)
    twice = re.search(r"-cm(-\d+of\d+)?\]$", test) is not None and function not in PUBLISHING
    if target == "delta-kernel":
        from conformance.adapters.delta_kernel.engine import SUPPORTED

        ran = sum(1 for s in SCENARIOS[function].schedules if all(op.kind in SUPPORTED for _, op in s.ops))
    else:
        ran = SCHEDULES[function]
    ran *= 2 if twice else 1
    return len(range(int(sliced[1]) - 1, ran, int(sliced[2]))) if sliced else ran


# The configurations each engine writes, as observed (docs/compatibility.md); the others are NOT_APPLICABLE.
WRITES: dict[str, Callable[[DeltaSetup], bool]] = {
    "delta-spark": lambda c: c.isolation is IsolationLevel.SERIALIZABLE and not c.catalog_managed,
    "delta-rs-1.6": lambda c: not c.deletion_vectors and not c.catalog_managed,
}


def plan_figures() -> None:
    """Engine runs before (one per schedule a check holds) and after the plan (one per class)."""
    print("| engine preset | checks | configurations | schedules held | distinct | engine runs, planned | ratio |")
    print("|---|---|---|---|---|---|---|")
    budgets = {"directed": [s for s in sc.ALL_SCENARIOS if s[0] is not sc.EVERY_TWO_OPERATION_SCHEDULE]}
    budgets["exhaustive"] = [s for s in sc.ALL_SCENARIOS if s[0] is sc.EVERY_TWO_OPERATION_SCHEDULE]
    for name, writes in WRITES.items():
        plan = delta_plan(PRESETS[name])
        for budget, scenarios in budgets.items():
            everything: Callable[[DeltaSetup], bool] = lambda c: True  # noqa: E731
            for which, keep in ((f"all {len(sc.CONFIGS)}", everything), ("written", writes)):
                setups: list[DeltaSetup] = [c for c in sc.CONFIGS if keep(c)]
                work = plan.work(Planned(c, s) for s, cs in scenarios for c in cs if c in setups)
                # the runner gives every configuration its own first run (it learns a refusal)
                runs = classes(plan, work) + len({c for c, _ in work})
                print(
                    f"| {name} | {budget} | {which} | {len(work)} | {len(set(work))} | {runs} (at most) "
                    f"| {len(work) / runs:.1f}x |"
                )


def run(target: str, config: str | None, out: Path) -> None:
    cmd = [sys.executable, "-m", "conformance.cli", "run", "--target", target, "--profile", "delta-row-conflicts"]
    cmd += ["--out", str(out)] + (["--config", config] if config else [])
    subprocess.run(cmd, cwd=REPO, check=False, stdout=subprocess.DEVNULL)


def _function(test: str) -> str:
    return test.rsplit("::", 1)[-1].split("[")[0]


def report(results: dict[str, Any]) -> None:
    info, checks = results["run_info"], results["results"]
    print(f"target: {info['target']} ({info['target_version']}); machine: {os.cpu_count()} cores")
    print("| figure | value |\n|---|---|")
    print(f"| whole run | {info['duration_s']:.0f} s wall, {len(checks)} checks |")
    counts = collections.Counter(c["status"] for c in checks)
    print(f"| outcomes | {', '.join(f'{n} {s}' for s, n in sorted(counts.items()))} |")
    print(f"| first check (engine start included) | {checks[0]['duration_s']:.1f} s |")
    held = info.get("held_schedules", {}).get("delta") or {}
    if held:
        print(
            f"| schedules asked by the checks / engine runs | {held['asked']} / {held['engine_runs']} "
            f"(plan: {held['plan'] or 'none'}) |"
        )
    if held.get("plan"):
        # planned: the checks wait for the runner's runs, made one at a time
        total = sum(c["duration_s"] for c in checks)
        per_run = total / max(int(held["engine_runs"]), 1)
        print(f"| time per engine run (checks' time over runs, start-up included) | {per_run:.1f} s |")
    # The first check pays for the engine's start: left out of the per-schedule figure.
    per = (
        []
        if held.get("plan")
        else [
            c["duration_s"] / schedules_run(info["target"], c["test"])
            for c in checks[1:]
            if c["status"] == "PASS" and _function(c["test"]) in SCHEDULES
        ]
    )
    if per:
        print(f"| time per schedule (PASS checks, median; n={len(per)}) | {statistics.median(per):.1f} s |")
        print(f"| time per schedule (slowest check) | {max(per):.1f} s |")
    na = [c["duration_s"] for c in checks if c["status"] == "NOT_APPLICABLE"]
    if na:
        print(f"| NOT_APPLICABLE check (median) | {statistics.median(na):.2f} s |")
    elapsed = 0.0
    for c in checks:  # results.json lists checks in the order they ran
        elapsed += c["duration_s"]
        if c["status"] == "FAIL":
            took = f"{c['duration_s']:.1f} s of check time, {elapsed:.0f} s into the run"
            print(f"| first counterexample: {c['test'].rsplit('::', 1)[-1]} | {took} |")
            break
    else:
        print("| first counterexample | none |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="delta-spark")
    parser.add_argument(
        "--config", help="lakecert config, e.g. with `targets: {delta-spark: {options: {exhaustive: true}}}`"
    )
    parser.add_argument("--from", dest="source", type=Path, help="read this finished run instead of running")
    parser.add_argument("--plan", action="store_true", help="the plan's engine runs, from the model alone")
    args = parser.parse_args()
    if args.plan:
        plan_figures()
        return
    if args.source is not None:
        report(json.loads((args.source / "results.json").read_text()))
        return
    with tempfile.TemporaryDirectory() as tmp:
        run(args.target, args.config, Path(tmp) / "run")
        report(json.loads((Path(tmp) / "run" / "results.json").read_text()))


if __name__ == "__main__":
    main()
