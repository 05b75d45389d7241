"""Three writers: a loser must check every commit since its snapshot, not only the newest. The
conflicting winner commits first, then a harmless blind INSERT (begun after it), then the loser."""

from __future__ import annotations

import pytest

from conformance.checks.delta_conflicts.harness import run_check
from conformance.checks.delta_conflicts.scenarios import CONFIGS, THREE_WRITERS, config_id
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.contract.delta_engine import DeltaSetup
from conformance.observe.transcript import Transcript


@pytest.mark.req("DELTA-ISOLATION-LEVEL")
@pytest.mark.parametrize("setup", CONFIGS, ids=config_id)
@pytest.mark.scenario(THREE_WRITERS)
def test_loser_checks_every_winner(
    delta_runner: ScheduleRunner, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_runner, table_name, setup, THREE_WRITERS, transcript)
