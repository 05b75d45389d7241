"""Fixtures of the Iceberg checks: the engine under test and the runner of its schedules, built
once per run; the budget's selection and, for a target that names its engine's preset, the model's
order (conformance/checks/iceberg/plan.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.checks.iceberg.plan import PRESETS, ModelPlan, Planned
from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import in_budget
from conformance.contract.iceberg import DeleteFileAudit, IcebergEngine
from conformance.contract.target import declared_iceberg_budget
from conformance.run_context import RunContext

PLAN_KEY = pytest.StashKey[tuple[ModelPlan, list[Planned]]]()


@pytest.fixture(scope="session")
def engine(lakecert: RunContext) -> Iterator[IcebergEngine]:
    """The target's engine (side ``engine``), shared by every check; tables are per check."""
    built = lakecert.engine()
    yield built
    built.close()


@pytest.fixture(scope="session")
def runner(engine: IcebergEngine, lakecert: RunContext, request: pytest.FixtureRequest) -> Iterator[ScheduleRunner]:
    """Runs the checks' held schedules on the engine: planned by the model when there is a plan."""
    planned = request.config.stash.get(PLAN_KEY, None)
    core = iceberg_budget(lakecert)["matrix"] == "core"
    if planned is None:
        built = ScheduleRunner(engine, core=core)
    else:
        plan, checks = planned
        built = ScheduleRunner(engine, plan, int(getattr(lakecert.target, "parallel_schedules", 1)), core)
        # a check that needs a delete-file audit the engine lacks is NOT_APPLICABLE: nothing to run ahead
        audits = isinstance(engine, DeleteFileAudit)
        built.prefetch(plan.work(c for c in checks if audits or not c.scenario.audits_files))
    yield built
    built.close()


EXHAUSTIVE_CHECKS = ("test_every_two_operation_schedule", "test_generated_schedules")


def iceberg_budget(ctx: RunContext) -> dict[str, object]:
    """The configured budget, with "auto" resolved from the target (its optional ``iceberg_budget``)."""
    own = declared_iceberg_budget(ctx.target)
    asked = ctx.config.settings.iceberg.model_dump()
    return {k: own[k] if asked[k] == "auto" else asked[k] for k in ("matrix", "exhaustive")}


def model_plan(ctx: RunContext) -> ModelPlan | None:
    """The plan, when the target names its engine's preset and the configuration does not turn it off."""
    preset = getattr(ctx.target, "model_preset", None)
    wanted = ctx.config.settings.iceberg.model_guided
    if preset is None or wanted is False:
        return None
    return ModelPlan(PRESETS[preset])


def planned_of(item: pytest.Item, core: bool = False) -> Planned | None:
    """The check's configuration and scenario (its ``scenario`` mark, as the budget runs it), when
    it has both."""
    callspec = getattr(item, "callspec", None)
    setup = callspec.params.get("setup") if callspec is not None else None
    mark = item.get_closest_marker("scenario")
    return Planned(setup, in_budget(mark.args[0], core)) if setup is not None and mark is not None else None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "scenario(scenario): the held schedules an Iceberg check runs")


@pytest.hookimpl(trylast=True)  # after the profiles' selection: the plan starts runs only for checks that run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the Iceberg checks outside the budget (they are not run, not skipped); order the
    rest by the model's plan when there is one."""
    ctx = RunContext.of(config)
    budget = iceberg_budget(ctx)
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        if "checks/iceberg/" not in item.nodeid:  # other profiles' checks have setups of their own kind
            keep.append(item)
            continue
        callspec = getattr(item, "callspec", None)
        setup = callspec.params.get("setup") if callspec is not None else None
        core = budget["matrix"] == "core"
        core_only = core and setup is not None and setup.update_mode != setup.delete_mode
        mark = item.get_closest_marker("scenario")
        full_only = core and mark is not None and mark.args[0].core == 0
        shallow = not budget["exhaustive"] and getattr(item, "originalname", item.name) in EXHAUSTIVE_CHECKS
        (drop if core_only or full_only or shallow else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep
    plan = model_plan(ctx)
    if plan is not None:
        config.stash[PLAN_KEY] = (plan, _order(plan, items, budget["matrix"] == "core"))


def _order(plan: ModelPlan, items: list[pytest.Item], core: bool) -> list[Planned]:
    """Put the Iceberg checks the model predicts to fail first, in their places among the run's
    checks (stable otherwise); the planned checks, in their new order."""
    places = [i for i, item in enumerate(items) if "checks/iceberg/" in item.nodeid]
    ours = [items[i] for i in places]
    planned = {item.nodeid: planned_of(item, core) for item in ours}

    def later(item: pytest.Item) -> bool:
        p = planned[item.nodeid]
        return p is None or not plan.predicts_failure(p)

    ours.sort(key=later)
    for i, item in zip(places, ours, strict=True):
        items[i] = item
    return [p for item in ours if (p := planned[item.nodeid]) is not None]
