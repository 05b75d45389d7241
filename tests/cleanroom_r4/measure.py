"""Run the round-4 (or a later round's) clean-room variants through lakecert's CLI entry point, in this process.

``python -m tests.cleanroom_r4.measure OUT [--seeds 1-10] [--only NAME ...] [--variants MODULE]``
(``--variants tests.cleanroom_r5.variants``: round 5, written the same way): as round 3's
(``tests/cleanroom_r3/measure.py``, whose runner and judgement it uses), each variant on the profile
it targets; the correct baseline is round 3's durable target, which both rounds build on.
"""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path
from typing import Any

from tests.cleanroom_r3.measure import BASELINE_PROFILES, judge, run_one

BASELINE = "tests.cleanroom_r3.variants:CORRECT_DURABLE"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--variants", default="tests.cleanroom_r4.variants", help="the module whose VARIANTS run")
    ns = parser.parse_args()
    lo, _, hi = ns.seeds.partition("-")
    ns.out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, dict[str, Any]] = {}
    variants = importlib.import_module(ns.variants).VARIANTS
    runs = [("baseline", BASELINE, BASELINE_PROFILES, None)] + [(v.name, v.target, v.profile, v) for v in variants]
    for name, spec, profile, variant in runs:
        if ns.only and name not in ns.only:
            continue
        for seed in range(int(lo), int(hi or lo) + 1):
            code, res = run_one(spec, profile, seed, ns.out / f"{name}-{seed}")
            row = summary.setdefault(name, {})[str(seed)] = judge(variant, code, res)
            print(
                f"{name:40} seed {seed:2}  {'ok  ' if row['ok'] else 'MISS'} {row.get('caught', '')} {row['flagged']}"
            )
    (ns.out / "summary.json").write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
