"""Benchmark: exhaustive exploration of the Iceberg model (conformance/model/iceberg).

For each preset and table configuration at the spec's bounds (2 writers, 3 write operations, one
row), prints the distinct states, the complete schedules the exploration covers (counted, not
walked one by one: states are memoised), schedules covered per second, and the time to the first
counterexample (breadth first, so it is a shortest one). ``--full`` turns partial-order reduction
off, so every interleaving of every step counts. Not a test: nothing here asserts a time.

    .venv/bin/python bench/iceberg_model.py [--repeat 3] [--compactions 0] [--full]
"""

from __future__ import annotations

import argparse
import os
import platform
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
    first = [explore(model, limits, stop_at_first=True, reduce=reduce) for _ in range(repeat)]
    seconds = statistics.median(r.seconds for r in full)
    r = full[0]
    assert r.schedules is not None  # a full exploration counts them
    found = first[0].counterexample
    to_first = f"{statistics.median(x.seconds for x in first):.2f} s ({len(found.actions)} steps)" if found else "none"
    return (
        f"| {preset.name} | {setup.describe()} | {r.states} | {r.schedules} | {r.histories} | "
        f"{seconds:.2f} | {r.schedules / seconds:,.0f} | {to_first} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compactions", type=int, default=0)
    parser.add_argument("--full", action="store_true", help="no partial-order reduction")
    args = parser.parse_args()
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
