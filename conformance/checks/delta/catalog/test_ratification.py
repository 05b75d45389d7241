"""Ratification: in order, at most once, one winner per race (RFC "Commit Protocol")."""

from __future__ import annotations

from functools import partial

import pytest

from conformance.checks.delta.builders import CatalogDriver, ict_of, premise
from conformance.contract.delta import CatalogError, CommitConflict
from conformance.observe.recording import RecordingCatalog
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import PremiseBroken, not_applicable
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
