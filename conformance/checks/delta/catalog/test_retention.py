"""What the catalog keeps: ratified commits until published, inline content intact."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest

from conformance.checks.delta.builders import CatalogDriver, LogBuilder, ict_ms_of, ict_of, premise, when
from conformance.checks.delta.catalog.envelope import refusal_changed_nothing
from conformance.checks.delta.catalog.inline_shapes import SHAPES, compact
from conformance.checks.delta.catalog.staged_paths import propose_spelled
from conformance.contract.delta import CatalogError, NotSupported, TableInfo
from conformance.observe.recording import RecordingCatalog
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import PremiseBroken, Violation, not_applicable


@pytest.mark.req("CAT-RETAIN-UNPUBLISHED")
def test_unpublished_commits_stay_unchanged(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str, transcript: Transcript
) -> None:
    """RFC "Terminology - Commits": a ratified staged commit is its location, stored and served as
    proposed until published. v1-v3 are staged as ``str(uuid4())`` names them; the next versions under
    the other spellings of a UUID (staged_paths.uuid_spellings: upper and mixed case), which name other
    objects on a case-sensitive store: a catalog that keeps the UUID (a UUID column) or the name
    case-folded serves a file that does not exist. A catalog may refuse those spellings (then the
    version is staged again in lower case): refused, no other name is served."""
    table = driver.new_table(table_name)
    first = driver.commit_range(table, 1, 3)
    ratified, spelled = propose_spelled(driver, table, 4)
    first |= ratified
    transcript.notes["spellings"] = f"ratified under a spelled UUID: {spelled} (others refused, staged again)"
    before = driver.listing(table)
    for version, what in spelled.items():
        if before.get(version) != first[version]:
            raise Violation(
                "CAT-RETAIN-UNPUBLISHED",
                f"v{version}, staged at {first[version]} (a {what} UUID) and ratified, is served as"
                f" {before.get(version)!r}: another object on a case-sensitive store; a ratified staged commit"
                " is served at exactly the location proposed",
            )
    assert before == first, f"right after ratification the catalog serves {before}, not {first}"
    driver.commit_range(table, len(first) + 1, len(first) + 3)
    after = driver.listing(table)
    for version, uri in first.items():
        assert after.get(version) == uri, f"unpublished v{version} changed or vanished: {after.get(version)}"


@pytest.mark.req("CAT-FORGET-PUBLISHED-ONLY")
def test_publication_mark_drops_nothing_above_it(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    table = driver.new_table(table_name)
    staged = driver.commit_range(table, 1, 6)
    with premise("recording publication up to v3"):
        driver.publish(table, 3)
    listed = driver.listing(table)
    for version in (4, 5, 6):
        assert listed.get(version) == staged[version], f"unpublished v{version} was dropped after publishing up to 3"


def _still_listed(catalog: RecordingCatalog, table_id: str, version: int) -> bool:
    """Whether ``version`` (not the latest) is listed; a listing that leaves out a commit the
    catalog serves alone is a listing fault (CAT-LIST-CONTIGUOUS), not a forgotten commit."""
    listed = {c.version for c in catalog.get_commits(table_id).commits}
    if version not in listed and any(
        c.version == version for c in catalog.get_commits(table_id, version, version).commits
    ):
        raise PremiseBroken(f"v{version} is served alone but left out of the full listing (a listing fault)")
    return version in listed


@pytest.mark.req("CAT-PUBLISH-REPORT-POSSIBLE")
def test_publication_report_above_the_latest_forgets_nothing_ratified_later(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    # A report of publication past the latest version (a confused or stale client) cannot be true;
    # a catalog that records it as its mark later forgets commits nobody published (issue 18's
    # mutation testing found the reference's refusal untested). v4 is judged, not the latest v5.
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 2)
    with premise("publishing v1 keeps v2 (CAT-FORGET-PUBLISHED-ONLY judges it)"):
        driver.publish(table, 1)
        assert _still_listed(catalog, table.table_id, 2), "publishing v1 dropped the unpublished v2"
    with contextlib.suppress(CatalogError):  # refusing the report is right; accepting it is judged below
        catalog.mark_published(table.table_id, 6)
    driver.commit_range(table, 3, 5)
    with premise("publishing v1-v3 and recording publication up to v3"):
        driver.publish(table, 3)
    assert _still_listed(catalog, table.table_id, 4), "unpublished v4 was dropped: a report of v6 was taken at v2"


@pytest.mark.req("CAT-PUBLISH-REPORT-POSSIBLE")
def test_proposal_claiming_its_own_publication_forgets_nothing(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    # A proposal may carry the writer's publication mark (UC's latest backfilled version), applied
    # after the proposal is ratified (docs/certify.md). A mark at the proposed version claims the
    # commit was published before it was ratified, which cannot be: a catalog that takes the claim
    # drops a commit nobody published. The RFC defines no mark in a proposal, so this is a SHOULD.
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 2)
    uri = driver.stage(table, 3)
    try:
        catalog.commit(table.table_id, 3, staged_uri=uri, in_commit_timestamp=ict_of(3), latest_published_version=3)
    except CatalogError:
        return  # refused, which is right
    driver.commit_range(table, 4, 4)  # so that v3, judged below, is not the latest
    assert _still_listed(catalog, table.table_id, 3), "v3 was dropped at once: its proposal claimed it published"


# The inline shapes proposed on one table after v1 and v2: 10 unpublished commits, a cap a catalog may
# have (the served reference's), so that no shape is refused for the count; the others go to another table.
SHAPES_PER_TABLE = 8


# Hosting inline commits is a MAY; once a catalog accepts one, the commit is ratified and binds the
# catalog by the MUST of CAT-RETAIN-UNPUBLISHED: served unchanged until published (issue 18).
@pytest.mark.req("CAT-INLINE-COMMITS", "CAT-RETAIN-UNPUBLISHED")
def test_inline_content_is_served_byte_for_byte(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str, seeded: LogBuilder
) -> None:
    table = driver.new_table(table_name)
    log = LogBuilder(seeded.storage, table.location)
    content = log.data_commit(1)
    try:
        catalog.commit(table.table_id, 1, inline_content=content, in_commit_timestamp=ict_of(1))
    except NotSupported:
        resp = catalog.get_commits(table.table_id)
        assert resp.latest_version == 0 and resp.commits == [], "inline commit refused, yet state changed"
        not_applicable("the catalog does not host inline commits (verified: nothing changed)")
    # v2 holds text outside ASCII as raw UTF-8: stored re-encoded, it would mean the same JSON in other bytes
    second = log.unicode_commit(2)
    with premise("ratifying inline v2 after inline v1"):
        catalog.commit(table.table_id, 2, inline_content=second, in_commit_timestamp=ict_of(2))
    # v3 on: every shape of inline_shapes.py but the long one (a cap on actions is the catalog's right),
    # among them raw U+0085/U+2028/U+2029 inside a string and CR LF line ends, which a store that keeps
    # content as lines (split with a Unicode line splitter, or read with universal newlines) changes, and
    # text a Unicode normalisation or a cleaning step changes. At most SHAPES_PER_TABLE on one table (a
    # catalog may cap unpublished commits: 10 with v1 and v2), the others from v1 of a second table.
    shapes = [s for s in SHAPES if s != "many"]
    second_table = driver.new_table(f"{table_name}_shapes")
    placed = [(table, 3 + i) for i in range(SHAPES_PER_TABLE)] + [(second_table, 1 + i) for i in range(len(shapes))]
    shaped = [(on, v, SHAPES[s](v, ict_of(v))) for (on, v), s in zip(placed, shapes, strict=False)]
    for on, version, body in shaped:
        with premise(f"ratifying inline v{version} of {on.name} after inline v{version - 1}"):
            catalog.commit(on.table_id, version, inline_content=body, in_commit_timestamp=ict_of(version))
    served = {c.version: c.inline_content for c in catalog.get_commits(table.table_id, 1).commits}
    if served.get(1) != content:
        raise Violation("CAT-RETAIN-UNPUBLISHED", f"ratified inline v1 served as {served.get(1)!r}, not as ratified")
    if served.get(2) != second:
        raise Violation(
            "CAT-RETAIN-UNPUBLISHED",
            f"ratified inline v2, whose commitInfo holds UTF-8 text, served as {served.get(2)!r}, not as the"
            f" {len(second)} bytes ratified: a ratified commit is served unchanged until published",
        )
    served_shapes = {
        (on.table_id, c.version): c.inline_content
        for on in (table, second_table)
        for c in catalog.get_commits(on.table_id, 1).commits
    }
    for on, version, body in shaped:
        got = served_shapes.get((on.table_id, version))
        if got != body:
            raise Violation(
                "CAT-RETAIN-UNPUBLISHED",
                f"ratified inline v{version} of {on.name} served as {got!r:.400}, not as the {len(body)} bytes"
                f" ratified ({body!r:.400}): RFC 'Terminology - Commits', a ratified commit is served unchanged"
                " until published, its line ends and raw characters included",
            )


@pytest.mark.req("CAT-RETAIN-UNPUBLISHED")
def test_publication_mark_is_not_moved_over_files_that_are_not_the_ratified_commits(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    # A catalog may look at _delta_log to learn of publication (docs/certify.md), but a file there is
    # a published commit only if it is a copy of the ratified one (RFC "Publishing Commits"; readers
    # take the catalog's commit over such a file, "Reading Catalog-managed Tables"). A file of another
    # writer, or a leftover, at an unpublished version publishes nothing: the ratified commit stays.
    table = driver.new_table(table_name)
    staged = driver.commit_range(table, 1, 9)
    with premise("publishing v1-v8 and recording publication up to v8"):
        driver.publish(table, 8)
    staged |= driver.commit_range(table, 10, 15)
    log = LogBuilder(driver.storage, table.location)
    # Above the mark b = 10 (v9-v10 published, not yet reported): v11 a true copy, v12-v13 files of
    # another writer, v14 nothing, v15 another file again. Only v11 may be taken for published.
    with premise("publishing v9-v11 to _delta_log and writing other files at v12, v13 and v15"):
        for version in (9, 10, 11):
            log.publish(version, driver.storage.get(staged[version]))
        strays = (12, 13, 15)
        for version in strays:
            log.publish(version, log.data_commit(version, value=f"not the ratified v{version}"))
    with premise("recording publication up to v10"):
        catalog.mark_published(table.table_id, 10)
    resp = catalog.get_commits(table.table_id)
    listed = {c.version: c.staged_uri for c in resp.commits}
    assert resp.latest_version == 15, (
        f"recording publication up to v10 moved the latest version to {resp.latest_version}"
    )
    for version in (*strays, 14):
        if listed.get(version) == staged[version]:
            continue
        alone = {c.version: c.staged_uri for c in catalog.get_commits(table.table_id, version, version).commits}
        if alone.get(version) == staged[version]:
            raise PremiseBroken(f"v{version} is served alone but left out of the full listing (a listing fault)")
        held = "nothing" if version == 14 else "another writer's file, not the ratified commit"
        raise Violation(
            "CAT-RETAIN-UNPUBLISHED",
            f"after publication was recorded up to v10, ratified v{version} (_delta_log holds {held} at that"
            f" version) is {'gone' if version not in alone else 'changed'} (listed: {sorted(listed)}): a commit"
            " is published only as a copy of the ratified one, and the catalog keeps it until then",
        )


# In-commit timestamps a writer may propose, each from the one of the latest ratified commit (``prev``)
# and the version proposed: equal, lower, far in the past, the epoch itself, past 2038 (int32 seconds)
# and at the end of year 9999 (the last a date-time type holds, with a millisecond part that floating-
# point seconds lose), between rising ones. The contract takes any in-commit timestamp of 0 or more.
NON_RISING_ICTS: tuple[tuple[str, Callable[[int, int], int]], ...] = (
    ("rising", lambda prev, v: ict_ms_of(v)),
    ("equal to the previous commit's", lambda prev, v: prev),
    ("1 ms below the previous commit's", lambda prev, v: prev - 1),
    ("rising", lambda prev, v: prev + 1009),
    ("a day below the previous commit's", lambda prev, v: prev - 86_400_000),
    ("1 ms after the epoch", lambda prev, v: 1),
    ("the epoch, 0", lambda prev, v: 0),
    ("rising", lambda prev, v: prev + 1009),
    ("past 2038 (2^31 s)", lambda prev, v: 2**31 * 1000 + 7),
    ("the last millisecond of year 9999", lambda prev, v: 253_402_300_799_999),
    ("back at the present", lambda prev, v: ict_ms_of(v)),
    ("equal to the previous commit's", lambda prev, v: prev),
)
# Every INLINE_EACH-th of them is proposed inline, where the catalog hosts inline commits.
INLINE_EACH = 3


def _propose_with_ict(
    catalog: RecordingCatalog, driver: CatalogDriver, table: TableInfo, version: int, ict: int, inline: bool
) -> bool:
    """Propose ``version`` with ``ict`` (in the commit and in the call), inline if ``inline``; staged if
    not, or if the catalog hosts no inline commits. False when it answered that it hosts none."""
    if inline:
        try:
            catalog.commit(table.table_id, version, inline_content=compact(version, ict), in_commit_timestamp=ict)
            return True
        except NotSupported:
            pass  # a MAY (CAT-INLINE-COMMITS): proposed staged instead
    catalog.commit(table.table_id, version, staged_uri=driver.stage(table, version, ict), in_commit_timestamp=ict)
    return not inline  # staged because the catalog hosts no inline commits, or staged as asked


def marks_before_lower_timestamps(proposed: dict[int, int]) -> list[int]:
    """The versions b, ascending, after which a later commit was ratified with an in-commit timestamp at
    or below b's: where a publication mark taken as a time cut-off drops more than b and below."""
    return [b for b in sorted(proposed) if any(v > b and ict <= proposed[b] for v, ict in proposed.items())]


def _carry_mark(
    catalog: RecordingCatalog, driver: CatalogDriver, table: TableInfo, proposed: dict[int, int], mark: int
) -> bool:
    """Copy the commits up to ``mark`` to ``_delta_log``, then propose the next version stamped as the
    latest commit again (a timestamp that does not rise), carrying the mark. True if it was ratified
    (added to ``proposed``); a catalog may refuse it (the timestamp, a cap of its own), and may ignore
    the mark it carries (docs/certify.md), which the caller then records with ``mark_published``."""
    version = max(proposed) + 1
    ict = proposed[version - 1]
    with premise(f"copying v1-v{mark} to _delta_log"):
        driver.copy_published(table, mark)
    uri = driver.stage(table, version, ict)
    try:
        catalog.commit(table.table_id, version, staged_uri=uri, in_commit_timestamp=ict, latest_published_version=mark)
    except CatalogError as e:
        refusal_changed_nothing(catalog, table, version, e, f"a proposal of v{version} carrying mark v{mark}")
        return False
    proposed[version] = ict
    return True


@pytest.mark.req("CAT-RETAIN-UNPUBLISHED", "CAT-FORGET-PUBLISHED-ONLY")
def test_in_commit_timestamps_out_of_order_are_served_as_proposed_or_refused(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    # PROTOCOL.md wants each in-commit timestamp above the previous commit's, and a catalog may reject
    # an invalid commit (RFC "Catalog-managed Tables", motivation 1; "Terminology - Commits": a proposed
    # commit is ratified or rejected), or one outside a policy of its own (docs/certify.md): any clean
    # refusal that changes nothing passes. A proposal it ratifies, though, is stored unchanged until
    # published ("Terminology - Commits"): a served timestamp is the one proposed (readers resolve time
    # travel on unpublished commits by it, "Publishing Commits"), never one the catalog made "monotonic",
    # clamped to its clock or took 0 for none. The other checks propose rising timestamps only.
    table = driver.new_table(table_name)
    proposed: dict[int, int] = {}  # version -> the in-commit timestamp of the ratified proposal
    prev, inline = ict_of(0), True
    for step, (what, ict_for) in enumerate(NON_RISING_ICTS):
        version = len(proposed) + 1
        ict = ict_for(prev, version)
        try:
            hosted = _propose_with_ict(catalog, driver, table, version, ict, inline and step % INLINE_EACH == 2)
        except CatalogError as e:
            refusal_changed_nothing(catalog, table, version, e, f"a proposal of v{version} with an ICT {what}")
            continue
        proposed[version], prev, inline = ict, ict, inline and hosted
    served = {c.version: c.in_commit_timestamp for c in catalog.get_commits(table.table_id, 1).commits}
    for version, ict in proposed.items():
        got = served.get(version, ict)  # a commit left out is judged by the listing checks, not here
        if got is not None and got != ict:
            raise Violation(
                "CAT-RETAIN-UNPUBLISHED",
                f"v{version}, ratified with in-commit timestamp {when(ict)}, is served with {when(got)}"
                f" (proposed in turn: {[when(t) for t in proposed.values()]}): a ratified commit is served as"
                " ratified until published; a catalog may refuse a timestamp that is not rising, never rewrite it",
            )
    # Then publication, mark by mark, at each version followed by an equal or lower timestamp (round 17):
    # a mark at b lets the catalog drop commits at or below b by version ("Publishing Commits"), and
    # every ratified commit above b stays served until it is published itself ("Terminology -
    # Commits"), whatever its timestamp. A store purged by time that turns the mark into "everything
    # stamped at or before b's commit" drops ratified commits nobody published. Every other mark is
    # carried by a proposal (UC's latest backfilled version, applied as mark_published would be:
    # docs/certify.md), so that both ways a catalog learns of publication are crossed.
    # Only a commit served just before the mark was recorded and gone just after is judged here; one
    # already gone (a listing that leaves the latest out) is the listing rules'. A mark recorded alone
    # changes nothing else, so a drop there is the mark's (CAT-FORGET-PUBLISHED-ONLY); a proposal that
    # carries the mark also adds a commit, which a catalog that drops the oldest past a cap answers with
    # a drop too, so a drop there is charged as a ratified commit not served (CAT-RETAIN-UNPUBLISHED).
    for turn, mark in enumerate(marks_before_lower_timestamps(proposed)):
        before = {c.version for c in catalog.get_commits(table.table_id).commits}
        carried = turn % 2 == 1 and _carry_mark(catalog, driver, table, proposed, mark)
        if not carried:
            with premise(f"publishing v1-v{mark} and recording publication up to v{mark}"):
                driver.publish(table, mark)
        listed = {c.version for c in catalog.get_commits(table.table_id).commits}
        above = [v for v in sorted(proposed) if v > mark and v in before]
        dropped = [v for v in above if v not in listed and not _still_listed(catalog, table.table_id, v)]
        if dropped:
            how = f"a proposal of v{max(proposed)} carrying a mark of v{mark}" if carried else f"a mark of v{mark}"
            raise Violation(
                "CAT-RETAIN-UNPUBLISHED" if carried else "CAT-FORGET-PUBLISHED-ONLY",
                f"after {how} (in-commit timestamp {when(proposed[mark])}), ratified, unpublished"
                f" {', '.join(f'v{v} ({when(proposed[v])})' for v in dropped)} are no longer served (listed:"
                f" {sorted(listed)}): a mark drops commits at or below its version, never by their in-commit"
                " timestamps, and a ratified commit above it is served until published",
            )
