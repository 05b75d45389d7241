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
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def run(target: str, config: str | None, out: Path) -> None:
    cmd = [str(REPO / ".venv/bin/lakecert"), "run", "--target", target, "--profile", "iceberg-row-delta"]
    cmd += ["--out", str(out)] + (["--config", config] if config else [])
    subprocess.run(cmd, cwd=REPO, check=False, stdout=subprocess.DEVNULL)


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
    args = parser.parse_args()
    if args.source is not None:
        report(json.loads((args.source / "results.json").read_text()))
        return
    with tempfile.TemporaryDirectory() as tmp:
        run(args.target, args.config, Path(tmp) / "run")
        report(json.loads((Path(tmp) / "run" / "results.json").read_text()))


if __name__ == "__main__":
    main()
