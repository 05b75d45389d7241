"""Faults for the round-12 blind misses (issue 28, session 19): readers that meet stray files of one
kind in one kind of read (``conformance/checks/delta/reader/test_stray_files.py``)."""

from __future__ import annotations

import json

from conformance.contract.delta import Catalog, FileInfo, GetCommitsResponse, Storage
from reference_impl.delta.actions import Action
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.log_paths import parse_log_name, staged_dir
from reference_impl.delta.snapshot import (
    CommitRef,
    LogReader,
    LogSegment,
    MissingVersionError,
    Snapshot,
    SnapshotError,
    TimestampOutOfRange,
    VersionOutOfRange,
    listed_log_files,
    replay,
)
from reference_impl.faults.base import fault


class _CompactionReader(LogReader):
    def snapshot_of(self, seg: LogSegment, version: int | None = None) -> Snapshot:
        target = seg.latest_version if version is None else version
        if target < 0 or target > seg.latest_version:
            raise VersionOutOfRange(f"version {target} is outside 0..{seg.latest_version}")
        cp, base = self._base_checkpoint(seg, target)
        # The fault: a log compaction x..y (y <= target) is replayed in place of the commits x..y,
        # whether or not the catalog returns some of them (as Delta Kernel 4.4.0 does).
        spans = {
            lf.version: (lf.end_version, lf.uri)
            for lf, _ in listed_log_files(self._list_log(seg.location))
            if lf.kind == "compaction" and lf.end_version is not None and lf.end_version <= target
        }
        batches = []
        v = 0 if cp is None else cp + 1
        while v <= target:
            if v in spans:
                end, uri = spans[v]
                batches.append((v, self._decode(self.storage.get(uri))))
                v = end + 1
                continue
            if v not in seg.commits:
                raise MissingVersionError(v)
            batches.append((v, self.commit_actions(seg.commits[v])))
            v += 1
        protocol, metadata, files, infos = replay(base, batches)
        if protocol is None or metadata is None:
            raise SnapshotError(f"no protocol or metaData at version {target}")
        return Snapshot(seg.location, target, protocol, metadata, files, infos, cp)


@fault(
    "reads-compactions-over-catalog-commits",
    "client",
    breaks=("RDR-COMPACTION-PRECEDENCE",),
    description="Replays a log compaction file in place of the commits it covers, also where the catalog"
    " returns some of those versions: a compaction made from published files that differ from the"
    " catalog's commits wins over them.",
)
class ReadsCompactionsOverCatalogCommits(ReferenceClient):
    reader_class = _CompactionReader


class _UnboundedTimelineReader(LogReader):
    def version_at(self, table_id: str, location: str, timestamp_ms: int) -> int:
        seg = self.segment(table_id, location)
        # The fault: the timeline is every listed published commit, the catalog's bound on the latest
        # version applied to snapshots only.
        listed = {
            lf.version: CommitRef(lf.version, uri=lf.uri)
            for lf, _ in listed_log_files(self._list_log(location))
            if lf.kind == "delta"
        }
        commits = listed | seg.commits
        for v in sorted(commits, reverse=True):
            ref = commits[v]
            if self._commit_timestamp(ref, self.commit_actions(ref)) <= timestamp_ms:
                return v
        raise TimestampOutOfRange(f"no commit at or before {timestamp_ms}")


@fault(
    "timeline-counts-files-above-latest",
    "client",
    breaks=("RDR-IGNORE-ABOVE-LATEST",),
    description="Resolves a timestamp over every published commit it lists, above the catalog's latest"
    " version too: a stray file above the latest dated before the asked time is taken as the version"
    " then, and the read is refused as above the latest.",
)
class TimelineCountsFilesAboveLatest(ReferenceClient):
    reader_class = _UnboundedTimelineReader


class _SplitLinesReader(LogReader):
    def _decode(self, content: bytes) -> list[Action]:
        # The fault: Python's splitlines() also breaks at U+0085, U+2028 and U+2029, raw inside a string.
        return [json.loads(line) for line in content.decode().splitlines() if line.strip()]


@fault(
    "reader-splits-unicode-lines",
    "client",
    breaks=("RDR-UNPUBLISHED",),
    description="Reads a commit line by line as Python's str.splitlines() cuts it: another writer's commit with"
    " a raw U+2028 (or U+0085, U+2029) inside a string, which JSON allows, cannot be read.",
)
class ReaderSplitsUnicodeLines(ReferenceClient):
    reader_class = _SplitLinesReader


class _TornLogReader(LogReader):
    def segment(self, table_id: str, location: str) -> LogSegment:
        seg = super().segment(table_id, location)
        # The fault: a "torn log" guard parses every staged file at or below the latest version, the
        # ones the catalog does not name too, and refuses the read if one does not parse.
        for info in self.storage.list(staged_dir(location) + "/"):
            lf = parse_log_name(info.uri)
            if lf is not None and lf.kind == "staged" and lf.version <= seg.latest_version:
                self._decode(self.storage.get(lf.uri))
        return seg


@fault(
    "reader-parses-every-staged-file",
    "client",
    breaks=("RDR-IGNORE-UNRATIFIED",),
    description="Parses every staged file at or below the catalog's latest version before a read, those the"
    " catalog does not name too: a partial rejected file beside a ratified version makes every read fail.",
)
class ReaderParsesEveryStagedFile(ReferenceClient):
    reader_class = _TornLogReader


class _ListingKeyedReader(LogReader):
    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        super().__init__(catalog, storage)
        self._answers: dict[tuple[str, tuple[str, ...]], GetCommitsResponse] = {}

    def _ratified_commits(self, table_id: str, listing: list[FileInfo]) -> GetCommitsResponse:
        # The fault: the catalog's answer is kept while the log's listing stays the same; an inline
        # commit writes no file, so the listing does not change and the new version is not seen.
        key = (table_id, tuple(sorted(f.uri for f in listing)))
        if key not in self._answers:
            self._answers[key] = super()._ratified_commits(table_id, listing)
        return self._answers[key]


@fault(
    "reader-asks-catalog-when-listing-changes",
    "client",
    breaks=("RDR-UNPUBLISHED",),
    description="Keeps the catalog's answer per table and asks again only when its listing of _delta_log"
    " changes: another writer's inline commit changes no file, and the next read misses it.",
)
class ReaderAsksCatalogWhenListingChanges(ReferenceClient):
    reader_class = _ListingKeyedReader
