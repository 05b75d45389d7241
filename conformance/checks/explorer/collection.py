"""The explorer at collection: which checks a plan covers, and their order in the run.

A check takes part in a plan when it is parametrized with a table configuration (``setup``) and
marked with the scenario it runs (``@pytest.mark.scenario(S)``); the checks of one format live
under one folder (``where``, e.g. ``checks/delta_conflicts/``).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.checks.explorer.plan import Explored, ModelPlan, Planned
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.schedules.held_run import HeldEngine

SCENARIO_MARK = "scenario(scenario): the held schedules a concurrency check runs (conformance/checks/explorer)"


Budget = Callable[[Explored], Explored]  # the scenario as the run's budget runs it


def planned_of(item: pytest.Item, budget: Budget | None = None) -> Planned | None:
    """The check's configuration and scenario (its ``scenario`` mark, as the budget runs it), when
    it has both."""
    callspec = getattr(item, "callspec", None)
    setup = callspec.params.get("setup") if callspec is not None else None
    mark = item.get_closest_marker("scenario")
    if setup is None or mark is None:
        return None
    return Planned(setup, budget(mark.args[0]) if budget is not None else mark.args[0])


def order(plan: ModelPlan, items: list[pytest.Item], where: str, budget: Budget | None = None) -> list[Planned]:
    """Put the checks under ``where`` that the model predicts to fail first, in their places among
    the run's checks (stable otherwise); the planned checks, in their new order."""
    places = [i for i, item in enumerate(items) if where in item.nodeid]
    ours = [items[i] for i in places]
    planned = {item.nodeid: planned_of(item, budget) for item in ours}

    def later(item: pytest.Item) -> bool:
        p = planned[item.nodeid]
        return p is None or not plan.predicts_failure(p)

    ours.sort(key=later)
    for i, item in zip(places, ours, strict=True):
        items[i] = item
    return [p for item in ours if (p := planned[item.nodeid]) is not None]


def runner_for(
    engine: HeldEngine,
    planned: tuple[ModelPlan, list[Planned]] | None,
    parallel: int,
    budget: Budget | None = None,
    ahead: Callable[[Planned], bool] = lambda p: True,
) -> ScheduleRunner:
    """The run's runner: planned (the runs of the checks ``ahead`` accepts started ahead, in the
    plan's order) when there is a plan."""
    if planned is None:
        return ScheduleRunner(engine, budget=budget)
    plan, checks = planned
    runner = ScheduleRunner(engine, plan, parallel, budget)
    runner.prefetch(plan.work(c for c in checks if ahead(c)))
    return runner


def counts(runner: ScheduleRunner) -> dict[str, object]:
    """What the run's ``held_schedules`` records of a runner (bench/delta_engines.py reads it)."""
    runs = runner.ran if runner.plan is not None else runner.asked
    return {"plan": runner.plan.name if runner.plan else None, "asked": runner.asked, "engine_runs": runs}
