"""Fixtures of the Delta conflict checks: the engine under test, built once per run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.contract.delta_engine import DeltaEngine
from conformance.contract.target import declared_delta_exhaustive
from conformance.run_context import RunContext


@pytest.fixture(scope="session")
def delta_engine(lakecert: RunContext) -> Iterator[DeltaEngine]:
    """The target's Delta engine, shared by every check; tables are per check."""
    built = lakecert.delta_engine()
    yield built
    built.close()


EXHAUSTIVE_CHECKS = ("test_every_two_operation_schedule", "test_generated_schedules")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A target with ``delta_exhaustive = False`` (a slow real engine) runs the directed checks
    only: the exhaustive and generated ones are deselected (not run, not skipped)."""
    if declared_delta_exhaustive(RunContext.of(config).target):
        return
    drop = [
        i
        for i in items
        if "checks/delta_conflicts/" in i.nodeid and getattr(i, "originalname", i.name) in EXHAUSTIVE_CHECKS
    ]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [i for i in items if i not in drop]
