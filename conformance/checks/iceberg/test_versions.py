"""Concurrent writes that may both commit: each needs a version of its own."""

from __future__ import annotations

import pytest

from conformance.checks.iceberg.harness import run_check
from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import COMMITS_GET_OWN_VERSIONS, CONFIGS, config_id
from conformance.contract.iceberg import TableSetup
from conformance.observe.transcript import Transcript


@pytest.mark.req("ICE-ONE-VERSION-PER-COMMIT")
@pytest.mark.parametrize("setup", CONFIGS, ids=config_id)
@pytest.mark.scenario(COMMITS_GET_OWN_VERSIONS)
def test_concurrent_commits_get_their_own_versions(
    runner: ScheduleRunner, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(runner, table_name, setup, COMMITS_GET_OWN_VERSIONS, transcript)
