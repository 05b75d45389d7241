"""Run every clean-room Delta variant through ``lakecert run`` in this one process.

``python -m tests.cleanroom_delta.measure OUT [--seed N] [--only NAME ...]`` writes ``OUT/<name>/``
(the run's output) and ``OUT/summary.json``: per variant, the exit code, the verdict and the
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


def run_one(name: str, out: Path, seed: str) -> dict[str, Any]:
    where = "target:CleanDeltaTarget" if name == CORRECT else f"variants:{name}Target"
    target = f"tests.cleanroom_delta.{where}"
    argv = ["run", "--target", target, "--profile", PROFILE, "--seed", seed, "--out", str(out / name)]
    with contextlib.redirect_stdout(io.StringIO()):
        code = lakecert_main(argv)
    data = json.loads((out / name / "results.json").read_text())
    broken = {r: v["status"] for r, v in data["requirements"].items() if v["status"] in ("FAIL", "WARN", "ERROR")}
    return {"exit": code, "verdict": data["verdict"], "broken": broken}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--summarize", action="store_true")
    args = parser.parse_args(argv)
    if args.summarize:
        for name, r in json.loads((args.out / "summary.json").read_text()).items():
            print(f"{name:32} exit {r['exit']} {r['verdict']:14} {r['broken']}")
        return 0
    names = args.only or [CORRECT, *(v.name for v in VARIANTS)]
    summary = {name: run_one(name, args.out, args.seed) for name in names}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
