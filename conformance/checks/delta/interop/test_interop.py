"""A client through a catalog that is not lakecert's reference, judged end to end (profile delta-cm-interop).

Every data version ``v`` the client writes adds the single row ``{id: i, value: "v<i>"}`` for its
``i``-th append, so the rows a read returns say which commits it saw. Nothing here wraps the
catalog in-process: the evidence is what the catalog answers the suite (actor ``suite``), what is
in storage, and what a second client of the pair reads.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.checks.delta.builders import expected_rows, premise
from conformance.checks.delta.evidence import attempt, same_actions
from conformance.contract.delta import CommitConflict, Storage
from conformance.observe.recording import RecordingCatalog, RecordingClient, RecordingStorage
from conformance.observe.transcript import Event, Transcript
from conformance.report.outcomes import Violation
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.log_paths import delta_uri
from reference_impl.delta.path_access import published_snapshot
from reference_impl.delta.snapshot import read_rows

APPENDS = range(1, 4)  # three data commits: versions past the first, few enough for a JVM client
RIVAL_ROW: dict[str, object] = {"id": 99, "value": "rival"}
CLIENT_ROW: dict[str, object] = {"id": 2, "value": "v2"}
ClientFactory = Callable[[], RecordingClient]


def _write_three(client: RecordingClient, name: str) -> list[int]:
    """Create the table and append rows 1..3; the versions the client says it committed."""
    client.create_table(name)
    return [client.append(name, expected_rows([i])) for i in APPENDS]


def _rows_up_to(acked: list[int], version: int) -> list[dict[str, object]]:
    """The rows a read at ``version`` must return: those of the appends acknowledged at or below it."""
    return expected_rows([i for i, v in zip(APPENDS, acked, strict=True) if v <= version])


@pytest.mark.req("INT-ROUNDTRIP")
def test_written_rows_are_read_back_at_the_catalogs_latest(
    pair_client_factory: ClientFactory, judge: RecordingCatalog, table_name: str, transcript: Transcript
) -> None:
    transcript.notes["schedule"] = ["client A: create, append rows 1-3", "suite: ask the catalog", "client B: read"]
    acked = _write_three(pair_client_factory(), table_name)
    info = judge.resolve(table_name)
    latest = judge.get_commits(info.table_id).latest_version
    assert latest == acked[-1], f"the writer committed v{acked[-1]}, the catalog's latest is {latest}"
    got = pair_client_factory().read(table_name)
    assert got.version == latest, f"a second client read version {got.version}, the catalog's latest is {latest}"
    assert got.rows == expected_rows(APPENDS), f"rows read back at version {got.version}: {got.rows}"


@pytest.mark.req("INT-RATIFIED-READABLE")
def test_ratified_versions_are_contiguous_and_readable_by_version(
    pair_client_factory: ClientFactory,
    judge: RecordingCatalog,
    suite_storage: RecordingStorage,
    table_name: str,
    transcript: Transcript,
) -> None:
    transcript.notes["schedule"] = ["client A: create, append rows 1-3", "suite: list", "client B: read every version"]
    acked = _write_three(pair_client_factory(), table_name)
    info = judge.resolve(table_name)
    listing = judge.get_commits(info.table_id)
    listed = sorted(c.version for c in listing.commits)
    # Versions the catalog no longer lists must be published (RFC "Getting Ratified Commits"); the
    # listed ones must run without a gap up to the latest version.
    first = listed[0] if listed else listing.latest_version + 1
    assert listed == list(range(first, listing.latest_version + 1)), (
        f"the catalog lists versions {listed} with latest {listing.latest_version}: not contiguous up to it"
    )
    assert listing.latest_version == acked[-1], f"acknowledged {acked}, latest {listing.latest_version}"
    unbacked = [
        c.version
        for c in listing.commits
        if c.inline_content is None and (c.staged_uri is None or not suite_storage.exists(c.staged_uri))
    ]
    unpublished = [v for v in range(first) if not suite_storage.exists(delta_uri(info.location, v))]
    assert not unbacked and not unpublished, (
        f"listed commits without their file {unbacked}; versions neither listed nor published {unpublished}"
    )
    reader = pair_client_factory()
    for version in range(listing.latest_version + 1):
        got = reader.read(table_name, version=version)
        want = _rows_up_to(acked, version)
        assert (got.version, got.rows) == (version, want), (
            f"read at version {version} returned version {got.version} with rows {got.rows}; expected {want}"
        )


@pytest.mark.req("INT-NO-LOST-COMMIT", "INT-CONCURRENT-REBASE")
def test_concurrent_writers_both_land_without_a_lost_commit(
    pair_client_factory: ClientFactory,
    pair_catalog: RecordingCatalog,
    judge: RecordingCatalog,
    rival: ReferenceClient,
    table_name: str,
    transcript: Transcript,
) -> None:
    """The client stages version 2; before it proposes it, the suite commits and publishes its own
    version 2 through the same catalog (the winner is published: a writer may refuse to rebase over
    an unpublished one, which the writer profile judges). Triggered by whichever the suite sees
    first: the client's staged file (recorded from storage or announced by a JVM) or its proposal."""
    transcript.notes["schedule"] = [
        "client: create, append row 1 (v1)",
        "suite: when the client has staged v2, append row 99 at v2 and publish it",
        "client: its proposal for v2 loses; it rebases and lands row 2 at v3",
        "suite: read through the catalog, ask the catalog",
    ]
    client = pair_client_factory()
    client.create_table(table_name)
    first = client.append(table_name, expected_rows([1]))
    won: list[int] = []

    def race(*_: object) -> None:
        if won:
            return
        won.append(-1)  # one rival commit, however often the hooks fire (the rival's own events too)
        with premise("the suite's rival commit and publication"):
            won[0] = rival.append(table_name, [RIVAL_ROW])
            rival.publish(table_name)

    def on_event(event: Event) -> None:
        if event.actor == "storage" and event.op == "put" and "/_staged_commits/" in str(event.args.get("uri")):
            race()

    transcript.listeners.append(on_event)
    pair_catalog.before_commit.append(race)
    outcome = attempt(lambda: client.append(table_name, [CLIENT_ROW]))
    transcript.listeners.clear()
    pair_catalog.before_commit.clear()
    assert won and won[0] == first + 1, f"the rival did not commit version {first + 1} (got {won})"
    # Judged by the suite's own reader through the pair's catalog: the pair's reader is judged by
    # INT-ROUNDTRIP, and a reader that misses a commit must not pass here for a lost one.
    got = rival.read(table_name)
    ids = {r.get("id") for r in got.rows}
    latest = judge.get_commits(judge.resolve(table_name).table_id).latest_version
    if RIVAL_ROW["id"] not in ids:
        raise Violation("INT-NO-LOST-COMMIT", f"the rival's acknowledged commit v{won[0]} is lost: rows {got.rows}")
    if outcome.error is not None:
        if not isinstance(outcome.error, CommitConflict):
            raise outcome.error
        if CLIENT_ROW["id"] in ids or latest != won[0]:
            raise Violation("INT-NO-LOST-COMMIT", f"a refused commit left a trace: rows {got.rows}, latest {latest}")
        raise Violation("INT-CONCURRENT-REBASE", "the client gave up with a conflict instead of rebasing over v2")
    landed = outcome.value
    if CLIENT_ROW["id"] not in ids:
        raise Violation("INT-NO-LOST-COMMIT", f"the client was told v{landed} landed, its row is missing: {got.rows}")
    if landed != won[0] + 1 or latest != landed or got.version != latest:
        raise Violation(
            "INT-NO-LOST-COMMIT",
            f"the client landed at v{landed}, the rival at v{won[0]}, the catalog's latest is {latest} and a "
            f"reader sees version {got.version}: two commits share a version or one is missing",
        )
    assert sorted(ids, key=repr) == sorted({1, CLIENT_ROW["id"], RIVAL_ROW["id"]}, key=repr), f"rows {got.rows}"


@pytest.mark.req("INT-PUBLISH-PATH-READABLE")
def test_published_log_is_readable_by_path_after_publish(
    pair_client_factory: ClientFactory,
    judge: RecordingCatalog,
    suite_storage: Storage,
    table_name: str,
    transcript: Transcript,
) -> None:
    transcript.notes["schedule"] = [
        "client: create, append rows 1-3",
        "suite: keep the ratified commits' bytes",
        "client: publish",
        "suite: replay _delta_log by path, no catalog",
    ]
    client = pair_client_factory()
    acked = _write_three(client, table_name)
    info = judge.resolve(table_name)
    listing = judge.get_commits(info.table_id)
    ratified = {
        c.version: c.inline_content if c.inline_content is not None else suite_storage.get(str(c.staged_uri))
        for c in listing.commits
    }
    client.publish(table_name)
    missing = [v for v in range(listing.latest_version + 1) if not suite_storage.exists(delta_uri(info.location, v))]
    assert not missing, f"after publish, versions {missing} have no file in _delta_log"
    # The actions, not the bytes: a re-encoding is WRT-PUBLISH-BYTES's (a SHOULD), and a path reader reads actions.
    changed = [
        v
        for v, data in sorted(ratified.items())
        if not same_actions(suite_storage.get(delta_uri(info.location, v)), data)
    ]
    assert not changed, f"published files hold other actions than the ratified commits of versions {changed}"
    snapshot = published_snapshot(suite_storage, info.location)
    rows = read_rows(suite_storage, snapshot)
    assert snapshot.version == acked[-1], f"the published log replays to version {snapshot.version}, not {acked[-1]}"
    assert rows == expected_rows(APPENDS), f"the published log replays to rows {rows}"
