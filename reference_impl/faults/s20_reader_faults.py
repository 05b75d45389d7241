"""Faults for the round-14 blind misses (issue 28, session 20): see docs/mutation.md, round 14.

Readers that use a maintenance file (a checkpoint, a log compaction) by where it sits against the
versions the catalog still returns, or date versions by the files they would replay
(``conformance/checks/delta/reader/test_lost_marks_maintenance.py``).
"""

from __future__ import annotations

from reference_impl.delta.actions import Action
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.snapshot import LogReader, LogSegment, TimestampOutOfRange, listed_log_files, replay
from reference_impl.faults.base import fault


class _CatalogFilesOverCheckpointReader(LogReader):
    def _base_checkpoint(self, seg: LogSegment, target: int) -> tuple[int | None, list[Action]]:
        cp, base = super()._base_checkpoint(seg, target)
        ref = None if cp is None else seg.commits.get(cp)
        if cp is None or ref is None or not ref.from_catalog:
            return cp, base
        # The fault: "the catalog's commit is authoritative": of a checkpoint of a version the catalog
        # still returns, only the protocol and metaData are kept; its files are the catalog commit's.
        header = [a for a in base if "protocol" in a or "metaData" in a]
        protocol, metadata, files, _ = replay(header, [(cp, self.commit_actions(ref))])
        state = [a for a in (protocol, metadata) if a is not None]
        return cp, state + [{"add": add} for add in files.values()]


@fault(
    "checkpoint-of-catalog-version-files-from-commit",
    "client",
    breaks=("RDR-LIST-FALLBACK",),
    description="Starting from a checkpoint of a version the catalog still returns (published, its mark"
    " lost), keeps only the checkpoint's protocol and metadata and takes the files from the catalog's commit"
    " of that version: every file added before it is lost from the versions read from that checkpoint.",
)
class CheckpointOfCatalogVersionFilesFromCommit(ReferenceClient):
    reader_class = _CatalogFilesOverCheckpointReader


class _CompactionEndTimelineReader(LogReader):
    def version_at(self, table_id: str, location: str, timestamp_ms: int) -> int:
        version = super().version_at(table_id, location, timestamp_ms)
        seg = self.segment(table_id, location)
        # The fault: a log compaction x..y over published versions the catalog no longer returns is one
        # step of the timeline, the version it brings the table to (y), dated by its first commit.
        for lf, _ in listed_log_files(self._list_log(location)):
            end = lf.end_version
            if lf.kind != "compaction" or end is None or end > seg.latest_version:
                continue
            covered = range(lf.version, end + 1)
            if lf.version <= version < end and not any(seg.commits[v].from_catalog for v in covered):
                return end
        return version


@fault(
    "timeline-dates-compaction-as-its-end",
    "client",
    breaks=("RDR-TIME-TRAVEL-ICT",),
    description="Takes a log compaction x..y over published versions as one step of its time-travel"
    " index, version y dated at x's in-commit timestamp: a moment inside the compacted range resolves to"
    " y, a version committed after it.",
)
class TimelineDatesCompactionAsItsEnd(ReferenceClient):
    reader_class = _CompactionEndTimelineReader


class _SegmentTimelineReader(LogReader):
    def version_at(self, table_id: str, location: str, timestamp_ms: int) -> int:
        seg = self.segment(table_id, location)
        # The fault: the timeline is the log segment a read of the latest version replays, from the
        # newest checkpoint on; the versions below it are not dated (their commits are not opened).
        start = max(seg.checkpoints, default=0)
        for v in range(seg.latest_version, start - 1, -1):
            ref = seg.commits.get(v)
            if ref is None:
                break
            if self._commit_timestamp(ref, self.commit_actions(ref)) <= timestamp_ms:
                return v
        raise TimestampOutOfRange(f"no commit at or before {timestamp_ms} from the checkpoint of {start} on")


@fault(
    "timeline-from-newest-checkpoint",
    "client",
    breaks=("RDR-TIME-TRAVEL-ICT",),
    description="Builds its time-travel index from the log segment it would replay for the latest version,"
    " the newest checkpoint and the commits after it: a moment before the newest checkpoint's commit is"
    " refused although its version is in the log.",
)
class TimelineFromNewestCheckpoint(ReferenceClient):
    reader_class = _SegmentTimelineReader
