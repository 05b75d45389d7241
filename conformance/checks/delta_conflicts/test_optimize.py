"""OPTIMIZE (compaction, dataChange=false) racing DELETE, UPDATE and MERGE, in every interleaving."""

from __future__ import annotations

import pytest

from conformance.checks.delta_conflicts.harness import run_check
from conformance.checks.delta_conflicts.scenarios import COMPACTION_PAIRS, CONFIGS, config_id
from conformance.contract.delta_engine import DeltaEngine, DeltaSetup
from conformance.observe.transcript import Transcript


@pytest.mark.req("DELTA-COMPACTION-PRESERVES-ROWS")
@pytest.mark.parametrize("setup", CONFIGS, ids=config_id)
def test_optimize_racing_row_writes(
    delta_engine: DeltaEngine, setup: DeltaSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(delta_engine, table_name, setup, COMPACTION_PAIRS, transcript)
