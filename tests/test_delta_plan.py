"""The explorer's plan for a Delta engine (conformance/checks/explorer, with the Delta model's
presets), on the Delta model engine itself: the plan must not change what the checks find, only
the order and the number of engine runs; a configuration the engine refuses stays NOT_APPLICABLE
even where the model joins it with one the engine writes. Model only: a few seconds in all."""

from __future__ import annotations

import functools
import threading

import pytest

from conformance.checks.delta_conflicts.plan import PRESETS, delta_plan
from conformance.checks.delta_conflicts.scenarios import (
    ALL_SCENARIOS,
    COMPACTION_PAIRS,
    CONFIGS,
    EVERY_TWO_OPERATION_SCHEDULE,
    FILESYSTEM,
    SLICE_SCHEDULES,
    config_id,
    slices,
)
from conformance.checks.explorer.harness import first_finding
from conformance.checks.explorer.plan import Planned, classes
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import COMPACT_ALL
from conformance.contract.delta_engine import DeltaSetup, NotSupported, TableRead
from conformance.model.delta import DELTA_RS_1_6, DELTA_SPARK, Preset
from reference_impl.delta_conflicts.engine import DeltaModelEngine

# Path-based tables: the presets of delta-rs and delta-spark refuse catalog-managed ones (the
# refusal path is the deletion-vector one below)
CHECKS = [(scenario, setup) for scenario, setups in ALL_SCENARIOS for setup in setups if not setup.catalog_managed]


class WithoutVectors(DeltaModelEngine):
    """The model refusing tables with deletion vectors, as delta-rs 1.6 does (docs/compatibility.md)."""

    def create_table(self, name: str, setup: DeltaSetup) -> TableRead:
        if setup.deletion_vectors:
            raise NotSupported("no deletion vectors")
        return super().create_table(name, setup)


Outcome = tuple[str, str, str]  # requirement, configuration, FAIL or NOT_APPLICABLE


@functools.cache
def _unplanned(preset: Preset) -> frozenset[Outcome]:
    """Every schedule of every check on a table of its own (no plan)."""
    return frozenset(_outcomes(DeltaModelEngine(preset)))


def _outcomes(where: ScheduleRunner | DeltaModelEngine) -> set[Outcome]:
    found: set[Outcome] = set()
    for n, (scenario, setup) in enumerate(CHECKS):
        try:
            if first_finding(where, f"t{n}", setup, scenario) is not None:
                found.add((scenario.requirement, config_id(setup), "FAIL"))
        except NotSupported:
            found.add((scenario.requirement, config_id(setup), "NOT_APPLICABLE"))
    return found


def _engine(refuse_vectors: bool) -> DeltaModelEngine:
    return WithoutVectors(DELTA_RS_1_6) if refuse_vectors else DeltaModelEngine(DELTA_RS_1_6)


@pytest.mark.parametrize("refuse_vectors", [False, True], ids=["all-tables", "refusing-vectors"])
def test_one_run_per_class_finds_what_every_run_finds(refuse_vectors: bool) -> None:
    """delta-rs's preset: planned, one run per class (each configuration's first run its own), the
    same FAILs and NOT_APPLICABLEs as every schedule run on a table of its own."""
    every = _outcomes(_engine(refuse_vectors)) if refuse_vectors else _unplanned(DELTA_RS_1_6)
    plan = delta_plan(DELTA_RS_1_6)
    runner = ScheduleRunner(_engine(refuse_vectors), plan, parallel=1)
    work = plan.work(Planned(setup, scenario) for scenario, setup in CHECKS)
    runner.prefetch(work)
    planned = _outcomes(runner)
    runner.close()
    assert planned == every
    fails = {(req, config) for req, config, status in every if status == "FAIL"}
    assert ("DELTA-COMPACTION-PRESERVES-ROWS", "serializable-nodv") in fails, "the duplicating OPTIMIZEs"
    assert ("DELTA-ISOLATION-LEVEL", "writeserializable-nodv") in fails
    assert runner.ran < len(work) / 3, (runner.ran, len(work))


def test_a_refused_configuration_is_not_judged_on_another() -> None:
    """With vectors refused, every check on a table with vectors is NOT_APPLICABLE, although the
    model gives many of their schedules the same history as on a table without."""
    engine = WithoutVectors(DELTA_RS_1_6)
    plan = delta_plan(DELTA_RS_1_6)
    runner = ScheduleRunner(engine, plan)
    shared = [
        s
        for s in EVERY_TWO_OPERATION_SCHEDULE.schedules
        if plan.class_of(CONFIGS[0], s) == plan.class_of(CONFIGS[1], s)
    ]
    assert shared, "the model joins tables with and without vectors for some schedules"
    with_vectors = next(c for c in CONFIGS if c.deletion_vectors and c.isolation is CONFIGS[0].isolation)
    runner.prefetch([(CONFIGS[0], shared[0]), (with_vectors, shared[0])])
    assert runner.run("a", CONFIGS[0], shared[0]).setup == CONFIGS[0]
    with pytest.raises(NotSupported):
        runner.run("b", with_vectors, shared[0])
    runner.prefetch([(with_vectors, s) for s in EVERY_TWO_OPERATION_SCHEDULE.schedules])
    runner.close()
    assert runner.ran == 2, "a configuration refused in its first run is not asked again"


@pytest.mark.parametrize("preset", [DELTA_RS_1_6, DELTA_SPARK], ids=lambda p: p.name)
def test_the_plan_predicts_the_failing_checks_and_orders_them_first(preset: Preset) -> None:
    plan = delta_plan(preset)
    predicted = {
        (scenario.requirement, config_id(setup), "FAIL")
        for scenario, setup in CHECKS
        if plan.predicts_failure(Planned(setup, scenario))
    }
    assert predicted == {o for o in _unplanned(preset) if o[2] == "FAIL"}
    first = plan.ordered(CONFIGS[0], COMPACTION_PAIRS)[0]
    if preset is DELTA_RS_1_6:
        # the two held OPTIMIZEs first (listed first or not): delta-rs's counterexample in one schedule
        assert [op for _, op in first.ops] == [COMPACT_ALL, COMPACT_ALL]
    else:
        assert predicted == set() and first == COMPACTION_PAIRS.schedules[0]


def test_classes_cut_the_exhaustive_budget() -> None:
    """The engine runs of the exhaustive check, before and after the plan (docs/benchmarks.md)."""
    for name in ("delta-rs-1.6", "delta-spark"):
        plan = delta_plan(PRESETS[name])
        # path-based tables: these engines' presets refuse catalog-managed ones (classes of their own)
        work = plan.work(Planned(setup, EVERY_TWO_OPERATION_SCHEDULE) for setup in FILESYSTEM)
        assert len(work) == 6 * 216
        assert classes(plan, work) < len(work) / 3


class Gated(DeltaModelEngine):
    """The model engine, its runs waiting for ``gate``: the pool is still busy when a check ends."""

    def __init__(self, preset: Preset) -> None:
        super().__init__(preset)
        self.gate = threading.Event()
        self.created: list[str] = []

    def create_table(self, name: str, setup: DeltaSetup) -> TableRead:
        assert self.gate.wait(600), "hang guard"
        self.created.append(name)
        return super().create_table(name, setup)


def test_a_check_with_its_verdict_drops_its_waiting_runs_and_a_later_ask_restarts_one() -> None:
    engine = Gated(DELTA_RS_1_6)
    plan = delta_plan(DELTA_RS_1_6)
    runner = ScheduleRunner(engine, plan)
    runner.prefetch(plan.work([Planned(CONFIGS[0], COMPACTION_PAIRS)]))
    runner.skip(CONFIGS[0], COMPACTION_PAIRS)  # e.g. its first schedule failed
    engine.gate.set()
    later = plan.ordered(CONFIGS[0], COMPACTION_PAIRS)[-1]
    assert runner.run("t", CONFIGS[0], later).setup == CONFIGS[0]
    runner.close()
    assert len(engine.created) == 2, engine.created  # the configuration's first run, and the one asked again


class Metered(DeltaModelEngine):
    """The model engine letting ``allowed`` runs create their table; later ones wait for more."""

    def __init__(self, preset: Preset) -> None:
        super().__init__(preset)
        self.allowed = 1
        self.more = threading.Condition()
        self.created: list[str] = []

    def create_table(self, name: str, setup: DeltaSetup) -> TableRead:
        with self.more:
            assert self.more.wait_for(lambda: len(self.created) < self.allowed, 600), "hang guard"
            self.created.append(name)
        return super().create_table(name, setup)

    def allow(self, n: int) -> None:
        with self.more:
            self.allowed = n
            self.more.notify_all()


def test_a_failing_check_leaves_its_other_schedules_unrun() -> None:
    engine = Metered(DELTA_RS_1_6)
    plan = delta_plan(DELTA_RS_1_6)
    runner = ScheduleRunner(engine, plan)
    runner.prefetch(plan.work([Planned(CONFIGS[0], COMPACTION_PAIRS)]))
    assert first_finding(runner, "t", CONFIGS[0], COMPACTION_PAIRS) is not None  # its first run: two OPTIMIZEs
    engine.allow(len(COMPACTION_PAIRS.schedules))
    runner.close()
    # its first run, and at most the one the pool had already taken: none of the 16 after it
    assert 1 <= len(engine.created) <= 2, engine.created


@pytest.mark.parametrize("setup", CONFIGS, ids=config_id)
def test_the_parts_of_the_exhaustive_check_hold_each_schedule_once(setup: DeltaSetup) -> None:
    """The exhaustive check is cut into parts (one check each, so that ``--shard`` can balance them):
    together they run every schedule of the whole scenario exactly once, none more than the cap."""
    whole = EVERY_TWO_OPERATION_SCHEDULE.schedules_on(setup)
    parts = [p.schedules_on(setup) for p in slices(EVERY_TWO_OPERATION_SCHEDULE, setup)]
    assert len(parts) > 1, "a configuration whose exhaustive check was not cut"
    held = [s for p in parts for s in p]
    assert len(held) == len(whole) and set(held) == set(whole), "parts that lose or repeat a schedule"
    assert max(len(p) for p in parts) <= SLICE_SCHEDULES
