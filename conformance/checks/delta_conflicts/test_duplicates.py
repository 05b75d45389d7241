"""Concurrent UPDATEs and MERGEs of one row, and two MERGEs inserting one new id."""

from __future__ import annotations

import pytest

from conformance.checks.delta_conflicts.harness import run_check
from conformance.checks.delta_conflicts.scenarios import CONFIGS, DUPLICATE_PAIRS, config_id
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.contract.delta_engine import DeltaSetup
from conformance.observe.transcript import Transcript


@pytest.mark.req("DELTA-NO-DUPLICATE-ROW")
@pytest.mark.parametrize("setup", CONFIGS, ids=config_id)
@pytest.mark.scenario(DUPLICATE_PAIRS)
def test_concurrent_writes_of_one_row(
    delta_runner: ScheduleRunner, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_runner, table_name, setup, DUPLICATE_PAIRS, transcript)
