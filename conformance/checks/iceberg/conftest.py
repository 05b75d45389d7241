"""Fixtures of the Iceberg checks: the engine under test and the runner of its schedules, built
once per run; the budget's selection and, for a target that names its engine's preset, the model's
order (conformance/checks/explorer/plan.py, with the Iceberg presets of checks/iceberg/plan.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.checks.explorer.collection import SCENARIO_MARK, counts, order, runner_for
from conformance.checks.explorer.plan import ModelPlan, Planned
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.checks.iceberg.plan import PRESETS, iceberg_plan
from conformance.checks.iceberg.scenarios import scenario_budget
from conformance.contract.iceberg import DeleteFileAudit, IcebergEngine
from conformance.contract.target import declared_iceberg_budget
from conformance.run_context import RunContext

PLAN_KEY = pytest.StashKey[tuple[ModelPlan, list[Planned]]]()
WHERE = "checks/iceberg/"


@pytest.fixture(scope="session")
def engine(lakecert: RunContext) -> Iterator[IcebergEngine]:
    """The target's engine (side ``engine``), shared by every check; tables are per check."""
    built = lakecert.engine()
    yield built
    built.close()


@pytest.fixture(scope="session")
def runner(engine: IcebergEngine, lakecert: RunContext, request: pytest.FixtureRequest) -> Iterator[ScheduleRunner]:
    """Runs the checks' held schedules on the engine: planned by the model when there is a plan."""
    parallel = int(getattr(lakecert.target, "parallel_schedules", 1))
    audits = isinstance(engine, DeleteFileAudit)
    built = runner_for(
        engine,
        request.config.stash.get(PLAN_KEY, None),
        parallel,
        scenario_budget(iceberg_budget(lakecert)["matrix"] == "core"),
        # a check that needs a delete-file audit the engine lacks is NOT_APPLICABLE: nothing to run ahead
        ahead=lambda p: audits or not getattr(p.scenario, "audits_files", False),
    )
    yield built
    built.close()
    lakecert.held_schedules["iceberg"] = counts(built)


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
    if preset not in PRESETS:
        raise pytest.UsageError(f"model_preset {preset!r} is none of the Iceberg model's presets {sorted(PRESETS)}")
    return iceberg_plan(PRESETS[preset])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", SCENARIO_MARK)


@pytest.hookimpl(trylast=True)  # after the profiles' selection: the plan starts runs only for checks that run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the Iceberg checks outside the budget (they are not run, not skipped); order the
    rest by the model's plan when there is one."""
    ctx = RunContext.of(config)
    budget = iceberg_budget(ctx)
    core = budget["matrix"] == "core"
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    how: dict[str, str] = {}  # a dropped check -> the setting that runs it
    for item in items:
        if WHERE not in item.nodeid:  # other profiles' checks have setups of their own kind
            keep.append(item)
            continue
        callspec = getattr(item, "callspec", None)
        setup = callspec.params.get("setup") if callspec is not None else None
        core_only = core and setup is not None and setup.update_mode != setup.delete_mode
        mark = item.get_closest_marker("scenario")
        full_only = core and mark is not None and mark.args[0].core == 0
        shallow = not budget["exhaustive"] and getattr(item, "originalname", item.name) in EXHAUSTIVE_CHECKS
        (drop if core_only or full_only or shallow else keep).append(item)
        if core_only or full_only:
            how[item.nodeid] = (
                "outside the core budget: run with `iceberg: {matrix: full}` (LAKECERT__iceberg__matrix=full)"
            )
        elif shallow:
            how[item.nodeid] = "exhaustive schedules only: run with `iceberg: {exhaustive: true}`"
    if drop:
        ctx.note_left_out(keep, drop, how)
        config.hook.pytest_deselected(items=drop)
    items[:] = keep
    plan = model_plan(ctx) if any(WHERE in i.nodeid for i in items) else None
    if plan is not None:
        config.stash[PLAN_KEY] = (plan, order(plan, items, WHERE, scenario_budget(core)))
