"""Conflicting writes in every interleaving: whatever aborts must leave no version and no effect."""

from __future__ import annotations

import pytest

from conformance.checks.iceberg.harness import run_check
from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import CONFIGS, CONFLICTS_ABORT_CLEANLY, config_id
from conformance.contract.iceberg import TableSetup
from conformance.observe.transcript import Transcript


@pytest.mark.req("ICE-ABORT-LEAVES-NO-TRACE")
@pytest.mark.parametrize("setup", CONFIGS, ids=config_id)
@pytest.mark.scenario(CONFLICTS_ABORT_CLEANLY)
def test_aborted_writes_leave_no_trace(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, CONFLICTS_ABORT_CLEANLY, transcript)
