"""Benchmark: exhaustive exploration of the Iceberg model (conformance/model/iceberg).

For each preset and table configuration at the spec's bounds (2 writers, 3 write operations, one
row), prints the distinct states, the complete schedules the exploration covers (counted, not
walked one by one: states are memoised), schedules covered per second, and the time (wall and
CPU: the CPU figure holds on a loaded machine) to the first counterexample (breadth first, so it
is a shortest one). ``--full`` turns partial-order reduction
off, so every interleaving of every step counts. Not a test: nothing here asserts a time.

``--fizzbee`` instead runs the 16 configurations of the FizzBee comparison (docs/benchmarks.md):
FizzBee's workload (non-key predicates, re-inserts, writes only when their predicate matches),
judged by lakecert's rules (a serial order under snapshot isolation, commit order under
serializable isolation, no dangling delete files, one version per commit), format v2, the Spark
preset (what FizzBee's spec models), each with 0 and 1 compaction; the verdict, states, CPU and wall seconds
to the first counterexample, or of the full search when there is none.

    .venv/bin/python bench/iceberg_model.py [--repeat 3] [--compactions 0] [--full]
    .venv/bin/python bench/iceberg_model.py --fizzbee
    .venv/bin/python bench/iceberg_model.py --seed [--repeat 5]

``--seed`` times only the issue's figure: the seed configuration's first counterexample (merge-on-read
UPDATE and DELETE, snapshot isolation, format v2, the Spark preset, the spec's bounds), CPU and wall
seconds, median of ``--repeat`` fresh explorations, with the load average before and after.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import resource
import statistics
import time

from conformance.contract.iceberg import Isolation, Mode, TableSetup
from conformance.model.iceberg import CORRECTED, SPARK, Bounds, IcebergModel, Preset
from conformance.schedules.enumerate import explore

MOR, COW = Mode.MERGE_ON_READ, Mode.COPY_ON_WRITE
TABLES = [
    TableSetup(MOR, MOR, Isolation.SNAPSHOT, 2),
    TableSetup(MOR, MOR, Isolation.SNAPSHOT, 3),
    TableSetup(MOR, MOR, Isolation.SERIALIZABLE, 2),
    TableSetup(COW, COW, Isolation.SNAPSHOT, 2),
]


def row(preset: Preset, setup: TableSetup, limits: Bounds, repeat: int, reduce: bool) -> str:
    model = IcebergModel(setup, preset)
    full = [explore(model, limits, reduce=reduce) for _ in range(repeat)]
    first, cpu = [], []
    for _ in range(repeat):
        began = time.process_time()
        first.append(explore(model, limits, stop_at_first=True, reduce=reduce))
        cpu.append(time.process_time() - began)
    seconds = statistics.median(r.seconds for r in full)
    r = full[0]
    assert r.schedules is not None  # a full exploration counts them
    found = first[0].counterexample
    wall = statistics.median(x.seconds for x in first)
    to_first = f"{wall:.2f} s, CPU {statistics.median(cpu):.2f} s ({len(found.actions)} steps)" if found else "none"
    return (
        f"| {preset.name} | {setup.describe()} | {r.states} | {r.schedules} | {r.histories} | "
        f"{seconds:.2f} | {r.schedules / seconds:,.0f} | {to_first} |"
    )


def fizzbee_rows() -> None:
    print("| update | delete | isolation | compactions | verdict | states | CPU (s) | wall (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for update, delete, isolation, k in itertools.product((MOR, COW), (MOR, COW), Isolation, (0, 1)):
        model = IcebergModel(TableSetup(update, delete, isolation, 2), SPARK)
        limits = Bounds(max_compactions=k, predicates=True, reinsert=True, must_match=True)
        cpu, wall = time.process_time(), time.perf_counter()
        r = explore(model, limits, stop_at_first=True)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        found = r.counterexample
        verdict = f"{found.anomalies[0].kind.value} ({len(found.actions)} steps)" if found else "holds"
        print(
            f"| {update.value} | {delete.value} | {isolation.value} | {k} | {verdict} | {r.states} | "
            f"{cpu:.2f} | {wall:.2f} |",
            flush=True,
        )
    print(f"\npeak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def seed(repeat: int) -> None:
    model = IcebergModel(TableSetup(MOR, MOR, Isolation.SNAPSHOT, 2), SPARK)
    load = os.getloadavg()[0]
    cpu, wall, steps, states = [], [], 0, 0
    for _ in range(repeat):
        began = time.process_time()
        r = explore(model, Bounds(), stop_at_first=True)
        cpu.append(time.process_time() - began)
        wall.append(r.seconds)
        assert r.counterexample is not None  # the seed configuration's resurrected row
        steps, states = len(r.counterexample.actions), r.states
    print(f"first counterexample: {steps} steps, {states} states reached")
    print(f"CPU median {statistics.median(cpu):.3f} s (min {min(cpu):.3f}, max {max(cpu):.3f}) of {repeat}")
    print(f"wall median {statistics.median(wall):.3f} s (min {min(wall):.3f}, max {max(wall):.3f})")
    print(f"load average (1 min) {load:.1f} before, {os.getloadavg()[0]:.1f} after")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compactions", type=int, default=0)
    parser.add_argument("--full", action="store_true", help="no partial-order reduction")
    parser.add_argument("--fizzbee", action="store_true", help="the FizzBee comparison's 16 configurations")
    parser.add_argument("--seed", action="store_true", help="only the seed configuration's first counterexample")
    args = parser.parse_args()
    if args.seed:
        seed(args.repeat)
        return
    if args.fizzbee:
        print(f"machine: {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}")
        began = time.perf_counter()
        fizzbee_rows()
        print(f"total {time.perf_counter() - began:.1f} s")
        return
    limits = Bounds(max_compactions=args.compactions)
    began = time.perf_counter()
    print(f"machine: {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}")
    print(f"bounds: {limits}; partial-order reduction {'off' if args.full else 'on'}\n")
    print("| preset | table | states | schedules | histories | explore (s) | schedules/s | first counterexample |")
    print("|---|---|---|---|---|---|---|---|")
    for preset in (SPARK, CORRECTED):
        for setup in TABLES:
            print(row(preset, setup, limits, args.repeat, not args.full), flush=True)
    print(f"\ntotal {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
