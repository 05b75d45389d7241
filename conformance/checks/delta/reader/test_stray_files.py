"""Stray files: files in a table's ``_delta_log`` that the catalog's answer overrides, of every kind a
log holds, met by every kind of read (RFC "Reading Catalog-managed Tables").

The kinds: published commits, staged commits, a checkpoint that ``_last_checkpoint`` names, log
compaction files. The reads: the latest version, every version, and by in-commit timestamp at every
commit's time and at every stray file's. A reader usually gathers its files in one place per kind of
read (a latest snapshot, a snapshot of a version, the timeline behind a timestamp), so a bound or a
precedence kept in one of them and forgotten in another shows only where that kind of read meets
that kind of file. Two positions (the first judged by two checks):

- above the catalog's latest version, where every file is ignored whatever its kind
  (RDR-IGNORE-ABOVE-LATEST); their in-commit timestamps fall between the catalog's commits' and
  after the latest one, so a timeline that counts them answers a timestamp with the wrong version;
  the same strays over a latest at each boundary where a reader's bound has a special case (0, which
  is false in most languages, and a catalog storing no commit once everything is published);
- over versions the catalog returns although they are published (the RFC's example: the catalog was
  not told of the publication), where the catalog's commit is the one read
  (RDR-CATALOG-PRECEDENCE for a published commit file): a log compaction made from published files
  that differ from the catalog's commits stands for those files, so a reader that replays it in
  place of versions the catalog returns reads what the catalog overrides (RDR-COMPACTION-PRECEDENCE,
  a SHOULD: the RFC words its precedence for commits).
"""

from __future__ import annotations

import random

import pytest

from conformance.checks.delta.builders import ICT_STEP, LogBuilder, expected_rows, ict_of, premise, version0, when
from conformance.checks.delta.reader.answers import read_or_refused, said
from conformance.contract.delta import RatifiedCommit, ReadResult
from conformance.observe.recording import RecordingClient
from conformance.report.outcomes import Violation
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta import actions as A
from reference_impl.delta.checkpoint import write_checkpoint
from reference_impl.delta.compaction import reconcile
from reference_impl.delta.log_paths import compaction_uri

ABOVE = "RDR-IGNORE-ABOVE-LATEST"
PRECEDENCE = "RDR-CATALOG-PRECEDENCE"
STRAY_VALUE = "stray"  # the value of every row a stray file adds


def _write_commits(b: LogBuilder, latest: int, published: int) -> tuple[dict[int, bytes], list[RatifiedCommit]]:
    """v0..``published`` published; ``published``+1..``latest`` ratified and staged (the catalog's).
    Returns every version's commit and the catalog's commits."""
    contents = {0: version0(b.location)} | {v: b.data_commit(v) for v in range(1, latest + 1)}
    ratified = []
    for v, content in contents.items():
        if v <= published:
            b.publish(v, content)
        else:
            ratified.append(RatifiedCommit(v, staged_uri=b.stage(v, content), in_commit_timestamp=ict_of(v)))
    return contents, ratified


def _plant_above(b: LogBuilder, contents: dict[int, bytes], stray_ict: dict[int, int]) -> None:
    """Above the latest version L (the last of ``contents``), every kind of stray file: L+1 and L+3
    published and L+2 staged (dated by ``stray_ict``), a checkpoint of L+1 that ``_last_checkpoint``
    names, and a log compaction of L..L+1."""
    latest = max(contents)
    strays = {v: b.data_commit(v, STRAY_VALUE, ict=t) for v, t in stray_ict.items()}
    b.publish(latest + 1, strays[latest + 1])
    b.stage(latest + 2, strays[latest + 2])
    b.publish(latest + 3, strays[latest + 3])
    above = [A.decode_commit(c) for c in (*contents.values(), strays[latest + 1])]
    state = [a for a in reconcile(above) if "remove" not in a]
    write_checkpoint(b.storage, b.location, latest + 1, state)
    b.storage.put(compaction_uri(b.location, latest, latest + 1), A.encode_commit(reconcile(above[latest:])))


LATEST, PUBLISHED = 5, 2


@pytest.mark.req("RDR-IGNORE-ABOVE-LATEST", "RDR-TIME-TRAVEL-ICT")
def test_no_kind_of_read_uses_a_file_above_the_latest(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str, seed: int
) -> None:
    # v0-v2 published, v3-v5 staged and ratified; above them v6 published, v7 staged, v8 published, a
    # checkpoint of v6 that _last_checkpoint names, and a compaction of v5-v6. The strays' in-commit
    # timestamps: one between two published commits, one between two unpublished ones, one after
    # the latest, in a seed-drawn order.
    rng = random.Random(seed)
    between = [
        ict_of(rng.randrange(0, PUBLISHED)) + ICT_STEP // 2,
        ict_of(rng.randrange(PUBLISHED, LATEST)) + ICT_STEP // 2,
        ict_of(LATEST) + ICT_STEP // 2,
    ]
    rng.shuffle(between)
    stray_ict = dict(zip(range(LATEST + 1, LATEST + 4), between, strict=True))
    with premise("the suite writing the table and the files above its latest version"):
        contents, ratified = _write_commits(seeded, LATEST, PUBLISHED)
        _plant_above(seeded, contents, stray_ict)
        ref_admin.import_table(table_name, seeded.location, LATEST, ratified, PUBLISHED)
    told = (
        f"The catalog's latest is v{LATEST}; above it the log holds v{LATEST + 1} and v{LATEST + 3} published,"
        f" v{LATEST + 2} staged (dated {', '.join(f'v{v} {when(t)}' for v, t in stray_ict.items())}), a checkpoint of"
        f" v{LATEST + 1} named by _last_checkpoint and a compaction of v{LATEST}-v{LATEST + 1}"
    )
    for version in [None, *range(LATEST + 1)]:
        want = LATEST if version is None else version
        got = read_or_refused(client, table_name, version)
        if got is None or (got.version, got.rows) != (want, expected_rows(range(want + 1))):
            what = "the latest version" if version is None else f"v{version}"
            raise Violation(ABOVE, f"a read of {what} {said(got)}, not v{want}'s rows. {told}")
    for version in stray_ict:
        got = read_or_refused(client, table_name, version=version)
        if got is not None:
            raise Violation(ABOVE, f"a read as of v{version} {said(got)}; nothing above v{LATEST} is the table. {told}")
    dated = {v: ict_of(v) for v in range(LATEST + 1)}
    for ts in sorted(set(dated.values()) | set(stray_ict.values())):
        at_ts = max(v for v, t in dated.items() if t <= ts)
        got = read_or_refused(client, table_name, timestamp_ms=ts)
        if got is None and ts > dated[LATEST]:
            continue  # after the newest commit: Delta readers may refuse (Kernel and Spark do)
        if got is not None and (got.version, got.rows) == (at_ts, expected_rows(range(at_ts + 1))):
            continue
        # The strays' doing (the version a timeline counting them gives, one above the latest, or a
        # refusal where they stand in the way) is this rule's; any other wrong answer is time travel's.
        by_stray = max(v for v, t in (dated | stray_ict).items() if t <= ts)
        strayed = by_stray != at_ts and (got is None or got.version in (by_stray, *stray_ict))
        raise Violation(
            ABOVE if strayed else "RDR-TIME-TRAVEL-ICT",
            f"a read at {when(ts)} {_say_at(got, at_ts)}. {told}",
        )


def _say_at(got: ReadResult | None, at_ts: int) -> str:
    rows = expected_rows(range(at_ts + 1))
    return f"{said(got)}; v{at_ts} is the catalog's latest version at or before it (rows {rows})"


# (latest, published) of tables at the boundaries of the catalog's latest: 0 (the creating commit only,
# which a reader taking "latest or the newest file" reads as not given), 1 staged, and every version
# published (the catalog stores no commit at all, so a reader that bounds the log by the catalog's
# commits rather than its latest version has no bound).
BOUNDARIES = ((0, 0), (1, 0), (1, 1), (3, 3))


@pytest.mark.req("RDR-IGNORE-ABOVE-LATEST")
def test_files_above_a_boundary_latest_are_ignored(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    # The check above plants its strays over a latest of 5 with commits in the catalog; here every kind
    # of stray sits over the latest values where a reader's bound has a special case, dated after it.
    wrong: list[str] = []
    for latest, published in BOUNDARIES:
        name = f"{table_name}_{latest}_{published}"
        b = LogBuilder(seeded.storage, f"{seeded.location}-{latest}-{published}")
        stray_ict = {latest + k: ict_of(latest) + k * ICT_STEP // 4 for k in (1, 2, 3)}
        with premise(f"the suite writing a table at v{latest} and the files above it"):
            contents, ratified = _write_commits(b, latest, published)
            _plant_above(b, contents, stray_ict)
            ref_admin.import_table(name, b.location, latest, ratified, published)
        table = f"a table at v{latest} (published up to v{published}) with files above it"
        for version in [None, *range(latest + 1)]:
            want = latest if version is None else version
            got = read_or_refused(client, name, version)
            if got is None or (got.version, got.rows) != (want, expected_rows(range(want + 1))):
                wrong.append(f"{table}: a read of {'the latest' if version is None else f'v{version}'} {said(got)}")
        for version in stray_ict:
            if (got := read_or_refused(client, name, version)) is not None:
                wrong.append(f"{table}: a read as of v{version}, above the latest, {said(got)}")
        # After the latest commit: its version, or a refusal (Kernel and Spark refuse), never a stray's.
        # An earlier version read whole is a timestamp resolved wrongly without any stray: that is
        # RDR-TIME-TRAVEL-ICT's question (the check above), not this one's.
        ts = max(stray_ict.values())
        got = read_or_refused(client, name, timestamp_ms=ts)
        if got is not None and (got.version > latest or got.rows != expected_rows(range(got.version + 1))):
            wrong.append(f"{table}: a read at {when(ts)} (after v{latest}, at the strays' dates) {said(got)}")
    if wrong:
        raise Violation(
            ABOVE,
            "; ".join(wrong) + ". Above each table's latest version the log holds the latest+1 and latest+3"
            " published, latest+2 staged, a checkpoint of latest+1 named by _last_checkpoint and a compaction of"
            " latest..latest+1: none of them is the table",
        )


CATALOG_FROM, LATEST_B = 3, 7  # v0-v6 published; the catalog returns v3-v7 (v7 unpublished)
COMPACTIONS = ((1, 2), (2, 4), (3, 5))  # before, across and inside its versions; v6 covered by none


@pytest.mark.req("RDR-CATALOG-PRECEDENCE", "RDR-COMPACTION-PRECEDENCE")
def test_catalog_commits_win_over_compactions_of_their_versions(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    # The published files of v3-v6 differ from the catalog's commits of those versions (other rows),
    # and the log compactions are made from the published files, as a writer makes them. A stray row
    # of v6, which no compaction covers, is the published file read over the catalog's commit (the
    # MUST, charged at once); stray rows of covered versions only are a compaction read in their
    # place (the SHOULD, charged once every read was judged for the MUST).
    with premise("the suite writing the table, its published copies and their compactions"):
        seeded.publish(0, version0(seeded.location))
        published = {v: seeded.data_commit(v, STRAY_VALUE if v >= CATALOG_FROM else None) for v in range(1, LATEST_B)}
        for v, content in published.items():
            seeded.publish(v, content)
        for x, y in COMPACTIONS:
            body = reconcile([A.decode_commit(published[v]) for v in range(x, y + 1)])
            seeded.storage.put(compaction_uri(seeded.location, x, y), A.encode_commit(body))
        ratified = [
            RatifiedCommit(v, staged_uri=seeded.stage(v, seeded.data_commit(v)), in_commit_timestamp=ict_of(v))
            for v in range(CATALOG_FROM, LATEST_B + 1)
        ]
        ref_admin.import_table(table_name, seeded.location, LATEST_B, ratified, CATALOG_FROM - 1)
    covered = {v for x, y in COMPACTIONS for v in range(x, y + 1)}
    told = (
        f"The catalog returns v{CATALOG_FROM}-v{LATEST_B}; v{CATALOG_FROM}-v{LATEST_B - 1} are also published with"
        f" other rows (value {STRAY_VALUE!r}), and the log holds compactions {list(COMPACTIONS)} made from the"
        " published files"
    )
    compacted = None
    for version in [None, *range(LATEST_B + 1)]:
        want = LATEST_B if version is None else version
        got = read_or_refused(client, table_name, version)
        if got is not None and (got.version, got.rows) == (want, expected_rows(range(want + 1))):
            continue
        what = f"a read of {'the latest version' if version is None else f'v{version}'} {said(got)}"
        strays = set() if got is None else {int(str(r["id"])) for r in got.rows if r.get("value") == STRAY_VALUE}
        if got is None or got.version != want or not strays or not strays <= covered:
            raise Violation(
                "RDR-CATALOG-PRECEDENCE",
                f"{what}, not v{want} with rows {expected_rows(range(want + 1))}. {told}: for a version the"
                " catalog returns, its commit is read",
            )
        if compacted is None:
            compacted = Violation(
                "RDR-COMPACTION-PRECEDENCE",
                f"{what}: the rows of v{min(strays)}-v{max(strays)} are the published files', which a compaction"
                f" stands for. {told}: a compaction is not read in place of versions the catalog returns",
                at_end=True,
            )
    if compacted is not None:
        raise compacted
