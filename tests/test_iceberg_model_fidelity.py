"""FizzBee's behaviours in lakecert's Iceberg model (issue #17): non-key predicates, re-inserts and
no dangling delete files, each failing on a faulty preset and holding on the corrected one; and
FizzBee's workload judged by lakecert's rules."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.contract.iceberg import Isolation, Mode, Operation, OpKind, TableSetup
from conformance.history import AnomalyKind, History, OpRecord, ReadRecord, SerialOrder, check
from conformance.model.iceberg import CORRECTED, SPARK, Bounds, IcebergModel, operations
from conformance.schedules.enumerate import explore
from reference_impl.faults.engine_faults import RowDeltaSkipsDataFilesExist

MOR, COW = Mode.MERGE_ON_READ, Mode.COPY_ON_WRITE
FIZZBEE = Bounds(predicates=True, reinsert=True, must_match=True)
LEE = ("lee", "red", "A")


def _insert_then_blind_delete(read_at_2: tuple[tuple[str, str, str], ...]) -> History:
    """T0 inserts lee at v1; T1, started at v0 where lee did not exist, deletes lee at v2."""
    ops = (
        OpRecord("T0", OpKind.INSERT, "lee", LEE, 0, 1),
        OpRecord("T1", OpKind.DELETE, "lee", start_version=0, commit_version=2),
    )
    reads = (ReadRecord(0, ()), ReadRecord(1, (LEE,)), ReadRecord(2, read_at_2))
    return History(0, (), ops, reads)


@pytest.mark.parametrize("order", [SerialOrder.ANY, SerialOrder.COMMIT])
def test_a_delete_that_matched_nothing_may_remove_a_concurrent_insert(order: SerialOrder) -> None:
    # Spark's metadata-only DELETE, retried after the INSERT committed, removes the inserted row:
    # that is the serial commit order INSERT then DELETE, not an anomaly (the dropped
    # ICE-READS-IN-COMMIT-ORDER rule called it one). Keeping the row is the other serial order.
    assert check(_insert_then_blind_delete(()), order) == []
    assert check(_insert_then_blind_delete((LEE,)), SerialOrder.ANY) == []
    assert [a.kind for a in check(_insert_then_blind_delete((LEE,)), SerialOrder.COMMIT)] == [
        AnomalyKind.NOT_COMMIT_ORDER
    ]


def test_non_key_predicates_touch_every_matching_row() -> None:
    delete_red = OpRecord("T0", OpKind.DELETE, None, start_version=1, commit_version=2, where=(1, "red"))
    rows = (("jack", "red", "A"), ("jill", "blue", "A"))
    history = History(1, rows, (delete_red,), (ReadRecord(1, rows), ReadRecord(2, (rows[1],))))
    assert check(history, SerialOrder.COMMIT) == []
    wrong = replace(history, reads=(ReadRecord(1, rows), ReadRecord(2, rows)))
    assert [a.row_id for a in check(wrong, SerialOrder.ANY)] == ["jack"]


def test_the_menu_has_non_key_predicates_and_reinserts() -> None:
    model = IcebergModel(TableSetup(MOR, MOR, Isolation.SNAPSHOT, 2, ((("jack", "red", "A"),),)), CORRECTED)
    world = model.initial(2)
    assert not any(o.kind is OpKind.INSERT for o in operations(FIZZBEE, world))  # jack is there
    assert Operation(OpKind.DELETE, where=(1, "red")) in operations(FIZZBEE, world)
    assert Operation(OpKind.DELETE, where=(1, "blue")) not in operations(FIZZBEE, world)  # matches nothing
    deleted = model.advance(
        model.advance(model.advance(model.start(world, 0, Operation(OpKind.DELETE, "jack")), 0), 0), 0
    )
    deleted = model.advance(deleted, 0)
    assert deleted.metadata.version == 2
    assert any(o.kind is OpKind.INSERT and o.id == "jack" for o in operations(FIZZBEE, deleted))


@pytest.mark.parametrize("isolation", list(Isolation))
def test_fizzbee_workload_holds_on_the_corrected_preset(isolation: Isolation) -> None:
    result = explore(IcebergModel(TableSetup(MOR, MOR, isolation, 2), CORRECTED), FIZZBEE)
    assert result.counterexample is None and result.states > 1000


@pytest.mark.parametrize(
    ("isolation", "found"),
    [(Isolation.SNAPSHOT, {AnomalyKind.RESURRECTED_ROW}), (Isolation.SERIALIZABLE, None)],
)
def test_fizzbee_workload_on_the_spark_preset(isolation: Isolation, found: set[AnomalyKind] | None) -> None:
    # FizzBee's verdicts on its own workload: a resurrected row under snapshot isolation, none
    # found under serializable isolation (its data-conflict check catches the insert races)
    result = explore(IcebergModel(TableSetup(MOR, MOR, isolation, 2), SPARK), FIZZBEE, stop_at_first=True)
    kinds = None if result.counterexample is None else {a.kind for a in result.counterexample.anomalies}
    assert kinds == found


def test_a_delete_file_for_a_compacted_data_file_dangles() -> None:
    setup = TableSetup(MOR, MOR, Isolation.SNAPSHOT, 2)
    limits = Bounds(max_write_ops=2, max_compactions=1)
    found = explore(IcebergModel(setup, RowDeltaSkipsDataFilesExist.PRESET), limits, stop_at_first=True)
    assert found.counterexample is not None
    assert AnomalyKind.DANGLING_DELETE in {a.kind for a in found.counterexample.anomalies}
    assert explore(IcebergModel(setup, CORRECTED), limits).counterexample is None
