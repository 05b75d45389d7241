"""Fixtures of the Iceberg checks: the engine under test, built once per run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.contract.iceberg import IcebergEngine
from conformance.contract.target import declared_iceberg_budget
from conformance.run_context import RunContext


@pytest.fixture(scope="session")
def engine(lakecert: RunContext) -> Iterator[IcebergEngine]:
    """The target's engine (side ``engine``), shared by every check; tables are per check."""
    built = lakecert.engine()
    yield built
    built.close()


EXHAUSTIVE_CHECKS = ("test_every_two_operation_schedule", "test_generated_schedules")


def iceberg_budget(ctx: RunContext) -> dict[str, object]:
    """The configured budget, with "auto" resolved from the target (its optional ``iceberg_budget``)."""
    own = declared_iceberg_budget(ctx.target)
    asked = ctx.config.settings.iceberg.model_dump()
    return {k: own[k] if asked[k] == "auto" else asked[k] for k in ("matrix", "exhaustive")}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the Iceberg checks outside the budget (they are not run, not skipped)."""
    budget = iceberg_budget(RunContext.of(config))
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        if "checks/iceberg/" not in item.nodeid:  # other profiles' checks have setups of their own kind
            keep.append(item)
            continue
        callspec = getattr(item, "callspec", None)
        setup = callspec.params.get("setup") if callspec is not None else None
        core_only = budget["matrix"] == "core" and setup is not None and setup.update_mode != setup.delete_mode
        shallow = not budget["exhaustive"] and getattr(item, "originalname", item.name) in EXHAUSTIVE_CHECKS
        (drop if core_only or shallow else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
