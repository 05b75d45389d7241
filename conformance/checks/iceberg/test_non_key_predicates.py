"""UPDATE and DELETE whose predicate is on a non-key column (color, label), racing writes to rows
they match: FizzBee's workload has them, and one such write touches rows in several data files."""

from __future__ import annotations

import pytest

from conformance.checks.iceberg.harness import run_check
from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import CONFIGS, NON_KEY_PREDICATES, config_id
from conformance.contract.iceberg import TableSetup
from conformance.observe.transcript import Transcript

pytestmark = [pytest.mark.req("ICE-NON-KEY-PREDICATES"), pytest.mark.parametrize("setup", CONFIGS, ids=config_id)]


@pytest.mark.scenario(NON_KEY_PREDICATES)
def test_writes_by_non_key_predicate(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, NON_KEY_PREDICATES, transcript)
