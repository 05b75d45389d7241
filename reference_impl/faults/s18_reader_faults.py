"""Faults for the round-9 blind misses (issue 28, session 18): reader.

Readers, each wrong in a family a blind variant of round 9 lives in, by a different member: the
order a snapshot's commits are replayed in (two), a time-travel answer kept while the table grows, and
the edges of the timestamp argument."""

from __future__ import annotations

from typing import Any

from conformance.contract.delta import Catalog, ReadResult, Storage
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.log_paths import delta_uri
from reference_impl.delta.snapshot import (
    CommitRef,
    LogReader,
    LogSegment,
    MissingVersionError,
    Snapshot,
    SnapshotError,
    VersionOutOfRange,
    read_rows,
    replay,
)
from reference_impl.faults.base import fault


def _storage_rank(ref: CommitRef) -> int:
    """Where a commit's content lives: the published log, a staged file, the catalog's own bytes."""
    if ref.inline_content is not None:
        return 2
    return 1 if ref.from_catalog else 0


def _catalog_first(ref: CommitRef) -> int:
    """The commits the catalog names (staged or inline) before the published log files."""
    return 0 if ref.from_catalog else 1


class _ByStorageReader(LogReader):
    rank = staticmethod(_storage_rank)

    def snapshot_of(self, seg: LogSegment, version: int | None = None) -> Snapshot:
        target = seg.latest_version if version is None else version
        if target < 0 or target > seg.latest_version:
            raise VersionOutOfRange(f"version {target} is outside 0..{seg.latest_version}")
        cp, base = self._base_checkpoint(seg, target)
        first = 0 if cp is None else cp + 1
        missing = [v for v in range(first, target + 1) if v not in seg.commits]
        if missing:
            raise MissingVersionError(missing[0])
        # The fault: grouped by where the bytes are (log files, then staged files, then inline), each
        # group in version order, instead of one version order across all of them.
        order = sorted(range(first, target + 1), key=lambda v: (self.rank(seg.commits[v]), v))
        protocol, metadata, files, infos = replay(base, [(v, self.commit_actions(seg.commits[v])) for v in order])
        if protocol is None or metadata is None:
            raise SnapshotError(f"no protocol or metaData at version {target}")
        return Snapshot(seg.location, target, protocol, metadata, files, infos, cp)


@fault(
    "replays-commits-grouped-by-storage",
    "client",
    breaks=("RDR-UNPUBLISHED",),
    description="A snapshot replays its commits grouped by where their bytes are: published log files,"
    " then staged files, then inline commits (each group in version order). A staged commit removing a"
    " file that an earlier inline commit added is replayed before that add: the file comes back.",
)
class ReplaysCommitsGroupedByStorage(ReferenceClient):
    reader_class = _ByStorageReader


class _CatalogFirstReader(_ByStorageReader):
    rank = staticmethod(_catalog_first)


@fault(
    "replays-catalog-commits-first",
    "client",
    breaks=("RDR-UNPUBLISHED",),
    description="A snapshot replays the commits the catalog names first (what it has in hand from the"
    " listing), then the published log files it lists after, each group in version order. A staged"
    " commit removing a file a published commit added is replayed before that add: the file comes back.",
)
class ReplaysCatalogCommitsFirst(ReferenceClient):
    reader_class = _CatalogFirstReader


class _TimelineOnceReader(LogReader):
    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        super().__init__(catalog, storage)
        self._segments: dict[str, LogSegment] = {}

    def segment_for_time(self, table_id: str, location: str) -> LogSegment:
        # The fault: the log as it was at the first time-travel read of the table, kept for all later ones.
        if table_id not in self._segments:
            self._segments[table_id] = self.segment(table_id, location)
        return self._segments[table_id]

    def version_at(self, table_id: str, location: str, timestamp_ms: int) -> int:
        seg = self.segment_for_time(table_id, location)
        for v in range(seg.latest_version, -1, -1):
            ref = seg.commits.get(v)
            if ref is None:
                break
            if self._commit_timestamp(ref, self.commit_actions(ref)) <= timestamp_ms:
                return v
        return super().version_at(table_id, location, timestamp_ms)  # refuses as the reference does


@fault(
    "timestamp-timeline-kept",
    "client",
    breaks=("RDR-TIME-TRAVEL-ICT",),
    description="The reader builds a table's timeline (version -> in-commit timestamp) at its first"
    " time-travel read and resolves every later timestamp on it: a timestamp after that newest commit"
    " still resolves to it once later commits at or before the timestamp exist.",
)
class TimestampTimelineKept(ReferenceClient):
    reader_class = _TimelineOnceReader


@fault(
    "timestamp-seconds-truthiness",
    "client",
    breaks=("RDR-TIME-TRAVEL-ICT",),
    description="The read path turns the timestamp into whole seconds and tests that for truth: a"
    " time-travel read at 0-999 ms (the epoch's first second, long before every commit) is taken for a"
    " read of the latest version instead of being refused.",
)
class TimestampSecondsTruthiness(ReferenceClient):
    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        seconds = None if timestamp_ms is None else timestamp_ms // 1000
        if seconds:
            return super().read(name, timestamp_ms=timestamp_ms)
        if timestamp_ms is None:
            return super().read(name, version=version)
        table = self._table(name)
        snap = self._reader.snapshot(table.table_id, table.location, version)
        return ReadResult(snap.version, read_rows(self.storage, snap))


class _LaterDateReader(LogReader):
    def version_at(self, table_id: str, location: str, timestamp_ms: int) -> int:
        seg = self.segment(table_id, location)
        for v in range(seg.latest_version, -1, -1):
            ref = seg.commits.get(v)
            if ref is None:
                break
            when = self._commit_timestamp(ref, self.commit_actions(ref))
            # The fault: a version with a published file besides the catalog's commit is dated by the later
            # of the two timestamps ("a file written later restates the commit"); rows still come from the
            # catalog's commit.
            if ref.from_catalog and v in seg.published:
                published = CommitRef(v, uri=delta_uri(location, v))
                when = max(when, self._commit_timestamp(published, self.commit_actions(published)))
            if when <= timestamp_ms:
                return v
        return super().version_at(table_id, location, timestamp_ms)  # refuses as the reference does


@fault(
    "timestamp-dated-by-later-file",
    "client",
    breaks=("RDR-CATALOG-PRECEDENCE",),
    description="Time travel by timestamp dates a version that has both a catalog commit and a published"
    " file by the later of their two in-commit timestamps; snapshots (rows) still take the catalog's"
    " commit. A stray published file dated after the catalog's commit moves the version later in time.",
)
class TimestampDatedByLaterFile(ReferenceClient):
    reader_class = _LaterDateReader


class _FirstListingReader(LogReader):
    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        super().__init__(catalog, storage)
        self._seen: dict[str, frozenset[int]] = {}

    def segment(self, table_id: str, location: str) -> LogSegment:
        seg = super().segment(table_id, location)
        # The fault: the published commits are those of the table's first LIST, kept ("published files
        # never change"); later ones count only while the catalog still lists them. Checkpoints are fresh.
        seen = self._seen.setdefault(location, seg.published)
        newest_cp = max(seg.checkpoints, default=-1)
        kept = {v: r for v, r in seg.commits.items() if r.from_catalog or v in seen or v <= newest_cp}
        return LogSegment(location, seg.latest_version, kept, seg.checkpoints, seg.published & seen)

    def snapshot_of(self, seg: LogSegment, version: int | None = None) -> Snapshot:
        target = seg.latest_version if version is None else version
        cp, base = self._base_checkpoint(seg, target)
        first = 0 if cp is None else cp + 1
        # ... and a version in neither is taken for one with nothing to replay.
        present = [v for v in range(first, target + 1) if v in seg.commits]
        protocol, metadata, files, infos = replay(base, [(v, self.commit_actions(seg.commits[v])) for v in present])
        if protocol is None or metadata is None:
            raise SnapshotError(f"no protocol or metaData at version {target}")
        return Snapshot(seg.location, target, protocol, metadata, files, infos, cp)


@fault(
    "latest-read-keeps-first-listing",
    "client",
    breaks=("RDR-LIST-FALLBACK",),
    description="For reads of the latest version the reader keeps the published commits of its first"
    " LIST of a table's _delta_log: commits published and dropped by the catalog after that are in"
    " neither its listing nor the catalog's answer, and are skipped (reads by version or timestamp are"
    " right).",
)
class LatestReadKeepsFirstListing(ReferenceClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stale = _FirstListingReader(self.catalog, self.storage)

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        if version is not None or timestamp_ms is not None:
            return super().read(name, version=version, timestamp_ms=timestamp_ms)
        table = self._table(name)
        snap = self._stale.snapshot(table.table_id, table.location)
        return ReadResult(snap.version, read_rows(self.storage, snap))
