"""A load generator and its history check, for any server that speaks the Delta commits API
(``POST .../delta/preview/commits``, listings of a table's commits).

``Storm``: K writer threads (one HTTP connection each) commit M times each, round-robin over the
tables, as a UC client does: stage a file for the next version, propose it, and on 409 move to the
latest version the conflict names plus one. Every proposal and its answer is recorded.
``history_problems`` then checks the tables' final listings (``listings``) against them: no version
ratified twice, no gap, no acknowledged commit missing. Drives the reliability tests
(tests/test_reliability_*.py, tests/test_postgres_*.py) and the benchmark bench/catalog_http.py.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx

from reference_impl.storage.local import LocalStorage
from tests.tooling.server import COMMITS, Driver, Table


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
