"""How a reader combines the catalog's commits with the published log.

RFC "Reading Catalog-managed Tables" and "Reader Requirements". Each check
writes the table state itself and seeds the reference catalog with it.
"""

from __future__ import annotations

import json
import random

import pytest

from conformance.checks.delta.builders import ICT_STEP, LogBuilder, expected_rows, ict_of, premise, version0, when
from conformance.checks.delta.evidence import attempt
from conformance.checks.delta.long_names import long_name, prefix_names
from conformance.checks.delta.reader.inline_commits import REASON
from conformance.contract.delta import NotSupported, RatifiedCommit, TableNotFound
from conformance.observe.recording import RecordingClient
from conformance.report.outcomes import Violation, not_applicable
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.actions import Action, decode_commit
from reference_impl.delta.checkpoint import write_checkpoint
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.log_paths import checksum_uri, delta_uri


def _published(b: LogBuilder, last: int) -> None:
    b.publish(0, version0(b.location))
    for v in range(1, last + 1):
        b.publish(v, b.data_commit(v))


def _state(b: LogBuilder, commits: list[bytes]) -> list[Action]:
    """The table state (protocol, metadata, files) after version 0 and the given data commits."""
    v0 = decode_commit(version0(b.location))
    adds = [a for c in commits for a in decode_commit(c) if "add" in a]
    return [a for a in v0 if "protocol" in a or "metaData" in a] + adds


def _staged(b: LogBuilder, version: int, value: str | None = None) -> RatifiedCommit:
    return RatifiedCommit(
        version, staged_uri=b.stage(version, b.data_commit(version, value)), in_commit_timestamp=ict_of(version)
    )


def _checksum(b: LogBuilder, version: int, state: list[Action]) -> None:
    """A version checksum file ``<v>.crc`` of ``state`` (PROTOCOL.md "Version Checksum File": its
    required fields). The RFC ("Maintenance Operations on Catalog-managed Tables") lets one be written
    for a version that is ratified but not published yet; a reader needs none of it."""
    adds = [a["add"] for a in state if "add" in a]
    body = {
        "tableSizeBytes": sum(int(a.get("size", 0)) for a in adds),
        "numFiles": len(adds),
        "numMetadata": 1,
        "numProtocol": 1,
        "metadata": next(a["metaData"] for a in state if "metaData" in a),
        "protocol": next(a["protocol"] for a in state if "protocol" in a),
    }
    b.storage.put(checksum_uri(b.location, version), json.dumps(body, separators=(",", ":")).encode())


@pytest.mark.req("RDR-UNPUBLISHED")
def test_reader_includes_unpublished_commits(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    # Version checksum files beside every version (published v2, staged v3, inline v4) and one above the
    # latest: the RFC lets a checksum of v be written before v is published, so the newest numbered file
    # in _delta_log says nothing of what is published. A reader that asks the catalog only for the
    # versions above the log's newest file (or takes a version with any file there for published) never
    # gets the unpublished commits (round 17, cr17b-rdr-catalog-above-log-watermark).
    _published(seeded, 2)
    staged, content4 = _staged(seeded, 3), seeded.data_commit(4)
    inline = RatifiedCommit(4, inline_content=content4, in_commit_timestamp=ict_of(4))
    ref_admin.import_table(table_name, seeded.location, 4, [staged, inline], 2)
    published = [seeded.storage.get(delta_uri(seeded.location, v)) for v in (1, 2)]
    commits = [*published, seeded.storage.get(staged.staged_uri or ""), content4]
    for version in range(2, 6):  # v5: a stray above the latest, which no read may take as a bound either
        _checksum(seeded, version, _state(seeded, commits[: min(version, 4)]))
    got = attempt(lambda: client.read(table_name))
    if isinstance(got.error, NotSupported):
        not_applicable(REASON)  # v4 is inline (verified by construction)
    told = "v0-v2 published, v3 staged and v4 inline (ratified, unpublished), a checksum file of each of v2-v5"
    if got.value is None:
        raise Violation(
            "RDR-UNPUBLISHED",
            f"the latest read raised {type(got.error).__name__}; {told}: the catalog's commits 3 and 4 build v4",
        )
    result = got.value
    assert result.version == 4, f"read version {result.version}; the catalog ratified up to 4 ({told})"
    assert result.rows == expected_rows(range(5)), f"rows {result.rows} miss the unpublished commits 3 and 4 ({told})"
    # By version too: the staged v3, below the checksum files of v4 and v5, is built from the catalog's
    # commit whatever the read asks for (v2, published, needs nothing of the catalog).
    for version in (3, 2):
        old = attempt(lambda v=version: client.read(table_name, version=v))  # type: ignore[misc]
        said = (
            f"raised {type(old.error).__name__}"
            if old.value is None
            else f"gave v{old.value.version} rows {old.value.rows}"
        )
        assert old.value is not None and (old.value.version, old.value.rows) == (
            version,
            expected_rows(range(version + 1)),
        ), f"a read as of v{version} {said}; {told}: v{version} holds rows {expected_rows(range(version + 1))}"


@pytest.mark.req("RDR-CATALOG-PRECEDENCE")
def test_catalog_commit_wins_over_published_file(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    _published(seeded, 2)
    seeded.publish(3, seeded.data_commit(3, "stale-published"))
    ref_admin.import_table(table_name, seeded.location, 3, [_staged(seeded, 3, "from-catalog")], -1)
    result = client.read(table_name)
    assert result.rows == expected_rows(range(4), {3: "from-catalog"}), (
        f"v3 must come from the catalog's commit; rows were {result.rows}"
    )


@pytest.mark.req("RDR-IGNORE-UNRATIFIED")
def test_unratified_staged_files_are_ignored(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    # Beside every version, wherever it stands (v1 published, v2-v3 ratified and staged, v4 above the
    # latest), a rejected whole file and a partial one: a reader that reads or parses a staged file
    # the catalog does not name, at any position, reads a wrong table or refuses a right one.
    _published(seeded, 1)
    ratified = [_staged(seeded, 2), _staged(seeded, 3)]
    for beside in range(1, 5):
        seeded.stage(beside, seeded.data_commit(beside, "rejected"))  # lost the race for it
        seeded.stage(beside, seeded.data_commit(beside)[:-7])  # a partial file, cut mid-line
    ref_admin.import_table(table_name, seeded.location, 3, ratified, 1)
    versions: tuple[int | None, ...] = (None, 0, 1, 2, 3)
    for version in versions:
        want = 3 if version is None else version
        got = attempt(lambda v=version: client.read(table_name, version=v))  # type: ignore[misc]
        what = "the latest version" if version is None else f"v{version}"
        answer = f"raised {type(got.error).__name__}" if got.value is None else f"gave rows {got.value.rows}"
        assert got.value is not None and got.value.rows == expected_rows(range(want + 1)), (
            f"a read of {what} {answer}: a rejected or partial staged file the catalog does not name (one beside"
            " every version, v1 published, v2-v3 ratified, v4 above the latest) was used or parsed"
        )


@pytest.mark.req("RDR-LIST-FALLBACK")
def test_published_commits_come_from_the_log(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    # Multi-digit versions: v12 (staged) removes the row v2 added, so a replay in text order
    # (0, 1, 10, 11, 12, 13, 2, ...) brings it back.
    seeded.publish(0, version0(seeded.location))
    contents = {v: seeded.data_commit(v) for v in range(1, 12)}
    for v, content in contents.items():
        seeded.publish(v, content)
    removal = RatifiedCommit(
        12, staged_uri=seeded.stage(12, seeded.remove_commit(12, contents[2])), in_commit_timestamp=ict_of(12)
    )
    ref_admin.import_table(table_name, seeded.location, 13, [removal, _staged(seeded, 13)], 11)
    result = client.read(table_name)
    want = [r for r in expected_rows(range(14)) if r["id"] not in (2, 12)]
    assert result.rows == want, f"rows {result.rows}; v1-v11 live only in _delta_log, v12 removed row 2"


@pytest.mark.req("RDR-DISCOVERY")
def test_reader_uses_the_resolved_location(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    _published(seeded, 2)
    ref_admin.import_table(table_name, seeded.location, 2, [], 2)
    result = client.read(table_name)
    assert result.rows == expected_rows(range(3)), f"rows {result.rows} from {seeded.location}"


@pytest.mark.req("RDR-LIST-FALLBACK")
def test_reader_reads_a_cleaned_up_table_from_its_checkpoint(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    # Metadata cleanup finished: commits 0-3 are gone, the checkpoint of 4 holds their state, v5 is
    # a ratified staged commit. A reader that needs any commit below the checkpoint cannot read the
    # table (found by mutation testing, issue 18: the golden mid-cleanup table keeps them).
    commits = [seeded.data_commit(v) for v in range(1, 5)]
    seeded.publish(0, version0(seeded.location))
    for version, content in enumerate(commits, start=1):
        seeded.publish(version, content)
    assert write_checkpoint(seeded.storage, seeded.location, 4, _state(seeded, commits)), (
        "lakecert's reference writer made no checkpoint of v4 for the reader to start from"
    )
    for version in range(4):
        seeded.storage.delete(delta_uri(seeded.location, version))
    ref_admin.import_table(table_name, seeded.location, 5, [_staged(seeded, 5)], 4)
    result = client.read(table_name)
    assert (result.version, result.rows) == (5, expected_rows(range(6))), (
        f"read v{result.version} with rows {result.rows}; the checkpoint of 4 and v5 give rows 1-5"
    )
    at_checkpoint = client.read(table_name, version=4)
    assert (at_checkpoint.version, at_checkpoint.rows) == (4, expected_rows(range(5))), (
        f"a read as of v4 gave v{at_checkpoint.version} with rows {at_checkpoint.rows}; the checkpoint of 4"
        " holds rows 1-4"
    )
    # Below the checkpoint the commits are gone: v0-v3 cannot be built. Refusing is right; so would be
    # exactly the version's rows. The checkpoint's (or any later version's) rows under the old number
    # are a version that never was (RFC "Reading Catalog-managed Tables", "Metadata Cleanup").
    for version in (3, 0, 2):
        old = attempt(lambda v=version: client.read(table_name, version=v))  # type: ignore[misc]
        if old.value is not None:
            got = (old.value.version, old.value.rows)
            assert got == (version, expected_rows(range(version + 1))), (
                f"a read as of v{version}, whose commits metadata cleanup deleted, answered v{got[0]} with rows"
                f" {got[1]}; v{version} holds rows {expected_rows(range(version + 1))}: a version that cannot"
                " be rebuilt must be refused, not answered with another version's rows"
            )


@pytest.mark.req("RDR-DISCOVERY")
def test_reader_finds_a_long_named_table_beside_its_prefixes(
    client: RecordingClient, suite_client: ReferenceClient, table_name: str
) -> None:
    """A 200-character name, and tables named by its first 32, 64, 100 and 128 characters and by its lower-case spelling
    (``long_names.py``), each with rows of its own: the reader reads the table of the whole name."""
    name = long_name(table_name)
    with premise("the suite creating a table with a 200-character name and tables named by its prefixes"):
        suite_client.create_table(name)
        suite_client.append(name, [{"id": 1, "value": "long"}])
        for i, other in enumerate(prefix_names(name)):
            suite_client.create_table(other)
            suite_client.append(other, [{"id": 100 + i, "value": "neighbour"}])
    outcome = attempt(lambda: client.read(name))
    if isinstance(outcome.error, TableNotFound):
        raise Violation(
            "RDR-DISCOVERY",
            f"the reader's read of {name!r} ({len(name)} characters) raised TableNotFound, yet the catalog resolves"
            " that name to its table: a reader finds its table through the catalog by its whole name",
        )
    with premise(f"the reader under test reading a table with a {len(name)}-character name"):
        result = outcome.unwrap()
    rows = None if result is None else result.rows
    assert rows == [{"id": 1, "value": "long"}], (
        f"a read of the table named by {len(name)} characters gave {rows}; it holds one row, id 1 (its prefixes and its"
        " lower-case spelling name other tables, with other rows): a reader finds its table by its whole name, as given"
    )


@pytest.mark.req("RDR-CATALOG-PRECEDENCE", "RDR-TIME-TRAVEL-ICT")
def test_catalog_commit_dates_its_version_over_published_file(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str, seed: int
) -> None:
    # The precedence holds for every use of a version's commit, its in-commit timestamp as much as its
    # rows: v0-v2 published, v3-v6 ratified and staged, and beside each of v3-v6 a stray published file
    # (other rows, an in-commit timestamp moved by a seed-drawn amount, earlier or later). A reader that
    # dates a version by the stray file resolves a timestamp between the two dates to the wrong version.
    _published(seeded, 2)
    rng = random.Random(seed)
    latest = 6
    signs = [-1, 1, -1, 1]  # both directions in every run, at seed-drawn positions
    rng.shuffle(signs)
    stray_ict: dict[int, int] = {}
    for v, sign in zip(range(3, latest + 1), signs, strict=True):
        stray_ict[v] = ict_of(v) + sign * rng.randrange(1, ICT_STEP // 2)
        seeded.publish(v, seeded.data_commit(v, "stray-published", ict=stray_ict[v]))
    ratified = [_staged(seeded, v) for v in range(3, latest + 1)]
    ref_admin.import_table(table_name, seeded.location, latest, ratified, 2)
    strays = ", ".join(f"v{v} {when(t)}" for v, t in stray_ict.items())
    # At each catalog commit's ICT and at each stray file's: the catalog's dates decide both.
    for ts in sorted({ict_of(v) for v in range(latest + 1)} | set(stray_ict.values())):
        at_ts = (ts - ict_of(0)) // ICT_STEP
        got = attempt(lambda t=ts: client.read(table_name, timestamp_ms=t))  # type: ignore[misc]
        if got.value is None and ts > ict_of(latest):
            continue  # after the newest commit: Delta readers may refuse (Kernel and Spark do)
        want = (at_ts, expected_rows(range(at_ts + 1)))
        if got.value is not None and (got.value.version, got.value.rows) == want:
            continue
        # The stray files' doing (a version dated by one, or its rows read) is the precedence rule's;
        # any other wrong answer is time travel's own (it would be wrong without the strays too).
        dated = {v: stray_ict.get(v, ict_of(v)) for v in range(latest + 1)}
        by_stray = max((v for v, t in dated.items() if t <= ts), default=None)
        strayed = got.value is not None and (got.value.version == by_stray != at_ts or got.value.version == at_ts)
        answer = "was refused" if got.value is None else f"gave v{got.value.version} with rows {got.value.rows}"
        raise Violation(
            "RDR-CATALOG-PRECEDENCE" if strayed else "RDR-TIME-TRAVEL-ICT",
            f"a read at {when(ts)} {answer}; the catalog's commits date v{at_ts} at {when(ict_of(at_ts))}, and"
            f" v{at_ts} (rows {want[1]}) is the latest at or before it. Stray published files of v3-v{latest}"
            f" carry other timestamps ({strays}): a version the catalog returns is its commit, timestamp included",
        )
