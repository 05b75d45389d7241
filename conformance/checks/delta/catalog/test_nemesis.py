"""The nemesis against a catalog: restarts and proposals delivered twice (RFC "Commit Protocol": a
ratification is recorded "in persistent storage of some kind", and a version is ratified at most once).

lakecert is the client here: it loses the catalog's answers itself (it re-sends a proposal as a client
whose answer never came would) and delivers one proposal twice at once, as a network retry would."""

from __future__ import annotations

import contextlib
from functools import partial

import pytest

from conformance.checks.delta.builders import CatalogDriver, ict_of, premise
from conformance.contract.delta import CatalogError, GetCommitsResponse, RatifiedCommit
from conformance.nemesis import restart_target_catalog
from conformance.observe.recording import RecordingCatalog
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import PremiseBroken
from conformance.run_context import RunContext
from conformance.schedules.race import race


def _by_version(resp: GetCommitsResponse) -> dict[int, RatifiedCommit]:
    return {c.version: c for c in resp.commits}


def _held(commit: RatifiedCommit | None) -> str:
    if commit is None:
        return "nothing"
    if commit.staged_uri is not None:
        return f"staged file {commit.staged_uri} (ICT {commit.in_commit_timestamp})"
    return f"{len(commit.inline_content or b'')} inline bytes (ICT {commit.in_commit_timestamp})"


@pytest.mark.req("CAT-RATIFY-DURABLE")
def test_ratified_commits_survive_a_restart(
    lakecert: RunContext,
    driver: CatalogDriver,
    transcript: Transcript,
    table_locations: dict[str, str],
    table_name: str,
) -> None:
    table = driver.new_table(table_name)
    staged = driver.commit_range(table, 1, 4)
    with premise("publishing v1-v2 (two versions stay ratified and unpublished)"):
        driver.publish(table, 2)
    before = driver.listing(table)
    restarted = RecordingCatalog(
        restart_target_catalog(lakecert), transcript, under_test=True, call_s=lakecert.config.settings.deadlines.call_s
    )
    transcript.notes["nemesis"] = "the catalog was restarted through the target's hook after v4 was ratified"
    # What the catalog kept is judged raw: a commit missing here is what a restart lost.
    after = restarted.get_commits(table.table_id)
    listed = _by_version(after)
    assert after.latest_version == 4, (
        f"before the restart v4 was the latest ratified version; after it the catalog says v{after.latest_version}"
    )
    for version in (3, 4):
        commit = listed.get(version)
        assert commit is not None and commit.staged_uri == before.get(version) == staged[version], (
            f"v{version} was ratified and unpublished before the restart ({staged[version]}); after it the"
            f" catalog holds {_held(commit)}: a ratification must be recorded in persistent storage"
        )
        assert commit.in_commit_timestamp in (None, ict_of(version)), (
            f"v{version}'s in-commit timestamp changed across the restart to {commit.in_commit_timestamp}"
        )
    again = CatalogDriver(restarted, driver.storage, published=driver.published, locations=table_locations)
    rival = again.stage(table, 4)
    try:
        restarted.commit(table.table_id, 4, staged_uri=rival, in_commit_timestamp=ict_of(4))
    except CatalogError:
        pass
    else:
        pytest.fail("after the restart the catalog ratified a second proposal for v4, which it had ratified before")
    restarted.commit(table.table_id, 5, staged_uri=again.stage(table, 5), in_commit_timestamp=ict_of(5))
    final = _by_version(restarted.get_commits(table.table_id))
    assert final.get(4) is not None and final[4].staged_uri == staged[4], (
        f"the refused rival for v4 replaced it: v4 holds {_held(final.get(4))}"
    )
    assert 5 in final, "v5, proposed after the restart at latest + 1, is not listed"


def _listed_once(resp: GetCommitsResponse, uri: str, version: int) -> str | None:
    """Why the listing does not hold ``uri`` exactly once, at ``version``, with ``version`` the latest."""
    where = [c.version for c in resp.commits if c.staged_uri == uri]
    if where != [version]:
        return f"the proposal's staged file {uri} is listed at {[f'v{v}' for v in where] or 'no version'}"
    if resp.latest_version != version:
        return f"the latest version is v{resp.latest_version}, not v{version}"
    return None


@pytest.mark.req("CAT-RESEND-ONCE")
def test_resent_proposal_is_not_ratified_again(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 2)
    # A client whose answer to v3 was lost sends the same proposal again: same file, same version.
    sent = driver.commit_range(table, 3, 3)[3]
    # A conflict, or another refusal: the sender then asks the catalog what happened, as it must.
    with contextlib.suppress(CatalogError):
        catalog.commit(table.table_id, 3, staged_uri=sent, in_commit_timestamp=ict_of(3))
    wrong = _listed_once(catalog.get_commits(table.table_id), sent, 3)
    assert wrong is None, f"v3 was ratified, then the same proposal was sent again (its answer lost): {wrong}"


@pytest.mark.req("CAT-RESEND-ONCE")
def test_duplicate_delivery_is_ratified_once(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str, seed: int, transcript: Transcript
) -> None:
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 2)
    with premise("staging the proposal of v3"):
        uri = driver.stage(table, 3)
    propose = partial(catalog.commit, table.table_id, 3, staged_uri=uri, in_commit_timestamp=ict_of(3))
    outcomes = race([propose, propose], seed=seed, transcript=transcript)
    if not any(o.ok for o in outcomes):
        refused = sorted({type(o.error).__name__ for o in outcomes})
        raise PremiseBroken(f"neither delivery of the well-formed proposal of v3 was ratified ({', '.join(refused)})")
    wrong = _listed_once(catalog.get_commits(table.table_id), uri, 3)
    assert wrong is None, f"one proposal of v3 was delivered twice at once (a network retry): {wrong}"
