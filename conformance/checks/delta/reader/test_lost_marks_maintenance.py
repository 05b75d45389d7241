"""A reader on a table whose publication marks were lost, with the maintenance files a writer leaves
around them: checkpoints and log compaction files, then a metadata cleanup (RFC "Reading
Catalog-managed Tables", "Getting Ratified Commits from the Catalog", "Publishing Commits", "Metadata
Cleanup").

A publisher may copy a commit to ``<v>.json`` and never get its mark to the catalog (the RFC's worked
example, where version 7 is published and the catalog does not know): the catalog keeps returning
that version although its file is in ``_delta_log``. Such a version is published like any other, so a
writer may checkpoint it, compact it and clean up below it; the catalog's commit and the published
file are the same bytes, so every source of the version gives the same table. A reader usually decides
per kind of file whether it may use one (a checkpoint to start from, a compaction to stand for
commits, a commit to date a version), and a decision keyed on "does the catalog return this version"
shows only where a file of that kind sits at, beside or below the versions the catalog returns.

Each seed draws one table: v0..P published, the catalog returning F..L (F..P published with their
marks lost, P+1..L staged), checkpoints below F, at F and inside F..P, compactions over published
versions the catalog no longer returns, across F and inside F..P, and commits that remove files an
earlier one added (so a compaction or a checkpoint read in the wrong place shows in the rows). Every
version is read by version and by in-commit timestamp, then again after a metadata cleanup at a
checkpoint whose version the catalog returns: that checkpoint and the commits after it are all that
is left to build the versions from it on. For RDR-LIST-FALLBACK the oldest checkpoint is written as a
whole multi-part set, and a set missing a part sits just below the catalog's first version (PROTOCOL.md
"Checkpoints": a checkpoint is all of its parts or none): a reader that reads no multi-part
checkpoint builds those versions from the commits, one that reads a set must read every part of it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from conformance.checks.delta.builders import ICT_STEP, LogBuilder, expected_rows, ict_of, premise, version0, when
from conformance.checks.delta.reader.answers import read_or_refused, said
from conformance.contract.delta import RatifiedCommit
from conformance.observe.recording import RecordingClient
from conformance.report.outcomes import Violation
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta import actions as A
from reference_impl.delta.checkpoint import write_checkpoint, write_multipart_checkpoint
from reference_impl.delta.compaction import reconcile
from reference_impl.delta.log_paths import checkpoint_uri, compaction_uri, delta_uri

LATEST = 12
_PARTS = 3


@dataclass
class Layout:
    """One drawn table. ``live[v]``: the row ids live at v (row u is the file version u added)."""

    catalog_from: int  # the catalog returns catalog_from..LATEST
    published: int  # v0..published are files in _delta_log; catalog_from..published lost their marks
    checkpoints: tuple[int, ...]
    compactions: tuple[tuple[int, int], ...]
    cleanup_at: int  # a checkpoint the catalog returns the version of
    removes: dict[int, int] = field(default_factory=dict)
    live: dict[int, list[int]] = field(default_factory=dict)
    # Multi-part checkpoints (PROTOCOL.md "Checkpoints": <v>.checkpoint.<i>.<n>.parquet, the union of
    # parts 1..n), planted (``multipart``) where a reader that reads none has the commits as a route,
    # and after the cleanup where refusing is right: the oldest checkpoint as a whole set of parts
    # instead of a single file, and below the catalog's first version a set of two missing its second (a
    # writer that died between parts), which is no checkpoint.
    multipart: bool = False

    @property
    def partial_at(self) -> int:
        return self.catalog_from - 1

    def describe(self) -> str:
        f, p = self.catalog_from, self.published
        removes = ", ".join(f"v{v} removes v{u}'s file" for v, u in sorted(self.removes.items()))
        return (
            f"v0-v{p} published; the catalog returns v{f}-v{LATEST} (v{f}-v{p} published, their marks lost;"
            f" v{p + 1}-v{LATEST} staged); checkpoints of {', '.join(f'v{c}' for c in self.checkpoints)};"
            f" log compactions {list(self.compactions)}; {removes}"
            + (
                f"; the checkpoint of v{self.checkpoints[0]} is a whole multi-part set of {_PARTS} parts, and"
                f" v{self.partial_at} has a multi-part set missing part 2 of 2 (no checkpoint)"
                if self.multipart
                else ""
            )
        )


def draw_layout(rng: random.Random) -> Layout:
    f = rng.randint(4, 6)
    p = rng.randint(f + 2, LATEST - 2)
    below, inside = rng.randint(1, f - 2), rng.randint(f + 1, p)
    # Over published versions the catalog no longer returns (at least two), across its first version,
    # and inside the versions it returns although they are published.
    compactions = ((rng.randint(1, f - 2), f - 1), (f - 1, f + 1), (f + 1, p))
    layout = Layout(f, p, (below, f, inside), compactions, rng.choice((f, inside)))
    live: list[int] = []
    layout.live[0] = []
    for v in range(1, LATEST + 1):
        if len(live) > 1 and rng.random() < 0.35:
            gone = rng.choice(live)
            layout.removes[v] = gone
            live = [u for u in live if u != gone]
        else:
            live = [*live, v]
        layout.live[v] = live
    return layout


def write_layout(b: LogBuilder, layout: Layout, name: str, ref_admin: ReferenceCatalog) -> None:
    contents = {0: version0(b.location)}
    for v in range(1, LATEST + 1):
        contents[v] = b.remove_commit(v, contents[layout.removes[v]]) if v in layout.removes else b.data_commit(v)
    decoded = {v: A.decode_commit(c) for v, c in contents.items()}
    for v in range(layout.published + 1):
        b.publish(v, contents[v])

    def state(c: int) -> list[A.Action]:
        return [a for a in reconcile([decoded[v] for v in range(c + 1)]) if "remove" not in a]

    for i, c in enumerate(layout.checkpoints):  # oldest first: _last_checkpoint names the newest
        if layout.multipart and i == 0:
            # Every version below the catalog's first is published, so a reader that reads no
            # multi-part checkpoint builds these versions from v0; one that reads a set must read
            # all of its parts (protocol and metaData sit in the first, the files after them).
            write_multipart_checkpoint(b.storage, b.location, c, state(c), _PARTS)
        else:
            write_checkpoint(b.storage, b.location, c, state(c))
    if layout.multipart:
        # Two parts, the second missing: the actions split in order, so the first holds protocol and
        # metaData and the second at least one file (a version past v0 has one): a reader that takes
        # the part present for the checkpoint reads wrong rows rather than failing.
        write_multipart_checkpoint(b.storage, b.location, layout.partial_at, state(layout.partial_at), 2, skip=2)
    for x, y in layout.compactions:
        body = A.encode_commit(reconcile([decoded[v] for v in range(x, y + 1)]))
        b.storage.put(compaction_uri(b.location, x, y), body)
    # The catalog's commits: staged files, the same bytes as the published copies of the lost marks.
    ratified = [
        RatifiedCommit(v, staged_uri=b.stage(v, contents[v]), in_commit_timestamp=ict_of(v))
        for v in range(layout.catalog_from, LATEST + 1)
    ]
    ref_admin.import_table(name, b.location, LATEST, ratified, layout.catalog_from - 1)


def clean_up(b: LogBuilder, layout: Layout) -> None:
    """Metadata cleanup at the checkpoint of ``layout.cleanup_at`` (RFC "Metadata Cleanup"): the
    published commits and checkpoints below it and the compactions starting at or below it are
    deleted. The staged files the catalog still names are kept: the RFC's cleanup deletes staged
    commits at or below the checkpoint too, but with lost marks the catalog would then name deleted
    files, and what a reader owes then the RFC does not say (the reference and the clean-room readers
    all read the checkpoint's commit from the catalog). The table is the one a cleanup leaves before
    its staged step, and every version from the checkpoint on is built from it."""
    cp = layout.cleanup_at
    for v in range(cp):
        b.storage.delete(delta_uri(b.location, v))
    for c in layout.checkpoints:
        if c < cp and not (layout.multipart and c == layout.checkpoints[0]):
            b.storage.delete(checkpoint_uri(b.location, c))
    # The multi-part sets (both below cp) are left: the cleanup stopped before them (it may delete in
    # any order). Every commit below them is gone, so the whole set is the only route to its own
    # version, and the set missing a part is no route at all: a reader refuses those versions or builds
    # them exactly, never from some of a set's parts.
    for x, y in layout.compactions:
        if x <= cp:
            b.storage.delete(compaction_uri(b.location, x, y))


def _build(
    ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str, seed: int, *, multipart: bool = False
) -> Layout:
    layout = draw_layout(random.Random(seed))
    layout.multipart = multipart
    with premise("the suite writing a table with lost publication marks, its checkpoints and compactions"):
        write_layout(seeded, layout, table_name, ref_admin)
    return layout


def _before_and_after_cleanup(b: LogBuilder, layout: Layout) -> Iterator[tuple[int, str]]:
    """The table as written, then after the metadata cleanup: each time the oldest version a reader
    can build and the table told for a message."""
    yield 0, layout.describe()
    with premise(f"the suite's metadata cleanup at the checkpoint of v{layout.cleanup_at}"):
        clean_up(b, layout)
    cp = layout.cleanup_at
    kept = "; but for the multi-part sets" if layout.multipart else ""
    yield (
        cp,
        f"{layout.describe()}; then a metadata cleanup at the checkpoint of v{cp} deleted the files below it{kept}",
    )


@pytest.mark.req("RDR-LIST-FALLBACK")
def test_checkpoints_of_versions_the_catalog_returns_are_started_from(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str, seed: int
) -> None:
    # Multi-part checkpoints only here: a set read from some of its parts misbuilds versions, which is
    # this rule's; the timestamp check beside would charge the same wrong rows to RDR-TIME-TRAVEL-ICT.
    layout = _build(ref_admin, seeded, table_name, seed, multipart=True)
    for oldest, told in _before_and_after_cleanup(seeded, layout):
        for version in [None, *range(LATEST + 1)]:
            want = LATEST if version is None else version
            rows = expected_rows(layout.live[want])
            got = read_or_refused(client, table_name, version)
            what = "the latest version" if version is None else f"v{version}"
            if got is not None and (got.version, got.rows) == (want, rows):
                continue
            if want < oldest and got is None:
                continue  # its commits are gone: refusing is right
            raise Violation(
                "RDR-LIST-FALLBACK",
                f"a read of {what} {said(got)}; v{want} holds rows {rows}. {told}. A version the catalog"
                " returns may be published, checkpointed and cleaned up below like any other: the checkpoint"
                " and the commits after it build every version from it on"
                + (f", and v{want} (its commits deleted) is refused or built exactly" if want < oldest else ""),
            )


@pytest.mark.req("RDR-TIME-TRAVEL-ICT")
def test_timestamps_inside_compacted_ranges_resolve_to_their_commit(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str, seed: int
) -> None:
    # Every commit's in-commit timestamp and a moment between it and the next: a log compaction
    # stands for its commits' actions, not for their dates, so a moment inside a compacted range is
    # the commit at or before it as on any other log.
    layout = _build(ref_admin, seeded, table_name, seed)
    moments = sorted({ict_of(v) for v in range(LATEST + 1)} | {ict_of(v) + ICT_STEP // 2 for v in range(LATEST)})
    for oldest, told in _before_and_after_cleanup(seeded, layout):
        for ts in moments:
            at_ts = (ts - ict_of(0)) // ICT_STEP
            rows = expected_rows(layout.live[at_ts])
            got = read_or_refused(client, table_name, timestamp_ms=ts)
            if got is not None and (got.version, got.rows) == (at_ts, rows):
                continue
            if at_ts < oldest and got is None:
                continue  # before the oldest version left: refusing is right
            if at_ts >= oldest and read_or_refused(client, table_name, version=at_ts) is None:
                continue  # the reader cannot build v{at_ts} at all: RDR-LIST-FALLBACK's, judged beside
            if got is None and layout.catalog_from < oldest:
                # The cleanup deleted published files of versions the catalog still returns, so the
                # published log now starts above the catalog's first commit. Delta Kernel 4.x assumes
                # that cannot happen ("ordered backfill", DeltaHistoryManager) and refuses every
                # timestamp there; the RFC does not rule on it, so a refusal is not charged (a wrong
                # answer still is). docs/compatibility.md, "Delta Kernel".
                continue
            raise Violation(
                "RDR-TIME-TRAVEL-ICT",
                f"a read at {when(ts)} {said(got)}; v{at_ts} (rows {rows}) is the latest commit at or before"
                f" it, committed at {when(ict_of(at_ts))}. {told}. A version covered by a compaction or a"
                " checkpoint keeps its in-commit timestamp"
                + (f"; v{at_ts}'s commits are deleted: refused or built exactly" if at_ts < oldest else ""),
            )
