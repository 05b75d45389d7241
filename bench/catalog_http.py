"""Benchmark: ratification throughput and latency of `lakecert serve` over HTTP.

For each store (SQLite file, PostgreSQL database), table count and writer count, a fresh
`lakecert serve` process on loopback; K writer threads (one HTTP connection each) commit
M times each, round-robin over the tables, as a UC client does: stage a file for the next
version, propose it, and on 409 move to the latest version the conflict names plus one.
Every run is verified afterwards (`history_problems`): no version ratified twice, no gap,
no acknowledged commit missing. Prints a Markdown table and the command that produced it.
Not a test: nothing here asserts a time.

    .venv/bin/python bench/catalog_http.py [--commits 400] [--repeat 1] [--stores sqlite,postgres]
        [--tables 1,16] [--writers 1,8] [--postgres postgresql://...]   # default: a throw-away cluster

The same workload and check (`Storm`, `history_problems`: reference_impl/server/loadgen.py)
and server process (`ServerProcess`: reference_impl/server/runner.py) drive the reliability
tests (tests/test_reliability_*.py, tests/test_postgres_*.py), so the figures here are for a
workload whose outcome those tests check.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from reference_impl.server.runner import ServerProcess
from reference_impl.storage.local import path_to_uri
from tests.tooling.loadgen import Storm, history_problems, listings, make_tables

# tests/pg.py (a throw-away PostgreSQL cluster) is not an installed package: import it from the checkout.
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.pg import Postgres, find_bin_dir, new_database  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass(frozen=True)
class Row:
    """One configuration, one run: ``commits`` ratifications in ``wall_s``."""

    store: str
    tables: int
    writers: int
    commits: int
    wall_s: float
    conflicts: int
    latencies_ms: list[float]


def markdown(runs: list[Row]) -> str:
    """A table row for the runs of one configuration: median throughput, latencies of all runs."""
    first, lat = runs[0], [x for r in runs for x in r.latencies_ms]
    rate = statistics.median(r.commits / r.wall_s for r in runs)
    conflicts = statistics.median(r.conflicts for r in runs)
    return (
        f"| {first.store} | {first.tables} | {first.writers} | {first.commits} x {len(runs)} | {rate:.0f} |"
        f" {statistics.median(lat):.1f} | {percentile(lat, 0.99):.1f} | {conflicts:.0f} |"
    )


HEADER = (
    "| store | tables | writers | commits x runs | ratifications/s (median) | p50 (ms) | p99 (ms) | 409s (median) |\n"
    "|---|---|---|---|---|---|---|---|"
)


def measure(store: str, db: str, work: Path, tables: int, writers: int, commits: int) -> Row:
    warehouse = path_to_uri(work / "warehouse")
    with ServerProcess(db, warehouse, "--max-unpublished", "0") as server:
        *made, spare = make_tables(server.url, tables + 1)
        Storm([server.url], [spare], 1, 20).run()  # warm-up: connections, imports, prepared statements
        storm = Storm([server.url], made, writers, commits // writers).run(timeout_s=600)
        problems = storm.stop_reasons + history_problems(storm.proposals, listings(server.url, made))
    if problems:
        raise SystemExit(f"{store}: the storm's history is wrong: {problems[:5]}")
    conflicts = sum(1 for p in storm.proposals if p.status == 409)
    latencies = [r.latency_s * 1000 for r in storm.ratifications]
    return Row(store, tables, writers, len(storm.ratifications), storm.wall_s, conflicts, latencies)


@contextmanager
def postgres(url: str | None) -> Iterator[str]:
    """``url``, or a throw-away cluster started with tests/pg.py (stopped at the end)."""
    if url:
        yield url
        return

    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise SystemExit("no PostgreSQL binaries (apt-get install postgresql), or pass --postgres URL")
    cluster = Postgres.start(bin_dir)
    try:
        yield cluster.dsn()
    finally:
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=400, help="ratifications per configuration")
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--tables", default="1,16")
    parser.add_argument("--writers", default="1,8")
    parser.add_argument("--repeat", type=int, default=1, help="runs per configuration, each on a fresh store")
    parser.add_argument("--postgres", help="an admin URL of a PostgreSQL server (default: a throw-away cluster)")
    args = parser.parse_args()
    rows: list[str] = []
    stores = args.stores.split(",")
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        pg = stack.enter_context(postgres(args.postgres)) if "postgres" in stores else ""
        for store in stores:
            for tables in map(int, args.tables.split(",")):
                for writers in map(int, args.writers.split(",")):
                    runs = []
                    for run in range(args.repeat):
                        work = Path(tmp) / f"{store}-{tables}-{writers}-{run}"
                        work.mkdir()
                        db = new_database(pg, "bench") if store == "postgres" else str(work / "catalog.sqlite")
                        runs.append(measure(store, db, work, tables, writers, args.commits))
                    rows.append(markdown(runs))
                    print(rows[-1], file=sys.stderr, flush=True)
    shown = ["--postgres", "URL"] if args.postgres else []
    shown = [a for a in sys.argv[1:] if a not in ("--postgres", args.postgres)] + shown
    print(f"command: .venv/bin/python bench/catalog_http.py {shlex.join(shown)}".rstrip())
    print(f"machine: {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}")
    print(HEADER)
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
