"""A row deleted and inserted again while an older write to it is still in flight."""

from __future__ import annotations

import pytest

from conformance.checks.iceberg.harness import run_check
from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import CONFIGS, REINSERTED_ROW, config_id
from conformance.contract.iceberg import TableSetup
from conformance.observe.transcript import Transcript

pytestmark = [pytest.mark.req("ICE-REINSERT-AFTER-DELETE"), pytest.mark.parametrize("setup", CONFIGS, ids=config_id)]


@pytest.mark.scenario(REINSERTED_ROW)
def test_write_racing_a_delete_and_reinsert(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, REINSERTED_ROW, transcript)
