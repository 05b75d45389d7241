"""Benchmark: one deep budget run whole, then split into N parts run one after the other on this
machine (``lakecert run --shard K/N``) and merged (``lakecert merge``); the merged verdicts are
compared with the whole run's check by check, and each part's wall time is printed with the
balance (the slowest part over the mean).

The parts are balanced by the whole run's own check durations (``--shard-costs``), as a CI
matrix would be by an earlier run's results.json; each part's expected cost is printed beside its
wall time. From the whole run's durations and the parts' measured start-up (a part's wall less its
checks' time) it projects the wall time of the same run split over 8 jobs. Not a test: nothing
here asserts a time; the exit code is 1 when a merged verdict differs from the whole run's.

    nice .venv/bin/python bench/shards.py [--target delta-kernel] [--profile delta-row-conflicts]
        [--option exhaustive=true] [--shards 4] [--project 8] [--out DIR] [--from-whole DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conformance.plugin.split import assign, costs_of

REPO = Path(__file__).resolve().parents[1]
LAKECERT = str(REPO / ".venv" / "bin" / "lakecert")


def _run(args: list[str], env: dict[str, str]) -> tuple[int, float]:
    started = time.monotonic()
    proc = subprocess.run([LAKECERT, *args], env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
    return proc.returncode, wall


def _results(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "results.json").read_text())
    return data


def _checks(res: dict[str, Any]) -> dict[str, tuple[str, tuple[str, ...], bool]]:
    return {r["test"]: (r["status"], tuple(r["violated"]), bool(r["premise_broken"])) for r in res["results"]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", default="delta-kernel")
    p.add_argument("--profile", default="delta-row-conflicts")
    p.add_argument(
        "--option", action="append", help="target option key=value (default for delta-kernel: exhaustive=true)"
    )
    p.add_argument("--shards", type=int, default=4)
    p.add_argument("--project", type=int, default=8, help="the matrix size to project the wall time for")
    p.add_argument("--out", help="where the runs go (default: a new temporary folder)")
    p.add_argument("--from-whole", help="a finished whole run of the same budget: not run again")
    args = p.parse_args()

    options = args.option if args.option is not None else (["exhaustive=true"] if args.target == "delta-kernel" else [])
    env = {**os.environ}
    for option in options:
        key, _, value = option.partition("=")
        env[f"LAKECERT__targets__{args.target.replace('-', '_')}__options__{key}"] = value
    out = Path(args.out or tempfile.mkdtemp(prefix="lakecert-bench-shards-"))
    common = ["--target", args.target, "--profile", args.profile]
    print(f"load before: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    print(f"budget: {' '.join(common)} {' '.join(options)}; runs in {out}", flush=True)

    if args.from_whole:
        whole_dir, whole_code, whole_wall = Path(args.from_whole), None, None
    else:
        whole_dir = out / "whole"
        whole_code, whole_wall = _run(["run", *common, "--out", str(whole_dir)], env)
        print(f"whole:   exit {whole_code}, wall {whole_wall:.1f} s", flush=True)
    whole = _results(whole_dir)
    costs_file = str(whole_dir / "results.json")

    walls = []
    parts = []
    for k in range(1, args.shards + 1):
        folder = out / f"part-{k}"
        code, wall = _run(
            ["run", *common, "--shard", f"{k}/{args.shards}", "--shard-costs", costs_file, "--out", str(folder)], env
        )
        shard = _results(folder)["run_info"]["shard"]
        walls.append(wall)
        parts.append(folder)
        print(
            f"part {k}/{args.shards}: exit {code}, wall {wall:.1f} s, {shard['checks']} checks, "
            f"expected {shard['expected_s'][k - 1]:.1f} s of checks",
            flush=True,
        )
    merged_dir = out / "merged"
    merge_code, merge_wall = _run(["merge", *map(str, parts), "--out", str(merged_dir), "--no-allure"], env)
    merged = _results(merged_dir)
    print(f"merge:   exit {merge_code}, wall {merge_wall:.1f} s")

    one, many = _checks(whole), _checks(merged)
    differ = sorted(t for t in one.keys() | many.keys() if one.get(t) != many.get(t))
    same_rules = {k: v["status"] for k, v in whole["requirements"].items()} == {
        k: v["status"] for k, v in merged["requirements"].items()
    }
    print(
        f"checks: whole {len(one)}, merged {len(many)}, differing {len(differ)}; rules equal: {same_rules}; "
        f"verdict whole {whole['verdict']} merged {merged['verdict']}; "
        f"profiles equal: {whole['profiles'] == merged['profiles']}; exit codes equal: "
        f"{whole_code == merge_code if whole_code is not None else 'n/a (--from-whole)'}"
    )
    for t in differ[:20]:
        print(f"  differs: {t}: whole {one.get(t)} merged {many.get(t)}")

    mean = statistics.mean(walls)
    print(
        f"parts' wall: {', '.join(f'{w:.1f}' for w in walls)} s; mean {mean:.1f} s, slowest {max(walls):.1f} s, "
        f"balance (slowest / mean) {max(walls) / mean:.2f}; one after the other {sum(walls):.1f} s"
        + (f" against {whole_wall:.1f} s whole" if whole_wall is not None else "")
    )
    # A part's start-up: its wall less what its checks cost in the whole run (the JVM, the imports,
    # collection; the whole run paid its own start-up once, in its first check's time).
    recorded = {r["test"]: float(r["duration_s"]) for r in whole["results"]}
    overheads = [
        wall - sum(recorded[r["test"]] for r in _results(folder)["results"])
        for folder, wall in zip(parts, walls, strict=True)
    ]
    overhead = statistics.mean(overheads)
    print(f"start-up per part: {', '.join(f'{o:.1f}' for o in overheads)} s (mean {overhead:.1f} s)")
    micro = costs_of(recorded, recorded)
    split = assign(micro, args.project)
    loads = [sum(micro[c] for c in micro if split[c] == k) / 1e6 for k in range(1, args.project + 1)]
    print(
        f"projection, {args.project} jobs: the largest part holds {max(loads):.1f} s of checks "
        f"(mean {statistics.mean(loads):.1f} s, largest single check {max(recorded.values()):.1f} s) "
        f"+ {overhead:.1f} s start-up per part "
        f"= about {max(loads) + overhead:.0f} s per job, plus the merge ({merge_wall:.1f} s)"
    )
    print(f"load after: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    return 1 if differ or not same_rules or whole["verdict"] != merged["verdict"] else 0


if __name__ == "__main__":
    sys.exit(main())
