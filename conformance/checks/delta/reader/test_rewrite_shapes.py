"""A reader on a table written the way Delta engines write maintenance and rewrites: every add of a
checkpoint and of a log compaction, and the adds and removes of OPTIMIZE, carry ``dataChange: false``
(RFC "Reading Catalog-managed Tables": commits the catalog no longer stores are read from the
checkpoints and commit files published in ``_delta_log``; PROTOCOL.md Checkpoints, Add File).

``dataChange`` says whether a file changes the table's rows (a change feed's and a streaming
source's business); in a snapshot a file added with ``dataChange: false`` is as live as any other.
The suite's other tables are written with ``dataChange: true`` everywhere, so a reader that shares
its replay with a change feed and drops these adds reads them right; here the table holds each
shape real engines write, each version read from another one: a checkpoint, an OPTIMIZE commit
published and one the catalog still stores, a log compaction over the OPTIMIZE.
"""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import LogBuilder, expected_rows, ict_of, premise, version0, without_data_change
from conformance.checks.delta.reader.answers import read_or_refused, said
from conformance.contract.delta import RatifiedCommit
from conformance.observe.recording import RecordingClient
from conformance.report.outcomes import Violation
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta import actions as A
from reference_impl.delta.checkpoint import write_checkpoint
from reference_impl.delta.compaction import reconcile
from reference_impl.delta.log_paths import compaction_uri

LATEST, PUBLISHED = 10, 8
REMOVES = {4: 1, 8: 7}  # version -> the version whose file it removes (dataChange true)
OPTIMIZES = {6: (2, 3, 5), 9: (6,)}  # version -> the versions whose files it rewrites into one
CHECKPOINTS = (4, 6)  # every add dataChange false: before and right after the published OPTIMIZE
COMPACTION = (5, 7)  # over the OPTIMIZE, its adds dataChange false


def _live(version: int) -> list[int]:
    """The ids of the rows live at ``version``: an OPTIMIZE moves rows between files, keeping them."""
    live: list[int] = []
    for v in range(1, version + 1):
        if v in REMOVES:
            live.remove(REMOVES[v])
        elif v not in OPTIMIZES:
            live.append(v)
    return sorted(live)


@pytest.mark.req("RDR-LIST-FALLBACK")
def test_files_added_without_data_change_are_live(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    contents: dict[int, bytes] = {0: version0(seeded.location)}
    with premise("the suite writing the table, its checkpoints and its log compaction as Delta engines write them"):
        for v in range(1, LATEST + 1):
            if v in REMOVES:
                contents[v] = seeded.remove_commit(v, contents[REMOVES[v]])
            elif v in OPTIMIZES:
                contents[v] = seeded.rewrite_commit(v, [contents[w] for w in OPTIMIZES[v]])
            else:
                contents[v] = seeded.data_commit(v)
        for v in range(PUBLISHED + 1):
            seeded.publish(v, contents[v])
        decoded = {v: A.decode_commit(c) for v, c in contents.items()}
        for cp in CHECKPOINTS:
            state = reconcile([decoded[v] for v in range(cp + 1)])
            write_checkpoint(
                seeded.storage, seeded.location, cp, [without_data_change(a) for a in state if "remove" not in a]
            )
        x, y = COMPACTION
        body = [without_data_change(a) for a in reconcile([decoded[v] for v in range(x, y + 1)])]
        seeded.storage.put(compaction_uri(seeded.location, x, y), A.encode_commit(body))
        staged = [
            RatifiedCommit(v, staged_uri=seeded.stage(v, contents[v]), in_commit_timestamp=ict_of(v))
            for v in range(PUBLISHED + 1, LATEST + 1)
        ]
        ref_admin.import_table(table_name, seeded.location, LATEST, staged, PUBLISHED)
    told = (
        f"v0-v{PUBLISHED} are published, v{PUBLISHED + 1}-v{LATEST} ratified and staged; the checkpoints of"
        f" {list(CHECKPOINTS)}, the log compaction {COMPACTION} and the OPTIMIZE commits"
        f" {', '.join(f'v{v} (of the files of {list(w)})' for v, w in OPTIMIZES.items())} add their files with"
        " dataChange false, as Delta engines write them: such a file is live in every snapshot"
    )
    for version in [*range(LATEST + 1), None]:
        want = LATEST if version is None else version
        rows = expected_rows(_live(want))
        got = read_or_refused(client, table_name, version)
        if got is None or (got.version, got.rows) != (want, rows):
            what = "the latest version" if version is None else f"v{version}"
            raise Violation("RDR-LIST-FALLBACK", f"a read of {what} {said(got)}, not v{want} with rows {rows}. {told}")
