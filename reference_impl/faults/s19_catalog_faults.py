"""Faults for the round-12 blind misses (issue 28, session 19): catalog. Each is another member of the
family a blind variant lives in, not a copy of it, and each is caught only along the dimension the
session widened: a listing whose latest version is read after its commits (a listing overlapping
commits of its table), a ratification written to the store only with the table's next one when another
table's ratification holds the store (commits to several tables at once, then a restart), a name check
read from a snapshot taken before the storage check (registrations of one name at once), a policy
rebuilt from a server default at start-up (policies across a restart), a content binding judged on the
actions other than ``commitInfo`` (tampering in every shape), and a drop that writes a checkpoint
pointer into a wholly published table's log (what a drop leaves in storage)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from conformance.contract.delta import (
    CommitConflict,
    GetCommitsResponse,
    InvalidRequest,
    MaintenancePolicy,
    RatifiedCommit,
    StagingTable,
    Storage,
    TableInfo,
    TableNotFound,
)
from reference_impl.catalog.catalog import ReferenceCatalog, _check_name, delta_file_uri
from reference_impl.catalog.transaction import TABLE_COLUMNS, TableRow
from reference_impl.faults.base import fault
from reference_impl.storage.commit_file import DEFAULT_READ_LIMITS, CommitFileError, ReadLimits, read_commit_file


@fault(
    "listing-latest-read-after-binding",
    "catalog",
    breaks=("CAT-LIST-CONTIGUOUS",),
    description="A listing reads the stored commits, checks each staged one's bytes against storage, and only"
    " then reads the table's latest version, in a second transaction: a ratification that lands while the"
    " files are read is stated as the latest but not listed (the run stops below its own latest). Every"
    " listing made while nobody commits to the table is exact.",
)
class ListingLatestReadAfterBinding(ReferenceCatalog):
    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        first = super().get_commits(table_id, start_version, end_version)
        with self._store.read() as tx:  # the bug: the latest version from a second snapshot
            row = self._registered(tx, table_id)
        if end_version is not None and end_version < row.latest_version:
            return first
        return GetCommitsResponse(first.commits, row.latest_version)


@fault(
    "piggybacked-ratification-in-memory",
    "catalog",
    breaks=("CAT-RATIFY-DURABLE",),
    description="A ratification arriving while another table's ratification holds the store is not made to"
    " wait: it is judged against the table's latest, acknowledged and kept in memory (served), to be written"
    " with the table's next ratification or publication mark. A restart before that loses it. Commits to one"
    " table, or to tables one after another, are all written before they are acknowledged.",
)
class PiggybackedRatificationInMemory(ReferenceCatalog):
    def __init__(
        self,
        db_path: str | Path,
        warehouse_uri: str,
        storage: Storage | None = None,
        *,
        read_limits: ReadLimits = DEFAULT_READ_LIMITS,
        durable: bool = True,
    ) -> None:
        super().__init__(db_path, warehouse_uri, storage, read_limits=read_limits, durable=durable)
        self._gate = threading.Lock()
        self._writing: dict[str, int] = {}  # table id -> ratifications of it holding the store
        self._pending: dict[str, list[RatifiedCommit]] = {}  # acknowledged, not yet written

    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        with self._gate:
            if published is None and any(t != table_id and n for t, n in self._writing.items()):
                with self._store.read() as tx:
                    row = self._registered(tx, table_id)
                pending = self._pending.setdefault(table_id, [])
                self._check_version(pending[-1].version if pending else row.latest_version, proposal.version)
                pending.append(proposal)  # the bug: acknowledged from memory
                return
            self._writing[table_id] = self._writing.get(table_id, 0) + 1
        try:
            self._flush(table_id)
            super()._ratify(table_id, proposal, published, content)
        finally:
            with self._gate:
                self._writing[table_id] -= 1

    def _flush(self, table_id: str) -> None:
        with self._gate:
            pending = self._pending.pop(table_id, [])
        for commit in pending:
            super()._ratify(table_id, commit, None, None)

    def mark_published(self, table_id: str, version: int) -> None:
        self._flush(table_id)
        super().mark_published(table_id, version)

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        resp = super().get_commits(table_id, start_version, end_version)
        with self._gate:
            pending = list(self._pending.get(table_id, []))
        if not pending:
            return resp
        lo = 0 if start_version is None else start_version
        hi = pending[-1].version if end_version is None else end_version
        extra = [c for c in pending if lo <= c.version <= hi]
        return GetCommitsResponse(resp.commits + extra, max(resp.latest_version, pending[-1].version))


@fault(
    "register-name-checked-in-snapshot",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="Registration checks that the name is free in the read snapshot it takes before checking"
    " storage for version 0, and its write transaction then gives the name to the table, taking it from any"
    " holder (an upsert), without checking again: two registrations of one name that overlap are both"
    " acknowledged and the name resolves to the later one. A taken name registered again later is refused.",
)
class RegisterNameCheckedInSnapshot(ReferenceCatalog):
    def register_table(self, name: str, table_id: str) -> TableInfo:
        _check_name(name)
        self._check_name_length(name)
        with self._store.read() as tx:
            row = tx.table(table_id) if isinstance(table_id, str) else None
            taken = tx.table_by_name(name)
        if row is None or row.name is not None or row.latest_version >= 0 or taken is not None:
            raise InvalidRequest(f"cannot register {table_id!r} as {name!r}")
        if self._storage is not None and not self._storage.exists(delta_file_uri(row.location, 0)):
            raise InvalidRequest(f"version 0 of {table_id} is not written")
        with self._store.write() as tx:
            tx.conn.execute("UPDATE tables SET name = NULL WHERE name = ?", (name,))  # the bug: an upsert
            tx.register(table_id, name, latest=0, published=0)
            row = tx.table(table_id)
        assert row is not None
        return self._table_info(row)


FALLBACK_POLICY = frozenset({"checkpoint"})


@fault(
    "policy-fallback-after-restart",
    "catalog",
    breaks=("CAT-MAINTENANCE-POLICY",),
    description="A table's default policy (everything allowed) is kept in memory for the tables created by"
    " the running process; a table loaded at start-up with no stored policy gets the server's fallback"
    " policy, checkpoints only: after a restart every table's policy changed though nobody set one. Every"
    " name in it is a known operation.",
)
class PolicyFallbackAfterRestart(ReferenceCatalog):
    def __init__(
        self,
        db_path: str | Path,
        warehouse_uri: str,
        storage: Storage | None = None,
        *,
        read_limits: ReadLimits = DEFAULT_READ_LIMITS,
        durable: bool = True,
    ) -> None:
        super().__init__(db_path, warehouse_uri, storage, read_limits=read_limits, durable=durable)
        self._created_here: set[str] = set()

    def create_staging_table(self) -> StagingTable:
        staging = super().create_staging_table()
        self._created_here.add(staging.table_id)
        return staging

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        policy = super().maintenance_policy(table_id)
        with self._store.read() as tx:
            row = self._existing(tx, table_id)
        if row.policy_json is None and table_id not in self._created_here:
            return MaintenancePolicy(allowed=FALLBACK_POLICY)  # the bug: loaded, so the fallback
        return policy


def _without_commit_info(content: bytes) -> list[object]:
    return [a for a in (json.loads(line) for line in content.splitlines() if line.strip()) if "commitInfo" not in a]


@fault(
    "bound-content-ignores-commit-info",
    "catalog",
    breaks=("CAT-RATIFIED-CONTENT-BOUND",),
    description="Binds a ratified staged commit to its bytes but judges whether the file changed by its"
    " actions other than commitInfo (the ones that change the table): a rewrite of the commitInfo alone (its"
    " in-commit timestamp, its operation) is served by location, so readers get the rewritten timestamp. Any"
    " change of another action, a truncation or an append is served as the kept bytes.",
)
class BoundContentIgnoresCommitInfo(ReferenceCatalog):
    def _as_ratified(self, location: str, commit: RatifiedCommit, kept: bytes | None) -> RatifiedCommit:
        if commit.staged_uri is None or kept is None:
            return commit
        try:
            now = read_commit_file(self._storage, commit.staged_uri, location, self.read_limits)
            if _without_commit_info(now) == _without_commit_info(kept):  # the bug
                return commit
        except (CommitFileError, ValueError):
            pass
        return RatifiedCommit(commit.version, None, kept, commit.in_commit_timestamp)


@fault(
    "drop-writes-last-checkpoint",
    "catalog",
    breaks=("CAT-DROP",),
    description="Dropping a table with nothing unpublished writes `_delta_log/_last_checkpoint` naming its"
    " latest version, so that path-based tools start there; no checkpoint is written, so a reader of the"
    " dropped table's files looks for one that does not exist. A table with unpublished commits is dropped"
    " without it.",
)
class DropWritesLastCheckpoint(ReferenceCatalog):
    def drop_table(self, name: str) -> None:
        with self._store.read() as tx:
            row = tx.table_by_name(name) if isinstance(name, str) else None
        super().drop_table(name)
        if row is not None and self._storage is not None and row.latest_published_version >= row.latest_version:
            pointer = json.dumps({"version": row.latest_version, "size": 0}).encode()
            self._storage.put(f"{row.location}/_delta_log/_last_checkpoint", pointer)


@fault(
    "resolve-name-as-like-pattern",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="Resolves a name with an unescaped SQL LIKE (the first match by name): '_' matches any one"
    " character, so a name no table has resolves to a registered one that differs there.",
)
class ResolveNameAsLikePattern(ReferenceCatalog):
    def resolve(self, name: str) -> TableInfo:
        with self._store.read() as tx:
            row = tx._execute(  # the fault: the name taken as a pattern, not compared
                f"SELECT {TABLE_COLUMNS} FROM tables WHERE name LIKE ? ORDER BY name LIMIT 1", (name,)
            ).fetchone()
        if row is None:
            raise TableNotFound(name)
        return self._table_info(TableRow(*row))


@fault(
    "conflict-deletes-the-losers-file",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="Deletes the staged file of a proposal it answers with a conflict (tidying up after the loser),"
    " without checking it is not the ratified commit's: a re-sent proposal loses the winner's own file.",
)
class ConflictDeletesTheLosersFile(ReferenceCatalog):
    def commit(self, table_id: str, version: int, *, staged_uri: str | None = None, **kw: Any) -> None:
        try:
            super().commit(table_id, version, staged_uri=staged_uri, **kw)
        except CommitConflict:
            if staged_uri is not None and self._storage is not None:
                self._storage.delete(staged_uri)  # the fault: whose file it is is not asked
            raise


@fault(
    "refused-registration-claims-staging",
    "catalog",
    breaks=("CAT-LIMIT-CLEAN-REFUSAL",),
    description="Marks a staging table as taken as a registration begins, before the name is judged, and"
    " keeps the mark when the name is refused: that staging table can never be named again.",
)
class RefusedRegistrationClaimsStaging(ReferenceCatalog):
    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._claimed: set[str] = set()

    def register_table(self, name: str, table_id: str) -> TableInfo:
        if table_id in self._claimed:
            raise InvalidRequest(f"staging table {table_id} is already being registered")
        self._claimed.add(table_id)  # the fault: never released when the registration is refused
        return super().register_table(name, table_id)


@fault(
    "drop-sweeps-unnamed-staging-tables",
    "catalog",
    breaks=("CAT-DROP",),
    description="A drop also sweeps every staging table not yet named (taken for abandoned creations): a"
    " creation in flight while another table is dropped can no longer be registered.",
)
class DropSweepsUnnamedStagingTables(ReferenceCatalog):
    def drop_table(self, name: str) -> None:
        super().drop_table(name)
        with self._store.write() as tx:  # the fault: whose staging tables these are is not asked
            tx.conn.execute("DELETE FROM tables WHERE name IS NULL AND latest_version < 0")
