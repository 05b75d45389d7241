"""What the writer's commits say, judged by lakecert's own decoder (``conformance.oracle``).

In-commit timestamps are times, not just an order (PROTOCOL "In-Commit Timestamps"); txnIds are
unique across every table and client of a run (RFC "Writer Requirements for Catalog-managed
tables"); a commit holds each file action and its metaData once (PROTOCOL "Add File and Remove
File", "Change Metadata"): the reference's own replay tolerates repeats, the protocol does not.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress

import pytest

from conformance.checks.delta.builders import UC_TABLE_ID, LogBuilder, new_uuid, premise, version0, when
from conformance.checks.delta.evidence import attempt, call_windows, table_commits
from conformance.checks.delta.writer.conftest import DAY_MS, Bind, WrittenTable, ahead_client
from conformance.contract.delta import CommitConflict, NotSupported, Storage
from conformance.nemesis import NemesisCatalog, in_time_zone
from conformance.observe.recording import RecordingCatalog, RecordingClient
from conformance.observe.transcript import Transcript
from conformance.oracle.clock import TOLERANCE_MS, off_the_clock, span
from conformance.oracle.commits import Action, in_commit_timestamp, repeated_actions, txn_id
from conformance.oracle.txn_ids import TxnIdRegistry
from conformance.run_context import RunContext
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient, wall_clock_ms

# India's zone, as a POSIX TZ string (no tz database needed; POSIX counts hours *west* of UTC):
# UTC+5:30, so a local wall-clock reading taken for UTC lands five and a half hours in the future.
EAST_OF_UTC = "IST-5:30"


def _seed_day_old(ref_admin: ReferenceCatalog, seeded: LogBuilder, name: str) -> None:
    """A table the suite seeds at ``seeded``'s location, v0-v1 published, v1 stamped a day ago."""
    old = ref_admin.import_table(name, seeded.location, 1, [], 1)
    # The catalog's id in the configuration, as a table created through Unity Catalog's API has it
    # (Kernel's UC committer refuses a table without it; test_staging.py does the same).
    seeded.publish(0, version0("seeded-" + name, {UC_TABLE_ID: old.table_id}))
    seeded.publish(1, seeded.data_commit(1, "old", ict=wall_clock_ms() - DAY_MS))
    seeded.create_folders()


def _commits(ref_admin: ReferenceCatalog, storage: Storage, name: str) -> dict[int, list[Action]]:
    """Every commit of the table, whoever wrote it: v0 published, the rest as the catalog ratified them."""
    info = ref_admin.resolve(name)
    ratified: dict[int, bytes] = {}
    for c in ref_admin.get_commits(info.table_id).commits:
        content = c.inline_content if c.staged_uri is None else storage.get(c.staged_uri)
        assert content is not None, f"v{c.version} has neither a staged file nor inline content"
        ratified[c.version] = content
    return table_commits(storage, info.location, ratified)


@pytest.mark.req("WRT-ICT-WALLCLOCK")
def test_in_commit_timestamps_are_the_wall_clock_in_utc_milliseconds(
    lakecert: RunContext,
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    ref_catalog: RecordingCatalog,
    bind: Bind,
    nemesis: NemesisCatalog,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
    seeded: LogBuilder,
    seed: int,
) -> None:
    # The writer runs in a zone east of UTC (the process's TZ, restored after), so local time taken
    # for UTC shows; v2 is a peer's whose clock runs a day ahead, which forces the writer's v3 ahead too.
    # A second table is old: the suite seeds it with a last commit a day old (a long-lived table), then
    # the writer appends and deletes. Monotonicity forces nothing there, so its stamps
    # must be the clock's: one counted on from the previous commit (+1 ms, or + time elapsed since its
    # own last commit) passes on a young table and lands a day in the past on this one.
    # A third table is as old, and the writer's first proposal there loses v2 to a peer whose clock
    # runs a day behind (the suite's): the rebased commit at v3 is a commit like any other, stamped with
    # the clock when it is made. One counted on from the winner's timestamp (+1 ms, + the time the
    # retry took) is still above the winner and a day in the past. A fourth, as old, is written by a
    # writer bound through lakecert's nemesis: the same peer takes v2 first and the conflict's answer
    # is lost, so the writer learns it lost only by asking the catalog, and retries at v3 on that path.
    old_table, raced_table, lost_table = (f"{table_name}_{x}" for x in ("old", "raced", "lost"))
    with premise("the suite seeding three more tables whose v1 was written a day ago (v0-v1 published)"):
        _seed_day_old(ref_admin, seeded, old_table)
        for name in (raced_table, lost_table):
            _seed_day_old(
                ref_admin, LogBuilder(suite_storage, f"{lakecert.env.warehouse_uri}/seeded/{new_uuid()}"), name
            )
    with in_time_zone(EAST_OF_UTC), premise(f"the writer under test writing a table under TZ={EAST_OF_UTC}"):
        client.create_table(table_name)
        client.append(table_name, [{"id": 1, "value": "a"}])
    with premise("the suite's writer, a day ahead, appending v2"):
        ahead_client(lakecert, transcript, suite_storage, seed).append(table_name, [{"id": 2, "value": "ahead"}])
    with in_time_zone(EAST_OF_UTC), premise(f"the writer under test appending v3 under TZ={EAST_OF_UTC}"):
        client.append(table_name, [{"id": 3, "value": "b"}])
    with premise("the writer under test appending v2 and deleting at v3 on the table written a day ago"):
        client.append(old_table, [{"id": 2, "value": "new"}])
        client.delete(old_table, [1])
    behind = ReferenceClient(
        RecordingCatalog(lakecert.reference_catalog(), transcript, actor="suite"),
        suite_storage,
        seed=seed + 2,
        clock=lambda: wall_clock_ms() - DAY_MS,
    )
    raced_id = ref_admin.resolve(raced_table).table_id
    raced: list[int] = []

    def rival(table_id: str, version: int) -> None:
        if not raced and table_id == raced_id:
            raced.append(behind.append(raced_table, [{"id": 9, "value": "behind"}]))

    ref_catalog.before_commit.append(rival)
    # Rebasing is a MAY: a writer that gives the conflict up has no rebased commit to judge.
    try:
        with (
            premise("the writer under test appending to a day-old table after losing v2 to a peer a day behind"),
            suppress(CommitConflict),
        ):
            client.append(raced_table, [{"id": 2, "value": "after the race"}])
    finally:
        ref_catalog.before_commit.remove(rival)
    try:
        lost_client: RecordingClient | None = bind(nemesis)
    except NotSupported:
        lost_client = None  # cannot be bound through the nemesis: the lost-answer case is not run
    if lost_client is not None:
        took = (
            lambda: behind.append(lost_table, [{"id": 9, "value": "behind"}]),
            "a peer whose clock is a day behind took v2 first",
        )
        nemesis.arm("commit", "lose", before=took)
        # Giving up after the lost answer is allowed (judged by WRT-LOST-ANSWER-OUTCOME): nothing to stamp.
        attempt(lambda: lost_client.append(lost_table, [{"id": 2, "value": "after a lost answer"}]))
        nemesis.disarm()
    transcript.notes["time_zone"] = EAST_OF_UTC
    transcript.notes["old_table"] = f"{old_table}: v0-v1 seeded by the suite (v1 a day old), v2-v3 by the writer"
    transcript.notes["raced_table"] = (
        f"{raced_table}: v0-v1 seeded (v1 a day old); v2 a peer's whose clock is a day behind, ratified just"
        " before the writer's proposal of v2; v3 the writer's rebased commit"
        if raced
        else f"{raced_table}: v0-v1 seeded (v1 a day old); the writer's proposal met no rival (not bound through"
        " lakecert's recording catalog): its v2 judged as a first attempt"
    )
    transcript.notes["lost_table"] = (
        f"{lost_table}: v0-v1 seeded (v1 a day old); a writer bound through the nemesis proposes v2, a peer a day"
        " behind takes v2 first and the conflict's answer is lost; the writer's retry, if any, at v3"
        if lost_client is not None
        else f"{lost_table}: not written (the client cannot be bound through lakecert's nemesis)"
    )
    for name, context in (
        (table_name, f"TZ={EAST_OF_UTC}"),
        (old_table, "the previous commit a day old"),
        (raced_table, "a retry after losing v2 to a commit stamped a day ago" if raced else "v1 a day old"),
        (lost_table, "a retry after a lost answer: v2 taken by a commit stamped a day ago"),
    ):
        info = ref_admin.resolve(name)
        commits = _commits(ref_admin, suite_storage, name)
        windows = call_windows(transcript, info.table_id, info.location)
        previous: int | None = None
        for version in sorted(commits):
            ict = in_commit_timestamp(commits[version])
            assert ict is not None, f"{name} v{version} has no inCommitTimestamp (a long)"
            window = windows.get(version)
            if window is not None:  # the writer's own commit (the peers' are the suite's)
                wrong = off_the_clock(ict, window, previous)
                assert wrong is None, (
                    f"{name} v{version}'s inCommitTimestamp {when(ict)} is {wrong} (call: {when(window.start_ms)}"
                    f" to {when(window.end_ms)}, {context}); it must be the time of the commit in milliseconds since"
                    f" the Unix epoch, within {span(TOLERANCE_MS)}, unless the previous commit's forces it later"
                )
            previous = ict


@pytest.mark.req("WRT-TXNID-UNIQUE")
def test_txn_ids_are_unique_across_tables_and_clients(
    lakecert: RunContext,
    client_factory: Callable[[], RecordingClient],
    ref_admin: ReferenceCatalog,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
    txn_ids: TxnIdRegistry,
    request: pytest.FixtureRequest,
    seed: int,
) -> None:
    # Writer 1 writes two tables (an id made of the client's session and the version repeats), writer 2
    # a third (a counter every client starts afresh repeats); the run's registry also holds every
    # txnId of the tables checked before.
    # Writer 1's tables also share their in-commit timestamps: a peer of the suite's, whose clock is
    # frozen a day ahead, commits to both at one stamp T, and writer 1 then appends to them in turn. Its
    # clock behind, it must stamp T+1 on both, then T+2 on both (PROTOCOL.md In-Commit Timestamps): one
    # client's commits to two tables in one millisecond, made without a hold on the target's clock. An
    # id made of the session and the in-commit timestamp repeats there.
    frozen = wall_clock_ms() + DAY_MS
    peer_catalog = RecordingCatalog(lakecert.reference_catalog(), transcript, actor="suite")
    peer = ReferenceClient(peer_catalog, suite_storage, seed=seed + 1, clock=lambda: frozen)
    repeats: list[str] = []
    for n, suffixes in ((1, ("a", "b")), (2, ("c",))):
        writer = client_factory()
        names = [f"{table_name}_{suffix}" for suffix in suffixes]
        with premise(f"writer under test no. {n} creating {names}"):
            for name in names:
                writer.create_table(name)
        if len(names) > 1:
            with premise(f"the suite's writer (clock frozen at {when(frozen)}) appending to {names}"):
                for name in names:
                    peer.append(name, [{"id": 9, "value": "peer"}])
        with premise(f"writer under test no. {n} appending to {names} in turn, twice"):
            for row in ({"id": 1, "value": "a"}, {"id": 2, "value": "b"}):
                for name in names:
                    writer.append(name, [row])
        for name in names:
            commits = _commits(ref_admin, suite_storage, name)
            by_version = {v: txn_id(a) for v, a in commits.items()}
            repeats += txn_ids.record_table(request.node.name, name, by_version)
    more = f" (and {len(repeats) - 3} more)" if len(repeats) > 3 else ""
    assert not repeats, (
        "; ".join(repeats[:3]) + more + ": a txnId identifies one transaction, in every table and from every client"
    )


# Row counts around the boundaries a writer may split an append at: round numbers (1,000, 10,000), powers
# of two (1,024, 4,096, 8,192) and Arrow's default batch of 65,536 rows; about 98,000 rows in all, a few
# hundred milliseconds for an in-process writer.
APPEND_SIZES = (1, 999, 1000, 1001, 1024, 1025, 4096, 4097, 8193, 10_000, 10_001, 65_537)
# Two rows kept by each rewrite of the second equal-rows delete.
_TWO_KEPT = [{"id": 5, "value": "twin"}, {"id": 6, "value": "twin"}]


@pytest.mark.req("WRT-FILE-ACTIONS-ONCE")
def test_each_file_action_and_metadata_once_per_commit(
    written: WrittenTable,
    client: RecordingClient,
    ref_catalog: RecordingCatalog,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    transcript: Transcript,
) -> None:
    # One more append, whose first proposal loses v14 to a rival's commit: a writer that rebases builds
    # its commit again, and one that keeps the action list of the lost attempt holds its add twice.
    name = written.info.name
    raced: list[int] = []

    def rival(table_id: str, version: int) -> None:
        if not raced and table_id == written.info.table_id:
            raced.append(suite_client.append(name, [{"id": 990, "value": "rival"}]))

    schedule = [
        "client: create, 12 appends, delete (v0-v13)",
        "suite: append (v14) just before the client's next proposal",
        "client: append, whose proposal for v14 conflicts",
    ]
    transcript.notes["schedule"] = schedule
    ref_catalog.before_commit.append(rival)
    # Rebasing is a MAY: a writer that gives the conflict up has no rebased commit to judge.
    with premise("the writer under test appending after losing v14 to a rival"), suppress(CommitConflict):
        client.append(name, [{"id": 991, "value": "after the race"}])
    ref_catalog.before_commit.remove(rival)
    # Equal rows in several data files, rewritten by one delete: each file keeps the same rows, so a
    # writer that names a rewrite after what it holds (a hash of its bytes or of its rows, for an
    # idempotent retry) gives every rewrite one path and adds it once per file. Files of one kept row
    # and of two, from separate appends; done before the large appends, which every delete reads again.
    for kept, extra in (([{"id": 7, "value": "twin"}], (201, 202, 203)), (_TWO_KEPT, (211, 212))):
        for x in extra:
            with premise("the writer under test appending equal rows to several files"):
                client.append(name, [*kept, {"id": x, "value": "gone"}])
        schedule.append(f"client: {len(extra)} appends of {kept} plus one row each, then a delete of {list(extra)}")
        with premise(f"the writer under test deleting {list(extra)}, one row of each of {len(extra)} files"):
            client.delete(name, list(extra))
    # Appends of every size a writer may split at: a writer that writes a large append as several files
    # (row groups, batches, chunks of a power of two or of a round number) names each file and adds
    # each once. The sizes sit on both sides of the usual boundaries; one append of each.
    base = 100_000
    for size in APPEND_SIZES:
        schedule.append(f"client: append of {size} rows")
        with premise(f"the writer under test appending {size} rows in one commit"):
            client.append(name, [{"id": base + k, "value": "s"} for k in range(size)])
        base += size
    # And 8,194 equal rows in one append, which a writer splitting at 1,000, 1,024 or 4,096 rows cuts
    # into equal files: named after their content, two of them share a path.
    schedule.append("client: append of 8,194 equal rows")
    with premise("the writer under test appending 8,194 equal rows in one commit"):
        client.append(name, [{"id": 8, "value": "same"}] * 8194)
    # Every commit as the catalog ratified it, the rebased one included, read by lakecert's decoder.
    for version, actions in _commits(ref_admin, written.storage, name).items():
        repeated = repeated_actions(actions)
        assert not repeated, (
            f"v{version} holds {', '.join(repeated)}; a commit may hold one metaData and one add and one"
            " remove per path: its actions are not applied in order, so a repeat leaves the table's state undefined"
        )
