"""Run every clean-room Delta variant through ``lakecert run`` in this one process.

``python -m tests.cleanroom_delta.measure OUT [--seed N] [--only NAME ...] [--directed | --exhaustive]``
writes ``OUT/<name>/`` (the run's output) and ``OUT/summary.json``: per variant, the exit code, the verdict and the
requirements that FAILed or WARNed. ``--summarize OUT`` prints that as lines.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

from conformance.cli import main as lakecert_main
from tests.cleanroom_delta.variants import VARIANTS

PROFILE = "delta-row-conflicts"


CORRECT = "correct"  # the correct engine, run first: the variants' verdicts mean nothing if it fails


def run_one(name: str, out: Path, seed: str, directed: bool = False) -> dict[str, Any]:
    suffix = "DirectedTarget" if directed else "Target"
    where = "target:CleanDeltaTarget" if name == CORRECT else f"variants:{name}{suffix}"
    target = f"tests.cleanroom_delta.{where}"
    argv = ["run", "--target", target, "--profile", PROFILE, "--seed", seed, "--out", str(out / name)]
    with contextlib.redirect_stdout(io.StringIO()):
        code = lakecert_main(argv)
    data = json.loads((out / name / "results.json").read_text())
    broken = {r: v["status"] for r, v in data["requirements"].items() if v["status"] in ("FAIL", "WARN", "ERROR")}
    return {"exit": code, "verdict": data["verdict"], "broken": broken}


def classify(run: dict[str, Any], expected: str | None) -> str:
    """caught (FAIL on the rule it breaks), caught elsewhere (FAILs of other rules only), no FAIL
    (not certified only because a rule was NOT_RUN), missed (certified)."""
    if expected is None:
        return str(run["verdict"])
    if run["verdict"] == "CERTIFIED":
        return "missed"
    if not run["broken"]:  # not certified only because a rule stayed NOT_RUN (the directed budget)
        return "no FAIL"
    return "caught" if run["broken"].get(expected) == "FAIL" else "caught elsewhere"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--summarize", action="store_true")
    budget = parser.add_mutually_exclusive_group()  # default: each variant's own ``exhaustive``
    budget.add_argument("--directed", action="store_true", help="every variant: the directed checks only")
    budget.add_argument("--exhaustive", action="store_true", help="every variant: every schedule")
    args = parser.parse_args(argv)
    if args.summarize:
        expected = {v.name: v.expected for v in VARIANTS}
        for name, r in json.loads((args.out / "summary.json").read_text()).items():
            print(f"{name:34} {classify(r, expected.get(name)):16} exit {r['exit']} {sorted(r['broken'])}")
        return 0
    names = args.only or [*([] if args.directed else [CORRECT]), *(v.name for v in VARIANTS)]
    own = {v.name: not v.exhaustive for v in VARIANTS}
    directed = {n: args.directed or (not args.exhaustive and own.get(n, False)) for n in names}
    summary = {name: run_one(name, args.out, args.seed, directed[name]) for name in names}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
