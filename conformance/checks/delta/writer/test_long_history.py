"""The writer on a table with hundreds of versions (issue 18: histories long enough for v100).

A writer that keeps versions as text, pads staged names to a fixed width or sorts what it publishes
as strings is right below version 10 or 100 and wrong above; the other writer checks cross 9 -> 10,
this one crosses 99 -> 100. The first 97 versions come from the suite's own well-behaved writer
(cheaper than the writer under test, and a table others wrote to is the normal case), and none of
them is published: the writer under test then publishes a run of 102 commits in one call, longer
than any batch a publisher may cut its work into (16, 32, 64, 100 commits a call), so that one which
copies a batch and reports more than it copied, or stops after a batch, shows.
"""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import CatalogDriver, premise
from conformance.checks.delta.evidence import attempt, client_writes, log_files, proposals
from conformance.contract.delta import Storage
from conformance.observe.recording import RecordingCatalog, RecordingClient
from conformance.observe.transcript import Transcript
from conformance.oracle.names import parse, staged_dir
from conformance.report.outcomes import Violation, not_applicable
from reference_impl.catalog.catalog import ReferenceCatalog

BEFORE, APPENDS = 97, 5  # the writer under test writes v98-v102


@pytest.mark.req("WRT-STAGED-NAME", "WRT-PUBLISH-ORDER")
def test_three_digit_versions_are_named_and_published_in_order(
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    transcript: Transcript,
    suite_storage: Storage,
    table_name: str,
) -> None:
    client.create_table(table_name)
    table = ref_admin.resolve(table_name)
    suite = CatalogDriver(RecordingCatalog(ref_admin, transcript, actor="suite"), suite_storage)
    # Nothing published (the reference catalog writers are bound to declares no cap on unpublished
    # commits, docs/certify.md "Limits"): the writer under test commits on top of 97 ratified,
    # unpublished commits and then publishes v1-v102 in one call.
    suite.history(table, BEFORE, unpublished=BEFORE)
    outcome = attempt(lambda: [client.append(table_name, [{"id": 1000 + i, "value": "x"}]) for i in range(APPENDS)])
    proposed = [(e.args["version"], e.args["staged_uri"]) for e in proposals(transcript, table.table_id)]
    for version, uri in proposed:
        if uri is None:
            continue
        parsed = parse(uri)
        named = parsed.version if parsed is not None and parsed.kind == "staged" else None
        if not uri.startswith(staged_dir(table.location) + "/") or named != version:
            raise Violation("WRT-STAGED-NAME", f"v{version} staged as {uri}")
    outcome.unwrap()
    with premise("the writer under test publishing its commits"):
        client.publish(table_name)
    last = BEFORE + APPENDS
    order = [f.version for _, f in client_writes(transcript, "delta") if f.version > 0]
    if not order:
        not_applicable("the client does not publish (verified: nothing above v0 in _delta_log)")
    wrong = next((i for i in range(1, len(order)) if order[i] < order[i - 1]), None)
    if wrong is not None:
        near = order[max(0, wrong - 2) : wrong + 2]
        raise Violation("WRT-PUBLISH-ORDER", f"v1-v{last} published in the order ...{near}... (v{order[wrong]} late)")
    # RFC "Publishing Commits": v-1 is published before v, and the contract's publish publishes every
    # ratified, unpublished commit. A publisher that copies a batch and reports the newest version as
    # published leaves the rest out for good (the catalog may forget them), and the next commit it
    # publishes lands above the gap.
    published = {f.version for f in log_files(suite_storage, table.location) if f.kind == "delta"}
    missing = [v for v in range(1, last + 1) if v not in published]
    if missing:
        raise Violation(
            "WRT-PUBLISH-ORDER",
            f"after publishing a run of {last} unpublished commits, _delta_log lacks {len(missing)} of them"
            f" (v{missing[0]}-v{missing[-1]}); the client published {len(order)}, v{order[0]}-v{order[-1]}",
        )
