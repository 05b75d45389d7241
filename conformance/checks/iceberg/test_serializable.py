"""Under serializable isolation, a DELETE or UPDATE racing an INSERT of a row its predicate matches."""

from __future__ import annotations

import pytest

from conformance.checks.iceberg.harness import run_check
from conformance.checks.iceberg.scenarios import (
    DELETE_MISSES_INSERT,
    SERIALIZABLE_CONFIGS,
    UPDATE_MISSES_INSERT,
    config_id,
)
from conformance.contract.iceberg import IcebergEngine, TableSetup
from conformance.observe.transcript import Transcript

pytestmark = [
    pytest.mark.req("ICE-SERIALIZABLE-COMMIT-ORDER"),
    pytest.mark.parametrize("setup", SERIALIZABLE_CONFIGS, ids=config_id),
]


def test_delete_racing_an_insert(
    engine: IcebergEngine, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(engine, table_name, setup, DELETE_MISSES_INSERT, transcript)


def test_update_racing_an_insert(
    engine: IcebergEngine, setup: TableSetup, table_name: str, transcript: Transcript
) -> None:
    run_check(engine, table_name, setup, UPDATE_MISSES_INSERT, transcript)
