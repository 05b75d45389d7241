"""OPTIMIZE (compaction, dataChange=false) racing DELETE, UPDATE and MERGE, in every interleaving."""

from __future__ import annotations

import pytest

from conformance.checks.delta_conflicts.harness import run_check
from conformance.checks.delta_conflicts.scenarios import COMPACTION_PAIRS, CONFIGS, config_id
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.contract.delta_engine import DeltaSetup
from conformance.observe.transcript import Transcript


@pytest.mark.req("DELTA-COMPACTION-PRESERVES-ROWS")
@pytest.mark.parametrize("setup", CONFIGS, ids=config_id)
@pytest.mark.scenario(COMPACTION_PAIRS)
def test_optimize_racing_row_writes(
    delta_runner: ScheduleRunner, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_runner, table_name, setup, COMPACTION_PAIRS, transcript)
