"""Commit-file rules: a conflicting write leaves no trace; every commit gets its own version."""

from __future__ import annotations

import pytest

from conformance.checks.delta_conflicts.harness import run_check
from conformance.checks.delta_conflicts.scenarios import ABORT_PAIRS, CONFIGS, VERSION_PAIRS, config_id
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.contract.delta_engine import DeltaSetup
from conformance.observe.transcript import Transcript

pytestmark = pytest.mark.parametrize("setup", CONFIGS, ids=config_id)


@pytest.mark.req("DELTA-ABORT-LEAVES-NO-TRACE")
@pytest.mark.scenario(ABORT_PAIRS)
def test_aborted_writes_leave_no_trace(
    delta_runner: ScheduleRunner, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_runner, table_name, setup, ABORT_PAIRS, transcript)


@pytest.mark.req("DELTA-ONE-VERSION-PER-COMMIT")
@pytest.mark.scenario(VERSION_PAIRS)
def test_commits_get_their_own_versions(
    delta_runner: ScheduleRunner, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_runner, table_name, setup, VERSION_PAIRS, transcript)
