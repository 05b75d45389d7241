"""A concurrent UPDATE and DELETE of one row, in both commit orders, and concurrent DELETEs of rows
sharing a data file (spec "Possible violation")."""

from __future__ import annotations

import pytest

from conformance.checks.iceberg.harness import run_check
from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import (
    CONFIGS,
    DELETE_THEN_UPDATE,
    DELETES_IN_ONE_FILE,
    UPDATE_THEN_DELETE,
    config_id,
)
from conformance.contract.iceberg import TableSetup
from conformance.observe.transcript import Transcript

pytestmark = [pytest.mark.req("ICE-NO-RESURRECTION"), pytest.mark.parametrize("setup", CONFIGS, ids=config_id)]


@pytest.mark.scenario(UPDATE_THEN_DELETE)
def test_update_then_delete_of_one_row(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, UPDATE_THEN_DELETE, transcript)


@pytest.mark.scenario(DELETE_THEN_UPDATE)
def test_delete_then_update_of_one_row(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, DELETE_THEN_UPDATE, transcript)


@pytest.mark.scenario(DELETES_IN_ONE_FILE)
def test_deletes_of_rows_in_one_data_file(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, DELETES_IN_ONE_FILE, transcript)
