"""Faulty variants found only by generated histories: several tables and clients, long histories,
maintenance under every policy, reads of every version and by timestamp (issue 28 items 1-2)."""

from __future__ import annotations

import threading
from typing import Any

from conformance.contract.delta import FileInfo, GetCommitsResponse, MaintenanceOp, RatifiedCommit, TableInfo
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.catalog.store import Tx
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.snapshot import LogReader, TimestampOutOfRange, listed_log_files
from reference_impl.faults.base import fault

# ====================================================================== catalog

NAME_PREFIX = 32  # characters of a table name the listing cache below keys on


@fault(
    "listing-cache-by-name-prefix",
    "catalog",
    breaks=("CAT-LIST-LATEST",),
    description="Caches listings by the first 32 characters of the table's name, cleared on every write"
    " to such a table: right for one table, but a listing of a second table of that prefix gets the first's.",
)
class ListingCacheByNamePrefix(ReferenceCatalog):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cache: dict[tuple[str, int | None, int | None], GetCommitsResponse] = {}
        self._lock = threading.Lock()

    def _prefix(self, table_id: str) -> str:
        with self._store.read() as tx:
            row = tx.table(table_id)
        return ((row.name if row is not None else None) or table_id)[:NAME_PREFIX]

    def _forget(self, table_id: str) -> None:
        prefix = self._prefix(table_id)
        with self._lock:
            for key in [k for k in self._cache if k[0] == prefix]:
                del self._cache[key]

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        key = (self._prefix(table_id), start_version, end_version)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            return hit
        resp = super().get_commits(table_id, start_version, end_version)
        with self._lock:
            self._cache[key] = resp
        return resp

    def register_table(self, name: str, table_id: str) -> TableInfo:
        info = super().register_table(name, table_id)
        self._forget(table_id)
        return info

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        try:
            super().commit(table_id, version, **kwargs)
        finally:
            self._forget(table_id)

    def mark_published(self, table_id: str, version: int) -> None:
        try:
            super().mark_published(table_id, version)
        finally:
            self._forget(table_id)


@fault(
    "mark-drops-two-digit-keys",
    "catalog",
    breaks=("CAT-FORGET-PUBLISHED-ONLY",),
    description="Drops the stored commits whose version, as two-digit text, sorts at or below the"
    " publication mark: a mark of v99 or below also drops unpublished v100 and later.",
)
class MarkDropsTwoDigitKeys(ReferenceCatalog):
    def _drop_on_publish(self, tx: Tx, table_id: str, published: int) -> None:
        for commit in tx.commits(table_id):
            if f"{commit.version:02d}" <= f"{published:02d}":
                tx.conn.execute("DELETE FROM commits WHERE table_id = ? AND version = ?", (table_id, commit.version))
                tx.conn.execute(
                    "DELETE FROM ratified_content WHERE table_id = ? AND version = ?", (table_id, commit.version)
                )


# ====================================================================== client: writer


@fault(
    "cleanup-asks-checkpoint-policy",
    "client",
    breaks=("WRT-MAINTENANCE-POLICY",),
    description="Before a metadata cleanup asks the policy whether checkpoints are allowed: under a policy"
    " that allows checkpoints and forbids cleanup, it cleans up.",
)
class CleanupAsksCheckpointPolicy(ReferenceClient):
    def _policy_allows(self, table_id: str, op: MaintenanceOp) -> bool:
        return super()._policy_allows(table_id, "checkpoint" if op == "metadata_cleanup" else op)


PUBLISH_BATCH = 16


@fault(
    "publish-batches-out-of-order",
    "client",
    breaks=("WRT-PUBLISH-ORDER",),
    description="Publishes in batches of 16 commits side by side: with more than 16 unpublished, the"
    " second batch lands before the first.",
)
class PublishBatchesOutOfOrder(ReferenceClient):
    def _publish_order(self, versions: list[int]) -> list[int]:
        ordered = sorted(versions)
        batches = [ordered[i : i + PUBLISH_BATCH] for i in range(0, len(ordered), PUBLISH_BATCH)]
        return [v for batch in reversed(batches) for v in batch]


# ====================================================================== client: reader


class _FirstStagedFileReader(LogReader):
    def _ratified_commits(self, table_id: str, listing: list[FileInfo]) -> GetCommitsResponse:
        """For a staged commit the catalog supplies, reads the first staged file listed for its version."""
        resp = super()._ratified_commits(table_id, listing)
        first: dict[int, str] = {}
        for lf, info in listed_log_files(listing):
            if lf.kind == "staged":
                first.setdefault(lf.version, info.uri)  # the listing is sorted by name
        commits = [
            RatifiedCommit(c.version, first.get(c.version, c.staged_uri), None, c.in_commit_timestamp)
            if c.staged_uri is not None
            else c
            for c in resp.commits
        ]
        return GetCommitsResponse(commits, resp.latest_version)


@fault(
    "reader-first-staged-file",
    "client",
    breaks=("RDR-IGNORE-UNRATIFIED",),
    description="For a version the catalog supplies as a staged commit, reads the first staged file listed"
    " for that version instead of the one the catalog ratified.",
)
class ReaderFirstStagedFile(ReferenceClient):
    reader_class = _FirstStagedFileReader


class _CheckpointStartsHistoryReader(LogReader):
    def version_at(self, table_id: str, location: str, timestamp_ms: int) -> int:
        """Takes a checkpoint with no commit before it for the start of history and dates nothing at
        it (a checkpoint holds no commitInfo): after cleanup, the checkpoint's own version is skipped."""
        seg = self.segment(table_id, location)
        for v in range(seg.latest_version, -1, -1):
            ref = seg.commits.get(v)
            if ref is None or (v in seg.checkpoints and v - 1 not in seg.commits):
                break
            if self._commit_timestamp(ref, self.commit_actions(ref)) <= timestamp_ms:
                return v
        raise TimestampOutOfRange(f"no commit at or before {timestamp_ms}")


@fault(
    "time-travel-skips-cleaned-checkpoint",
    "client",
    breaks=("RDR-TIME-TRAVEL-ICT",),
    description="After a checkpoint and a metadata cleanup, time travel to the checkpoint's own timestamp"
    " fails: the version of a checkpoint with nothing before it is never dated.",
)
class TimeTravelSkipsCleanedCheckpoint(ReferenceClient):
    reader_class = _CheckpointStartsHistoryReader
