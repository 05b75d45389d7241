"""Ratification: in order, at most once, one winner per race (RFC "Commit Protocol")."""

from __future__ import annotations

from functools import partial

import pytest

from conformance.checks.delta.builders import CatalogDriver, LogBuilder, ict_of, premise
from conformance.contract.delta import CatalogError, CommitConflict, NotSupported, TableInfo
from conformance.observe.recording import RecordingCatalog
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import PremiseBroken, Violation, not_applicable
from conformance.run_context import RunContext
from conformance.schedules.race import race


@pytest.mark.req("CAT-RATIFY-SEQUENTIAL")
def test_gap_is_refused(catalog: RecordingCatalog, driver: CatalogDriver, table_name: str) -> None:
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 2)
    staged = driver.stage(table, 4)
    try:
        catalog.commit(table.table_id, 4, staged_uri=staged, in_commit_timestamp=ict_of(4))
    except CatalogError:
        pass
    else:
        pytest.fail("the catalog accepted a proposal for v4 while v3 was missing; a version must follow the latest")
    resp = catalog.get_commits(table.table_id)
    assert 4 not in [c.version for c in resp.commits], "version 4 was ratified although 3 was missing"
    assert resp.latest_version == 2, f"the refused v4 moved the latest version to {resp.latest_version}"
    # The refusal changed nothing: v3 is still the next version. Refusing it for a reason of the
    # catalog's own (a cap on unpublished commits) is allowed, so that step is a premise.
    with premise("ratifying the well-formed v3 after the refusal"):
        driver.propose(table, 3)


@pytest.mark.req("CAT-RATIFY-ONCE")
def test_second_proposal_for_a_version_conflicts(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    table = driver.new_table(table_name)
    first = driver.commit_range(table, 1, 2)[2]
    rival = driver.stage(table, 2)
    try:
        catalog.commit(table.table_id, 2, staged_uri=rival, in_commit_timestamp=ict_of(2))
    except CommitConflict:
        pass
    else:
        pytest.fail("the catalog accepted a second proposal for the ratified v2; it must answer with a conflict")
    listed = driver.listing(table)
    assert listed.get(2) == first, f"version 2 now points at {listed.get(2)}, not the first ratified {first}"


@pytest.mark.req("CAT-CONFLICT-LATEST")
def test_conflict_reports_latest_version(catalog: RecordingCatalog, driver: CatalogDriver, table_name: str) -> None:
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 3)
    rival = driver.stage(table, 2)
    try:
        catalog.commit(table.table_id, 2, staged_uri=rival, in_commit_timestamp=ict_of(2))
    except CommitConflict as conflict:
        stated = conflict.latest_version
    else:
        pytest.fail("the catalog accepted a rival proposal for the ratified v2; it must answer with a conflict")
    if stated is None:
        # UC's API has no field for it (the YAML argues the level); the refusal changed nothing.
        with premise("the listing after the conflict says v3 is the latest"):
            after = catalog.get_commits(table.table_id).latest_version
            assert after == 3, f"after the refused rival for v2 the latest version is {after}, not 3"
        not_applicable(
            "the conflict answer states no latest version in the catalog's API (verified: v3 is still the latest)"
        )
    assert stated == 3, f"the conflict stated the latest version {stated}; v3 is the latest ratified version"


@pytest.mark.req("CAT-RATIFY-RACE")
def test_concurrent_proposals_have_one_winner(
    lakecert: RunContext,
    catalog: RecordingCatalog,
    driver: CatalogDriver,
    table_name: str,
    seed: int,
    transcript: Transcript,
) -> None:
    table = driver.new_table(table_name)
    proposers = lakecert.config.settings.race.proposers
    for round_no in range(lakecert.config.settings.race.repeats):
        version = round_no + 1
        with premise("staging the rival proposals"):
            staged = [driver.stage(table, version) for _ in range(proposers)]
        propose = partial(catalog.commit, table.table_id, version, in_commit_timestamp=ict_of(version))
        outcomes = race(
            [partial(propose, staged_uri=uri) for uri in staged], seed=seed + round_no, transcript=transcript
        )
        winners = [i for i, o in enumerate(outcomes) if o.ok]
        losers = [o for o in outcomes if not o.ok]
        if not winners and not any(isinstance(o.error, CommitConflict) for o in losers):
            # Nobody won and nobody was told of a winner: every well-formed proposal was refused
            # for another reason (a cap on unpublished commits, a policy), not a race lost.
            refused = sorted({type(o.error).__name__ for o in losers})
            raise PremiseBroken(f"round {round_no}: no proposal for v{version} was ratified ({', '.join(refused)})")
        assert len(winners) == 1, f"round {round_no}: {len(winners)} proposers won version {version}"
        assert all(isinstance(o.error, CommitConflict) for o in losers), (
            f"round {round_no}: losers got {[type(o.error).__name__ for o in losers]}, not conflicts"
        )
        listed = driver.listing(table)
        assert listed.get(version) == staged[winners[0]], f"round {round_no}: the listed commit is not the winner's"


def _stored(catalog: RecordingCatalog, table_id: str) -> tuple[int, dict[int, str | None]]:
    """The latest version and what the catalog lists (version -> staged location)."""
    resp = catalog.get_commits(table_id)
    return resp.latest_version, {c.version: c.staged_uri for c in resp.commits}


def _changed(
    catalog: RecordingCatalog, table_id: str, listed: dict[int, str | None], staged: dict[int, str]
) -> list[int]:
    """The versions of ``staged`` the catalog no longer serves as ratified. One left out of the full
    listing but served when asked for alone is a listing fault (CAT-LIST-CONTIGUOUS): a premise here."""
    changed = [v for v in sorted(staged) if listed.get(v) != staged[v]]
    for version in changed:
        alone = {c.version: c.staged_uri for c in catalog.get_commits(table_id, version, version).commits}
        if alone.get(version) == staged[version]:
            raise PremiseBroken(f"v{version} is served alone but left out of the full listing (a listing fault)")
    return changed


@pytest.mark.req("CAT-RATIFY-SEQUENTIAL", "CAT-RATIFY-ONCE", "CAT-RETAIN-UNPUBLISHED")
def test_refused_proposals_carrying_a_publication_mark_change_nothing(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    """A proposal may carry the writer's publication mark (UC's latest backfilled version); it is
    applied only once the proposal is ratified (docs/certify.md). A refused proposal changes nothing
    (RFC "Commit Protocol"), whatever mark it carries: a catalog that takes the mark first and judges
    the proposal after drops commits nobody published, or keeps a mark above the latest version."""
    table = driver.new_table(table_name)
    staged = driver.commit_range(table, 1, 9)
    with premise("publishing v1-v7 and recording publication up to v7"):
        driver.publish(table, 7)
    staged |= driver.commit_range(table, 10, 14)  # v8-v14 ratified and unpublished; the true mark is v7
    latest, before = _stored(catalog, table.table_id)
    unpublished = {v: uri for v, uri in staged.items() if v >= 8}
    with premise("the listing holds the unpublished v8-v14 before the refused proposals"):
        missing = [v for v in range(8, 15) if before.get(v) != staged[v]]
        assert latest == 14 and not missing, f"latest v{latest}, unpublished commits not listed: {missing}"
    # (proposed version, mark carried, rule a change breaks): two gaps, one carrying a mark between the
    # true mark and the latest, one a mark between the latest and itself; then a taken version.
    refusals: list[tuple[int, int | None, str]] = [
        (16, 10, "CAT-RATIFY-SEQUENTIAL"),
        (17, 15, "CAT-RATIFY-SEQUENTIAL"),
        (12, 9, "CAT-RETAIN-UNPUBLISHED"),
    ]
    # Then every combination of the optional fields a proposal carries (conformance/contract/delta.py):
    # gaps of 2, 3 and 10 past the latest and taken versions, each carrying no mark, marks below, at and
    # above the true mark and the latest, and marks next to the proposed version (v-1: "everything
    # before me is published", which a catalog may take for RFC option 3's PUT-if-absent and ratify
    # over the gap; v and v+1: impossible); in staged and inline form, with and without an in-commit
    # timestamp (each combination in one of the forms, in turn). The RFC ("Commit Protocol") judges the
    # proposal alone: a gap is refused, a taken version conflicts, whatever it carries.
    for version in (latest + 2, latest + 3, latest + 10, 12):
        marks: list[int | None] = [None, 3, 7, 10, latest, latest + 1, version - 1, version, version + 1]
        refusals += [(version, mark, "") for mark in dict.fromkeys(marks)]
    every_form = ((False, True), (True, True), (False, False), (True, False))  # (inline, with an ICT)
    for i, (version, mark, rule) in enumerate(refusals):
        # Each combination in one form, in turn (the check stays fast); a gap carrying v-1 in every form.
        forms = every_form if rule == "" and mark == version - 1 > latest else (every_form[i % 4],)
        rule = rule or ("CAT-RATIFY-SEQUENTIAL" if version > latest else "CAT-RETAIN-UNPUBLISHED")
        for inline, ict in forms:
            _refused_with_mark(catalog, driver, table, latest, unpublished, version, mark, rule, inline, ict)
    # The next versions are still free, and a mark kept from the refused v17 (v15) drops nothing later.
    with premise("ratifying the well-formed v15 and v16 after the refusals"):
        staged |= driver.commit_range(table, 15, 16)
    _, after = _stored(catalog, table.table_id)
    changed = _changed(catalog, table.table_id, after, {v: uri for v, uri in staged.items() if v >= 8})
    if changed:
        raise Violation(
            "CAT-RATIFY-SEQUENTIAL",
            f"after refused proposals carrying marks v10, v15 and v9, the unpublished {changed} are gone once v15-v16"
            f" were ratified (listed: {sorted(after)}): a refused proposal changes nothing, its mark included",
        )


def _refused_with_mark(
    catalog: RecordingCatalog,
    driver: CatalogDriver,
    table: TableInfo,
    latest: int,
    unpublished: dict[int, str],
    version: int,
    mark: int | None,
    rule: str,
    inline: bool,
    ict: bool,
) -> None:
    """Propose ``version`` (a gap or a taken version) carrying ``mark``: it must be refused (a conflict,
    for a taken one) and change nothing: the latest, every unpublished commit, the mark not applied."""
    form = f"{'inline' if inline else 'staged'}, {'with' if ict else 'without'} an in-commit timestamp"
    what = f"the {'gap' if version > latest else 'taken'} proposal of v{version} carrying mark v{mark} ({form})"
    rival = None if inline else driver.stage(table, version)
    content = LogBuilder(driver.storage, table.location).data_commit(version) if inline else None
    try:
        catalog.commit(
            table.table_id,
            version,
            staged_uri=rival,
            inline_content=content,
            in_commit_timestamp=ict_of(version) if ict else None,
            latest_published_version=mark,
        )
    except NotSupported:
        if not inline:
            raise
        return  # the catalog hosts no inline commits (docs/certify.md): its staged forms are judged
    except CatalogError:
        pass
    else:
        kind = "over a gap" if version > latest else "a second time"
        raise Violation(
            "CAT-RATIFY-SEQUENTIAL" if version > latest else "CAT-RATIFY-ONCE",
            f"{what} was ratified {kind} (latest v{latest}); it must be refused",
        )
    now, after = _stored(catalog, table.table_id)
    changed = _changed(catalog, table.table_id, after, unpublished)
    effects = [f"the latest version went from v{latest} to v{now}"] if now != latest else []
    effects += [f"unpublished {', '.join(f'v{v}' for v in changed)} vanished or changed"] if changed else []
    effects += (
        [f"v{version} is listed with the refused file"] if rival is not None and after.get(version) == rival else []
    )
    effects += [f"v{version} is listed"] if version > latest and version in after else []
    if effects:
        raise Violation(
            rule,
            f"{what} was refused, yet {' and '.join(effects)} (listed: {sorted(after)}): a refused proposal"
            " changes nothing, and the publication mark it carries is not applied",
        )
