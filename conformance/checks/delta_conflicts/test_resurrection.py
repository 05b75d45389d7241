"""A DELETE racing an UPDATE, DELETE or MERGE of rows in the same data file (deletion-vector
update or file rewrite), and of a file the DELETE drops whole."""

from __future__ import annotations

import pytest

from conformance.checks.delta_conflicts.harness import run_check
from conformance.checks.delta_conflicts.scenarios import CONFIGS, RESURRECTION_PAIRS, config_id
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.contract.delta_engine import DeltaSetup
from conformance.observe.transcript import Transcript


@pytest.mark.req("DELTA-NO-RESURRECTION")
@pytest.mark.parametrize("setup", CONFIGS, ids=config_id)
@pytest.mark.scenario(RESURRECTION_PAIRS)
def test_deletes_racing_writes_to_their_file(
    delta_runner: ScheduleRunner, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_runner, table_name, setup, RESURRECTION_PAIRS, transcript)
