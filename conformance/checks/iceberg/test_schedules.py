"""Every interleaving of every pair of operations from a small menu, and generated larger
schedules: each read must match some serial order (spec "Consistency checking")."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, reject
from hypothesis import seed as hypothesis_seed

from conformance.checks.iceberg.harness import first_finding, record, run_check
from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import (
    ALL_KINDS,
    CONFIGS,
    DATA_FILES,
    EVERY_TWO_OPERATION_SCHEDULE,
    Scenario,
    config_id,
)
from conformance.contract.iceberg import IcebergEngine, NotSupported, TableSetup
from conformance.observe.transcript import Transcript
from conformance.run_context import RunContext
from conformance.schedules.enumerate import HeldSchedule
from conformance.schedules.generated import run_settings
from conformance.schedules.iceberg_strategies import held_schedules, table_setups


@pytest.mark.req("ICE-SERIALIZABLE-READS")
@pytest.mark.parametrize("setup", CONFIGS, ids=config_id)
@pytest.mark.scenario(EVERY_TWO_OPERATION_SCHEDULE)
def test_every_two_operation_schedule(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, EVERY_TWO_OPERATION_SCHEDULE, transcript)


@pytest.mark.req("ICE-SERIALIZABLE-READS")
def test_generated_schedules(
    engine: IcebergEngine, lakecert: RunContext, seed: int, table_name: str, transcript: Transcript
) -> None:
    tables = itertools.count()

    @hypothesis_seed(seed)
    @run_settings(lakecert.config.settings.model.examples, shrink=lakecert.config.settings.model.shrink)
    @given(setup=table_setups(DATA_FILES), schedule=held_schedules())
    def one(setup: TableSetup, schedule: HeldSchedule) -> None:
        try:
            finding = first_finding(engine, f"{table_name}_{next(tables)}", setup, Scenario((schedule,), ALL_KINDS))
        except NotSupported:
            reject()  # a configuration the engine does not write; others are drawn instead
        if finding is not None:
            record(transcript, finding)
            raise AssertionError(finding.anomaly.report())

    one()
