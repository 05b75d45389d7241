"""Data file compaction racing a row-level DELETE or UPDATE (spec: compaction is modeled)."""

from __future__ import annotations

import pytest

from conformance.checks.iceberg.harness import run_check
from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import (
    COMPACTION_THEN_DELETE,
    CONFIGS,
    DELETE_THEN_COMPACTION,
    UPDATE_THEN_COMPACTION,
    config_id,
)
from conformance.contract.iceberg import TableSetup
from conformance.observe.transcript import Transcript

pytestmark = [
    pytest.mark.req("ICE-COMPACTION-PRESERVES-ROWS"),
    pytest.mark.parametrize("setup", CONFIGS, ids=config_id),
]


@pytest.mark.scenario(DELETE_THEN_COMPACTION)
def test_delete_then_compaction(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, DELETE_THEN_COMPACTION, transcript)


@pytest.mark.scenario(COMPACTION_THEN_DELETE)
def test_compaction_then_delete(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, COMPACTION_THEN_DELETE, transcript)


@pytest.mark.scenario(UPDATE_THEN_COMPACTION)
def test_update_then_compaction(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, UPDATE_THEN_COMPACTION, transcript)
