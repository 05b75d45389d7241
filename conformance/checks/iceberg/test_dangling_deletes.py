"""No live delete file points nowhere after a row-level write races a compaction or a copy-on-write
rewrite of its data file (FizzBee's NoDanglingDeleteFiles). Needs an engine that can list its
delete files' targets (``DeleteFileAudit``); merge-on-read configurations only, the others write none."""

from __future__ import annotations

import pytest

from conformance.checks.iceberg.harness import run_check
from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import DANGLING_DELETES, MOR_CONFIGS, config_id
from conformance.contract.iceberg import TableSetup
from conformance.observe.transcript import Transcript

pytestmark = [pytest.mark.req("ICE-NO-DANGLING-DELETES"), pytest.mark.parametrize("setup", MOR_CONFIGS, ids=config_id)]


@pytest.mark.scenario(DANGLING_DELETES)
def test_no_dangling_delete_files(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, DANGLING_DELETES, transcript)
