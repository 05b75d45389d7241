"""A reader on a table whose ``_delta_log`` holds log compaction files at every position relative to
its checkpoint (PROTOCOL.md Log Compaction Files; RFC "Reading Catalog-managed Tables").

A log compaction file x..y is an optional shortcut for the commits x..y; a reader that uses one must
still replay every commit between its start (a checkpoint, or version 0) and x. The suite writes the
table itself: every commit published up to v10 (so a reader that ignores compaction files reads it
from the commits), a checkpoint of v4, compaction files starting at 1 below the checkpoint, leaving
a gap without a checkpoint (2..3), overlapping the checkpoint (3..5), right after it (5..6), leaving
a gap after it (7..9, 8..10); deletes of files added before each range and before the checkpoint;
and v11-v12 ratified, staged, unpublished. Every version is read.
"""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import LogBuilder, expected_rows, ict_of, premise, version0
from conformance.checks.delta.evidence import attempt
from conformance.contract.delta import RatifiedCommit
from conformance.observe.recording import RecordingClient, TargetRaised
from conformance.report.outcomes import Violation
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta import actions as A
from reference_impl.delta.checkpoint import write_checkpoint
from reference_impl.delta.compaction import reconcile
from reference_impl.delta.log_paths import compaction_uri

LATEST = 12
PUBLISHED = 10
CHECKPOINT = 4
# version -> the version whose file it removes; every other version from 1 adds a row of its own.
REMOVES = {3: 1, 6: 2, 8: 5, 10: 4}
# Around the checkpoint of v4: from 1 (no checkpoint below), a gap without a checkpoint, overlapping
# it, right after it, a gap after it (two), each holding a remove of a file added before it.
COMPACTIONS = ((1, 2), (2, 3), (3, 5), (5, 6), (7, 9), (8, 10))


def _live(version: int) -> list[int]:
    """The ids of the rows live at ``version``: each data commit adds row ``v``, REMOVES take them."""
    live: list[int] = []
    for v in range(1, version + 1):
        if v in REMOVES:
            live.remove(REMOVES[v])
        else:
            live.append(v)
    return live


@pytest.mark.req("RDR-LIST-FALLBACK")
def test_every_version_reads_right_beside_compaction_files(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    contents: dict[int, bytes] = {0: version0(seeded.location)}
    with premise("the suite writing the table, its checkpoint of v4 and its log compaction files"):
        for v in range(1, LATEST + 1):
            contents[v] = seeded.remove_commit(v, contents[REMOVES[v]]) if v in REMOVES else seeded.data_commit(v)
        for v in range(PUBLISHED + 1):
            seeded.publish(v, contents[v])
        decoded = {v: A.decode_commit(c) for v, c in contents.items()}
        state = reconcile([decoded[v] for v in range(CHECKPOINT + 1)])
        write_checkpoint(seeded.storage, seeded.location, CHECKPOINT, [a for a in state if "remove" not in a])
        for x, y in COMPACTIONS:
            body = A.encode_commit(reconcile([decoded[v] for v in range(x, y + 1)]))
            seeded.storage.put(compaction_uri(seeded.location, x, y), body)
        staged = [
            RatifiedCommit(v, staged_uri=seeded.stage(v, contents[v]), in_commit_timestamp=ict_of(v))
            for v in range(PUBLISHED + 1, LATEST + 1)
        ]
        ref_admin.import_table(table_name, seeded.location, LATEST, staged, PUBLISHED)
    for version in range(LATEST + 1):
        want = expected_rows(_live(version))
        got = attempt(lambda v=version: client.read(table_name, version=v))  # type: ignore[misc]
        if got.error is not None:
            e = got.error
            raised = type(e.__cause__ if isinstance(e, TargetRaised) and e.__cause__ else e).__name__
            raise Violation(
                "RDR-LIST-FALLBACK",
                f"a read of v{version} raised {raised}; every commit 0-{PUBLISHED} is published and"
                f" v{PUBLISHED + 1}-v{LATEST} are ratified, so v{version} is readable (its rows: {want})",
            )
        result = got.value
        assert result is not None, f"the read of v{version} returned nothing, not the table"
        assert (result.version, result.rows) == (version, want), (
            f"a read of v{version} gave v{result.version} with rows {result.rows}; the commits 0-{version} give"
            f" {want}. The log holds a checkpoint of v{CHECKPOINT} and log compaction files {list(COMPACTIONS)}:"
            " a compaction of x..y stands for the commits x..y only, and the commits between the reader's"
            " start (a checkpoint or v0) and x must still be replayed"
        )
