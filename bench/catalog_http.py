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

The same workload (`ServeProcess`, `Storm`, `history_problems`) drives the reliability tests
(tests/test_reliability_*.py, tests/test_postgres_*.py), so the figures here are for a
workload whose outcome those tests check.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from reference_impl.server.testing import API, COMMITS, Driver, Table
from reference_impl.storage.local import LocalStorage, path_to_uri

REPO = Path(__file__).resolve().parents[1]


class ServeProcess:
    """`python -m reference_impl.server.cli --db DB --warehouse W ARGS` on 127.0.0.1, any free
    port. ``kill()`` is a SIGKILL (a crash); ``stop()`` a clean stop. Always stopped by ``with``."""

    def __init__(self, db: str, warehouse: str, *args: str, timeout_s: float = 60.0) -> None:
        command = [sys.executable, "-m", "reference_impl.server.cli", "--db", db, "--warehouse", warehouse]
        command += ["--host", "127.0.0.1", "--port", "0", "--log-level", "warning", *args]
        self._proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.url = ""
        self.output: list[str] = []
        assert self._proc.stderr is not None
        deadline = time.monotonic() + timeout_s
        for line in self._proc.stderr:
            self.output.append(line)
            if " listening on " in line:
                self.url = line.split(" listening on ", 1)[1].split()[0]
                break
            if time.monotonic() > deadline:
                break
        # Keep draining its log so the server never blocks on a full pipe.
        self._drain = threading.Thread(target=self._read_rest, daemon=True)
        self._drain.start()
        if not self.url or not self._answers(deadline):
            self.stop()
            raise RuntimeError("lakecert serve did not start:\n" + "".join(self.output))

    def _answers(self, deadline: float) -> bool:
        """Whether the server answers HTTP before ``deadline``: it announces its address when the
        socket is bound, a moment before uvicorn listens on it."""
        while self._proc.poll() is None and time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}{API}/lakecert/v1/capabilities", timeout=5).status_code == 200:
                    return True
            except httpx.TransportError:
                time.sleep(0.02)
        return False

    def _read_rest(self) -> None:
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            self.output.append(line)

    @property
    def pid(self) -> int:
        return self._proc.pid

    def kill(self) -> None:
        """SIGKILL: no clean-up in the server at all."""
        if self._proc.poll() is None:
            os.kill(self._proc.pid, signal.SIGKILL)
        self._proc.wait(timeout=30)

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._proc.stderr is not None:
            self._proc.stderr.close()

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


@contextmanager
def serving(count: int, db: str, warehouse: str, *args: str) -> Iterator[list[ServeProcess]]:
    """``count`` servers on one database, started in parallel; every one that started is stopped."""
    with ExitStack() as stack, ThreadPoolExecutor(count) as pool:
        futures = [pool.submit(ServeProcess, db, warehouse, *args) for _ in range(count)]
        servers, errors = [], []
        for future in futures:
            try:
                servers.append(stack.enter_context(future.result()))
            except Exception as e:
                errors.append(e)
        if errors:
            raise errors[0]
        yield servers


@dataclass(frozen=True)
class Proposal:
    """One proposal as its writer saw it. ``status`` None: no answer (the connection broke)."""

    writer: int
    table: int
    version: int
    file_name: str
    status: int | None
    started: float
    latency_s: float


@dataclass(frozen=True)
class Ratification:
    """A commit from its first proposal to its 200: ``attempts`` proposals, ``latency_s`` in all."""

    table: int
    version: int
    attempts: int
    latency_s: float


def make_tables(url: str, count: int) -> list[Table]:
    with httpx.Client(base_url=url, timeout=30) as http:
        driver = Driver(http)
        return [driver.create_table() for _ in range(count)]


class Storm:
    """``writers`` threads, each committing ``commits`` times, commit j of writer w on table
    ``(w + j) % len(tables)``, through ``urls[w % len(urls)]``. A writer stops at its first
    broken connection or unexpected status (``stop_reason``). ``start()``/``join()`` or ``run()``."""

    MAX_ATTEMPTS = 10_000

    def __init__(self, urls: list[str], tables: list[Table], writers: int, commits: int) -> None:
        self.urls, self.tables, self.writers, self.commits = urls, tables, writers, commits
        self.proposals: list[Proposal] = []
        self.ratifications: list[Ratification] = []
        self.stop_reasons: list[str] = []
        self.acked = 0
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._writer, args=(w,), daemon=True) for w in range(writers)]
        self.wall_s = 0.0

    def start(self) -> Storm:
        self._t0 = time.perf_counter()
        for t in self._threads:
            t.start()
        return self

    def join(self, timeout_s: float = 120.0) -> Storm:
        deadline = time.monotonic() + timeout_s
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        if any(t.is_alive() for t in self._threads):
            raise TimeoutError(f"writers still running after {timeout_s} s")
        self.wall_s = time.perf_counter() - self._t0
        return self

    def run(self, timeout_s: float = 120.0) -> Storm:
        return self.start().join(timeout_s)

    def _record(self, proposal: Proposal) -> None:
        with self._lock:
            self.proposals.append(proposal)
            if proposal.status == 200:
                self.acked += 1

    def _writer(self, w: int) -> None:
        storage = LocalStorage()
        next_version = [1] * len(self.tables)
        with httpx.Client(base_url=self.urls[w % len(self.urls)], timeout=30) as http:
            driver = Driver(http, storage)
            for j in range(self.commits):
                t = (w + j) % len(self.tables)
                reason = self._commit(w, t, driver, next_version)
                if reason is not None:
                    with self._lock:
                        self.stop_reasons.append(f"writer {w}: {reason}")
                    return

    def _commit(self, w: int, t: int, driver: Driver, next_version: list[int]) -> str | None:
        """One ratified commit on table ``t`` (retrying on conflicts); a reason to stop, or None."""
        table = self.tables[t]
        first = time.perf_counter()
        for attempt in range(1, self.MAX_ATTEMPTS + 1):
            version = next_version[t]
            file_name = driver.stage(table, version)
            started = time.perf_counter()
            try:
                resp = driver.http.post(COMMITS, json=driver.commit_body(table, version, file_name))
            except httpx.HTTPError as e:
                self._record(Proposal(w, t, version, file_name, None, started, time.perf_counter() - started))
                return f"no answer: {type(e).__name__}"
            now = time.perf_counter()
            self._record(Proposal(w, t, version, file_name, resp.status_code, started, now - started))
            if resp.status_code == 200:
                next_version[t] = version + 1
                with self._lock:
                    self.ratifications.append(Ratification(t, version, attempt, now - first))
                return None
            if resp.status_code != 409:
                return f"status {resp.status_code}: {resp.text[:200]}"
            next_version[t] = int(resp.json()["details"][0]["metadata"]["latest_table_version"]) + 1
        return f"no ratification after {self.MAX_ATTEMPTS} attempts"


def listings(url: str, tables: list[Table]) -> list[dict[str, Any]]:
    with httpx.Client(base_url=url, timeout=30) as http:
        driver = Driver(http)
        return [driver.listing(t) for t in tables]


def history_problems(
    proposals: list[Proposal], listed: list[dict[str, Any]], *, lost_answers: bool = False
) -> list[str]:
    """What is wrong with the tables' final listings given every proposal and its answer
    (empty: nothing). Commits are never published here, so each listing starts at 1.

    * each listing is contiguous from 1 and ends at its ``latest_table_version``;
    * every listed commit is a proposal made for that table and version (nothing foreign or
      half-written);
    * every acknowledged (200) proposal is listed at its version with its file: a version is
      never acknowledged to two proposals;
    * a listed commit nobody was told about is one whose answer was lost (``lost_answers``:
      allowed, e.g. after a crash); otherwise every listed commit was acknowledged;
    * every answer is 200 or 409 (or none, with ``lost_answers``).
    """
    problems: list[str] = []
    by_key = {(p.table, p.version, p.file_name): p for p in proposals}
    acked: dict[tuple[int, int], list[str]] = {}
    for p in proposals:
        if p.status == 200:
            acked.setdefault((p.table, p.version), []).append(p.file_name)
        elif p.status not in (409, None) or (p.status is None and not lost_answers):
            problems.append(f"table {p.table} v{p.version}: answer {p.status}")
    for (t, v), names in sorted(acked.items()):
        if len(names) > 1:
            problems.append(f"table {t} v{v} acknowledged to {len(names)} proposals")
    for t, listing in enumerate(listed):
        versions = [c["version"] for c in listing["commits"]]
        latest = listing["latest_table_version"]
        if versions != list(range(1, latest + 1)):
            problems.append(f"table {t}: listed versions {versions} are not 1..{latest}")
        listed_files: dict[int, str] = {c["version"]: c.get("file_name", "") for c in listing["commits"]}
        for v, name in listed_files.items():
            found = by_key.get((t, v, name))
            if found is None:
                problems.append(f"table {t} v{v}: listed file {name} was never proposed for it")
            elif found.status != 200 and not (lost_answers and found.status is None):
                problems.append(f"table {t} v{v}: listed, but its proposal was answered {found.status}")
        for (at, v), names in acked.items():
            if at == t and listed_files.get(v) not in names:
                problems.append(f"table {t} v{v}: acknowledged {names} but listed {listed_files.get(v)}")
    return problems


# ---------------------------------------------------------------- the benchmark


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
    with ServeProcess(db, warehouse, "--max-unpublished", "0") as server:
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
    sys.path.insert(0, str(REPO))
    from tests.pg import Postgres, find_bin_dir

    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise SystemExit("no PostgreSQL binaries (apt-get install postgresql), or pass --postgres URL")
    cluster = Postgres.start(bin_dir)
    try:
        yield cluster.dsn()
    finally:
        cluster.stop()


def fresh_database(admin_url: str) -> str:
    """A new database on the server of ``admin_url``; its URL."""
    import uuid

    import psycopg

    name = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + "/" + name


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
                        db = fresh_database(pg) if store == "postgres" else str(work / "catalog.sqlite")
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
