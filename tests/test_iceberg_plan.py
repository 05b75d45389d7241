"""The model's plan for a real engine (conformance/checks/iceberg/plan.py, runner.py), on the model
engine itself: the plan must not change what the checks find, only the order and the number of
engine runs; and fail-fast stops a run at its first FAIL, never certifying it."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.checks.iceberg.harness import first_finding, scenarios_by_requirement
from conformance.checks.iceberg.plan import Planned, classes, iceberg_plan
from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import (
    EVERY_TWO_OPERATION_SCHEDULE,
    NON_KEY_PREDICATES,
    UPDATE_THEN_DELETE,
    config_id,
    scenario_budget,
)
from conformance.model.iceberg import CORRECTED, SPARK
from reference_impl.iceberg import ModelEngine
from tests.helpers import lakecert, results

CHECKS = [
    (rid, scenario, setup)
    for rid, scenario in [*scenarios_by_requirement(), ("ICE-SERIALIZABLE-READS", EVERY_TWO_OPERATION_SCHEDULE)]
    for setup in scenario.configs
]


def _failing(where: ScheduleRunner | ModelEngine) -> set[tuple[str, str, int]]:
    return {
        (rid, config_id(setup), id(scenario))
        for n, (rid, scenario, setup) in enumerate(CHECKS)
        if first_finding(where, f"t{n}", setup, scenario) is not None
    }


def test_one_run_per_class_finds_what_every_run_finds() -> None:
    """Spark's preset on the model engine: planned, concurrent, one run per class, the same FAILs."""
    every = _failing(ModelEngine(SPARK))
    plan = iceberg_plan(SPARK)
    runner = ScheduleRunner(ModelEngine(SPARK), plan, parallel=2)
    runner.prefetch(plan.work(Planned(setup, scenario) for _, scenario, setup in CHECKS))
    planned = _failing(runner)
    runner.close()
    assert planned == every and every, "the resurrected row is found by both"
    assert runner.started < runner.asked / 4, (runner.started, runner.asked)


def test_the_plan_predicts_the_failing_checks_and_orders_them_first() -> None:
    plan = iceberg_plan(SPARK)
    predicted = {
        (rid, config_id(setup), id(scenario))
        for rid, scenario, setup in CHECKS
        if plan.predicts_failure(Planned(setup, scenario))
    }
    assert predicted == _failing(ModelEngine(SPARK))
    setup = next(s for s in UPDATE_THEN_DELETE.configs if config_id(s) == "upd-mor-del-mor-snapshot-v2")
    first = plan.ordered(setup, EVERY_TWO_OPERATION_SCHEDULE)[0]
    assert plan.breaks(setup, EVERY_TWO_OPERATION_SCHEDULE, first)
    assert not iceberg_plan(CORRECTED).predicts_failure(Planned(setup, UPDATE_THEN_DELETE))


def test_classes_join_configurations_the_model_cannot_tell_apart() -> None:
    plan = iceberg_plan(SPARK)
    work = plan.work(Planned(setup, UPDATE_THEN_DELETE) for setup in UPDATE_THEN_DELETE.configs)
    assert len(work) == 16
    # The resurrecting configuration is a class of its own; the others share a few histories.
    assert 2 <= classes(plan, work) < 16


def test_fail_fast_stops_at_the_first_fail_and_never_certifies(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = lakecert(
        "run", "--target", "faulty:spark-delete-validation", "--profile", "iceberg-row-delta", "--out", str(out),
        "--fail-fast",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    res = results(out)
    info = res["run_info"]
    assert res["results"][-1]["status"] == "FAIL" and info["stopped_at_first_fail"] == res["results"][-1]["test"]
    assert all(r["status"] == "PASS" for r in res["results"][:-1])
    assert info["complete"] is False and len(res["results"]) < info["checks_selected"]
    assert res["verdict"] == "NOT_CERTIFIED" and not (out / "certificate.json").exists()
    repro = json.loads((out / str(res["results"][-1]["reproducer"])).read_text())
    assert repro["schedule"]["schedule"], "the schedule that produced the anomaly is recorded"


def test_the_core_budget_runs_the_leading_schedules_of_a_scenario_that_names_them() -> None:
    setup = next(s for s in NON_KEY_PREDICATES.configs if config_id(s) == "upd-mor-del-mor-snapshot-v2")
    core = ScheduleRunner(ModelEngine(SPARK), budget=scenario_budget(True))
    assert core.schedules(setup, NON_KEY_PREDICATES) == NON_KEY_PREDICATES.schedules[:1]
    assert ScheduleRunner(ModelEngine(SPARK)).schedules(setup, NON_KEY_PREDICATES) == NON_KEY_PREDICATES.schedules
    assert core.schedules(setup, UPDATE_THEN_DELETE) == UPDATE_THEN_DELETE.schedules  # names none: all
    # the one it keeps is the race Spark's preset breaks
    assert first_finding(core, "core", setup, NON_KEY_PREDICATES) is not None
