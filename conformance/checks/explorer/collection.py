"""The explorer at collection: which checks a plan covers, and their order in the run.

A check takes part in a plan when it is parametrized with a table configuration (``setup``) and
marked with the scenario it runs (``@pytest.mark.scenario(S)``); the checks of one format live
under one folder (``where``, e.g. ``checks/delta_conflicts/``).
"""

from __future__ import annotations

import pytest

from conformance.checks.explorer.plan import ModelPlan, Planned
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.schedules.held_run import HeldEngine

SCENARIO_MARK = "scenario(scenario): the held schedules a concurrency check runs (conformance/checks/explorer)"


def planned_of(item: pytest.Item) -> Planned | None:
    """The check's configuration and scenario (its ``scenario`` mark), when it has both."""
    callspec = getattr(item, "callspec", None)
    setup = callspec.params.get("setup") if callspec is not None else None
    mark = item.get_closest_marker("scenario")
    return Planned(setup, mark.args[0]) if setup is not None and mark is not None else None


def order(plan: ModelPlan, items: list[pytest.Item], where: str) -> list[Planned]:
    """Put the checks under ``where`` that the model predicts to fail first, in their places among
    the run's checks (stable otherwise); the planned checks, in their new order."""
    places = [i for i, item in enumerate(items) if where in item.nodeid]
    ours = [items[i] for i in places]
    planned = {item.nodeid: planned_of(item) for item in ours}

    def later(item: pytest.Item) -> bool:
        p = planned[item.nodeid]
        return p is None or not plan.predicts_failure(p)

    ours.sort(key=later)
    for i, item in zip(places, ours, strict=True):
        items[i] = item
    return [p for item in ours if (p := planned[item.nodeid]) is not None]


def runner_for(engine: HeldEngine, planned: tuple[ModelPlan, list[Planned]] | None, parallel: int) -> ScheduleRunner:
    """The run's runner: planned (its runs started ahead, in the plan's order) when there is a plan."""
    if planned is None:
        return ScheduleRunner(engine)
    plan, checks = planned
    runner = ScheduleRunner(engine, plan, parallel)
    runner.prefetch(plan.work(checks))
    return runner


def counts(runner: ScheduleRunner) -> dict[str, object]:
    """What the run's ``held_schedules`` records of a runner (bench/delta_engines.py reads it)."""
    runs = runner.ran if runner.plan is not None else runner.asked
    return {"plan": runner.plan.name if runner.plan else None, "asked": runner.asked, "engine_runs": runs}
