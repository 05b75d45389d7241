"""Commit-file rules: a conflicting write leaves no trace; every commit gets its own version."""

from __future__ import annotations

import pytest

from conformance.checks.delta_conflicts.harness import run_check
from conformance.checks.delta_conflicts.scenarios import ABORT_PAIRS, CONFIGS, VERSION_PAIRS, config_id
from conformance.contract.delta_engine import DeltaEngine, DeltaSetup
from conformance.observe.transcript import Transcript

pytestmark = pytest.mark.parametrize("setup", CONFIGS, ids=config_id)


@pytest.mark.req("DELTA-ABORT-LEAVES-NO-TRACE")
def test_aborted_writes_leave_no_trace(
    delta_engine: DeltaEngine, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_engine, table_name, setup, ABORT_PAIRS, transcript)


@pytest.mark.req("DELTA-ONE-VERSION-PER-COMMIT")
def test_commits_get_their_own_versions(
    delta_engine: DeltaEngine, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_engine, table_name, setup, VERSION_PAIRS, transcript)
