"""The read invariant in commit order, under both isolation levels: every version holds what the
committed writes' effects (the rows each matched in its starting snapshot) give in commit order
(FizzBee's ConsistentRead; conformance/history/effects.py)."""

from __future__ import annotations

import pytest

from conformance.checks.iceberg.harness import run_check
from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import CONFIGS, READS_IN_COMMIT_ORDER, config_id
from conformance.contract.iceberg import TableSetup
from conformance.observe.transcript import Transcript

pytestmark = [pytest.mark.req("ICE-READS-IN-COMMIT-ORDER"), pytest.mark.parametrize("setup", CONFIGS, ids=config_id)]


@pytest.mark.scenario(READS_IN_COMMIT_ORDER)
def test_reads_follow_commit_order(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, READS_IN_COMMIT_ORDER, transcript)
