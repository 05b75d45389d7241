"""A write racing a concurrent change of rows its predicate matches: a blind append under
Serializable (also of a new row matching a non-key predicate), a MERGE (not a blind append) under
WriteSerializable."""

from __future__ import annotations

import pytest

from conformance.checks.delta_conflicts.harness import run_check
from conformance.checks.delta_conflicts.scenarios import (
    SERIALIZABLE,
    SERIALIZABLE_PAIRS,
    SERIALIZABLE_PHANTOMS,
    WRITE_SERIALIZABLE,
    WRITE_SERIALIZABLE_PAIRS,
    config_id,
)
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.contract.delta_engine import DeltaSetup
from conformance.observe.transcript import Transcript


@pytest.mark.req("DELTA-SERIALIZABLE-COMMIT-ORDER")
@pytest.mark.parametrize("setup", SERIALIZABLE, ids=config_id)
@pytest.mark.scenario(SERIALIZABLE_PAIRS)
def test_serializable_write_racing_an_append(
    delta_runner: ScheduleRunner, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_runner, table_name, setup, SERIALIZABLE_PAIRS, transcript)


@pytest.mark.req("DELTA-SERIALIZABLE-COMMIT-ORDER")
@pytest.mark.parametrize("setup", SERIALIZABLE, ids=config_id)
@pytest.mark.scenario(SERIALIZABLE_PHANTOMS)
def test_serializable_non_key_write_racing_an_append(
    delta_runner: ScheduleRunner, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    """UPDATE or DELETE ``WHERE color = 'red'`` held while a new red row is appended (a phantom)."""
    run_check(delta_runner, table_name, setup, SERIALIZABLE_PHANTOMS, transcript)


@pytest.mark.req("DELTA-WRITE-SERIALIZABLE-ORDER")
@pytest.mark.parametrize("setup", WRITE_SERIALIZABLE, ids=config_id)
@pytest.mark.scenario(WRITE_SERIALIZABLE_PAIRS)
def test_write_serializable_write_racing_a_merge(
    delta_runner: ScheduleRunner, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_runner, table_name, setup, WRITE_SERIALIZABLE_PAIRS, transcript)
