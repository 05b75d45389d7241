"""commitInfo of every commit: first, with a rising in-commit timestamp and a unique txnId.

Sources: PROTOCOL.md "In-Commit Timestamps"; RFC "Commit Provenance Information".
"""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import premise, when
from conformance.checks.delta.evidence import ratified_content
from conformance.checks.delta.writer.conftest import WrittenTable, ahead_client
from conformance.contract.delta import Storage
from conformance.observe.recording import RecordingClient
from conformance.observe.transcript import Transcript
from conformance.oracle.commits import commit_info, decode, txn_id
from conformance.oracle.names import published_uri
from conformance.oracle.txn_ids import TxnIdRegistry
from conformance.run_context import RunContext
from reference_impl.catalog.catalog import ReferenceCatalog

NO_SUCH_ID = 999_999_999  # no table of these checks holds this id


@pytest.mark.req("WRT-COMMITINFO-FIRST")
def test_commit_info_is_the_first_action(written: WrittenTable) -> None:
    for version, actions in written.commits.items():
        assert actions and "commitInfo" in actions[0], (
            f"v{version} starts with {next(iter(actions[0])) if actions else 'nothing'}"
        )


@pytest.mark.req("WRT-ICT-MONOTONIC")
def test_in_commit_timestamps_strictly_increase(written: WrittenTable) -> None:
    previous: tuple[int, int] | None = None
    for version, actions in written.commits.items():
        ict = (commit_info(actions) or {}).get("inCommitTimestamp")
        assert isinstance(ict, int) and not isinstance(ict, bool), f"v{version} has inCommitTimestamp={ict!r}"
        if previous is not None:
            assert ict > previous[1], (
                f"v{version}'s inCommitTimestamp {when(ict)} is not after v{previous[0]}'s {when(previous[1])};"
                " each commit's must be later than the one before"
            )
        previous = (version, ict)


@pytest.mark.req("WRT-TXNID")
def test_every_commit_has_a_txn_id(written: WrittenTable) -> None:
    for version, actions in written.commits.items():
        txn = (commit_info(actions) or {}).get("txnId")
        assert isinstance(txn, str) and txn, f"v{version} has txnId={txn!r}"


@pytest.mark.req("WRT-TXNID-UNIQUE")
def test_txn_ids_are_unique(
    written: WrittenTable,
    txn_ids: TxnIdRegistry,
    request: pytest.FixtureRequest,
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
) -> None:
    # A DELETE that matches no row commits no file action, so two of them differ in nothing but their
    # table and time: a txnId derived from a commit's content (to keep it across retries) repeats there.
    # One in the written table and one in a second table.
    nothing = f"{table_name}_nothing"
    with premise("the writer under test deleting a row that does not exist, in two tables"):
        client.create_table(nothing)
        client.delete(written.info.name, [NO_SUCH_ID])
        client.delete(nothing, [NO_SUCH_ID])
    # The run's registry holds the txnIds of every table checked before: a repeat across tables shows too.
    repeats: list[str] = []
    for name in (written.info.name, nothing):
        info = ref_admin.resolve(name)
        table = WrittenTable(info, ratified_content(transcript, suite_storage, info.table_id), suite_storage)
        by_version = {v: txn_id(a) for v, a in table.commits.items()}
        repeats += txn_ids.record_table(request.node.name, name, by_version)
    more = f" (and {len(repeats) - 3} more)" if len(repeats) > 3 else ""
    assert not repeats, "; ".join(repeats[:3]) + more + ": a txnId identifies one transaction in the whole run"


@pytest.mark.req("WRT-ICT-MONOTONIC")
def test_in_commit_timestamps_pass_a_writer_whose_clock_is_ahead(
    lakecert: RunContext,
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
    seed: int,
) -> None:
    # Two writers, two clocks: the suite's runs a day ahead. Commits also follow each other closely,
    # so a writer stamping its wall clock repeats a millisecond or goes back in time.
    client.create_table(table_name)
    client.append(table_name, [{"id": 1, "value": "a"}])
    ahead_client(lakecert, transcript, suite_storage, seed).append(table_name, [{"id": 2, "value": "ahead"}])
    for i in range(3, 6):
        client.append(table_name, [{"id": i, "value": "b"}])
    info = ref_admin.resolve(table_name)
    commits = {c.version: c for c in ref_admin.get_commits(info.table_id).commits}
    previous: tuple[int, int] | None = None
    for version in sorted(commits):
        c = commits[version]
        content = c.inline_content if c.staged_uri is None else suite_storage.get(c.staged_uri)
        assert content is not None, f"v{version} has neither a staged file nor inline content"
        ict = (commit_info(decode(content)) or {}).get("inCommitTimestamp")
        assert isinstance(ict, int) and not isinstance(ict, bool), f"v{version} has inCommitTimestamp={ict!r}"
        if previous is not None:
            assert ict > previous[1], (
                f"v{version}'s inCommitTimestamp {when(ict)} is not after v{previous[0]}'s {when(previous[1])};"
                " each commit's must be later than the one before"
            )
        previous = (version, ict)


@pytest.mark.req("WRT-ICT-MONOTONIC")
def test_in_commit_timestamps_pass_a_checkpointed_commit(
    lakecert: RunContext,
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
    seed: int,
) -> None:
    # The latest version is published and checkpointed by a writer whose clock runs a day ahead: its
    # commitInfo is no longer among the commits a snapshot replays (the checkpoint holds none), yet
    # the next commit must still be stamped after it (found by mutation testing, issue 18).
    client.create_table(table_name)
    ahead = ahead_client(lakecert, transcript, suite_storage, seed)
    with premise("the suite's writer appending, publishing and checkpointing v1"):
        ahead.append(table_name, [{"id": 1, "value": "ahead"}])
        ahead.publish(table_name)
        checkpointed = ahead.checkpoint(table_name)
        assert checkpointed == 1, f"the suite's writer checkpointed v{checkpointed}, not the v1 it wrote"
    client.append(table_name, [{"id": 2, "value": "b"}])
    location = ref_admin.resolve(table_name).location
    first = (commit_info(decode(suite_storage.get(published_uri(location, 1)))) or {}).get("inCommitTimestamp")
    ratified = ratified_content(transcript, suite_storage, ref_admin.resolve(table_name).table_id)
    second = (commit_info(decode(ratified[2])) or {}).get("inCommitTimestamp") if 2 in ratified else None
    assert isinstance(first, int) and isinstance(second, int), f"timestamps v1={first!r}, v2={second!r}"
    assert second > first, (
        f"v2's inCommitTimestamp {when(second)} is not after the checkpointed v1's {when(first)};"
        " each commit's must be later than the one before"
    )
