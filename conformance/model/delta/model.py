"""The executable Delta model: one table, writers that plan an operation on a snapshot, then commit
by writing ``_delta_log/<version>.json`` only if absent (PROTOCOL.md "Delta Log Entries": mutual
exclusion of version files). A writer that finds its version taken checks the winning commit
(``conflicts.check``) and either rebases onto it and tries the next version or aborts.

A catalog-managed table (``DeltaSetup.catalog_managed``) commits through its catalog instead
(catalog-managed RFC "Commit Protocol"): the writer stages its commit, the catalog ratifies it or
answers with the latest ratified version; the loser then gets the winners from the catalog (they
may be unpublished), checks each, and re-proposes a new staged commit at the next version or
aborts. Ratified commits reach ``_delta_log`` only when published (``publish``), which a schedule
may do before or after a loser retries.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.contract.delta_engine import DeltaSetup
from conformance.contract.iceberg import CommitResult, Operation, Row, TableRead
from conformance.model.delta.actions import Add, Commit, CommitInfo, Metadata, Protocol
from conformance.model.delta.catalog import Arbiter, ModelCatalog
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
    catalog: Arbiter | None = None  # a catalog-managed table's arbiter; the model's own by default

    def __post_init__(self) -> None:
        create = (_protocol(self.setup), _metadata(self.setup), CommitInfo("CREATE TABLE"))
        # Version 0 is written into _delta_log before the catalog registers the table (RFC
        # "Creating and Dropping Catalog-managed Tables"); later versions go through the catalog.
        self.table.commits.append(Commit(0, create, "set-up"))
        if self.setup.catalog_managed:
            self.table.catalog = self.catalog or ModelCatalog(ratify_once=self.preset.catalog_ratifies_once)
        if self.setup.data_files:
            adds = []
            for i, rows in enumerate(self.setup.data_files):
                self.table.write_file(f"setup-{i}.parquet", rows)
                adds.append(Add(f"setup-{i}.parquet"))
            initial = Commit(1, (*adds, CommitInfo("WRITE", is_blind_append=True)), "set-up")
            if self.table.catalog is None:
                self.table.commits.append(initial)
            elif self.table.propose(self.table.catalog, initial) is not None:
                raise RuntimeError("the catalog refused the set-up commit")
            else:
                self.table.publish(1)

    def begin(self, name: str, op: Operation) -> Transaction:
        """Plan ``op`` on the latest snapshot: its data files are written, its commit is not."""
        return plan(self.table, self.table.snapshot(), name, op, self.setup.deletion_vectors)

    def commit(self, txn: Transaction) -> CommitResult:
        """Write the commit at the first free version after its snapshot, checking every winner."""
        if all(isinstance(a, CommitInfo) for a in txn.actions):
            # Delta's commitIfNeeded: a write that changes nothing commits nothing (no version)
            return CommitResult(False, None, "nothing to commit: no version written")
        if self.table.catalog is not None:
            return self._commit_through_catalog(self.table.catalog, txn)
        if not self.preset.check_before_write:
            return self._write_then_check(txn)
        base = txn.start_version
        while True:
            target = base + 1 if self.preset.put_if_absent else txn.start_version + 1
            if target > self.table.latest or not self.preset.put_if_absent:
                self._write(target, txn)
                return CommitResult(True, target)
            if not self.preset.check_every_winner:
                target = self.table.latest  # the faulty variant: only the newest winner is checked
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

    def _commit_through_catalog(self, catalog: Arbiter, txn: Transaction) -> CommitResult:
        """Stage, propose, and on the catalog's conflict answer check the winners it reports."""
        base = txn.start_version
        unchecked: list[Commit] = []  # the faulty order's winners, checked after ratification
        while True:
            target = base + 1
            latest = self.table.propose(catalog, Commit(target, txn.actions, txn.name))
            if latest is None:  # ratified; the faulty order only now finds its conflict
                late = self._rebased(txn, unchecked)
                if isinstance(late, Conflict):
                    return CommitResult(False, None, str(late))
                return CommitResult(True, target)
            winners = self._winners(base + 1, latest)
            if not self.preset.check_before_write:
                unchecked += winners
            elif self.preset.recheck_before_repropose:
                outcome = self._rebased(txn, winners if self.preset.check_every_winner else winners[-1:])
                if isinstance(outcome, Conflict):
                    return CommitResult(False, None, str(outcome))
                txn = outcome
            base = latest

    def _rebased(self, txn: Transaction, winners: list[Commit]) -> Transaction | Conflict:
        """``txn`` checked against each winner in turn, rebased onto it, or the first conflict."""
        for winner in winners:
            outcome = check(self.preset, self.setup, self.table, txn, winner)
            if isinstance(outcome, Conflict):
                return outcome
            txn = outcome
        return txn

    def _winners(self, first: int, last: int) -> list[Commit]:
        """The commits ratified in [first, last]: the catalog serves the unpublished ones (RFC
        "Getting Ratified Commits from the Catalog"); the faulty variant lists ``_delta_log`` only."""
        if not self.preset.winners_from_catalog:
            return self.table.commits[first : min(last, self.table.published) + 1]
        return self.table.history()[first : last + 1]

    def publish(self, version: int) -> list[int]:
        """Publish the ratified commits up to ``version`` (nothing on a filesystem table)."""
        return self.table.publish(version)

    def read(self, version: int | None = None) -> TableRead:
        snap = self.table.snapshot(version)
        rows: tuple[Row, ...] = tuple(r for _, _, r in self.table.live_rows(snap))
        return TableRead(snap.version, rows)
