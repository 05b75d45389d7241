"""Benchmark: time to an interop verdict (profile delta-cm-interop) for each kind of pairing.

Pairings: the reference client through its own catalog (in-process), the reference client and
Delta Kernel (one JVM per run) through `lakecert serve` reached by the `uc` target
(`--catalog-target uc`). Each run is a fresh `lakecert run` process against a fresh server
process on loopback; "wall" includes interpreter and JVM start-up, "in-suite" is the run's own
`duration_s`. Prints a Markdown table and the command that produced it. Not a test: nothing here
asserts a time.

    .venv/bin/python bench/interop.py [--repeat 3] [--pairings reference,reference-uc,kernel-uc]
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

from reference_impl.server.runner import ServerProcess

PAIRINGS = {
    "reference": (["--target", "reference", "--profile", "delta-cm-interop"], False),
    "reference-uc": (["--target", "reference", "--catalog-target", "uc"], True),
    "kernel-uc": (["--target", "delta-kernel", "--catalog-target", "uc"], True),
}


def one_run(args: list[str], served: bool, work: Path) -> tuple[float, float, str, int]:
    """(wall s, in-suite s, verdict, checks) of one `lakecert run`."""
    out = work / "out"
    env = dict(os.environ)
    command = [sys.executable, "-m", "conformance.cli", "run", *args, "--out", str(out)]
    if served:
        with ServerProcess(str(work / "catalog.sqlite")) as server:
            env["LAKECERT__targets__uc__options__url"] = server.url
            start = time.perf_counter()
            subprocess.run(command, env=env, capture_output=True, check=False)
            wall = time.perf_counter() - start
    else:
        start = time.perf_counter()
        subprocess.run(command, env=env, capture_output=True, check=False)
        wall = time.perf_counter() - start
    res = json.loads((out / "results.json").read_text())
    return wall, float(res["run_info"]["duration_s"]), str(res["verdict"]), len(res["results"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pairings", default=",".join(PAIRINGS))
    opts = parser.parse_args()
    print("| pairing | checks | runs | verdict | wall median (s) | wall min-max (s) | in-suite median (s) |")
    print("|---|---|---|---|---|---|---|")
    for name in opts.pairings.split(","):
        args, served = PAIRINGS[name]
        walls, suites, verdicts, checks = [], [], set(), 0
        for _ in range(opts.repeat):
            with tempfile.TemporaryDirectory() as tmp:
                wall, suite, verdict, checks = one_run(args, served, Path(tmp))
            walls.append(wall)
            suites.append(suite)
            verdicts.add(verdict)
        print(
            f"| {name} | {checks} | {opts.repeat} | {'/'.join(sorted(verdicts))} | {statistics.median(walls):.1f} "
            f"| {min(walls):.1f}-{max(walls):.1f} | {statistics.median(suites):.1f} |"
        )
    print(f"\nCommand: .venv/bin/python bench/interop.py --repeat {opts.repeat} --pairings {opts.pairings}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
