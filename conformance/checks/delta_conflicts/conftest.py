"""Fixtures of the Delta conflict checks: the engine under test and the runner of its schedules,
built once per run; the budget's selection and, for a target that names its engine's preset
(``model_preset``), the model's plan and order (conformance/checks/explorer/plan.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.checks.delta_conflicts.plan import PRESETS, delta_plan
from conformance.checks.explorer.collection import SCENARIO_MARK, counts, order, runner_for
from conformance.checks.explorer.plan import ModelPlan, Planned
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.contract.delta_engine import DeltaEngine
from conformance.contract.target import declared_delta_exhaustive
from conformance.run_context import RunContext

PLAN_KEY = pytest.StashKey[tuple[ModelPlan, list[Planned]]]()
WHERE = "checks/delta_conflicts/"


@pytest.fixture(scope="session")
def delta_engine(lakecert: RunContext) -> Iterator[DeltaEngine]:
    """The target's Delta engine, shared by every check; tables are per check."""
    built = lakecert.delta_engine()
    yield built
    built.close()


@pytest.fixture(scope="session")
def delta_runner(
    delta_engine: DeltaEngine, lakecert: RunContext, request: pytest.FixtureRequest
) -> Iterator[ScheduleRunner]:
    """Runs the checks' held schedules on the engine: planned by the model when there is a plan.
    One at a time unless the target says its engine takes schedules in parallel (the Delta engine
    contract promises one caller)."""
    parallel = int(getattr(lakecert.target, "parallel_schedules", 1))
    built = runner_for(delta_engine, request.config.stash.get(PLAN_KEY, None), parallel)
    yield built
    built.close()
    lakecert.held_schedules["delta"] = counts(built)


EXHAUSTIVE_CHECKS = ("test_every_two_operation_schedule", "test_generated_schedules")


def model_plan(ctx: RunContext) -> ModelPlan | None:
    """The plan, when the target names its engine's preset and the configuration does not turn it off."""
    preset = getattr(ctx.target, "model_preset", None)
    if preset is None or ctx.config.settings.delta.model_guided is False:
        return None
    if preset not in PRESETS:
        raise pytest.UsageError(f"model_preset {preset!r} is none of the Delta model's presets {sorted(PRESETS)}")
    return delta_plan(PRESETS[preset])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", SCENARIO_MARK)


@pytest.hookimpl(trylast=True)  # after the profiles' selection: the plan starts runs only for checks that run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A target with ``delta_exhaustive = False`` (a slow real engine) runs the directed checks
    only: the exhaustive and generated ones are deselected (not run, not skipped). The rest are
    ordered by the model's plan when there is one."""
    ctx = RunContext.of(config)
    if not declared_delta_exhaustive(ctx.target):
        drop = [i for i in items if WHERE in i.nodeid and getattr(i, "originalname", i.name) in EXHAUSTIVE_CHECKS]
        if drop:
            hint = f"exhaustive schedules only: run with target option `exhaustive: true` (targets.{ctx.target.name})"
            items[:] = [i for i in items if i not in drop]
            ctx.note_left_out(items, drop, dict.fromkeys((i.nodeid for i in drop), hint))
            config.hook.pytest_deselected(items=drop)
    plan = model_plan(ctx) if any(WHERE in i.nodeid for i in items) else None
    if plan is not None:
        config.stash[PLAN_KEY] = (plan, order(plan, items, WHERE))
