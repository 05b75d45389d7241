"""The checker: every read must equal the table state of some serial order of the committed
operations (spec "Consistency checking"), and every version must come from one committed operation.

Limits: rows are judged one at a time, which is exact when every predicate names one id; with a
predicate on a non-key column (an operation touching several rows) each row must match some
serial order, not necessarily the same one for every row (``SerialOrder.COMMIT`` judges one
order, so it stays exact); a read
of a version older than the set-up is not judged; a version is assumed to be immutable, so each
version needs reading only once.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from enum import StrEnum

from conformance.contract.iceberg import OpKind
from conformance.history import explain
from conformance.history.anomalies import Anomaly, AnomalyKind
from conformance.history.events import History, OpRecord, ReadRecord
from conformance.history.serial import ROW_NEUTRAL, RowState, in_commit_order, reachable, touches


class SerialOrder(StrEnum):
    ANY = "any"  # any order in which an operation follows those committed before it started
    COMMIT = "commit"  # the order of commit versions: what serializable isolation promises
    # Delta's WriteSerializable: commit order, except that a blind append (INSERT) may be placed
    # after writes that committed later without seeing it
    WRITE_SERIALIZABLE = "write-serializable"


PROMISE = {
    SerialOrder.COMMIT: "serializable isolation",
    SerialOrder.WRITE_SERIALIZABLE: "WriteSerializable",
}


def check(history: History, order: SerialOrder = SerialOrder.ANY) -> list[Anomaly]:
    """Every anomaly of ``history``: version anomalies, dangling delete files, then per row the
    earliest broken read."""
    found = _version_anomalies(history) + _dangling_deletes(history)
    judged: set[str] = set()
    for read in sorted(history.reads, key=lambda r: r.version):
        if read.version < history.initial_version:
            continue
        for row_id in _row_ids(history, read):
            if row_id in judged:
                continue
            anomaly = _row_anomaly(history, read, row_id, order)
            if anomaly is not None:
                found.append(anomaly)
                judged.add(row_id)
    return found


def _row_ids(history: History, read: ReadRecord) -> list[str]:
    ids = {r[0] for r in history.initial_rows} | {r[0] for r in read.rows}
    return sorted(ids | {o.id for o in history.ops if o.id is not None and o.kind not in ROW_NEUTRAL})


def _row_anomaly(history: History, read: ReadRecord, row_id: str, order: SerialOrder) -> Anomaly | None:
    v = read.version
    ops = [o for o in history.committed if (o.commit_version or 0) <= v and touches(o, row_id)]
    initial: RowState = tuple(sorted(r for r in history.initial_rows if r[0] == row_id))
    observed: RowState = tuple(sorted(r for r in read.rows if r[0] == row_id))
    any_order = reachable(initial, ops)
    allowed = any_order
    if order is SerialOrder.COMMIT:
        allowed = frozenset({in_commit_order(initial, ops)})
    elif order is SerialOrder.WRITE_SERIALIZABLE:
        allowed = reachable(initial, ops, writes_in_commit_order=True)
    if observed in allowed:
        return None
    shown = explain.state_text(row_id, observed)
    leave = explain.outcomes_text(row_id, sorted(allowed))
    nearby = [o for o in history.aborted if touches(o, row_id) and o.start_version < v]
    others = _concurrent(history, [*ops, *nearby], v, row_id)
    story = explain.story(history, _in_time([*ops, *nearby, *others], v))
    if not ops:
        during = f" ({story})" if story else ""
        text = (
            f"no committed operation changed {row_id} after the set-up at v{history.initial_version}{during}, "
            f"yet the read at v{v} returns {shown} (the set-up left {leave})."
        )
        # Named by what the read shows (a row twice, a row gone, other values), as when operations did run.
        kind = _classify(SerialOrder.ANY, observed, allowed, any_order, ops)
        return _anomaly(history, kind, v, row_id, [*nearby, *others], observed, allowed, text)
    aborted = _aborted_explaining(nearby, initial, ops, observed)
    if aborted:
        text = (
            f"{story}; {explain.names(aborted)} aborted, yet the read at v{v} returns {shown}, which only a serial "
            f"order that includes an aborted operation gives (the committed ones leave {leave})."
        )
        involved = [*ops, *aborted, *others]
        return _anomaly(history, AnomalyKind.ABORTED_WRITE_VISIBLE, v, row_id, involved, observed, allowed, text)
    kind = _classify(order, observed, allowed, any_order, ops)
    if kind is AnomalyKind.NOT_COMMIT_ORDER:
        commits = ", ".join(f"{o.name} at v{o.commit_version}" for o in ops)
        text = (
            f"{story}; the read at v{v} returns {shown}, which some serial order gives but not the commit order "
            f"({commits}) that {PROMISE[order]} promises (commit order leaves {leave})."
        )
    else:
        verb = "still returns" if kind is AnomalyKind.RESURRECTED_ROW else "returns"
        serial = explain.names(_in_time([*ops, *others], v))
        text = (
            f"{story}; the read at v{v} {verb} {shown}, which no serial order of {serial} allows (they leave {leave})."
        )
    return _anomaly(history, kind, v, row_id, [*ops, *nearby, *others], observed, allowed, text)


def _classify(
    order: SerialOrder,
    observed: RowState,
    allowed: frozenset[RowState],
    any_order: frozenset[RowState],
    ops: Sequence[OpRecord],
) -> AnomalyKind:
    if order is not SerialOrder.ANY and observed in any_order:
        return AnomalyKind.NOT_COMMIT_ORDER
    if len(observed) > 1 and all(len(s) <= 1 for s in allowed):
        return AnomalyKind.DUPLICATE_ROW
    if observed and not any(allowed) and any(o.kind is OpKind.DELETE for o in ops):
        return AnomalyKind.RESURRECTED_ROW
    if not observed and all(allowed):
        return AnomalyKind.LOST_ROW
    return AnomalyKind.WRONG_VALUE


def _aborted_explaining(
    aborted: list[OpRecord], initial: RowState, ops: list[OpRecord], observed: RowState
) -> tuple[OpRecord, ...]:
    """The smallest set of ``aborted`` operations whose effect, added to the committed ones,
    explains the read; empty when none does."""
    for size in range(1, min(len(aborted), 3) + 1):
        for extra in itertools.combinations(aborted, size):
            if observed in reachable(initial, [*ops, *extra]):
                return extra
    return ()


def _anomaly(
    history: History,
    kind: AnomalyKind,
    version: int,
    row_id: str | None,
    ops: Sequence[OpRecord],
    observed: RowState,
    allowed: frozenset[RowState],
    text: str,
) -> Anomaly:
    involved = {o.name for o in ops}
    steps = tuple(s.text for s in history.schedule if s.op is None or s.op in involved)
    return Anomaly(kind, version, row_id, tuple(sorted(involved)), observed, tuple(sorted(allowed)), text, steps)


def _concurrent(history: History, ops: Sequence[OpRecord], version: int, row_id: str | None) -> list[OpRecord]:
    """Other committed operations that landed while ``ops`` ran (a compaction, a write to a row in
    the same data file): they may be why the row broke, so the minimal schedule keeps them."""
    since = min((o.start_version for o in ops), default=history.initial_version)
    return [
        o
        for o in history.committed
        if since < (o.commit_version or 0) <= version and o not in ops and (row_id is None or not touches(o, row_id))
    ]


def _in_time(ops: Sequence[OpRecord], version: int) -> list[OpRecord]:
    """Committed operations by version, then the aborted ones."""
    return sorted(ops, key=lambda o: (o.commit_version or version + 1, o.name))


def _version_anomalies(history: History) -> list[Anomaly]:
    found: list[Anomaly] = []
    by_version: dict[int, list[OpRecord]] = {}
    for op in history.committed:
        by_version.setdefault(op.commit_version or 0, []).append(op)
    for v, ops in sorted(by_version.items()):
        if len(ops) > 1:
            who = " and ".join(o.name for o in ops)
            text = (
                f"{who} {'both' if len(ops) == 2 else 'all'} report committing v{v}; each commit needs its own version."
            )
            found.append(_anomaly(history, AnomalyKind.VERSION_REUSED, v, None, ops, (), frozenset(), text))
    latest = max([r.version for r in history.reads] + list(by_version), default=history.initial_version)
    for v in range(history.initial_version + 1, latest + 1):
        if v not in by_version:
            suspects = [o for o in history.aborted if o.start_version < v]
            involved = _in_time([*suspects, *_concurrent(history, suspects, v, None)], v)
            story = f"; {explain.story(history, involved)}" if involved else ""
            text = f"v{v} exists but no committed operation created it{story}."
            found.append(_anomaly(history, AnomalyKind.ORPHAN_VERSION, v, None, involved, (), frozenset(), text))
    return found


def _dangling_deletes(history: History) -> list[Anomaly]:
    """The first version whose live delete files point nowhere (the files are immutable, so later
    versions that keep them say nothing new)."""
    read = next((r for r in sorted(history.reads, key=lambda r: r.version) if r.dangling), None)
    if read is None:
        return []
    v = read.version
    involved = [o for o in history.committed if o.commit_version is not None and o.commit_version <= v]
    involved = [o for o in involved if o.start_version < v]
    story = f" ({explain.story(history, _in_time(involved, v))})" if involved else ""
    text = (
        f"v{v} holds delete file(s) {', '.join(read.dangling)} whose data files are gone or too short{story}: "
        "the rows they meant to delete live on elsewhere, or they delete nothing."
    )
    return [_anomaly(history, AnomalyKind.DANGLING_DELETE, v, None, involved, (), frozenset(), text)]
