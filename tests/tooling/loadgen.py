"""A load generator and its history check, for any server that speaks the Delta commits API
(``POST .../delta/preview/commits``, listings of a table's commits).

``Storm``: K writer threads (one HTTP connection each) commit M times each, round-robin over the
tables, as a UC client does: stage a file for the next version, propose it, and on 409 move to the
latest version plus one. Every proposal and its answer is recorded. ``history_problems`` then checks
the tables' final histories (``listings``: published files and listed commits) against them: no
version ratified twice, no gap, no acknowledged commit missing. Drives the reliability tests
(tests/test_reliability_*.py, tests/test_postgres_*.py), tests/test_loadgen_uc.py and the benchmark
bench/catalog_http.py.

Against a real Unity Catalog (OSS 0.6.0, observed by hand, docs/compatibility.md): a 409 says the
latest version only in its message text, and a table may hold at most 10 unpublished commits (429).
So the writers never read a message: when a conflict carries no structured latest version
(``details[].metadata.latest_table_version``), they list the table's commits and take the listing's
``latest_table_version``. With ``publish_every`` they publish as they go (copy the ratified commits
to ``_delta_log/`` in version order, then report ``latest_backfilled_version``) after every commit
whose version is a multiple of it; a 429 is back-pressure: publish, wait (exponential backoff with
jitter) and propose again.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx

from reference_impl.delta import log_paths as P
from reference_impl.storage.local import LocalStorage
from tests.tooling.server import COMMITS, Driver, Table

STAGED = "/_delta_log/_staged_commits/"


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
    BACKOFF_S = (0.005, 1.0)  # first and longest wait after a 429

    def __init__(
        self, urls: list[str], tables: list[Table], writers: int, commits: int, *, publish_every: int | None = None
    ) -> None:
        self.urls, self.tables, self.writers, self.commits = urls, tables, writers, commits
        self.publish_every = publish_every
        self.backpressure = 0  # 429 answers waited out
        self.publications = 0  # publish reports the server accepted
        self.learned_by_listing = 0  # conflicts whose latest version came from a listing
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
        waits = 0
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
                if self.publish_every and version % self.publish_every == 0:
                    return self._publish(driver, table, version)
                return None
            if resp.status_code == 429:
                # Back-pressure: too many unpublished commits. Publish what is ratified, wait, retry.
                reason = self._publish(driver, table, None)
                if reason is not None:
                    return reason
                time.sleep(self._backoff(waits))
                waits += 1
                with self._lock:
                    self.backpressure += 1
                continue
            if resp.status_code != 409:
                return f"status {resp.status_code}: {resp.text[:200]}"
            latest = structured_latest(resp)
            if latest is None:
                listed = listing_page(driver.http, table, 0)
                if listed is None:
                    return "conflict, and the listing failed"
                latest = listed["latest_table_version"]
                with self._lock:
                    self.learned_by_listing += 1
            next_version[t] = latest + 1
        return f"no ratification after {self.MAX_ATTEMPTS} attempts"

    def _backoff(self, waits: int) -> float:
        first, longest = self.BACKOFF_S
        return float(min(longest, first * 2.0**waits)) * random.uniform(0.5, 1.0)

    def _publish(self, driver: Driver, table: Table, upto: int | None) -> str | None:
        """Publish ``table`` up to ``upto`` (None: its latest ratified version); a reason to stop, or None.

        Every ratified commit not yet published is copied to ``_delta_log/`` in version order before
        the report: a version missing from the listing was published by another writer already,
        who copied it before reporting it (the catalog drops commits only up to the published mark)."""
        commits, latest = unpublished(driver.http, table)
        if latest is None:
            return "publish: the listing failed"
        upto = latest if upto is None else min(upto, latest)
        for c in sorted(commits, key=lambda c: int(c["version"])):
            if int(c["version"]) <= upto:
                staged = table.location + STAGED + str(c["file_name"])
                driver.storage.put(P.delta_uri(table.location, int(c["version"])), driver.storage.get(staged))
        if upto < 1:
            return None  # nothing ratified after the table's creation: nothing to report
        body = {"table_id": table.table_id, "table_uri": table.location, "latest_backfilled_version": upto}
        resp = driver.http.post(COMMITS, json=body)
        if resp.status_code != 200:
            return f"publish up to {upto}: status {resp.status_code}: {resp.text[:200]}"
        with self._lock:
            self.publications += 1
        return None


def structured_latest(resp: httpx.Response) -> int | None:
    """The latest version a 409 states in UC's ErrorInfo details; None when it says it only in
    words (UC OSS) or not at all. The message text is never read."""
    try:
        details = resp.json().get("details")
    except ValueError:
        return None
    for detail in details if isinstance(details, list) else []:
        meta = detail.get("metadata") if isinstance(detail, dict) else None
        value = meta.get("latest_table_version") if isinstance(meta, dict) else None
        if isinstance(value, (int, str)) and str(value).isdigit():
            return int(value)
    return None


def listing_page(http: httpx.Client, table: Table, start: int) -> dict[str, Any] | None:
    """One answer of ``GET .../delta/preview/commits`` from ``start`` (None: not a 200)."""
    body = {"table_id": table.table_id, "table_uri": table.location, "start_version": start}
    resp = http.request("GET", COMMITS, json=body)
    if resp.status_code != 200:
        return None
    data: dict[str, Any] = resp.json()
    return data


def unpublished(http: httpx.Client, table: Table) -> tuple[list[dict[str, Any]], int | None]:
    """Every commit the catalog lists (following its pages, in any order) and its latest version."""
    commits: dict[int, dict[str, Any]] = {}
    start, latest = 0, None
    while True:
        page = listing_page(http, table, start)
        if page is None:
            return [], None
        latest = int(page["latest_table_version"])
        fresh = [c for c in page.get("commits") or [] if int(c["version"]) not in commits]
        commits |= {int(c["version"]): c for c in fresh}
        if not fresh or max(commits) >= latest:
            return list(commits.values()), latest
        start = max(commits) + 1


def listings(url: str, tables: list[Table]) -> list[dict[str, Any]]:
    """Each table's history as a listing from version 1: its published commits (read from
    ``_delta_log/``, named by the staged file whose bytes they are) and then the listed ones."""
    with httpx.Client(base_url=url, timeout=30) as http:
        return [_history(http, LocalStorage(), t) for t in tables]


def _history(http: httpx.Client, storage: LocalStorage, table: Table) -> dict[str, Any]:
    commits, latest = unpublished(http, table)
    if latest is None:
        raise RuntimeError(f"cannot list the commits of {table.full_name}")
    listed = sorted(commits, key=lambda c: int(c["version"]))
    first_listed = int(listed[0]["version"]) if listed else latest + 1
    published: list[dict[str, Any]] = []
    if first_listed == 1:
        return {"commits": listed, "latest_table_version": latest}  # nothing published
    by_bytes = {storage.get(f.uri): f.uri.rsplit("/", 1)[1] for f in storage.list(table.location + STAGED)}
    for v in range(1, first_listed):
        uri = P.delta_uri(table.location, v)
        content = storage.get(uri) if storage.exists(uri) else None
        name = by_bytes.get(content, "<unpublished, unlisted>") if content is not None else "<missing>"
        published.append({"version": v, "file_name": name})
    return {"commits": published + listed, "latest_table_version": latest}


def history_problems(
    proposals: list[Proposal], listed: list[dict[str, Any]], *, lost_answers: bool = False
) -> list[str]:
    """What is wrong with the tables' final histories given every proposal and its answer
    (empty: nothing). Each history starts at 1 (``listings`` puts the published commits first).

    * each listing is contiguous from 1 and ends at its ``latest_table_version``;
    * every listed commit is a proposal made for that table and version (nothing foreign or
      half-written);
    * every acknowledged (200) proposal is listed at its version with its file: a version is
      never acknowledged to two proposals;
    * a listed commit nobody was told about is one whose answer was lost (``lost_answers``:
      allowed, e.g. after a crash); otherwise every listed commit was acknowledged;
    * every answer is 200, 409 or 429 (refused, changing nothing) or none (with ``lost_answers``).
    """
    problems: list[str] = []
    by_key = {(p.table, p.version, p.file_name): p for p in proposals}
    acked: dict[tuple[int, int], list[str]] = {}
    for p in proposals:
        if p.status == 200:
            acked.setdefault((p.table, p.version), []).append(p.file_name)
        elif p.status not in (409, 429, None) or (p.status is None and not lost_answers):
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
