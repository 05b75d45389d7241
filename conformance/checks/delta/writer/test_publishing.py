"""Publishing ratified commits (RFC "Publishing Commits")."""

from __future__ import annotations

import pytest

from conformance.checks.delta.evidence import client_writes, log_files
from conformance.checks.delta.writer.conftest import WrittenTable
from conformance.contract.delta import Storage
from conformance.observe.recording import RecordingClient
from conformance.observe.transcript import Transcript
from conformance.oracle.names import published_uri
from conformance.report.outcomes import not_applicable


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


@pytest.mark.req("WRT-PUBLISH-IDENTICAL")
def test_published_files_equal_the_ratified_commits(
    written: WrittenTable, client: RecordingClient, suite_storage: Storage
) -> None:
    client.publish(written.info.name)
    published = _published_versions(suite_storage, written.info.location) - {0}
    if not published:
        not_applicable("the client does not publish (verified: nothing above v0 in _delta_log)")
    for version in sorted(published):
        assert version in written.ratified, f"v{version} is published but was never ratified"
        content = suite_storage.get(published_uri(written.info.location, version))
        assert content == written.ratified[version], f"published v{version} differs from the ratified commit"
