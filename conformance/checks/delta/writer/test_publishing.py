"""Publishing ratified commits (RFC "Publishing Commits")."""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import LogBuilder, premise
from conformance.checks.delta.evidence import client_writes, log_files
from conformance.checks.delta.writer.conftest import WrittenTable
from conformance.contract.delta import NotSupported, Storage
from conformance.observe.recording import RecordingCatalog, RecordingClient
from conformance.observe.transcript import Transcript
from conformance.oracle.commits import commit_info
from conformance.oracle.names import published_uri
from conformance.report.outcomes import PremiseBroken, not_applicable
from conformance.run_context import RunContext
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient


def _published_versions(storage: Storage, location: str) -> set[int]:
    return {f.version for f in log_files(storage, location) if f.kind == "delta"}


@pytest.mark.req("WRT-PUBLISH-ORDER")
def test_versions_are_published_in_order(
    written: WrittenTable, client: RecordingClient, transcript: Transcript, suite_storage: Storage
) -> None:
    client.publish(written.info.name)
    order = [f.version for _, f in client_writes(transcript, "delta") if f.version > 0]
    if not order and _published_versions(suite_storage, written.info.location) == {0}:
        not_applicable("the client does not publish (verified: nothing above v0 in _delta_log)")
    assert order == sorted(order), f"published in the order {order}"
    assert order and order[0] == 1 and order == list(range(1, order[-1] + 1)), f"published {order}, skipping some"


@pytest.mark.req("WRT-PUBLISH-ORDER")
def test_an_inline_commit_is_published_in_its_place(
    lakecert: RunContext,
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    transcript: Transcript,
    suite_storage: Storage,
    table_name: str,
    seed: int,
) -> None:
    # v1 and v3 are the writer's commits, v2 between them a rival's INLINE commit: its content is held
    # by the catalog and it has no staged file, so a writer that orders its publication by staged
    # file name (an inline commit has none) publishes v2 first. Writers under test are bound to the
    # reference catalog, which hosts inline commits; a catalog that refused them could not stage this
    # case (it would be skipped, not judged), but no writer check runs on one.
    rival = ReferenceClient(
        RecordingCatalog(lakecert.reference_catalog(), transcript, actor="suite"), suite_storage, seed=seed, inline=True
    )
    with premise("the writer under test creating the table and committing v1"):
        client.create_table(table_name)
        client.append(table_name, [{"id": 1, "value": "a"}])
    with premise("the suite's writer ratifying v2 as an inline commit"):
        rival.append(table_name, [{"id": 2, "value": "inline"}])
    try:
        with premise("the writer under test committing v3 on top of the inline v2"):
            client.append(table_name, [{"id": 3, "value": "c"}])
    except PremiseBroken as e:
        # A client whose catalog API cannot carry inline commits (Kernel through Unity Catalog's)
        # refuses the table, and changed nothing: no such order can arise for it.
        if (
            not isinstance(e.__cause__, NotSupported)
            or ref_admin.get_commits(ref_admin.resolve(table_name).table_id).latest_version != 2
        ):
            raise
        not_applicable(
            "the client refuses a table that holds an inline commit (NotSupported; verified: v2 is still the latest)"
        )
    transcript.notes["schedule"] = [
        "client: create, append (v1)",
        "suite: append (v2) as an inline commit",
        "client: append (v3), publish",
    ]
    # Only the puts of this publish call are judged: a file written earlier (before its commit was
    # ratified, say) is WRT-NO-FILESYSTEM-COMMIT's matter, not this order's.
    start = len(transcript.events())
    client.publish(table_name)
    order = [f.version for e, f in client_writes(transcript, "delta") if e.seq >= start and f.version > 0]
    published = _published_versions(suite_storage, ref_admin.resolve(table_name).location)
    if not order and published == {0}:
        not_applicable("the client does not publish (verified: nothing above v0 in _delta_log)")
    assert order == sorted(order), f"published in the order {order} (v2 is an inline commit, v1 and v3 staged)"
    assert {1, 2, 3} <= published, f"after publishing, _delta_log holds v{sorted(published)} of the ratified v0-v3"


@pytest.mark.req("WRT-PUBLISH-IDENTICAL")
def test_published_files_equal_the_ratified_commits(
    written: WrittenTable,
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    suite_storage: Storage,
) -> None:
    # The last commit is another writer's, serialised its own way (raw UTF-8, a space after every
    # separator): a client that publishes its re-serialisation of what it parsed publishes its own
    # commits exactly and this one changed.
    info = written.info
    latest = ref_admin.get_commits(info.table_id).latest_version
    ict = (commit_info(written.commits[latest]) or {}).get("inCommitTimestamp")
    with premise("the suite's writer ratifying a commit serialised its own way"):
        assert isinstance(ict, int), f"v{latest} has no inCommitTimestamp"
        log = LogBuilder(suite_storage, info.location)
        foreign = log.unicode_commit(latest + 1, ict + 1, (", ", ": "))
        uri = log.stage(latest + 1, foreign)
        ref_admin.commit(info.table_id, latest + 1, staged_uri=uri, in_commit_timestamp=ict + 1)
    ratified = written.ratified | {latest + 1: foreign}
    client.publish(info.name)
    published = _published_versions(suite_storage, info.location) - {0}
    if not published:
        not_applicable("the client does not publish (verified: nothing above v0 in _delta_log)")
    for version in sorted(published):
        assert version in ratified, f"v{version} is published but was never ratified"
        content = suite_storage.get(published_uri(info.location, version))
        whose = "another writer's commit" if version == latest + 1 else "the ratified commit"
        assert content == ratified[version], (
            f"published v{version} ({len(content)} bytes) differs from {whose} ({len(ratified[version])} bytes):"
            " publishing copies the ratified commit byte for byte"
        )
