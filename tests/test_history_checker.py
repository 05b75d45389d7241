"""The history checker on hand-written histories: what it accepts, what it flags and how."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.contract.iceberg import Operation, OpKind, Row
from conformance.history import (
    AnomalyKind,
    History,
    OpRecord,
    ReadRecord,
    ScheduleStep,
    SerialOrder,
    check,
    linearize,
)
from conformance.history.serial import ABSENT, apply

JACK_RED: Row = ("jack", "red", "A")
JACK_BLUE: Row = ("jack", "blue", "A")
INSERT = OpRecord("T0", OpKind.INSERT, "jack", JACK_RED, start_version=0, commit_version=1)
UPDATE = OpRecord("T1", OpKind.UPDATE, "jack", (None, "blue", None), start_version=1, commit_version=2)
DELETE = OpRecord("T2", OpKind.DELETE, "jack", start_version=1, commit_version=3)
STEPS = (
    ScheduleStep("set-up"),
    ScheduleStep("T0 commits", "T0"),
    ScheduleStep("T1 commits", "T1"),
    ScheduleStep("T3 touches jill", "T3"),
    ScheduleStep("T2 commits", "T2"),
)


def reads(*states: tuple[Row, ...]) -> tuple[ReadRecord, ...]:
    return tuple(ReadRecord(v, rows) for v, rows in enumerate(states))


def test_the_spec_history_is_linearized_per_column() -> None:
    sequential = OpRecord("T2", OpKind.DELETE, "jack", start_version=2, commit_version=3)
    history = History(ops=(INSERT, UPDATE, sequential), reads=reads((), (JACK_RED,), (JACK_BLUE,), ()))
    color = linearize(history)["jack"][0]
    assert color.column == "color"
    assert color.entries == ((None, 0), ("red", 1), ("blue", 2), (None, 3))
    assert check(history) == []


def test_resurrected_row_is_explained_with_its_operations_and_schedule() -> None:
    history = History(
        ops=(INSERT, UPDATE, DELETE), reads=reads((), (JACK_RED,), (JACK_BLUE,), (JACK_BLUE,)), schedule=STEPS
    )
    [anomaly] = check(history)
    assert (anomaly.kind, anomaly.row_id, anomaly.version) == (AnomalyKind.RESURRECTED_ROW, "jack", 3)
    assert anomaly.ops == ("T0", "T1", "T2")
    assert anomaly.observed == (JACK_BLUE,) and anomaly.allowed == (ABSENT,)
    assert anomaly.schedule == ("set-up", "T0 commits", "T1 commits", "T2 commits")
    assert anomaly.explanation and anomaly.report().startswith(anomaly.explanation)


def test_either_order_of_concurrent_writes_is_allowed() -> None:
    update_second = OpRecord("T1", OpKind.UPDATE, "jack", (None, "blue", None), start_version=1, commit_version=3)
    delete_first = OpRecord("T2", OpKind.DELETE, "jack", start_version=1, commit_version=2)
    history = History(ops=(INSERT, update_second, delete_first), reads=reads((), (JACK_RED,), (), ()))
    assert check(history) == []


def test_a_write_follows_what_its_starting_snapshot_saw() -> None:
    delete_after = OpRecord("T1", OpKind.DELETE, "jack", start_version=1, commit_version=2)
    history = History(ops=(INSERT, delete_after), reads=reads((), (JACK_RED,), (JACK_RED,)))
    [anomaly] = check(history)
    assert anomaly.kind is AnomalyKind.RESURRECTED_ROW


def test_snapshot_isolation_allows_what_serializable_forbids() -> None:
    blind_delete = OpRecord("T1", OpKind.DELETE, "jack", start_version=0, commit_version=2)
    history = History(ops=(INSERT, blind_delete), reads=reads((), (JACK_RED,), (JACK_RED,)))
    assert check(history, SerialOrder.ANY) == []
    assert [a.kind for a in check(history, SerialOrder.COMMIT)] == [AnomalyKind.NOT_COMMIT_ORDER]


def test_two_copies_of_a_row_are_a_duplicate() -> None:
    other = OpRecord("T2", OpKind.UPDATE, "jack", (None, None, "B"), start_version=1, commit_version=3)
    history = History(
        ops=(INSERT, UPDATE, other), reads=reads((), (JACK_RED,), (JACK_BLUE,), (JACK_BLUE, ("jack", "red", "B")))
    )
    assert [a.kind for a in check(history)] == [AnomalyKind.DUPLICATE_ROW]


def test_a_missing_row_is_lost() -> None:
    history = History(ops=(INSERT, UPDATE), reads=reads((), (JACK_RED,), ()))
    assert [a.kind for a in check(history)] == [AnomalyKind.LOST_ROW]


def test_wrong_values_without_any_write_are_flagged() -> None:
    history = History(1, (JACK_RED,), reads=(ReadRecord(1, (JACK_RED,)), ReadRecord(2, (JACK_BLUE,))))
    kinds = [a.kind for a in check(history)]
    assert kinds == [AnomalyKind.ORPHAN_VERSION, AnomalyKind.WRONG_VALUE]


def test_an_aborted_write_that_shows_is_named() -> None:
    aborted = OpRecord("T1", OpKind.UPDATE, "jack", (None, "blue", None), start_version=1, commit_version=None)
    history = History(ops=(INSERT, aborted), reads=reads((), (JACK_RED,), (JACK_BLUE,)))
    found = {a.kind: a for a in check(history)}
    assert set(found) == {AnomalyKind.ORPHAN_VERSION, AnomalyKind.ABORTED_WRITE_VISIBLE}
    assert found[AnomalyKind.ABORTED_WRITE_VISIBLE].ops == ("T0", "T1")


def test_two_commits_claiming_one_version_are_flagged() -> None:
    twin = OpRecord("T1", OpKind.INSERT, "jill", ("jill", "red", "A"), start_version=0, commit_version=1)
    history = History(ops=(INSERT, twin), reads=reads((), (JACK_RED,)))
    assert AnomalyKind.VERSION_REUSED in {a.kind for a in check(history)}


def test_compaction_changes_no_row_and_is_named_when_it_raced() -> None:
    compact = OpRecord("T1", OpKind.COMPACT, None, start_version=1, commit_version=2)
    delete = OpRecord("T2", OpKind.DELETE, "jack", start_version=1, commit_version=3)
    clean = History(ops=(INSERT, compact, delete), reads=reads((), (JACK_RED,), (JACK_RED,), ()))
    broken = History(ops=(INSERT, compact, delete), reads=reads((), (JACK_RED,), (JACK_RED,), (JACK_RED,)))
    assert check(clean) == []
    assert check(broken)[0].ops == ("T0", "T1", "T2")


def test_only_the_first_broken_version_of_a_row_is_reported() -> None:
    history = History(
        ops=(INSERT, UPDATE, DELETE), reads=reads((), (JACK_RED,), (JACK_BLUE,), (JACK_BLUE,), (JACK_BLUE,))
    )
    assert [(a.kind, a.version) for a in check(history)] == [
        (AnomalyKind.ORPHAN_VERSION, 4),
        (AnomalyKind.RESURRECTED_ROW, 3),
    ]


OPS = st.sampled_from(
    [
        Operation(OpKind.INSERT, "jack", JACK_RED),
        Operation(OpKind.UPDATE, "jack", (None, "blue", None)),
        Operation(OpKind.UPDATE, "jack", (None, None, "B")),
        Operation(OpKind.DELETE, "jack"),
        Operation(OpKind.COMPACT),
    ]
)


@settings(max_examples=100, deadline=None, database=None)
@given(ops=st.lists(OPS, max_size=8))
def test_every_serial_history_is_accepted_in_both_orders(ops: list[Operation]) -> None:
    state: tuple[Row, ...] = ()
    records, states = [], [state]
    for n, op in enumerate(ops):
        record = OpRecord(f"T{n}", op.kind, op.id, op.values, start_version=n, commit_version=n + 1)
        state = apply(record, state)
        records.append(record)
        states.append(state)
    history = History(ops=tuple(records), reads=reads(*states))
    assert check(history, SerialOrder.ANY) == [] and check(history, SerialOrder.COMMIT) == []
