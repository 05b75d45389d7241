"""A reader on a table whose ``_delta_log`` holds more than a thousand entries (RFC "Reading
Catalog-managed Tables": versions the catalog no longer stores come from the published log).

Object stores answer a listing a page at a time (S3: 1000 keys); a reader that takes the first page
for the whole log reads small tables right and misses every published commit past the page. The
suite writes the table itself, everything published and the catalog holding nothing unpublished,
with a checkpoint a few versions from the end: a correct reader reads the checkpoint and the commits
after it (cheap even for an engine that pays per commit), and needs the listing past the first page
to find either. Above the latest, two stray published commits (a filesystem writer's) sit in the
second page too: a reader whose bound on the log comes from the listing (its newest file) rather than
the catalog's latest reads them (RDR-IGNORE-ABOVE-LATEST), here where the latest is a large number.
"""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import LogBuilder, expected_rows, ict_of, new_uuid, premise, version0
from conformance.checks.delta.evidence import attempt
from conformance.observe.recording import RecordingClient, TargetRaised
from conformance.report.outcomes import Violation
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta import actions as A
from reference_impl.delta.checkpoint import write_checkpoint

PAGE = 1000  # an S3 listing page
LATEST = PAGE + 4  # 1005 commits, a checkpoint and _last_checkpoint: the page ends at v999
CHECKPOINT = LATEST - 3  # past the page: a reader that stops at it finds neither checkpoint nor v1000-v1004
STRAYS = (LATEST + 1, LATEST + 2)  # published above the catalog's latest, each adding a row "stray"


def _empty_commit(version: int) -> bytes:
    """A commit with no data change: the long middle of the log costs no data file."""
    return A.encode_commit([A.commit_info_action(ict_of(version), new_uuid(), "SET TBLPROPERTIES")])


@pytest.mark.req("RDR-LIST-FALLBACK", "RDR-IGNORE-ABOVE-LATEST")
def test_log_longer_than_a_listing_page_is_read_past_it(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    with premise(f"the suite writing a published table of v0-v{LATEST} with a checkpoint of v{CHECKPOINT}"):
        v0 = version0(seeded.location)
        seeded.publish(0, v0)
        first = seeded.data_commit(1)  # row 1 lives in the checkpoint only (as far as a cheap reader goes)
        seeded.publish(1, first)
        for version in range(2, CHECKPOINT + 1):
            seeded.publish(version, _empty_commit(version))
        state = [a for a in A.decode_commit(v0) if "protocol" in a or "metaData" in a]
        state += [a for a in A.decode_commit(first) if "add" in a]
        write_checkpoint(seeded.storage, seeded.location, CHECKPOINT, state)
        for version in range(CHECKPOINT + 1, LATEST + 1):
            seeded.publish(version, seeded.data_commit(version))
        for version in STRAYS:
            seeded.publish(version, seeded.data_commit(version, "stray"))
        ref_admin.import_table(table_name, seeded.location, LATEST, [], LATEST)  # nothing unpublished
    after = CHECKPOINT + 1
    reads: dict[str, tuple[int | None, int, list[dict[str, object]]]] = {
        "the latest": (None, LATEST, expected_rows([1, *range(after, LATEST + 1)])),
        f"v{after}": (after, after, expected_rows([1, after])),
    }
    for how, (asked, want_version, want_rows) in reads.items():
        got = attempt(lambda v=asked: client.read(table_name, version=v))  # type: ignore[misc]
        if got.error is not None:
            e = got.error
            raised = type(e.__cause__ if isinstance(e, TargetRaised) and e.__cause__ else e).__name__
            raise Violation(
                "RDR-LIST-FALLBACK",
                f"a read of {how} raised {raised}; the catalog's latest is v{LATEST}, all"
                f" published, with a checkpoint of v{CHECKPOINT} in a log of {LATEST + 3} entries",
            )
        result = got.value
        assert result is not None, f"the read of {how} returned nothing, not the table"
        if result.version > LATEST or any(r.get("value") == "stray" for r in result.rows):
            raise Violation(
                "RDR-IGNORE-ABOVE-LATEST",
                f"a read of {how} gave v{result.version} with rows {result.rows}; the catalog's latest is"
                f" v{LATEST}, and the commits v{STRAYS[0]}-v{STRAYS[-1]} published above it are not the table",
            )
        if (result.version, result.rows) != (want_version, want_rows):
            raise Violation(
                "RDR-LIST-FALLBACK",
                f"a read of {how} gave v{result.version} with rows {result.rows}; want v{want_version} with"
                f" {want_rows} (the checkpoint of v{CHECKPOINT} and the commits after it lie past the first"
                f" {PAGE} entries of _delta_log)",
            )
