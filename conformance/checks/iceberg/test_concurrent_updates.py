"""Two concurrent UPDATEs of one row, setting different columns, in both commit orders."""

from __future__ import annotations

import pytest

from conformance.checks.iceberg.harness import run_check
from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import CONCURRENT_UPDATES, CONFIGS, config_id
from conformance.contract.iceberg import TableSetup
from conformance.observe.transcript import Transcript


@pytest.mark.req("ICE-NO-DUPLICATE-ROW")
@pytest.mark.parametrize("setup", CONFIGS, ids=config_id)
@pytest.mark.scenario(CONCURRENT_UPDATES)
def test_concurrent_updates_of_one_row(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, CONCURRENT_UPDATES, transcript)
