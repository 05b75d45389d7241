"""Benchmark: the ``iceberg-row-delta`` profile on real Spark (target ``spark-iceberg``).

Runs the profile once (or reads a finished run with ``--from DIR``) and prints, from its
``results.json``: the run's wall time, the checks by outcome, the first check's time (it pays for
the SparkSession and the REST catalog), the median and slowest applicable check, and the time to
the first counterexample, both as that check's own time and as time since the run began. Not a
test: nothing here asserts a time.

    .venv/bin/python bench/spark_iceberg.py [--target spark-pyiceberg] [--config FILE] [--from DIR]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def run(target: str, config: str | None, out: Path, extra: list[str]) -> dict[str, float]:
    """Run the profile; the wall time of the whole command and, read from pytest's progress
    characters as they are printed, the seconds from its start to the first ``F``."""
    cmd = [sys.executable, "-m", "conformance.cli", "run", "--target", target, "--profile", "iceberg-row-delta"]
    cmd += ["--out", str(out)] + (["--config", config] if config else []) + extra
    began = time.perf_counter()
    seen: dict[str, float] = {}
    with subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdout is not None
        proc.stdout.readline()  # "lakecert: certifying ...": pytest's progress characters follow
        while char := proc.stdout.read(1):
            if char in (b".", b"F", b"s", b"E") and "first check done" not in seen:
                seen["first check done"] = time.perf_counter() - began
            if char == b"F" and "first F" not in seen:
                seen["first F"] = time.perf_counter() - began
    seen["command wall"] = time.perf_counter() - began
    return seen


def report(results: dict[str, Any]) -> None:
    info, checks = results["run_info"], results["results"]
    applicable = [c for c in checks if c["status"] in ("PASS", "FAIL", "WARN")]
    print(f"target: {info['target']} ({info['target_version']}); machine: {os.cpu_count()} cores")
    print("| figure | value |\n|---|---|")
    print(f"| whole profile | {info['duration_s']:.0f} s wall, {len(checks)} checks |")
    counts = collections.Counter(c["status"] for c in checks)
    print(f"| outcomes | {', '.join(f'{n} {s}' for s, n in sorted(counts.items()))} |")
    print(f"| first check (SparkSession and REST catalog start) | {checks[0]['duration_s']:.1f} s |")
    if applicable:
        durations = [c["duration_s"] for c in applicable]
        print(f"| median applicable check | {statistics.median(durations):.2f} s |")
        print(f"| slowest applicable check | {max(durations):.1f} s |")
    elapsed = 0.0
    for c in checks:  # results.json lists checks in the order they ran
        elapsed += c["duration_s"]
        if c["status"] == "FAIL":
            name = c["test"].rsplit("::", 1)[-1]
            took = f"{c['duration_s']:.2f} s of check time, {elapsed:.0f} s into the run"
            print(f"| first counterexample: {name} | {took} |")
            break
    else:
        print("| first counterexample | none |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="spark-iceberg")
    parser.add_argument("--config", help="lakecert config, e.g. with `iceberg: {matrix: full, exhaustive: true}`")
    parser.add_argument("--from", dest="source", type=Path, help="read this finished run instead of running")
    parser.add_argument("extra", nargs="*", help="more `lakecert run` options, after --, e.g. -- --fail-fast")
    args = parser.parse_args()
    if args.source is not None:
        report(json.loads((args.source / "results.json").read_text()))
        return
    with tempfile.TemporaryDirectory() as tmp:
        seen = run(args.target, args.config, Path(tmp) / "run", args.extra)
        report(json.loads((Path(tmp) / "run" / "results.json").read_text()))
    for what, seconds in seen.items():
        print(f"| {what}, from the command's start | {seconds:.1f} s |")


if __name__ == "__main__":
    main()
