"""The history checker's Delta additions: MERGE (upsert), a row-neutral metadata change, and the
WriteSerializable order (commit order, except that a blind append may move after a later write)."""

from __future__ import annotations

from conformance.contract.iceberg import OpKind
from conformance.history import AnomalyKind, History, OpRecord, ReadRecord, SerialOrder, check

JACK = ("jack", "red", "A")
LEE = ("lee", "red", "A")
LEE_BLUE = ("lee", "blue", "B")


def _history(*ops: OpRecord, final: tuple[tuple[str, str, str], ...]) -> History:
    last = max(o.commit_version or 1 for o in ops)
    reads = tuple(ReadRecord(v, final if v == last else ()) for v in range(1, last + 1) if v == last)
    return History(1, (JACK,), ops, reads)


def _kinds(history: History, order: SerialOrder) -> list[AnomalyKind]:
    return [a.kind for a in check(history, order)]


def test_merge_upserts() -> None:
    merge = OpRecord("T0", OpKind.MERGE, "jack", ("jack", "blue", "B"), 1, 2)
    assert _kinds(_history(merge, final=(("jack", "blue", "B"),)), SerialOrder.COMMIT) == []
    insert = OpRecord("T0", OpKind.MERGE, "lee", LEE, 1, 2)
    assert _kinds(_history(insert, final=(JACK, LEE)), SerialOrder.COMMIT) == []
    assert _kinds(_history(insert, final=(JACK,)), SerialOrder.COMMIT) == [AnomalyKind.LOST_ROW]


def test_metadata_change_touches_no_row() -> None:
    meta = OpRecord("T0", OpKind.METADATA, None, start_version=1, commit_version=2)
    assert _kinds(_history(meta, final=(JACK,)), SerialOrder.COMMIT) == []


def test_blind_append_may_move_after_a_write_that_missed_it() -> None:
    """INSERT lee at v2, MERGE lee (from v1) at v3 inserting a second lee: WriteSerializable allows
    it (MERGE then INSERT), Serializable does not (commit order updates the one lee)."""
    ops = (OpRecord("T0", OpKind.INSERT, "lee", LEE, 1, 2), OpRecord("T1", OpKind.MERGE, "lee", LEE_BLUE, 1, 3))
    history = _history(*ops, final=(JACK, LEE, LEE_BLUE))
    assert _kinds(history, SerialOrder.WRITE_SERIALIZABLE) == []
    assert _kinds(history, SerialOrder.COMMIT) == [AnomalyKind.NOT_COMMIT_ORDER]


def test_writes_other_than_blind_appends_keep_commit_order() -> None:
    """MERGE lee (an insert) at v2, then a DELETE of lee from v1 at v3 that missed it: lee left
    over is DELETE-then-MERGE, an order WriteSerializable does not allow for two such writes."""
    ops = (
        OpRecord("T0", OpKind.MERGE, "lee", LEE, 1, 2),
        OpRecord("T1", OpKind.DELETE, "lee", start_version=1, commit_version=3),
    )
    history = _history(*ops, final=(JACK, LEE))
    assert _kinds(history, SerialOrder.ANY) == []  # DELETE then MERGE explains it
    assert _kinds(history, SerialOrder.WRITE_SERIALIZABLE) == [AnomalyKind.NOT_COMMIT_ORDER]


def test_a_blind_append_never_moves_before_an_earlier_commit() -> None:
    """MERGE lee blue (an insert) at v2, INSERT lee at v3: the appended row must be there besides it."""
    ops = (OpRecord("T0", OpKind.MERGE, "lee", LEE_BLUE, 1, 2), OpRecord("T1", OpKind.INSERT, "lee", LEE, 1, 3))
    history = _history(*ops, final=(JACK, LEE_BLUE))  # as if the INSERT ran first and the MERGE updated it
    assert _kinds(history, SerialOrder.ANY) == []
    assert _kinds(history, SerialOrder.WRITE_SERIALIZABLE) == [AnomalyKind.NOT_COMMIT_ORDER]
