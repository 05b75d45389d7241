"""The Iceberg model, its exploration, and the checks run on the model engine and its faults."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings

from conformance.checks.iceberg.harness import first_finding, scenarios_by_requirement
from conformance.checks.iceberg.scenarios import (
    ALL_KINDS,
    DATA_FILES,
    DELETE_JACK,
    UPDATE_JACK_COLOR,
    Scenario,
    config_id,
    race,
)
from conformance.contract.iceberg import IcebergEngine, Isolation, Mode, OpKind, TableSetup
from conformance.history import Anomaly, AnomalyKind, History, SerialOrder, check
from conformance.model.iceberg import CORRECTED, SPARK, Bounds, IcebergModel, history_of
from conformance.schedules.enumerate import HeldSchedule, explore, held_schedules, interleavings, serial_order_for
from conformance.schedules.iceberg_strategies import bounds, model_walks, table_setups, walk
from conformance.schedules.iceberg_strategies import held_schedules as iceberg_held_schedules
from reference_impl.faults.registry import Fault, all_faults
from reference_impl.iceberg import ModelEngine

MOR, COW = Mode.MERGE_ON_READ, Mode.COPY_ON_WRITE
# The spec's "Possible violation" parameters: MOR updates and deletes, snapshot isolation.
SPEC_TABLE = TableSetup(MOR, MOR, Isolation.SNAPSHOT, 2)
SPEC_BOUNDS = Bounds(writers=2, max_write_ops=3, ids=("jack",), colors=("red", "blue"), labels=("A",))
# The Iceberg engine variants (the Delta ones have tests/test_delta_model.py)
ENGINE_FAULTS = [f for f in all_faults().values() if f.side == "engine" and isinstance(f.cls(None), ModelEngine)]
# Smaller spaces for the other tables: jack exists after the set-up, then two concurrent writes.
JACK = ((("jack", "red", "A"),),)
TWO_WRITES = Bounds(max_write_ops=2)
EVERY_TABLE = [TableSetup(u, d, i, v, JACK) for u, d, i, v in itertools.product(Mode, Mode, Isolation, (2, 3))]


def _engine(fault: Fault) -> IcebergEngine:
    engine = fault.cls(None)
    assert isinstance(engine, IcebergEngine)
    return engine


class _Collector:
    """A judge that finds nothing and remembers every history it was shown."""

    def __init__(self) -> None:
        self.histories: set[History] = set()

    def __call__(self, history: History) -> list[Anomaly]:
        self.histories.add(history)
        return []


def test_exhaustive_spark_finds_the_resurrected_row() -> None:
    result = explore(IcebergModel(SPEC_TABLE, SPARK), SPEC_BOUNDS, stop_at_first=True)
    assert result.counterexample is not None
    anomaly = result.counterexample.anomalies[0]
    committed = result.counterexample.history.committed
    assert (anomaly.kind, anomaly.row_id, anomaly.version) == (AnomalyKind.RESURRECTED_ROW, "jack", 3)
    assert [o.kind for o in committed] == [OpKind.INSERT, OpKind.UPDATE, OpKind.DELETE]
    assert [o.start_version for o in committed[1:]] == [1, 1]
    assert set(anomaly.ops) == {o.name for o in committed}
    assert len(anomaly.schedule) == len(result.counterexample.actions)


def test_exhaustive_corrected_finds_nothing() -> None:
    result = explore(IcebergModel(SPEC_TABLE, CORRECTED), SPEC_BOUNDS)
    assert result.counterexample is None
    assert result.schedules is not None and result.final_states > 0 and result.schedules >= result.final_states


@pytest.mark.parametrize("isolation, version", [(Isolation.SNAPSHOT, 3), (Isolation.SERIALIZABLE, 2)])
def test_spark_resurrection_needs_format_v2_and_snapshot_isolation(isolation: Isolation, version: int) -> None:
    # v3 always checks concurrent deletion vectors; serializable sees the UPDATE's new data file
    result = explore(IcebergModel(TableSetup(MOR, MOR, isolation, version, JACK), SPARK), TWO_WRITES)
    assert result.counterexample is None


def test_spark_resurrection_from_a_set_up_row() -> None:
    result = explore(IcebergModel(TableSetup(MOR, MOR, Isolation.SNAPSHOT, 2, JACK), SPARK), TWO_WRITES)
    assert result.counterexample is not None
    assert result.counterexample.anomalies[0].kind is AnomalyKind.RESURRECTED_ROW


@pytest.mark.parametrize("setup", EVERY_TABLE, ids=config_id)
def test_exhaustive_corrected_two_writes_find_nothing(setup: TableSetup) -> None:
    assert explore(IcebergModel(setup, CORRECTED), TWO_WRITES).counterexample is None


@pytest.mark.parametrize("setup", EVERY_TABLE, ids=config_id)
def test_exhaustive_corrected_write_and_compaction_find_nothing(setup: TableSetup) -> None:
    result = explore(IcebergModel(setup, CORRECTED), Bounds(max_write_ops=1, max_compactions=1))
    assert result.counterexample is None


def test_reduction_keeps_every_history() -> None:
    model = IcebergModel(TableSetup(MOR, COW, Isolation.SNAPSHOT, 2, JACK), SPARK)
    limits = Bounds(max_write_ops=2, max_compactions=1, colors=("blue",))
    reduced, full = _Collector(), _Collector()
    explore(model, limits, reduce=True, judge=reduced)
    explore(model, limits, reduce=False, judge=full)
    assert reduced.histories == full.histories and reduced.histories


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(limits=bounds(), setup=table_setups(), choices=model_walks())
def test_generated_walks_under_corrected_find_nothing(limits: Bounds, setup: TableSetup, choices: list[int]) -> None:
    model = IcebergModel(setup, CORRECTED)
    world, _ = walk(model, limits, choices)
    assert check(history_of(world), serial_order_for(model)) == []


def test_interleavings_are_deterministic_and_complete() -> None:
    two = list(interleavings(2))
    assert two == list(interleavings(2))
    assert len(two) == 4 and len(held_schedules([DELETE_JACK] * 3)) == len(list(interleavings(3)))
    assert all({e for e in s} == {("begin", 0), ("begin", 1), ("release", 0), ("release", 1)} for s in two)


def test_engine_holds_commits_until_released() -> None:
    engine = ModelEngine(CORRECTED)
    engine.create_table(
        "t", TableSetup(MOR, MOR, Isolation.SNAPSHOT, 2, ((("jack", "red", "A"), ("jill", "red", "A")),))
    )
    update = engine.begin("t", 0, UPDATE_JACK_COLOR)
    delete = engine.begin("t", 1, DELETE_JACK)
    assert engine.read("t").version == 1
    assert (update.release().committed, delete.release().committed) == (True, False)
    assert engine.read("t").rows == (("jill", "red", "A"), ("jack", "blue", "A"))


def test_spark_engine_commits_both_and_resurrects() -> None:
    engine = ModelEngine(SPARK)
    engine.create_table(
        "t", TableSetup(MOR, MOR, Isolation.SNAPSHOT, 2, ((("jack", "red", "A"), ("jill", "red", "A")),))
    )
    update, delete = engine.begin("t", 0, UPDATE_JACK_COLOR), engine.begin("t", 1, DELETE_JACK)
    assert [update.release().version, delete.release().version] == [2, 3]
    assert ("jack", "blue", "A") in engine.read("t", 3).rows


def test_a_race_names_its_operations_in_begin_order() -> None:
    schedule = race(UPDATE_JACK_COLOR, DELETE_JACK)
    assert schedule.events[:2] == (("begin", 0), ("begin", 1))
    assert [op for _, op in schedule.ops] == [UPDATE_JACK_COLOR, DELETE_JACK]


def test_every_check_passes_on_the_reference_engine() -> None:
    found = [
        (rid, config_id(setup))
        for rid, scenario in scenarios_by_requirement()
        for setup in scenario.configs
        if first_finding(ModelEngine(), "t", setup, scenario)
    ]
    assert found == []


@pytest.mark.parametrize("fault", ENGINE_FAULTS, ids=lambda f: f.name)
def test_every_engine_fault_is_caught_by_what_it_breaks(fault: Fault) -> None:
    caught = {
        rid
        for rid, scenario in scenarios_by_requirement()
        for setup in scenario.configs
        if first_finding(_engine(fault), "t", setup, scenario)
    }
    assert set(fault.breaks) <= caught


def test_every_check_configuration_is_failed_by_some_fault() -> None:
    unflagged = [
        (rid, config_id(setup))
        for rid, scenario in scenarios_by_requirement()
        for setup in scenario.configs
        if not any(first_finding(_engine(f), "t", setup, scenario) for f in ENGINE_FAULTS)
    ]
    assert unflagged == []


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(setup=table_setups(DATA_FILES), schedule=iceberg_held_schedules())
def test_generated_held_schedules_on_the_reference_engine_find_nothing(
    setup: TableSetup, schedule: HeldSchedule
) -> None:
    order = SerialOrder.COMMIT if setup.isolation is Isolation.SERIALIZABLE else SerialOrder.ANY
    scenario = Scenario((schedule,), ALL_KINDS, order)
    assert first_finding(ModelEngine(), "t", setup, scenario) is None


@settings(max_examples=60, deadline=None, database=None)
@given(schedule=iceberg_held_schedules())
def test_generated_held_schedules_are_well_formed(schedule: HeldSchedule) -> None:
    begins = [i for what, i in schedule.events if what == "begin"]
    releases = [i for what, i in schedule.events if what == "release"]
    assert begins == list(range(len(schedule.ops))) and sorted(releases) == begins
    held: set[int] = set()
    for what, i in schedule.events:
        writer = schedule.ops[i][0]
        assert what == "release" or writer not in {schedule.ops[j][0] for j in held}
        held = held | {i} if what == "begin" else held - {i}
