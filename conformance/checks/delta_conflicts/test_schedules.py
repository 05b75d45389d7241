"""Every interleaving of every pair of operations from the Delta menu, and generated larger
schedules: each version must follow an order the table's isolation level allows."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, reject
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from conformance.checks.delta_conflicts.harness import first_finding, record, run_check
from conformance.checks.delta_conflicts.scenarios import (
    CONFIGS,
    EVERY_TWO_OPERATION_SCHEDULE,
    Scenario,
    config_id,
    slices,
)
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import ALL_KINDS, DATA_FILES
from conformance.contract.delta_engine import DeltaSetup, NotSupported
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import Violation
from conformance.run_context import RunContext
from conformance.schedules.delta_strategies import delta_held_schedules, delta_setups, published_when
from conformance.schedules.enumerate import HeldSchedule
from conformance.schedules.generated import run_settings

REQ = "DELTA-ISOLATION-LEVEL"  # the marks spell it out: coverage reads them statically


def _every_pair_parts() -> list[object]:
    """One check per configuration and part of it (``slices``): ``writeserializable-nodv-cm-2of4``."""
    return [
        pytest.param(
            setup, part, id=f"{config_id(setup)}-{part.part[0]}of{part.part[1]}", marks=pytest.mark.scenario(part)
        )
        for setup in CONFIGS
        for part in slices(EVERY_TWO_OPERATION_SCHEDULE, setup)
    ]


@pytest.mark.req("DELTA-ISOLATION-LEVEL")
@pytest.mark.parametrize(("setup", "part"), _every_pair_parts())
def test_every_two_operation_schedule(
    delta_runner: ScheduleRunner, setup: DeltaSetup, part: Scenario, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_runner, table_name, setup, part, transcript)


@pytest.mark.req("DELTA-ISOLATION-LEVEL")
def test_generated_schedules(
    delta_runner: ScheduleRunner, lakecert: RunContext, seed: int, table_name: str, transcript: Transcript
) -> None:
    tables = itertools.count()

    @hypothesis_seed(seed)
    @run_settings(lakecert.config.data["model"]["examples"])
    @given(setup=delta_setups(DATA_FILES), schedule=delta_held_schedules(), lagging=st.booleans())
    def one(setup: DeltaSetup, schedule: HeldSchedule, lagging: bool) -> None:
        schedule = published_when(setup, schedule, lagging)
        try:
            finding = first_finding(
                delta_runner, f"{table_name}_{next(tables)}", setup, Scenario(REQ, (schedule,), ALL_KINDS)
            )
        except NotSupported:
            reject()  # a configuration the engine does not write; others are drawn instead
        if finding is not None:
            record(transcript, finding)
            raise Violation(REQ, finding.anomaly.report())

    one()
