"""The writer on a table with hundreds of versions (issue 18: histories long enough for v100).

A writer that keeps versions as text, pads staged names to a fixed width or sorts what it publishes
as strings is right below version 10 or 100 and wrong above; the other writer checks cross 9 -> 10,
this one crosses 99 -> 100. The first 97 versions come from the suite's own well-behaved writer
(cheaper than the writer under test, and a table others wrote to is the normal case).
"""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import CatalogDriver, premise
from conformance.checks.delta.evidence import attempt, client_writes, proposals
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
    suite.history(table, BEFORE, unpublished=0)  # everything published: the writer under test publishes its own
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
    order = [f.version for _, f in client_writes(transcript, "delta") if f.version > BEFORE]
    if not order:
        not_applicable("the client does not publish (verified: nothing above the suite's versions in _delta_log)")
    if order != list(range(BEFORE + 1, BEFORE + 1 + APPENDS)):
        raise Violation("WRT-PUBLISH-ORDER", f"v{BEFORE + 1}-v{BEFORE + APPENDS} published in the order {order}")
