"""The conflict check of one losing transaction against one winning commit, and its rebase.

``check`` returns the transaction rebased onto the winner (as if it had started at the winner's
version), or the reason it must abort. Isolation levels as Delta documents them
(docs.delta.io "Concurrency control"; ``ConflictChecker``): Serializable checks every file a
winner added; WriteSerializable skips blind appends unless the transaction changed metadata; a
transaction without data change runs at SnapshotIsolation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from conformance.contract.delta_engine import DeltaSetup, IsolationLevel
from conformance.contract.iceberg import OpKind, Row
from conformance.model.delta.actions import Add, Commit, Protocol, Remove
from conformance.model.delta.log import Table
from conformance.model.delta.presets import Preset
from conformance.model.delta.transaction import Transaction


@dataclass(frozen=True)
class Conflict:
    exception: str  # the Delta exception a Spark writer would throw
    reason: str

    def __str__(self) -> str:
        return f"{self.exception}: {self.reason}"


def check(preset: Preset, setup: DeltaSetup, table: Table, txn: Transaction, winner: Commit) -> Transaction | Conflict:
    if txn.op.kind is OpKind.COMPACT and not preset.optimize_checks:
        return txn
    v = winner.version
    if preset.check_protocol and winner.protocol and any(isinstance(a, Protocol) for a in txn.actions):
        return Conflict("ProtocolChangedException", f"the protocol changed at v{v}")
    if preset.check_metadata and winner.metadata is not None:
        return Conflict("MetadataChangedException", f"the metadata changed at v{v}")
    if preset.check_app_ids and {t.app_id for t in winner.txns} & txn.read_app_ids:
        return Conflict("ConcurrentTransactionException", f"an application it read committed again at v{v}")
    row_level = preset.row_level_concurrency and setup.deletion_vectors and setup.row_tracking
    added = _added_file_conflict(preset, setup, table, txn, winner, row_level)
    if added is not None:
        return added
    resolved: set[str] = set()
    for r in winner.removes:
        if not r.data_change and not preset.quiet_removes_conflict:
            continue
        shared = r.path in txn.removed_paths
        if preset.ignore_shared_removes and shared:
            continue
        if row_level and _resolvable(txn, winner, r):
            resolved |= {r.path} if shared else set()
            continue
        if preset.check_deleted_read and (r.path in txn.read_files or txn.read_whole_table):
            return Conflict("ConcurrentDeleteReadException", f"{r.path}, which it read, was removed at v{v}")
        if preset.check_deleted_deleted and shared:
            return Conflict("ConcurrentDeleteDeleteException", f"{r.path}, which it removes, was removed at v{v}")
    return _rebase(preset, txn, winner, resolved)


def _added_file_conflict(
    preset: Preset, setup: DeltaSetup, table: Table, txn: Transaction, winner: Commit, row_level: bool
) -> Conflict | None:
    if not preset.check_added_files or not txn.reads:  # a blind append reads nothing
        return None
    level: IsolationLevel | None = setup.isolation
    if preset.no_data_change_is_snapshot and not txn.data_change:
        level = None  # SnapshotIsolation
    # Delta's changedDataAddedFiles: every add of a commit that is not a blind append, OPTIMIZE's too
    changed = [] if winner.blind_append else list(winner.adds)
    blind = list(winner.adds) if winner.blind_append else []
    if level is IsolationLevel.WRITE_SERIALIZABLE and not txn.metadata_changed:
        checked = changed
        if preset.write_serializable_all_blind:
            checked = []  # the faulty variant: every added file taken for a blind append
    elif level is IsolationLevel.SERIALIZABLE and preset.serializable_skips_blind_appends:
        checked = changed
    elif level is not None:
        checked = changed + blind
    else:
        checked = []
    if row_level:
        # deletion-vector updates are judged row by row below; new files by their rows
        removed = {r.path for r in winner.removes}
        checked = [a for a in checked if a.path not in removed and _holds(table, a, txn.op.matches)]
    if not preset.added_rows_by_predicate and txn.op.kind in (OpKind.UPDATE, OpKind.DELETE):
        # the faulty variant: an added row conflicts only if it has an id the transaction matched
        # (or the id its predicate names), so a phantom of a non-key predicate passes
        ids = txn.matched_ids | frozenset(i for i in (txn.op.id,) if i is not None)
        checked = [a for a in checked if _holds(table, a, lambda r: r[0] in ids)]
    if checked:  # unpartitioned: without row-level resolution every added file matches the predicate
        return Conflict(
            "ConcurrentAppendException", f"{checked[0].path}, added at v{winner.version}, should have been read"
        )
    return None


def _holds(table: Table, add: Add, matches: Callable[[Row], bool]) -> bool:
    """Whether a live row of ``add`` satisfies ``matches`` (the transaction's predicate)."""
    return any(matches(r) for pos, r in enumerate(table.files[add.path]) if pos not in add.dv)


def _readded(winner: Commit, path: str) -> Add | None:
    return next((a for a in winner.adds if a.path == path), None)


def _resolvable(txn: Transaction, winner: Commit, removed: Remove) -> bool:
    """The winner only grew ``removed``'s deletion vector, by rows this transaction does not change,
    and this transaction keeps the file (it does not rewrite it): the overlap is row-level only."""
    again = _readded(winner, removed.path)
    if again is None or not removed.data_change or not again.dv >= removed.dv:
        return False
    if removed.path in txn.removed_paths and _readded_by(txn, removed.path) is None:
        return False  # it rewrites or drops the file as it read it: the winner's deletes would be lost
    return not (again.dv - removed.dv) & txn.touched.get(removed.path, frozenset())


def _readded_by(txn: Transaction, path: str) -> Add | None:
    return next((a for a in txn.actions if isinstance(a, Add) and a.path == path), None)


def _rebase(preset: Preset, txn: Transaction, winner: Commit, resolved: set[str]) -> Transaction:
    """Deletion-vector updates of files the winner also updated now start from the winner's vector."""
    if not resolved:
        return txn
    actions = []
    for a in txn.actions:
        w = _readded(winner, a.path) if isinstance(a, Add | Remove) and a.path in resolved else None
        if isinstance(a, Remove) and w is not None:
            a = Remove(a.path, w.dv, a.data_change)
        elif isinstance(a, Add) and w is not None and preset.merge_winner_dvs:
            a = Add(a.path, a.dv | w.dv, a.data_change)
        actions.append(a)
    return txn.with_actions(tuple(actions))
