"""Faulty clean-room Delta engines: each is the correct engine with ONE conflict rule broken the way
a real engine plausibly gets it wrong. ``VARIANTS`` names, per variant, the requirement of
``delta_row_conflicts.yaml`` it breaks (our reading of Delta's documentation)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from conformance.contract.delta_engine import CommitResult, Operation, OpKind
from tests.cleanroom_delta.engine import AddFile, CleanDeltaEngine, Commit, Level, Pending, Table
from tests.cleanroom_delta.target import CleanDeltaTarget


class IgnoreSharedRemoves(CleanDeltaEngine):
    """A winner's remove of a file the loser removes too is not compared (neither as a read nor as
    a delete): two rewrites of one file both land, and the second re-adds what the first deleted."""

    def checked_reads(self, p: Pending, w: Commit) -> frozenset[str]:
        return p.read_files - super().own_removes(p, w)

    def own_removes(self, p: Pending, w: Commit) -> frozenset[str]:
        return frozenset()


class SerializableSkipsBlindAppends(CleanDeltaEngine):
    """Serializable checked like WriteSerializable: a concurrent blind append is never read."""

    def checked_adds(self, p: Pending, w: Commit) -> tuple[AddFile, ...]:
        return () if w.blind_append or p.level is Level.SNAPSHOT else w.adds


class EveryAddBlind(CleanDeltaEngine):
    """Every concurrent add is taken for a blind append (the added-files check never runs)."""

    def checked_adds(self, p: Pending, w: Commit) -> tuple[AddFile, ...]:
        return ()


class MergeInsertIsBlind(CleanDeltaEngine):
    """A MERGE that inserts (no match) marks its commit as a blind append, since it only adds files;
    WriteSerializable losers then skip it."""

    def merge_insert(self, commit: Commit) -> Commit:
        return replace(commit, blind_append=True)


class OptimizeOverDeletes(CleanDeltaEngine):
    """OPTIMIZE rebases over a concurrent data-changing remove (it "changes no data", so it thinks it
    cannot conflict), and re-adds the rows the winner deleted."""

    def checked_reads(self, p: Pending, w: Commit) -> frozenset[str]:
        return frozenset() if p.level is Level.SNAPSHOT and w.data_change else p.read_files

    def own_removes(self, p: Pending, w: Commit) -> frozenset[str]:
        return frozenset() if p.level is Level.SNAPSHOT and w.data_change else super().own_removes(p, w)


class IgnoreNoDataChangeRemoves(CleanDeltaEngine):
    """A winner's removes with dataChange=false (a compaction) never conflict: two compactions, or a
    compaction and a row write, both rewrite the same files."""

    def delete_read_conflict(self, p: Pending, w: Commit) -> bool:
        return w.data_change and super().delete_read_conflict(p, w)

    def own_removes(self, p: Pending, w: Commit) -> frozenset[str]:
        return super().own_removes(p, w) if w.data_change else frozenset()


class DropWinnerDeletionVector(CleanDeltaEngine):
    """Row-level resolution of deletion vectors: two writes that delete disjoint rows of one file
    rebase, but the loser commits its own vector instead of the union, so the winner's rows return."""

    def conflict(self, p: Pending, w: Commit) -> str:
        if p.table.setup.deletion_vectors and self._disjoint_dv_updates(p, w):
            return ""
        return super().conflict(p, w)

    def _disjoint_dv_updates(self, p: Pending, w: Commit) -> bool:
        assert p.commit is not None
        shared = set(w.removes) & set(p.commit.removes)
        if not shared or w.metadata:
            return False
        snap = p.table.snapshot(p.start)
        mine = {a.path: a.dv - snap.get(a.path, frozenset()) for a in p.commit.adds if a.path in shared}
        theirs = {a.path: a.dv - snap.get(a.path, frozenset()) for a in w.adds if a.path in shared}
        return all(path in mine and path in theirs and not (mine[path] & theirs[path]) for path in shared)


class SkipFirstWinner(CleanDeltaEngine):
    """Rebasing from the wrong version: the check starts one version too late and never sees the
    commit that took the loser's version."""

    def winners(self, p: Pending, attempt: int) -> range:
        return range(attempt + 1, p.table.latest + 1)


class CheckOnlyLatestWinner(CleanDeltaEngine):
    """Only the newest commit is checked, not every commit since the snapshot (right with two
    writers, wrong with three)."""

    def winners(self, p: Pending, attempt: int) -> range:
        return range(p.table.latest, p.table.latest + 1)


class SnapshotAfterWinners(CleanDeltaEngine):
    """The loser takes the table's version at release for its snapshot (read after, not before the
    winners): there is nothing to check, and it commits actions planned on an older snapshot."""

    def first_attempt(self, p: Pending) -> int:
        return p.table.latest + 1


class CommitFileBeforeCheck(CleanDeltaEngine):
    """Writes its commit file at the next free version first, then runs the conflict check and
    reports the conflict, leaving the file (and its rows) in the table."""

    def commit(self, p: Pending) -> CommitResult:
        if p.commit is None:
            return CommitResult(False, None, "nothing to commit")
        version = p.table.latest + 1
        self.put_if_absent(p.table, version, p.commit)
        for winner in range(p.start + 1, version):
            reason = self.conflict(p, p.table.log[winner])
            if reason:
                return CommitResult(False, None, reason)
        return CommitResult(True, version)


class OverwriteCommitFile(CleanDeltaEngine):
    """The commit file is written with a plain put: a loser overwrites the winner's version."""

    def put_if_absent(self, t: Table, version: int, commit: Commit) -> bool:
        if version < len(t.log):
            t.log[version] = commit
        else:
            t.log.append(commit)
        return True


class RetryReappliesStaleUpdate(CleanDeltaEngine):
    """On a conflict an UPDATE retries on the new snapshot, but writes the rows it read before
    (finds the files anew, does not re-read the rows): the winner's change is lost."""

    def on_conflict(self, p: Pending, reason: str) -> Pending | None:
        if p.op.kind is not OpKind.UPDATE or p.predicate is None or p.commit is None:
            return None
        t, start = p.table, p.table.latest
        fresh = self.plan(t, p.op, start)
        if fresh.commit is None:
            return None
        stale_rows = t.files[p.commit.adds[-1].path]  # the updated rows as planned on the old read
        adds = (*fresh.commit.adds[:-1], AddFile(t.new_file(stale_rows)))
        return replace(fresh, commit=replace(fresh.commit, adds=adds))


class DeletionVectorReplaced(CleanDeltaEngine):
    """A write's new deletion vector holds only the rows it deletes, not those the file's old vector
    already deleted: an earlier DELETE's rows come back on the next write to that file."""

    def new_dv(self, old: frozenset[int], gone: frozenset[int]) -> frozenset[int]:
        return gone


class PhantomBlindRowWrites(CleanDeltaEngine):
    """An UPDATE or DELETE compares a concurrent commit's added rows with the ids of the rows it
    read, not with its predicate: a new row that matches a non-key predicate (a phantom) is missed."""

    def added_conflict(self, p: Pending, w: Commit) -> bool:
        if p.op.kind not in (OpKind.UPDATE, OpKind.DELETE):
            return super().added_conflict(p, w)
        ids = {r[0] for r in p.read_rows}
        return any(r[0] in ids for a in self.checked_adds(p, w) for _, r in p.table.live_rows(a.path, a.dv))


class RowLevelMergeIgnoresOverlap(CleanDeltaEngine):
    """Row-level resolution with row tracking and deletion vectors: a concurrent rewrite of rows this
    write read counts as "the same rows", and two vectors on one file are merged by union, but
    without checking that they delete different rows: two updates of one row both land."""

    def conflict(self, p: Pending, w: Commit) -> str:
        setup = p.table.setup
        if not (setup.deletion_vectors and setup.row_tracking) or w.metadata or p.commit is None:
            return super().conflict(p, w)
        shared = set(w.removes) & set(p.commit.removes)
        theirs = {a.path: a.dv for a in w.adds if a.path in shared}
        if set(theirs) != shared:
            return super().conflict(p, w)
        ids = {r[0] for r in p.read_rows}
        new_rows = [r for a in w.adds if a.path not in shared for _, r in p.table.live_rows(a.path, a.dv)]
        if p.predicate is not None and any(p.predicate.matches(r) and r[0] not in ids for r in new_rows):
            return "ConcurrentAppendException: a concurrent commit added rows this operation should have read"
        if set(w.removes) & (p.read_files - shared):
            return "ConcurrentDeleteReadException: a concurrent commit removed a file this operation read"
        adds = tuple(AddFile(a.path, a.dv | theirs[a.path]) if a.path in theirs else a for a in p.commit.adds)
        p.commit = replace(p.commit, adds=adds)
        return ""


class CompactionIgnoresDeletionVectors(CleanDeltaEngine):
    """OPTIMIZE copies every row of the files it compacts, also those their deletion vectors delete."""

    def plan_compaction(self, t: Table, op: Operation, start: int) -> Pending:
        snap = t.snapshot(start)
        unmasked = {p: frozenset[int]() for p in snap}
        pending = super().plan_compaction(t, op, start)
        if pending.commit is None or not pending.commit.adds:
            return pending
        rows = tuple(r for p in sorted(pending.read_files) for _, r in t.live_rows(p, unmasked[p]))
        return replace(pending, commit=replace(pending.commit, adds=(AddFile(t.new_file(rows)),)))


class ReportsAttemptedVersion(CleanDeltaEngine):
    """A rebased commit lands at the next free version but reports the version it first tried (the
    retry loop's bookkeeping keeps the old number): two commits claim one version."""

    def commit(self, p: Pending) -> CommitResult:
        result = super().commit(p)
        return CommitResult(True, p.start + 1) if result.committed else result


@dataclass(frozen=True)
class Variant:
    name: str
    expected: str  # the requirement it breaks (delta_row_conflicts.yaml)
    engine: type[CleanDeltaEngine]
    # Whether tests/test_cleanroom_delta.py runs it with the exhaustive and generated schedules: only
    # where the directed checks do not judge its rule (DELTA-ISOLATION-LEVEL) or miss it, to keep the
    # test lean; docs/mutation.md reports every variant under both budgets.
    exhaustive: bool = False


VARIANTS: tuple[Variant, ...] = (
    Variant("IgnoreSharedRemoves", "DELTA-NO-RESURRECTION", IgnoreSharedRemoves),
    Variant("SerializableSkipsBlindAppends", "DELTA-SERIALIZABLE-COMMIT-ORDER", SerializableSkipsBlindAppends),
    Variant("EveryAddBlind", "DELTA-WRITE-SERIALIZABLE-ORDER", EveryAddBlind),
    Variant("MergeInsertIsBlind", "DELTA-NO-DUPLICATE-ROW", MergeInsertIsBlind),
    Variant("OptimizeOverDeletes", "DELTA-COMPACTION-PRESERVES-ROWS", OptimizeOverDeletes),
    Variant("IgnoreNoDataChangeRemoves", "DELTA-COMPACTION-PRESERVES-ROWS", IgnoreNoDataChangeRemoves),
    Variant("DropWinnerDeletionVector", "DELTA-NO-RESURRECTION", DropWinnerDeletionVector),
    Variant("SkipFirstWinner", "DELTA-NO-RESURRECTION", SkipFirstWinner),
    Variant("CheckOnlyLatestWinner", "DELTA-ISOLATION-LEVEL", CheckOnlyLatestWinner),
    Variant("SnapshotAfterWinners", "DELTA-NO-RESURRECTION", SnapshotAfterWinners),
    Variant("CommitFileBeforeCheck", "DELTA-ABORT-LEAVES-NO-TRACE", CommitFileBeforeCheck),
    Variant("OverwriteCommitFile", "DELTA-ONE-VERSION-PER-COMMIT", OverwriteCommitFile),
    Variant("RetryReappliesStaleUpdate", "DELTA-ISOLATION-LEVEL", RetryReappliesStaleUpdate, exhaustive=True),
    Variant("DeletionVectorReplaced", "DELTA-ISOLATION-LEVEL", DeletionVectorReplaced, exhaustive=True),
    Variant("PhantomBlindRowWrites", "DELTA-SERIALIZABLE-COMMIT-ORDER", PhantomBlindRowWrites),
    Variant("RowLevelMergeIgnoresOverlap", "DELTA-NO-DUPLICATE-ROW", RowLevelMergeIgnoresOverlap),
    Variant("ReportsAttemptedVersion", "DELTA-ONE-VERSION-PER-COMMIT", ReportsAttemptedVersion),
    Variant("CompactionIgnoresDeletionVectors", "DELTA-COMPACTION-PRESERVES-ROWS", CompactionIgnoresDeletionVectors),
)


def _target(variant: Variant, exhaustive: bool) -> type[CleanDeltaTarget]:
    doc = variant.engine.__doc__ or ""
    attrs = {
        "name": f"cleanroom-delta-{variant.name}",
        "engine_class": variant.engine,
        "delta_exhaustive": exhaustive,
        "__doc__": doc,
    }
    return type(variant.name, (CleanDeltaTarget,), attrs)


# One target class per variant, importable as ``tests.cleanroom_delta.variants:<Name>Target``, and
# ``<Name>DirectedTarget``: the same engine with the directed checks only (``delta_exhaustive =
# False``, the budget a slow real engine declares), to see what the directed checks alone catch.
TARGETS: dict[str, type[CleanDeltaTarget]] = {f"{v.name}Target": _target(v, True) for v in VARIANTS}
TARGETS.update({f"{v.name}DirectedTarget": _target(v, False) for v in VARIANTS})
globals().update(TARGETS)
