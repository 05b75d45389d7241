"""Where a run's CPU goes: ``lakecert run`` in one process (``--jobs 1``) under cProfile.

Prints the run's own time by area (a lakecert package such as ``conformance/model``, a
third-party package, the standard library, a C function) and the functions with the most time of
their own. cProfile's overhead inflates small Python calls several times over, so the figures
rank where to look; they are no timings (``delta_profiles.py`` times runs). Not a test.

    .venv/bin/python bench/run_profile.py [--target reference] [--profile P,Q | --delta]
        [--select NODE] [--top 30] [--out DIR] [--save FILE]
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import pstats
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def area(filename: str, function: str) -> str:
    """The part of the code a profiled function belongs to."""
    if filename == "~":
        return f"C: {function}"
    if "site-packages/" in filename:
        return filename.split("site-packages/")[1].split("/")[0]
    if filename.startswith(str(REPO)):
        return "/".join(Path(filename).relative_to(REPO).parts[:2])
    return f"stdlib: {Path(filename).name}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="reference")
    parser.add_argument("--profile", help="comma-separated profiles (default: the target's all)")
    parser.add_argument("--delta", action="store_true", help="every Delta profile (delta-*)")
    parser.add_argument("--select", action="append", default=[], help="one check (repeatable)")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--out", help="the run's output folder (default: a temporary one)")
    parser.add_argument("--save", help="also write the raw profile here (for pstats or snakeviz)")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from conformance.cli import main as lakecert

    if args.delta:
        from conformance.requirements import profiles

        args.profile = ",".join(p for p in profiles() if p.startswith("delta-"))
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["run", "--target", args.target, "--out", args.out or tmp, "--jobs", "1"]
        argv += ["--profile", args.profile] if args.profile else []
        argv += [a for node in args.select for a in ("--select", node)]
        profiler = cProfile.Profile()
        code = profiler.runcall(lakecert, argv)
    stats = pstats.Stats(profiler)
    if args.save:
        stats.dump_stats(args.save)
    own: collections.Counter[str] = collections.Counter()
    for (filename, _line, function), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        own[area(filename, function)] += tottime
    total = sum(own.values())
    print(f"lakecert run exited {code}; {total:.2f} s profiled")
    print("\n| area | own time (s) | share |\n|---|---|---|")
    for name, seconds in own.most_common(args.top):
        print(f"| {name} | {seconds:.3f} | {seconds / total:.1%} |")
    print()
    stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
