"""Catalog-managed tables: a writer that loses the catalog's ratification must check the winners
the catalog reports, published or not, before it proposes again (catalog-managed RFC "Commit
Protocol", "Getting Ratified Commits from the Catalog")."""

from __future__ import annotations

import pytest

from conformance.checks.delta_conflicts.harness import run_check
from conformance.checks.delta_conflicts.scenarios import (
    CATALOG_MANAGED,
    PUBLISHED_WINNERS,
    UNPUBLISHED_WINNERS,
    config_id,
)
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.contract.delta_engine import DeltaSetup
from conformance.observe.transcript import Transcript

pytestmark = pytest.mark.parametrize("setup", CATALOG_MANAGED, ids=config_id)


@pytest.mark.req("DELTA-CM-CHECK-RATIFIED-WINNERS")
@pytest.mark.scenario(UNPUBLISHED_WINNERS)
def test_loser_checks_unpublished_winners(
    delta_runner: ScheduleRunner, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_runner, table_name, setup, UNPUBLISHED_WINNERS, transcript)


@pytest.mark.req("DELTA-CM-CHECK-BEFORE-REPROPOSE")
@pytest.mark.scenario(PUBLISHED_WINNERS)
def test_loser_checks_before_proposing_again(
    delta_runner: ScheduleRunner, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_runner, table_name, setup, PUBLISHED_WINNERS, transcript)
