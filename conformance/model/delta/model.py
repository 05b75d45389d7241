"""The executable Delta model: one table, writers that plan an operation on a snapshot, then commit
by writing ``_delta_log/<version>.json`` only if absent (PROTOCOL.md "Delta Log Entries": mutual
exclusion of version files). A writer that finds its version taken checks the winning commit
(``conflicts.check``) and either rebases onto it and tries the next version or aborts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.contract.delta_engine import DeltaSetup
from conformance.contract.iceberg import CommitResult, Operation, Row, TableRead
from conformance.model.delta.actions import Add, Commit, CommitInfo, Metadata, Protocol
from conformance.model.delta.conflicts import Conflict, check
from conformance.model.delta.log import Table
from conformance.model.delta.presets import CORRECTED, Preset
from conformance.model.delta.transaction import Transaction, plan


def _protocol(setup: DeltaSetup) -> Protocol:
    """Table features need reader 3 / writer 7 (PROTOCOL.md "Table Features")."""
    features = {"deletionVectors"} if setup.deletion_vectors else set()
    features |= {"rowTracking", "domainMetadata"} if setup.row_tracking else set()
    return Protocol(3, 7, frozenset(features)) if features else Protocol(1, 2)


def _metadata(setup: DeltaSetup) -> Metadata:
    config = {"delta.isolationLevel": setup.isolation.value}
    if setup.deletion_vectors:
        config["delta.enableDeletionVectors"] = "true"
    if setup.row_tracking:
        config["delta.enableRowTracking"] = "true"
    return Metadata(tuple(sorted(config.items())))


@dataclass
class DeltaModel:
    setup: DeltaSetup
    preset: Preset = CORRECTED
    table: Table = field(default_factory=Table)

    def __post_init__(self) -> None:
        create = (_protocol(self.setup), _metadata(self.setup), CommitInfo("CREATE TABLE"))
        self.table.commits.append(Commit(0, create, "set-up"))
        if self.setup.data_files:
            adds = []
            for i, rows in enumerate(self.setup.data_files):
                self.table.write_file(f"setup-{i}.parquet", rows)
                adds.append(Add(f"setup-{i}.parquet"))
            self.table.commits.append(Commit(1, (*adds, CommitInfo("WRITE", is_blind_append=True)), "set-up"))

    def begin(self, name: str, op: Operation) -> Transaction:
        """Plan ``op`` on the latest snapshot: its data files are written, its commit is not."""
        return plan(self.table, self.table.snapshot(), name, op, self.setup.deletion_vectors)

    def commit(self, txn: Transaction) -> CommitResult:
        """Write the commit at the first free version after its snapshot, checking every winner."""
        if all(isinstance(a, CommitInfo) for a in txn.actions):
            # Delta's commitIfNeeded: a write that changes nothing commits nothing (no version)
            return CommitResult(False, None, "nothing to commit: no version written")
        if not self.preset.check_before_write:
            return self._write_then_check(txn)
        base = txn.start_version
        while True:
            target = base + 1 if self.preset.put_if_absent else txn.start_version + 1
            if target > self.table.latest or not self.preset.put_if_absent:
                self._write(target, txn)
                return CommitResult(True, target)
            outcome = check(self.preset, self.setup, self.table, txn, self.table.commits[target])
            if isinstance(outcome, Conflict):
                return CommitResult(False, None, str(outcome))
            txn, base = outcome, target

    def _write(self, version: int, txn: Transaction) -> None:
        commit = Commit(version, txn.actions, txn.name)
        if version <= self.table.latest:
            self.table.commits[version] = commit  # the faulty variant overwrites a version file
        else:
            self.table.commits.append(commit)

    def _write_then_check(self, txn: Transaction) -> CommitResult:
        """The faulty order: take the next version, then find the conflict and report an abort."""
        target = self.table.latest + 1
        self._write(target, txn)
        for v in range(txn.start_version + 1, target):
            outcome = check(self.preset, self.setup, self.table, txn, self.table.commits[v])
            if isinstance(outcome, Conflict):
                return CommitResult(False, None, str(outcome))
            txn = outcome
        return CommitResult(True, target)

    def read(self, version: int | None = None) -> TableRead:
        snap = self.table.snapshot(version)
        rows: tuple[Row, ...] = tuple(r for _, _, r in self.table.live_rows(snap))
        return TableRead(snap.version, rows)
