"""Concurrency across the catalog's operations, not only proposals racing for one version (session 19):
listings overlapping commits of the same table, commits to several tables at once followed by a
restart, commits of one table back to back followed by a restart (session 20), registrations of
one name at once, and of one staged table under several names at once (session 21) (RFC "Getting
Ratified Commits from the Catalog", "Commit Protocol", "Table Discovery").

A defect that needs two calls to overlap shows only when they do, so each check repeats until the
overlap happened often enough that a catch does not hang on the threads' timing: the listings go on
while commits land until dozens of them overlapped a ratification, the commits to several tables are
released together from a barrier (``race``) in several rounds, each followed by a restart, and the
registrations of one name are released together in several rounds. Where the catalog reads a racer's
own object through the storage lakecert handed it (a staged file, a version 0), each racer is also held
there until all of them got there (``observe/holding.py``): the overlap is then certain, not likely."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from functools import partial

import pytest

from conformance.checks.delta.builders import CatalogDriver, LogBuilder, ict_of, premise, version0
from conformance.checks.delta.catalog.envelope import cheap_stage
from conformance.checks.delta.catalog.names_forms import resolved
from conformance.contract.delta import CatalogError, GetCommitsResponse, TableInfo
from conformance.contract.target import restart_hook
from conformance.nemesis import restart_target_catalog
from conformance.observe.holding import HoldingStorage
from conformance.observe.recording import RecordingCatalog
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import PremiseBroken, Violation
from conformance.run_context import RunContext
from conformance.schedules.race import race
from reference_impl.delta.log_paths import delta_uri

# Listings overlapping commits: the writer ratifies at least this many versions, and goes on (up to
# MAX_VERSIONS) until OVERLAPS listings overlapped a ratification, publishing every PUBLISH_EVERY
# versions so that at most 10 wait (docs/certify.md).
VERSIONS, MAX_VERSIONS, OVERLAPS, PUBLISH_EVERY, LISTERS = 30, 400, 40, 6, 2
# Commits to several tables at once, each round followed by a restart.
TABLES_AT_ONCE, COMMIT_ROUNDS = 8, 4
# Back-to-back commits of one table: per round, WRITERS_BACK_TO_BACK writers each propose the next
# version the moment they see the one before it listed, then a restart; BACK_TO_BACK_ROUNDS rounds,
# published every PUBLISH_ROUNDS rounds (at most 9 commits wait). A state write made after the table's
# lock is released loses a round's last commit in about three rounds of ten (measured on round 14's
# clean-room variant): ten rounds catch it but for a few runs in a hundred (a restart per round is
# most of the check's cost).
# SEEN_WITHIN_S: a bound for a catalog that acknowledges a commit and never lists it; generous, so that
# a slow machine never trips it (a writer whose predecessor failed stops at once).
WRITERS_BACK_TO_BACK, BACK_TO_BACK_ROUNDS, PUBLISH_ROUNDS, SEEN_WITHIN_S = 3, 10, 3, 120.0
# On the quick budget (a target whose restart is a real process's, tests/test_nemesis_serve.py): three
# rounds, each ended by a restart.
BACK_TO_BACK_QUICK_ROUNDS = 3
# Registrations of one name at once, per round, each starting up to RACE_SPREAD_S after the barrier.
REGISTRANTS, NAME_ROUNDS = 8, 10
# Registrations of one staged id under REGISTRANTS free names at once, per round (held where the
# catalog reads its version 0 through lakecert's storage: one round then suffices, the others are for
# a catalog that is not held).
ID_ROUNDS = 3
RACE_SPREAD_S = 0.001


class Holder:
    """Racers held at their first read of their own object until all are there, where the catalog reads
    it through the storage lakecert handed it (observe/holding.py); else the race runs as it is,
    repeated. A catalog whose reads never all meet (it reads inside a lock of its own) is held once:
    after a hold timed out, later rounds run unheld."""

    def __init__(self, lakecert: RunContext) -> None:
        storage = lakecert.env.storage
        self.storage = storage if isinstance(storage, HoldingStorage) else None

    def at(self, uris: list[str], parties: int) -> contextlib.AbstractContextManager[None]:
        if self.storage is None:
            return contextlib.nullcontext()
        return self._held(self.storage, uris, parties)

    @contextlib.contextmanager
    def _held(self, storage: HoldingStorage, uris: list[str], parties: int) -> Iterator[None]:
        with storage.holding(uris, parties):
            yield
        if storage.timed_out:
            self.storage = None


def _restarted(lakecert: RunContext, transcript: Transcript) -> RecordingCatalog:
    """The target's catalog restarted from its durable state (the nemesis), recorded as under test."""
    return RecordingCatalog(
        restart_target_catalog(lakecert), transcript, under_test=True, call_s=lakecert.config.settings.deadlines.call_s
    )


class _Writer:
    """Ratifies v1, v2, ... of one table in order while listings run; what it proposed and when."""

    def __init__(self, catalog: RecordingCatalog, driver: CatalogDriver, table: TableInfo) -> None:
        self.catalog, self.driver, self.table = catalog, driver, table
        self.proposed = 0  # highest version proposed (maybe ratified already)
        self.acked = 0  # highest version whose ratification was acknowledged
        self.marking = 0  # highest publication mark sent (maybe applied already)
        self.staged: dict[int, str] = {}
        self.overlaps = 0
        self.done = threading.Event()
        self.stop = threading.Event()  # a lister found a fault: nothing more to learn
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            version = 0
            while not self.stop.is_set() and (
                version < VERSIONS or (self.overlaps < OVERLAPS and version < MAX_VERSIONS)
            ):
                version += 1
                uri = self.driver.stage(self.table, version)
                self.staged[version] = uri
                self.proposed = version
                self.catalog.commit(self.table.table_id, version, staged_uri=uri, in_commit_timestamp=ict_of(version))
                self.acked = version
                if version % PUBLISH_EVERY == 0:
                    self.marking = version - 2
                    self.driver.publish(self.table, version - 2)
        except BaseException as e:  # judged by the check: a refused valid proposal breaks its premise
            self.error = e
        finally:
            self.done.set()


def _judge_listing(w: _Writer, resp: GetCommitsResponse, acked: int, proposed: int, marked: int) -> None:
    """One listing made while ``w`` committed: ``acked`` was ratified before it was asked, no version
    above ``proposed`` was proposed by the time it answered, and ``marked`` was the highest mark sent."""
    latest = resp.latest_version
    name = w.table.name
    if not acked <= latest <= proposed:
        raise Violation(
            "CAT-LIST-LATEST",
            f"a listing of {name} asked once v{acked} was ratified, and answered before any version above"
            f" v{proposed} was proposed, states the latest version v{latest}: the latest ratified version at"
            " some instant of the call",
        )
    versions = sorted(c.version for c in resp.commits)
    above = [v for v in versions if v > latest]
    if above:
        # A listed commit was ratified before the answer, so a latest below it is not the latest at any
        # instant of the call (a stale latest, or one read before the commits): the latest's rule.
        raise Violation(
            "CAT-LIST-LATEST",
            f"a listing of {name} made while commits landed holds v{above} above the latest version it states"
            f" (v{latest}): a commit it lists was ratified, so the latest was at least v{above[-1]} (its"
            " commits and its latest read at different instants, or the latest stale)",
        )
    if versions and (versions != list(range(versions[0], versions[-1] + 1)) or versions[-1] != latest):
        raise Violation(
            "CAT-LIST-CONTIGUOUS",
            f"a listing of {name} made while commits landed holds {[f'v{v}' for v in versions]} with v{latest}"
            " stated as the latest: the listed commits are a contiguous run ending at the latest version",
        )
    if not versions and latest > marked:
        raise Violation(
            "CAT-LIST-CONTIGUOUS",
            f"a listing of {name} made while commits landed holds no commit, with v{latest} stated as the latest"
            f" and nothing published above v{marked}: the run must end at the latest version",
        )
    for c in resp.commits:
        if c.staged_uri is not None and c.staged_uri != w.staged.get(c.version):
            raise PremiseBroken(
                f"a listing of {name} serves v{c.version} as {c.staged_uri}, not the file ratified there"
                " (judged by CAT-LIST-RATIFIED-ONLY and CAT-RETAIN-UNPUBLISHED)"
            )


@pytest.mark.req("CAT-LIST-CONTIGUOUS", "CAT-LIST-LATEST")
def test_listings_overlapping_commits_hold_one_state(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    """Readers poll a table while a writer commits to it: every listing must be one state of the table,
    its commits a contiguous run ending at the latest version it states, and that latest one the table
    held at some instant of the call. Listings go on until at least OVERLAPS of them overlapped a
    ratification (the writer's acknowledged version moved during the call)."""
    table = driver.new_table(table_name)
    w = _Writer(catalog, driver, table)
    found: list[BaseException] = []

    def lister() -> None:
        while not w.done.is_set() and not found:
            acked, marked_before = w.acked, w.marking
            try:
                resp = catalog.get_commits(table.table_id)
            except CatalogError as e:
                found.append(Violation("CAT-LIST-LATEST", f"a listing of {table.name} was refused: {e!r}"))
                w.stop.set()
                return
            proposed, marked = w.proposed, w.marking
            if w.acked != acked:
                w.overlaps += 1
            try:
                _judge_listing(w, resp, acked, proposed, max(marked, marked_before))
            except (Violation, PremiseBroken) as e:
                found.append(e)
                w.stop.set()

    threads = [threading.Thread(target=w.run, name="writer")]
    threads += [threading.Thread(target=lister, name=f"lister-{i}") for i in range(LISTERS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    if found:
        raise found[0]
    if w.error is not None:
        with premise(f"ratifying v1-v{w.proposed} of {table.name} in order while listings ran"):
            raise w.error
    with premise(f"listings overlapping a ratification ({w.overlaps}; wanted {OVERLAPS})"):
        assert w.overlaps >= OVERLAPS or w.proposed >= MAX_VERSIONS, f"only {w.overlaps} listings overlapped"


@pytest.mark.req("CAT-RATIFY-DURABLE")
def test_commits_to_several_tables_at_once_survive_a_restart(
    lakecert: RunContext,
    catalog: RecordingCatalog,
    driver: CatalogDriver,
    table_name: str,
    seed: int,
    transcript: Transcript,
) -> None:
    """Several tables each get a commit at the same instant (released from one barrier), then the catalog
    restarts before anything else changes: every acknowledged commit must be there after it. A store that
    writes one table's state with another's, or acknowledges a ratification that waits for another
    table's to be written, loses it only so. Four rounds, each ended by a restart."""
    tables = [driver.new_table(f"{table_name}_{i}") for i in range(TABLES_AT_ONCE)]
    current = catalog
    holder = Holder(lakecert)
    for round_no in range(1, COMMIT_ROUNDS + 1):
        with premise(f"staging v{round_no} of each table"):
            uris = [driver.stage(t, round_no) for t in tables]
        calls = [
            partial(current.commit, t.table_id, round_no, staged_uri=u, in_commit_timestamp=ict_of(round_no))
            for t, u in zip(tables, uris, strict=True)
        ]
        with holder.at(uris, len(calls)):
            outcomes = race(calls, seed=seed + round_no, transcript=transcript)
        refused = [f"{t.name}: {type(o.error).__name__}" for t, o in zip(tables, outcomes, strict=True) if not o.ok]
        if refused:
            raise PremiseBroken(f"valid proposals of v{round_no}, one per table, were refused: {refused}")
        current = _restarted(lakecert, transcript)
        transcript.notes["nemesis"] = (
            f"round {round_no}: v{round_no} of {len(tables)} tables ratified at once, then a restart"
        )
        for t, uri in zip(tables, uris, strict=True):
            resp = current.get_commits(t.table_id)
            held = {c.version: c.staged_uri for c in resp.commits}
            if resp.latest_version != round_no or held.get(round_no) != uri:
                raise Violation(
                    "CAT-RATIFY-DURABLE",
                    f"v{round_no} of {t.name} was ratified (acknowledged) while {len(tables) - 1} other tables"
                    f" were committed to at the same instant; after a restart right then the catalog says latest"
                    f" v{resp.latest_version} and serves v{round_no} as {held.get(round_no)!r}: every acknowledged"
                    " ratification is in persistent storage before the answer, whatever other tables do",
                )


def _until_listed(catalog: RecordingCatalog, table: TableInfo, version: int, failed: threading.Event) -> None:
    """Poll the table until ``version`` is listed (as a client waiting for a commit); ``failed``: another
    writer of the round failed, so the version may never come."""
    deadline = time.monotonic() + SEEN_WITHIN_S
    while catalog.get_commits(table.table_id, version, version).latest_version < version:
        if failed.is_set() or time.monotonic() > deadline:
            raise PremiseBroken(f"v{version} of {table.name} was not listed (a proposal before it failed)")


def _next_when_listed(
    catalog: RecordingCatalog,
    table: TableInfo,
    version: int,
    uri: str,
    then_until: int | None,
    failed: threading.Event,
) -> None:
    """A writer that proposes ``version`` the moment it sees ``version - 1`` listed (as a client that
    polls for the commit before its own), so that its ratification follows the one before at once; then,
    given ``then_until``, it polls until that version is listed (a reader of the table: the round's last
    ratification is made while the table is read too; one such reader, more slow the writers down)."""
    try:
        _until_listed(catalog, table, version - 1, failed)
        catalog.commit(table.table_id, version, staged_uri=uri, in_commit_timestamp=ict_of(version))
        if then_until is not None:
            _until_listed(catalog, table, then_until, failed)
    except BaseException:
        failed.set()  # the writers after this one stop waiting for it
        raise


@pytest.mark.req("CAT-RATIFY-DURABLE")
def test_back_to_back_commits_of_one_table_survive_a_restart(
    lakecert: RunContext,
    catalog: RecordingCatalog,
    driver: CatalogDriver,
    table_name: str,
    seed: int,
    transcript: Transcript,
) -> None:
    """RFC "Commit Protocol": a ratification is recorded in persistent storage before it is acknowledged.
    Several writers of one table commit back to back, each proposing the next version as soon as it sees
    the one before listed, so that two ratifications of the table are written close together; then the
    catalog restarts: every acknowledged commit must be there, the latest the last one. A state snapshot
    taken under the table's lock but written after it is released lets the earlier snapshot land last
    and lose the later commit; only such a restart shows it. Several rounds, each ended by a restart,
    the commits published every few rounds once judged."""
    table = driver.new_table(table_name)
    current, latest, published = catalog, 0, 0
    staged: dict[int, str] = {}
    quick = lakecert.config.settings.delta.budget == "quick"
    for round_no in range(1, (BACK_TO_BACK_QUICK_ROUNDS if quick else BACK_TO_BACK_ROUNDS) + 1):
        versions = range(latest + 1, latest + 1 + WRITERS_BACK_TO_BACK)
        with premise(f"staging v{versions[0]}-v{versions[-1]} of {table.name}"):
            uris = {v: cheap_stage(driver, table, v) for v in versions}
            staged.update(uris)
        failed = threading.Event()
        calls = [
            partial(_next_when_listed, current, table, v, uri, versions[-1] if v == versions[0] else None, failed)
            for v, uri in uris.items()
        ]
        outcomes = race(calls, seed=seed + round_no, transcript=transcript)
        refused = [f"v{v}: {type(o.error).__name__}" for v, o in zip(versions, outcomes, strict=True) if not o.ok]
        if refused:
            raise PremiseBroken(f"valid proposals of {table.name}, each after the one before, were refused: {refused}")
        current = _restarted(lakecert, transcript)
        transcript.notes["nemesis"] = f"round {round_no}: v{versions[0]}-v{versions[-1]} back to back, then a restart"
        resp = current.get_commits(table.table_id)
        held = {c.version: c.staged_uri for c in resp.commits}
        lost = [v for v, uri in uris.items() if held.get(v) != uri]
        if resp.latest_version != versions[-1] or lost:
            raise Violation(
                "CAT-RATIFY-DURABLE",
                f"v{versions[0]}-v{versions[-1]} of {table.name} were ratified (acknowledged) back to back, each"
                f" proposed as soon as the one before was listed; after a restart right then the catalog says"
                f" latest v{resp.latest_version} and no longer serves {[f'v{v}' for v in lost]} as ratified:"
                " every acknowledged ratification is in persistent storage before the answer",
            )
        latest = versions[-1]
        if round_no % PUBLISH_ROUNDS:
            continue
        # Published once judged, every few rounds, so that at most 10 commits wait (docs/certify.md).
        with premise(f"publishing v{published + 1}-v{latest} of {table.name}"):
            log = LogBuilder(driver.storage, table.location)
            for v in range(published + 1, latest + 1):
                log.publish(v, driver.storage.get(staged[v]))
            current.mark_published(table.table_id, latest)
        published = latest


@pytest.mark.req("CAT-RESOLVE-LOCATION")
def test_registrations_of_one_name_at_once_give_it_to_one_table(
    lakecert: RunContext,
    catalog: RecordingCatalog,
    driver: CatalogDriver,
    table_name: str,
    seed: int,
    transcript: Transcript,
) -> None:
    """Several creators register one name at the same instant (two engines running CREATE TABLE, a
    retry racing its first attempt), each with its own staged table: at most one may be told the name is
    its table's, and the name then resolves to that table, also after a restart where the target can
    restart its catalog. Several rounds, each with a new name."""
    names: dict[str, TableInfo] = {}
    holder = Holder(lakecert)
    for round_no in range(NAME_ROUNDS):
        name = f"{table_name}_n{round_no}"
        with premise("reserving staging tables and writing their version 0"):
            staged = [catalog.create_staging_table() for _ in range(REGISTRANTS)]
            for st in staged:
                driver._own_location(st)  # noqa: SLF001 - the driver's premise on distinct locations
                driver.storage.put(delta_uri(st.location, 0), version0(st.table_id), if_absent=True)
        calls = [partial(catalog.register_table, name, st.table_id) for st in staged]
        # Each thread starts up to 1 ms after the barrier, and each is held at its first read of its own
        # version 0 until all are there, where the catalog reads it through lakecert's storage.
        with holder.at([delta_uri(st.location, 0) for st in staged], len(calls)):
            outcomes = race(calls, seed=seed + round_no, transcript=transcript, max_delay_s=RACE_SPREAD_S)
        told = [st for st, o in zip(staged, outcomes, strict=True) if o.ok]
        if not told:
            errors = sorted({type(o.error).__name__ for o in outcomes})
            raise PremiseBroken(f"none of {REGISTRANTS} registrations of the free name {name!r} succeeded ({errors})")
        now = resolved(driver, name)
        if len(told) > 1 or now is None or now.table_id != told[0].table_id:
            where = "nothing" if now is None else f"table {now.table_id} at {now.location}"
            raise Violation(
                "CAT-RESOLVE-LOCATION",
                f"{len(told)} of {REGISTRANTS} registrations of {name!r} made at the same instant were acknowledged"
                f" (tables {[st.table_id for st in told]}); the name resolves to {where}: a name resolves to the"
                " location of the one table it was given to, so at most one creator may be told it is theirs",
            )
        names[name] = now
    if restart_hook(lakecert.target) is None:
        return
    restarted = _restarted(lakecert, transcript)
    for name, was in names.items():
        try:
            now = restarted.resolve(name)
        except CatalogError:
            now = None
        if now is None or now.table_id != was.table_id:
            raise Violation(
                "CAT-RESOLVE-LOCATION",
                f"{name!r}, registered by one of {REGISTRANTS} creators at once, resolved to table {was.table_id}"
                f" before a restart and to {'nothing' if now is None else f'table {now.table_id}'} after it",
            )


@pytest.mark.req("CAT-RESOLVE-LOCATION")
def test_registrations_of_one_id_at_once_leave_each_acknowledged_name_resolving(
    lakecert: RunContext,
    catalog: RecordingCatalog,
    driver: CatalogDriver,
    table_name: str,
    seed: int,
    transcript: Transcript,
) -> None:
    """One staged table registered under several free names at the same instant (a creator's retry, under
    another name, racing its first attempt): RFC "Creating and Dropping" (phase 3 names a staged table)
    and "Table Discovery" (a name resolves to its table's location). How many the catalog takes is its
    own affair; each name it acknowledged must resolve to that table, and each it refused to nothing. A
    catalog that checks the id is unnamed before reading version 0 and names it after without checking
    again renames it by each later registration: the names it acknowledged first resolve to nothing."""
    holder = Holder(lakecert)
    for round_no in range(ID_ROUNDS):
        with premise("reserving a staging table and writing its version 0"):
            st = catalog.create_staging_table()
            driver._own_location(st)  # noqa: SLF001 - the driver's premise on distinct locations
            driver.storage.put(delta_uri(st.location, 0), version0(st.table_id), if_absent=True)
        names = [f"{table_name}_i{round_no}_{k}" for k in range(REGISTRANTS)]
        calls = [partial(catalog.register_table, name, st.table_id) for name in names]
        # Every racer reads the one version 0: each is held at its read until all are there.
        with holder.at([delta_uri(st.location, 0)] * len(calls), len(calls)):
            outcomes = race(calls, seed=seed + round_no, transcript=transcript, max_delay_s=RACE_SPREAD_S)
        if not any(o.ok for o in outcomes):
            errors = sorted({type(o.error).__name__ for o in outcomes})
            raise PremiseBroken(f"none of {REGISTRANTS} registrations of a staged table succeeded ({errors})")
        for name, outcome in zip(names, outcomes, strict=True):
            now = resolved(driver, name)
            if outcome.ok and (now is None or now.table_id != st.table_id):
                where = "nothing" if now is None else f"table {now.table_id} at {now.location}"
                told = sum(o.ok for o in outcomes)
                raise Violation(
                    "CAT-RESOLVE-LOCATION",
                    f"{told} of {REGISTRANTS} registrations of table {st.table_id} under distinct free names made"
                    f" at the same instant were acknowledged; {name!r}, one of them, resolves to {where}: a name"
                    " the catalog gave a table resolves to that table's location (registration is no rename)",
                )
            # Only a refusal of the contract (a CatalogError) says the call did nothing: another failure
            # (a transport's, a timeout) leaves its outcome unknown.
            if isinstance(outcome.error, CatalogError) and now is not None:
                raise Violation(
                    "CAT-RESOLVE-LOCATION",
                    f"a registration of table {st.table_id} as {name!r}, racing {REGISTRANTS - 1} others of it under"
                    f" other names, was refused, yet {name!r} resolves to table {now.table_id}: a refused call"
                    " changes nothing",
                )
