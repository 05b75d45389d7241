"""Under serializable isolation, a DELETE or UPDATE racing an INSERT of a row its predicate (on the
id or on a non-key column) matches."""

from __future__ import annotations

import pytest

from conformance.checks.iceberg.harness import run_check
from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import (
    DELETE_BY_COLOR_MISSES_INSERT,
    DELETE_MISSES_INSERT,
    SERIALIZABLE_CONFIGS,
    UPDATE_MISSES_INSERT,
    config_id,
)
from conformance.contract.iceberg import TableSetup
from conformance.observe.transcript import Transcript

pytestmark = [
    pytest.mark.req("ICE-SERIALIZABLE-COMMIT-ORDER"),
    pytest.mark.parametrize("setup", SERIALIZABLE_CONFIGS, ids=config_id),
]


@pytest.mark.scenario(DELETE_MISSES_INSERT)
def test_delete_racing_an_insert(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, DELETE_MISSES_INSERT, transcript)


@pytest.mark.scenario(UPDATE_MISSES_INSERT)
def test_update_racing_an_insert(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, UPDATE_MISSES_INSERT, transcript)


@pytest.mark.scenario(DELETE_BY_COLOR_MISSES_INSERT)
def test_non_key_predicate_racing_an_insert(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, DELETE_BY_COLOR_MISSES_INSERT, transcript)
