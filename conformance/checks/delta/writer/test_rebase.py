"""Rebasing over a ratified but unpublished winner (RFC "Terminology: Commits", "Commit Protocol").

The RFC lets a proposed commit be rejected and leaves retrying to the writer; it encourages
catalogs to report the latest ratified commit on a conflict so that writers can rebase cheaply.
So rebasing is a MAY, and giving up safely (the conflict reaches the caller, nothing else is
ratified) is conformant. A writer that does rebase must build on the catalog's ratified commits,
unpublished ones included: its commit then lands at the next version with the winner's rows kept.
"""

from __future__ import annotations

import pytest

from conformance.checks.delta.writer.races import CLIENT_ROW, RIVAL_ROW, lose_v2
from conformance.contract.delta import CommitConflict
from conformance.observe.recording import RecordingCatalog, RecordingClient
from conformance.observe.transcript import Transcript
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient


@pytest.mark.req("WRT-REBASE-UNPUBLISHED")
def test_writer_rebases_over_an_unpublished_winner(
    ref_admin: ReferenceCatalog,
    client: RecordingClient,
    ref_catalog: RecordingCatalog,
    suite_client: ReferenceClient,
    transcript: Transcript,
    table_name: str,
) -> None:
    outcome = lose_v2(client, ref_catalog, suite_client, transcript, table_name)
    latest = ref_admin.get_commits(ref_admin.resolve(table_name).table_id).latest_version
    if isinstance(outcome.error, CommitConflict):
        assert latest == 2, f"the writer gave up, yet the catalog ratified up to v{latest}"
        raise AssertionError("the writer gave up at the conflict instead of rebasing over the unpublished v2")
    version = outcome.unwrap()
    assert version == 3 == latest, f"the rebased commit landed at v{version}; the catalog's latest is v{latest}"
    rows = suite_client.read(table_name).rows
    assert RIVAL_ROW in rows and CLIENT_ROW in rows, f"after the rebase the table holds {rows}"
