"""Seed robustness: is each faulty variant caught by the rule it breaks on EVERY seed, and the
reference (with the conformant variants) certified on every seed? A catch that depends on the seed
is a miss (issue 28). Not a test: it takes minutes; prints a Markdown table for docs/mutation.md.

    .venv/bin/python bench/seeds.py [--seeds 1-10] [--module catalog client ...]
                                    [--fault NAME ...] [--certified SPEC ...] [--expect SPEC=RULE,...]
                                    [--full] [--jobs 0]

Each variant runs and is judged as the self-test runs and judges it (``conformance/selftest.py``:
forked from this process, only the checks of the rules it breaks) unless ``--full``, the self-test's
complete mode: every profile of its side, as a vendor would run it. ``--module`` picks the
variants registered by ``reference_impl/faults/<m>_faults.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conformance.selftest import _warm, outcome
from reference_impl.faults.registry import all_faults


def seeds_of(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def judged(target: str, breaks: tuple[str, ...], seed: int, out: Path, full: bool) -> str:
    """One run's mark, judged as the self-test judges it: "ok" when as expected, else what it got."""
    o = outcome(target, breaks, out / f"seed-{seed}", full, seed)
    if o.ok:
        return "ok"
    if not breaks:
        return f"{o.verdict} (exit {o.exit_code})"
    missing = ",".join(sorted(set(breaks) - set(o.caught_by)))
    return f"missed {missing}" + (f"; flagged {list(o.caught_by)}" if o.caught_by else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="1-10")
    parser.add_argument("--module", nargs="*", default=None, help="default: every registered variant")
    parser.add_argument("--fault", nargs="*", default=None, help="these variants instead of --module's")
    parser.add_argument("--certified", nargs="*", default=[], help="more targets that must certify (module:Class)")
    parser.add_argument(
        "--expect", nargs="*", default=[], help="more targets that must be caught: module:Class=RULE[,RULE]"
    )
    parser.add_argument("--full", action="store_true", help="every profile of the variant's side")
    parser.add_argument("--jobs", type=int, default=0)
    ns = parser.parse_args()
    _warm()
    faults = all_faults()
    if ns.fault:
        chosen = [faults[n] for n in ns.fault]
    elif ns.module:
        modules = {f"reference_impl.faults.{m}_faults" for m in ns.module}
        chosen = [f for f in faults.values() if f.cls.__module__ in modules]
    else:
        chosen = list(faults.values())
    runs = [("reference", ())] + [(t, ()) for t in ns.certified]
    runs += [(f"faulty:{f.name}", f.breaks) for f in chosen]
    runs += [(t, tuple(rules.split(","))) for t, _, rules in (e.partition("=") for e in ns.expect)]
    seeds = seeds_of(ns.seeds)
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=ns.jobs or os.cpu_count() or 2) as pool:
        marks = {(t, s): pool.submit(judged, t, b, s, Path(tmp), ns.full) for t, b in runs for s in seeds}
        print(f"| variant | rules | {' | '.join(str(s) for s in seeds)} |")
        print(f"|---|---|{'---|' * len(seeds)}")
        bad = 0
        for t, b in runs:
            row = [marks[(t, s)].result() for s in seeds]
            bad += sum(m != "ok" for m in row)
            print(f"| {t} | {', '.join(b) or 'certified'} | {' | '.join(row)} |", flush=True)
    print(f"\n{bad} run(s) not as expected", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
