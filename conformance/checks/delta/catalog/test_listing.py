"""The listing of ratified commits (RFC "Getting Ratified Commits from the Catalog")."""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import CatalogDriver, ict_of, premise
from conformance.contract.delta import CatalogError, CommitConflict, InvalidRequest, NotSupported, TableInfo
from conformance.observe.recording import RecordingCatalog
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import PremiseBroken, Violation
from reference_impl.delta.log_paths import delta_uri

# The long history of the listing checks: versions past 9 (issue 18), with v1-v5 published on the
# way so that no more than 10 commits are unpublished at once (Unity Catalog refuses more).
LONG, PUBLISHED = 14, 5
# A three-digit history: v97-v103 unpublished, so the listing itself crosses 99 -> 100.
THREE_DIGITS, UNPUBLISHED = 103, 7


def _long_history(driver: CatalogDriver, table: TableInfo) -> None:
    driver.commit_range(table, 1, PUBLISHED)
    with premise(f"recording publication up to v{PUBLISHED}"):
        driver.publish(table, PUBLISHED)
    driver.commit_range(table, PUBLISHED + 1, LONG)


# The order of a listing is the catalog's choice (CAT-LIST-ASCENDING is retired): only which
# versions are listed is judged.
@pytest.mark.req("CAT-LIST-LATEST", "CAT-LIST-CONTIGUOUS", "CAT-LIST-RANGE")
def test_three_digit_versions_are_listed_in_order(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    # Hundreds of versions: a version kept as text, padded to two digits or compared as strings
    # anywhere in the catalog (listing, range, latest) shows when 99 is followed by 100.
    table = driver.new_table(table_name)
    driver.history(table, THREE_DIGITS, unpublished=UNPUBLISHED)
    resp = catalog.get_commits(table.table_id)
    if resp.latest_version != THREE_DIGITS:
        raise Violation("CAT-LIST-LATEST", f"latest version {resp.latest_version} after v{THREE_DIGITS} was ratified")
    versions = [c.version for c in resp.commits]
    unpublished = list(range(THREE_DIGITS - UNPUBLISHED + 1, THREE_DIGITS + 1))
    ordered = sorted(versions)
    if not set(unpublished) <= set(versions) or ordered != list(range(ordered[0], THREE_DIGITS + 1)):
        raise Violation("CAT-LIST-CONTIGUOUS", f"unpublished v{unpublished[0]}-v{THREE_DIGITS}, listed {versions}")
    ranged = sorted(c.version for c in catalog.get_commits(table.table_id, 99, 100).commits)
    if ranged != [99, 100]:
        raise Violation("CAT-LIST-RANGE", f"[99, 100] listed {ranged}")


@pytest.mark.req("CAT-LIST-CONTIGUOUS")
def test_listing_is_contiguous_up_to_latest(catalog: RecordingCatalog, driver: CatalogDriver, table_name: str) -> None:
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 5)
    resp = catalog.get_commits(table.table_id)
    versions = sorted(c.version for c in resp.commits)
    assert versions, "five unpublished ratified commits, none listed"
    assert versions == list(range(versions[0], versions[-1] + 1)), f"gaps in the listing {versions}"
    assert versions[-1] == resp.latest_version, f"listing ends at {versions[-1]}, latest is {resp.latest_version}"


# Outside the range is CAT-LIST-RANGE; a stored commit inside it left out is CAT-LIST-CONTIGUOUS.
@pytest.mark.req("CAT-LIST-RANGE", "CAT-LIST-CONTIGUOUS")
def test_listing_stays_inside_the_range(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str, seed: int
) -> None:
    """Ranges inside the history, and every run the ranges at its boundaries (issue 28, round 6): a
    bound defaulted with ``or`` or clamped to the latest version is only seen at 0, at the latest
    version, above it, or when a bound is not given."""
    table = driver.new_table(table_name)
    _long_history(driver, table)
    for start, end in _ranges(seed):
        try:
            resp = catalog.get_commits(table.table_id, start, end)
        except InvalidRequest:
            if _may_refuse(start, end):
                continue  # a refused range lists nothing outside it
            raise
        versions = sorted(c.version for c in resp.commits)
        lo, hi = start or 0, min(LONG if end is None else end, LONG)
        outside = [v for v in versions if not lo <= v <= hi]
        if outside:
            raise Violation(
                "CAT-LIST-RANGE",
                f"{_asked(start, end)} of a table whose latest version is v{LONG}, the catalog listed {versions}:"
                f" {outside} outside it; a listing holds only the stored commits in [start, end]",
            )
        # The ratified, unpublished commits in the range (those at or below the mark may be dropped).
        want = list(range(max(lo, PUBLISHED + 1), hi + 1))
        left_out = [v for v in want if v not in versions]
        with premise("listing the left-out commits alone"):
            lost = [v for v in left_out if not _served_alone(catalog, table.table_id, v)]
        if lost:  # not stored at all: retention (CAT-RETAIN-UNPUBLISHED), not this listing, is wrong
            raise PremiseBroken(f"ratified, unpublished {lost} are not served even alone")
        if left_out:
            raise Violation(
                "CAT-LIST-CONTIGUOUS",
                f"{_asked(start, end)}, the catalog listed {versions} and left out {left_out}, which it serves"
                " when each is asked for alone; a listing must hold every ratified commit in its range",
            )


def _ranges(seed: int) -> list[tuple[int | None, int | None]]:
    """The ranges asked of the long history: three inside it, then its boundaries, asked every run.
    The seed picks which stored version stands alone and how far above the latest the others reach."""
    alone = PUBLISHED + 1 + seed % (LONG - PUBLISHED)  # a ratified, unpublished version
    above = LONG + 1 + seed % 3
    return [
        (7, 9),
        (9, 11),
        (12, None),
        (0, 0),  # end 0: at most the creation commit, never "no end"
        (None, 0),
        (0, PUBLISHED),  # published and marked: dropped or kept, but nothing above
        (alone, alone),  # start == end on a stored version: that version alone
        (LONG, LONG),
        (None, alone),
        (alone, LONG),  # end == latest
        (alone, above),  # end above the latest
        (above, None),  # start above the latest: empty
        (above, above + 2),
        (None, None),  # every stored commit
    ]


def _may_refuse(start: int | None, end: int | None) -> bool:
    """A range reaching past the ratified versions (above the latest) or ending at the creation commit
    may be refused as an invalid request: the RFC fixes what a listing holds, not which ranges are asked."""
    return end == 0 or (start or 0) > LONG or (end or 0) > LONG


def _asked(start: int | None, end: int | None) -> str:
    # In words, not as "[7, 9]": beside a listing printed as a Python list, a bracketed range read
    # as the same list ("asked for [7, 9], got [7, 9]").
    first = "the first stored version" if start is None else f"v{start}"
    return f"asked for {first} to v{end}" if end is not None else f"asked for {first} up to the latest"


def _served_alone(catalog: RecordingCatalog, table_id: str, version: int) -> bool:
    return any(c.version == version for c in catalog.get_commits(table_id, version, version + 1).commits)


@pytest.mark.req("CAT-LIST-LATEST")
def test_listing_carries_latest_version(
    catalog: RecordingCatalog, driver: CatalogDriver, transcript: Transcript, table_name: str
) -> None:
    """A new table's latest version is 0, then the latest ratified; a narrow range does not hide it. Last,
    where the catalog offers drops (a MAY), the table at v3 is dropped and a new table created under its
    name (RFC "Creating and Dropping": a creation makes a new table, whose first version is 0): a catalog
    that keeps the latest version in the name's record hands the new table the dropped one's versions."""
    table = driver.new_table(table_name)
    assert catalog.get_commits(table.table_id).latest_version == 0, "a new table's latest version is 0"
    driver.commit_range(table, 1, 3)
    latest = catalog.get_commits(table.table_id).latest_version
    assert latest == 3, f"after v1-v3 were ratified the listing says the latest version is {latest}, not 3"
    assert catalog.get_commits(table.table_id, 1, 1).latest_version == 3, "a narrow range hid the latest version"
    try:
        catalog.drop_table(table_name)
    except NotSupported:
        with premise("a drop refused as unsupported leaves the name"):
            assert catalog.resolve(table_name).table_id == table.table_id, (
                "drop refused as unsupported, yet the name changed"
            )
        transcript.notes["drops"] = "not judged: the catalog offers no drop (verified: the name still resolves)"
        return
    except CatalogError as e:
        raise PremiseBroken(f"dropping {table_name!r}, a registered table (judged by CAT-DROP)") from e
    again = driver.new_table(table_name)
    fresh = catalog.get_commits(again.table_id)
    above = [c.version for c in fresh.commits if c.version > 0]
    assert fresh.latest_version == 0 and not above, (
        f"a table created under the name {table_name!r} of a dropped table at v3 lists latest version"
        f" {fresh.latest_version} with commits {above}: a new table's latest version is 0, and it has no commit yet"
    )
    driver.commit_range(again, 1, 1)
    latest = catalog.get_commits(again.table_id).latest_version
    assert latest == 1, f"after v1 of the new table under a dropped name was ratified, its latest version says {latest}"


@pytest.mark.req("CAT-LIST-LATEST")
def test_latest_version_is_kept_when_nothing_is_listed(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 3)
    driver.publish(table, 3)
    resp = catalog.get_commits(table.table_id, 4)
    assert resp.commits == [], f"nothing above 3 exists, yet {resp.commits} was listed"
    assert resp.latest_version == 3, f"with an empty listing the latest version said {resp.latest_version}"


@pytest.mark.req("CAT-LIST-RATIFIED-ONLY")
def test_rejected_and_unproposed_files_are_not_listed(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    table = driver.new_table(table_name)
    ratified = driver.commit_range(table, 1, 2)
    rejected = driver.stage(table, 2)
    try:
        catalog.commit(table.table_id, 2, staged_uri=rejected, in_commit_timestamp=ict_of(2))
    except CommitConflict:
        pass
    else:
        pytest.fail("the catalog accepted a second proposal for the ratified v2; it must answer with a conflict")
    unproposed = driver.stage(table, 3)
    listed = list(driver.listing(table).values())
    assert rejected not in listed, "a rejected proposal is listed as ratified"
    assert unproposed not in listed, "a staged file nobody proposed is listed as ratified"
    # Completeness is CAT-LIST-CONTIGUOUS's business, and order nobody's: here only that nothing
    # unratified is listed counts.
    extra = [u for u in listed if u not in ratified.values()]
    assert not extra, f"listed {extra}, never ratified (ratified: {ratified})"


@pytest.mark.req("CAT-LIST-LATEST")
def test_listing_answers_after_a_cleanup_the_catalog_was_not_told_of(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    """A writer published v1-v3 and checkpointed v3 but stopped before reporting the publication;
    metadata cleanup then deleted the staged files at or below the checkpoint, as the RFC lets it
    ("Metadata Cleanup", staged commits at or below the cut-off checkpoint). The catalog still
    holds v1-v3 and must go on answering listings with the latest version."""
    table = driver.new_table(table_name)
    staged = driver.commit_range(table, 1, 3)
    with premise("publishing v1-v3 and deleting their staged files (the suite's own storage)"):
        for version, uri in staged.items():
            driver.storage.put(delta_uri(table.location, version), driver.storage.get(uri), if_absent=True)
        for uri in staged.values():
            driver.storage.delete(uri)
    assert catalog.get_commits(table.table_id).latest_version == 3, "the latest version is no longer 3"
    assert catalog.get_commits(table.table_id, 2, 3).latest_version == 3, "a range listing lost the latest version"
