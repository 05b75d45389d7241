"""Faulty variants found only under the nemesis: restarts, lost answers, duplicate deliveries, crashed
clients, skewed clocks (issue 28 item 3). Each behaves correctly until the nemesis strikes."""

from __future__ import annotations

import calendar
import contextlib
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath

from conformance.contract.delta import (
    CatalogTimeout,
    CommitConflict,
    FileInfo,
    GetCommitsResponse,
    RatifiedCommit,
    Storage,
    TableInfo,
)
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.catalog.store import Tx
from reference_impl.delta import actions as act
from reference_impl.delta.client import Builder, Proposals, ReferenceClient
from reference_impl.delta.data_files import Row
from reference_impl.delta.log_paths import delta_uri, staged_dir
from reference_impl.delta.snapshot import LogReader, listed_log_files
from reference_impl.faults.base import fault
from reference_impl.storage.commit_file import DEFAULT_READ_LIMITS, ReadLimits

# ====================================================================== catalogs


@fault(
    "ratifications-in-memory",
    "catalog",
    ("CAT-RATIFY-DURABLE",),
    "Keeps ratified, unpublished commits in memory only (a write-back cache): a restart loses them.",
)
class RatificationsInMemory(ReferenceCatalog):
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
        self._memory: dict[str, dict[int, RatifiedCommit]] = {}
        self._memory_lock = threading.Lock()

    def _write_commit(self, tx: Tx, table_id: str, commit: RatifiedCommit) -> None:
        with self._memory_lock:
            self._memory.setdefault(table_id, {})[commit.version] = commit

    def _stored_commits(self, tx: Tx, table_id: str) -> list[RatifiedCommit]:
        with self._memory_lock:
            kept = dict(self._memory.get(table_id, {}))
        return [kept[v] for v in sorted(kept)]

    def _drop_on_publish(self, tx: Tx, table_id: str, published: int) -> None:
        super()._drop_on_publish(tx, table_id, published)
        with self._memory_lock:
            for version in [v for v in self._memory.get(table_id, {}) if v <= published]:
                del self._memory[table_id][version]


@fault(
    "redelivery-ratified-again",
    "catalog",
    ("CAT-RESEND-ONCE",),
    "A proposal delivered again (same staged file) after its version was taken is ratified at the next version.",
)
class RedeliveryRatifiedAgain(ReferenceCatalog):
    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        try:
            super()._ratify(table_id, proposal, published, content)
        except CommitConflict as taken:
            with self._store.read() as tx:
                stored = tx.commits(table_id)
            if proposal.staged_uri is None or all(c.staged_uri != proposal.staged_uri for c in stored):
                raise
            # "Rebases" the duplicate server-side instead of telling the sender its version is taken.
            latest = taken.latest_version if taken.latest_version is not None else proposal.version
            super()._ratify(table_id, replace(proposal, version=latest + 1), published, content)


# ====================================================================== writers: lost answers


def _ict_of(content: bytes) -> int | None:
    info = act.commit_info(act.decode_commit(content)) or {}
    ict = info.get("inCommitTimestamp")
    return ict if isinstance(ict, int) else None


@fault(
    "blind-retry-next-version",
    "client",
    ("WRT-LOST-ANSWER-ONCE", "WRT-CATALOG-RESTART"),
    "After a lost answer to its proposal, proposes the same commit again at the next version without asking.",
)
class BlindRetryNextVersion(ReferenceClient):
    def _after_lost_answer(self, table: TableInfo, version: int, mine: Proposals) -> int | None:
        retry = version + 1
        staged = None if self.inline else self._stage(table.location, retry, mine.last, None)
        self.catalog.commit(
            table.table_id,
            retry,
            staged_uri=staged,
            inline_content=mine.last if self.inline else None,
            in_commit_timestamp=_ict_of(mine.last),
        )
        return retry


@fault(
    "lost-answer-is-failure",
    "client",
    ("WRT-LOST-ANSWER-ONCE", "WRT-CATALOG-RESTART"),
    "Takes a lost answer to its proposal for a refusal and writes the change again on the table it then reads.",
)
class LostAnswerIsFailure(ReferenceClient):
    def _after_lost_answer(self, table: TableInfo, version: int, mine: Proposals) -> int | None:
        return None


@fault(
    "lost-answer-raised",
    "client",
    ("WRT-LOST-ANSWER-OUTCOME",),
    "Raises the lost answer to its caller without asking the catalog, although its commit was ratified.",
)
class LostAnswerRaised(ReferenceClient):
    def _after_lost_answer(self, table: TableInfo, version: int, mine: Proposals) -> int | None:
        raise CatalogTimeout(f"the proposal of v{version} timed out")


@fault(
    "own-duplicate-rebased",
    "client",
    ("WRT-LOST-ANSWER-ONCE",),
    "A conflict answering a second delivery of its own proposal is taken for a lost race: it commits again.",
)
class OwnDuplicateRebased(ReferenceClient):
    def _own_after_conflict(self, table: TableInfo, version: int, mine: Proposals) -> bool:
        return False


@fault(
    "own-duplicate-rebased-after-rival",
    "client",
    ("WRT-LOST-ANSWER-ONCE",),
    "After a conflict, asks whether the version is its own only while the catalog's latest is that version:"
    " once a rival has committed after it, its own duplicated proposal is taken for a lost race.",
)
class OwnDuplicateRebasedAfterRival(ReferenceClient):
    def _own_after_conflict(self, table: TableInfo, version: int, mine: Proposals) -> bool:
        if self.catalog.get_commits(table.table_id).latest_version > version:
            return False  # "others went on": the shortcut this fault takes
        return super()._own_after_conflict(table, version, mine)


@fault(
    "publish-rolled-back-on-timeout",
    "client",
    ("WRT-LOST-ANSWER-ONCE",),
    "When the answer to its publication mark is lost, deletes the _delta_log files it just published.",
)
class PublishRolledBackOnTimeout(ReferenceClient):
    def publish(self, name: str) -> None:
        table = self._table(name)
        stored = {c.version: c for c in self.catalog.get_commits(table.table_id).commits}
        if not stored:
            return
        written: list[str] = []
        for v in sorted(stored):
            uri = delta_uri(table.location, v)
            with contextlib.suppress(FileExistsError):
                self.storage.put(uri, self._log.commit_bytes(LogReader.catalog_ref(stored[v])), if_absent=True)
                written.append(uri)
        try:
            self.catalog.mark_published(table.table_id, max(stored))
        except CatalogTimeout:
            for uri in written:  # "undo" a publication it believes failed; the catalog already dropped them
                self.storage.delete(uri)
            raise


class _LogOnlyOnTimeout(LogReader):
    def _ratified_commits(self, table_id: str, listing: list[FileInfo]) -> GetCommitsResponse:
        try:
            return super()._ratified_commits(table_id, listing)
        except CatalogTimeout:
            published = [lf.version for lf, _ in listed_log_files(listing) if lf.kind == "delta"]
            return GetCommitsResponse([], max(published, default=0))


@fault(
    "lost-listing-reads-log-only",
    "client",
    ("WRT-LOST-ANSWER-ONCE",),
    "When the catalog's listing answer is lost, reads _delta_log alone and returns that as the latest table.",
)
class LostListingReadsLogOnly(ReferenceClient):
    reader_class = _LogOnlyOnTimeout


# ====================================================================== writers: crashes


@fault(
    "orphan-staged-published",
    "client",
    ("WRT-CRASH-RECOVERY",),
    "Before committing, 'finishes' a crashed commit: publishes a staged file found at the next version.",
)
class OrphanStagedPublished(ReferenceClient):
    def append(self, name: str, rows: Sequence[Row]) -> int:
        table = self._table(name)
        latest = self.catalog.get_commits(table.table_id).latest_version
        for found in self.storage.list(staged_dir(table.location)):
            if int(PurePosixPath(found.uri).name.split(".")[0]) == latest + 1:
                with contextlib.suppress(FileExistsError):
                    self.storage.put(delta_uri(table.location, latest + 1), self.storage.get(found.uri), if_absent=True)
                break
        return super().append(name, rows)


@fault(
    "publish-own-commits-only",
    "client",
    ("WRT-CRASH-RECOVERY",),
    "Publishes only its own commits, then marks the newest: a crashed client's ratified commit is lost.",
)
class PublishOwnCommitsOnly(ReferenceClient):
    _mine: set[tuple[str, int]] | None = None

    def _commit(self, table: TableInfo, operation: str, build: Builder) -> int:
        version = super()._commit(table, operation, build)
        self._mine = (self._mine or set()) | {(table.table_id, version)}
        return version

    def publish(self, name: str) -> None:
        table = self._table(name)
        stored = {c.version: c for c in self.catalog.get_commits(table.table_id).commits}
        own = sorted(v for v in stored if (table.table_id, v) in (self._mine or set()))
        if not own:
            return
        for v in own:
            with contextlib.suppress(FileExistsError):
                content = self._log.commit_bytes(LogReader.catalog_ref(stored[v]))
                self.storage.put(delta_uri(table.location, v), content, if_absent=True)
        self.catalog.mark_published(table.table_id, own[-1])


# ====================================================================== writers: clocks

FUTURE_PEER_MS = 30 * 86_400_000  # "a peer's timestamp this far ahead must be a bug"


@fault(
    "ict-ignores-future-peer",
    "client",
    ("WRT-ICT-SKEW",),
    "Treats a previous in-commit timestamp more than 30 days ahead of its clock as bogus and stamps its own clock.",
)
class IctIgnoresFuturePeer(ReferenceClient):
    def _next_ict(self, previous: int | None) -> int:
        now = self.clock()
        if previous is not None and previous > now + FUTURE_PEER_MS:
            return now
        return super()._next_ict(previous)


@fault(
    "ict-local-time",
    "client",
    ("WRT-ICT-SKEW",),
    "Stamps the local wall-clock reading as if it were UTC, increasing only over its own previous commit.",
)
class IctLocalTime(ReferenceClient):
    _last: int | None = None

    def _next_ict(self, previous: int | None) -> int:
        local = calendar.timegm(time.localtime()) * 1000 + time.time_ns() // 1_000_000 % 1000
        ict = local if self._last is None else max(local, self._last + 1)
        self._last = ict
        return ict


# ====================================================================== blind spots of round 3


@fault(
    "latest-from-stored-commits",
    "catalog",
    ("CAT-RATIFY-DURABLE",),
    "On start-up recomputes each table's latest version from the commits it still stores: a table whose"
    " every commit is published comes back at v0 and ratifies v1 again.",
)
class LatestFromStoredCommits(ReferenceCatalog):
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
        # "Rebuilds its index" from the stored commits instead of the table's own record: the published,
        # dropped ones are no longer there, so neither is the version they reached.
        with self._store.write() as tx:
            tx.conn.execute(
                "UPDATE tables SET latest_version = COALESCE("
                "(SELECT MAX(version) FROM commits WHERE commits.table_id = tables.table_id), 0)"
                " WHERE latest_version >= 0"
            )


WRITE_BEHIND_EVERY = 8


@fault(
    "ratifications-write-behind",
    "catalog",
    ("CAT-RATIFY-DURABLE",),
    f"Flushes a table's ratifications to disk only every {WRITE_BEHIND_EVERY}th version and at each"
    " publication mark (write-behind): a restart loses those ratified since the last flush.",
)
class RatificationsWriteBehind(ReferenceCatalog):
    """The database stands for the cache; ``write_behind`` records how far each table was flushed, and
    a start-up finds each table as of its last flush (what a write-behind cache leaves on disk)."""

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
        with self._store.write() as tx:
            tx.conn.execute("CREATE TABLE IF NOT EXISTS write_behind (table_id TEXT PRIMARY KEY, flushed INTEGER)")
            # CASE, not the two-argument MIN of SQLite (PostgreSQL has LEAST): the fault runs on both.
            flushed = "COALESCE((SELECT flushed FROM write_behind WHERE write_behind.table_id = tables.table_id), 0)"
            tx.conn.execute(
                f"UPDATE tables SET latest_version = CASE WHEN latest_version < {flushed} THEN latest_version"
                f" ELSE {flushed} END WHERE latest_version > 0"
            )
            for table in ("commits", "ratified_content"):
                tx.conn.execute(
                    f"DELETE FROM {table} WHERE version > (SELECT latest_version FROM tables"
                    f" WHERE tables.table_id = {table}.table_id)"
                )

    @staticmethod
    def _flush(tx: Tx, table_id: str, upto: int) -> None:
        tx.conn.execute(
            "INSERT INTO write_behind (table_id, flushed) VALUES (?, ?)"
            " ON CONFLICT (table_id) DO UPDATE SET flushed = CASE WHEN write_behind.flushed > excluded.flushed"
            " THEN write_behind.flushed ELSE excluded.flushed END",
            (table_id, upto),
        )

    def _write_commit(self, tx: Tx, table_id: str, commit: RatifiedCommit) -> None:
        super()._write_commit(tx, table_id, commit)
        if commit.version % WRITE_BEHIND_EVERY == 0:
            self._flush(tx, table_id, commit.version)

    def _publish(self, tx: Tx, table_id: str, version: int) -> None:
        super()._publish(tx, table_id, version)
        row = tx.table(table_id)
        assert row is not None
        self._flush(tx, table_id, row.latest_version)


@fault(
    "staging-counter-restarts",
    "catalog",
    ("CAT-STAGING-UNIQUE",),
    "Names new table locations from a counter kept in memory: after a restart it starts at 0 again and"
    " gives a new table an existing table's location.",
)
class StagingCounterRestarts(ReferenceCatalog):
    _created = 0

    def _staging_location(self, table_id: str) -> str:
        self._created += 1
        return f"{self.warehouse_uri}/tables/t{self._created - 1}"


@fault(
    "inline-resend-rebased",
    "catalog",
    ("CAT-RESEND-ONCE",),
    "An inline proposal sent again with the same bytes after its version was taken is ratified at the next"
    " version (a server-side rebase).",
)
class InlineResendRebased(ReferenceCatalog):
    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        try:
            super()._ratify(table_id, proposal, published, content)
        except CommitConflict as taken:
            if proposal.inline_content is None or taken.latest_version is None:
                raise
            with self._store.read() as tx:
                stored = tx.commits(table_id)
            if all(c.inline_content != proposal.inline_content for c in stored):
                raise
            super()._ratify(table_id, replace(proposal, version=taken.latest_version + 1), published, content)


@fault(
    "lost-answer-latest-is-mine",
    "client",
    ("WRT-LOST-ANSWER-ONCE",),
    "After a lost answer to its proposal of v, asks only for the latest version and reports v as its commit"
    " when the latest is v or more, whoever's commit v holds.",
)
class LostAnswerLatestIsMine(ReferenceClient):
    def _after_lost_answer(self, table: TableInfo, version: int, mine: Proposals) -> int | None:
        latest = self.catalog.get_commits(table.table_id).latest_version
        return version if latest >= version else None


@fault(
    "lost-answer-tidies-staged",
    "client",
    ("WRT-LOST-ANSWER-ONCE",),
    "When a proposal's answer is lost, deletes the attempt's staged file first (as a failed attempt's garbage),"
    " then asks the catalog: the file of a ratified, unpublished commit is gone.",
)
class LostAnswerTidiesStaged(ReferenceClient):
    def _after_lost_answer(self, table: TableInfo, version: int, mine: Proposals) -> int | None:
        for uri in sorted(mine.staged):
            with contextlib.suppress(FileNotFoundError):
                self.storage.delete(uri)
        return super()._after_lost_answer(table, version, mine)


@fault(
    "inline-ours-by-location",
    "client",
    ("WRT-LOST-ANSWER-ONCE",),
    "Proposes inline; after a lost answer it takes the commit at v for its own when its staged location equals"
    " its proposal's, which two inline commits (no location) always share: a rival's inline commit is reported"
    " as its own.",
)
class InlineOursByLocation(ReferenceClient):
    def _commit(self, table: TableInfo, operation: str, build: Builder) -> int:
        self.inline = True  # every commit inline (RFC "Commit Protocol", option 2)
        return super()._commit(table, operation, build)

    def _ours(self, table: TableInfo, version: int, mine: Proposals) -> bool:
        for commit in self.catalog.get_commits(table.table_id, version, version).commits:
            if commit.version == version:
                return commit.staged_uri == min(mine.staged, default=None)
        return super()._ours(table, version, mine)
