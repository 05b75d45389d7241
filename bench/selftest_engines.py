"""Benchmark: CPU of the self-test's engine runs, the reference and every engine variant.

Runs them one after another as ``lakecert selftest`` does (``selftest.run_target``, a forked
``lakecert run`` each), the reference on the two engine profiles and each variant on the profiles
the self-test gives it, and prints each run's CPU (user + system of the forked run) and the total.
Not a test: nothing here asserts a time.

    .venv/bin/python bench/selftest_engines.py OUT_DIR
"""

from __future__ import annotations

import resource
import shutil
import sys
import time
from pathlib import Path

from conformance import selftest
from reference_impl.faults.registry import all_faults


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    out = Path(sys.argv[1])
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    names = ["reference"] + [f"faulty:{f.name}" for f in all_faults().values() if f.side == "engine"]
    total, began = 0.0, time.perf_counter()
    for name in names:
        profiles = selftest._engine_profiles(name) or ["iceberg-row-delta", "delta-row-conflicts"]
        before = _children_cpu()
        _, res = selftest.run_target(name, out / name.replace(":", "_"), profiles)
        cpu = _children_cpu() - before
        total += cpu
        print(f"{name:45} {cpu:6.2f} s CPU {res['verdict']}", flush=True)
    print(f"{len(names)} runs: {total:.1f} CPU s, {time.perf_counter() - began:.0f} s wall")


if __name__ == "__main__":
    main()
