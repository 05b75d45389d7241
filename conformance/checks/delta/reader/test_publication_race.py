"""A reader while another client publishes (RFC "Reading Catalog-managed Tables": a client first asks
the catalog for the ratified commits, then LISTs ``_delta_log`` for the published ones the catalog no
longer stores).

The order matters. Asked first, the catalog's answer and a LIST after it overlap whatever another
client publishes in between: a commit leaves the catalog only after its published file exists. LISTed
first, a commit published and marked between the LIST and the catalog's answer is in neither, and a
readable version cannot be built. The suite makes that happen every time: just before the catalog
serves the reader's first listing of the table, another client publishes and marks part of the
unpublished commits.
"""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import LogBuilder, expected_rows, ict_of, version0
from conformance.checks.delta.evidence import attempt
from conformance.contract.delta import RatifiedCommit
from conformance.observe.recording import RecordingCatalog, RecordingClient, TargetRaised
from conformance.report.outcomes import PremiseBroken, Violation
from reference_impl.catalog.catalog import ReferenceCatalog

PUBLISHED = 9  # v0-v9 published and marked when the read starts
LATEST = 12  # v10-v12 ratified and staged: the catalog stores them
RACED = 11  # the other client publishes v10-v11 and marks v11 during the read; v12 stays unpublished


@pytest.mark.req("RDR-LIST-FALLBACK")
def test_publication_between_catalog_and_listing_is_read(
    client: RecordingClient,
    ref_catalog: RecordingCatalog,
    ref_admin: ReferenceCatalog,
    seeded: LogBuilder,
    table_name: str,
) -> None:
    seeded.publish(0, version0(seeded.location))
    for version in range(1, PUBLISHED + 1):
        seeded.publish(version, seeded.data_commit(version))
    contents = {v: seeded.data_commit(v) for v in range(PUBLISHED + 1, LATEST + 1)}
    staged = [
        RatifiedCommit(v, staged_uri=seeded.stage(v, content), in_commit_timestamp=ict_of(v))
        for v, content in contents.items()
    ]
    info = ref_admin.import_table(table_name, seeded.location, LATEST, staged, PUBLISHED)
    raced: list[str] = []
    broken: list[Exception] = []

    def other_client_publishes(table_id: str) -> None:
        # Once, before the catalog serves the reader: publish (copy the staged bytes) and mark, as a
        # well-behaved publisher does; the catalog then drops v10-v11. A failure here is the suite's
        # (kept for after the read, so it is never blamed on the reader whose call it interrupted).
        if table_id != info.table_id or raced or broken:
            return
        try:
            for version in range(PUBLISHED + 1, RACED + 1):
                seeded.publish(version, contents[version])
            ref_admin.mark_published(info.table_id, RACED)
        except Exception as e:
            broken.append(e)
            return
        raced.append(table_id)

    ref_catalog.before_get_commits.append(other_client_publishes)
    got = attempt(lambda: client.read(table_name))
    ref_catalog.before_get_commits.remove(other_client_publishes)
    if broken:
        raise PremiseBroken(f"another client publishing v{PUBLISHED + 1}-v{RACED} during the read: {broken[0]!r}")
    when = (
        f"another client published v{PUBLISHED + 1}-v{RACED} and marked v{RACED} just before the catalog"
        " answered the reader"
        if raced
        else "the reader never asked the catalog for the table's commits"
    )
    if got.error is not None:
        e = got.error
        raised = type(e.__cause__ if isinstance(e, TargetRaised) and e.__cause__ else e).__name__
        raise Violation(
            "RDR-LIST-FALLBACK",
            f"the read of the latest raised {raised}; {when}: a reader that asks the catalog first and LISTs"
            f" after finds v{PUBLISHED + 1}-v{RACED} in _delta_log and v{LATEST} in the catalog",
        )
    result = got.value
    assert result is not None, "the read returned nothing, not the table"
    want = expected_rows(range(LATEST + 1))
    if (result.version, result.rows) != (LATEST, want):
        raise Violation(
            "RDR-LIST-FALLBACK",
            f"the read of the latest gave v{result.version} with rows {result.rows}; {when}; the table is"
            f" v{LATEST} with rows 1-{LATEST} (commits the catalog no longer stores are in _delta_log when"
            " the reader LISTs after asking the catalog)",
        )
