"""Faulty variants of the reference Delta client: each overrides one hook of ``ReferenceClient``
(writer side) or of its ``LogReader`` (reader side, plugged in with ``reader_class``)."""

from __future__ import annotations

import contextlib
import json
import uuid
from dataclasses import replace
from typing import Any

from conformance.contract.delta import (
    CommitRejected,
    FileInfo,
    GetCommitsResponse,
    MaintenanceOp,
    RatifiedCommit,
    TableInfo,
)
from reference_impl.delta import actions as act
from reference_impl.delta.actions import Action, InvalidCommitError, decode_commit
from reference_impl.delta.cleanup import cut_off_checkpoint, files_to_delete, log_files, plan_cleanup
from reference_impl.delta.client import Builder, ReferenceClient
from reference_impl.delta.compaction import reconcile
from reference_impl.delta.log_paths import compaction_uri, delta_uri, staged_dir
from reference_impl.delta.snapshot import CommitRef, LogReader, LogSegment, Snapshot, listed_log_files
from reference_impl.faults.base import fault

# ====================================================================== writer: commit content


@fault(
    "reader-feature-missing",
    "client",
    ("WRT-PROTOCOL-VERSIONS",),
    "catalogManaged is only listed in writerFeatures, not in readerFeatures.",
)
class ReaderFeatureMissing(ReferenceClient):
    def _protocol_action(self) -> Action:
        return act.protocol_action(reader_features=[act.VACUUM_PROTOCOL_CHECK])


@fault(
    "ict-disabled",
    "client",
    ("WRT-ICT-ENABLED",),
    "delta.enableInCommitTimestamps is not set in the table configuration.",
)
class IctDisabled(ReferenceClient):
    def _metadata_configuration(self) -> dict[str, str]:
        return {}


@fault(
    "map-as-pairs",
    "client",
    ("WRT-STAGED-FORMAT",),
    "A remove's partitionValues is written as a JSON array of pairs (how a Parquet map decodes), not an object.",
)
class MapAsPairs(ReferenceClient):
    def _order_actions(self, actions: list[Action]) -> list[Action]:
        out = []
        for a in super()._order_actions(actions):
            if "remove" in a:
                a = {"remove": {**a["remove"], "partitionValues": list(a["remove"].get("partitionValues", {}).items())}}
            out.append(a)
        return out


@fault(
    "commitinfo-last", "client", ("WRT-COMMITINFO-FIRST",), "commitInfo is written as the last action of each commit."
)
class CommitInfoLast(ReferenceClient):
    def _order_actions(self, actions: list[Action]) -> list[Action]:
        return [a for a in actions if "commitInfo" not in a] + [a for a in actions if "commitInfo" in a]


@fault(
    "frozen-ict",
    "client",
    ("WRT-ICT-MONOTONIC",),
    "Every commit reuses the in-commit timestamp of the table's creation.",
)
class FrozenIct(ReferenceClient):
    _frozen: int | None = None

    def _next_ict(self, previous: int | None) -> int:
        if self._frozen is None:
            self._frozen = super()._next_ict(previous)
        return self._frozen


@fault("missing-txnid", "client", ("WRT-TXNID",), "commitInfo has no txnId.")
class MissingTxnId(ReferenceClient):
    def _txn_id(self) -> str | None:
        return None


@fault(
    "repeated-txnid",
    "client",
    ("WRT-TXNID-UNIQUE",),
    "One txnId per client instance, repeated in every commit it writes.",
)
class RepeatedTxnId(ReferenceClient):
    _fixed: str | None = None

    def _txn_id(self) -> str | None:
        if self._fixed is None:
            self._fixed = super()._txn_id()
        return self._fixed


# ====================================================================== writer: proposing


@fault(
    "unpadded-staged-name",
    "client",
    ("WRT-STAGED-NAME",),
    "Staged commit names carry the version without zero-padding.",
)
class UnpaddedStagedName(ReferenceClient):
    def _staged_uri(self, location: str, version: int) -> str:
        return f"{staged_dir(location)}/{version}.{uuid.uuid4()}.json"


class _JsonArrayTolerantReader(LogReader):
    def _decode(self, content: bytes) -> list[Action]:
        if content.lstrip().startswith(b"["):
            actions: list[Action] = json.loads(content)
            return actions
        return super()._decode(content)


@fault(
    "staged-json-array",
    "client",
    ("WRT-STAGED-FORMAT",),
    "A staged commit is one JSON array of actions instead of one action per line.",
)
class StagedJsonArray(ReferenceClient):
    log_class = _JsonArrayTolerantReader  # the writer reads back what it writes, so it keeps committing

    def _encode(self, actions: list[Action]) -> bytes:
        return json.dumps(actions).encode() + b"\n"


@fault(
    "reuse-staged-file",
    "client",
    ("WRT-STAGED-NO-REUSE",),
    "After a conflict the staged file of the lost attempt is proposed again for the next version.",
)
class ReuseStagedFile(ReferenceClient):
    def _stage(self, location: str, version: int, content: bytes, previous: str | None) -> str:
        return previous if previous is not None else super()._stage(location, version, content, None)


@fault(
    "no-rebase",
    "client",
    ("WRT-REBASE-UNPUBLISHED", "INT-CONCURRENT-REBASE"),
    "Gives up at the first version conflict instead of rebasing over the winning commit.",
)
class NoRebase(ReferenceClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_retries = 0


@fault(
    "filesystem-commit",
    "client",
    ("WRT-NO-FILESYSTEM-COMMIT",),
    "Writes _delta_log/<v>.json put-if-absent before proposing v to the catalog.",
)
class FilesystemCommit(ReferenceClient):
    def _before_propose(self, table: TableInfo, version: int, content: bytes) -> None:
        with contextlib.suppress(FileExistsError):
            self.storage.put(delta_uri(table.location, version), content, if_absent=True)


# ====================================================================== writer: publishing


@fault("publish-out-of-order", "client", ("WRT-PUBLISH-ORDER",), "Publishes the newest commit first.")
class PublishOutOfOrder(ReferenceClient):
    def _publish_order(self, versions: list[int]) -> list[int]:
        return sorted(versions, reverse=True)


@fault(
    "publish-rewrites",
    "client",
    ("WRT-PUBLISH-BYTES",),
    "Publishing re-serialises the commit (sorted keys, other spacing) instead of copying its bytes.",
)
class PublishRewrites(ReferenceClient):
    def _published_bytes(self, content: bytes) -> bytes:
        lines = [json.dumps(a, sort_keys=True, separators=(", ", ": ")) for a in decode_commit(content)]
        return "".join(line + "\n" for line in lines).encode()


# ====================================================================== writer: maintenance


@fault(
    "checkpoint-unpublished",
    "client",
    ("WRT-CHECKPOINT-PUBLISHED",),
    "Checkpoints the latest ratified version even when it is not published.",
)
class CheckpointUnpublished(ReferenceClient):
    def _checkpoint_version(self, seg: LogSegment) -> int | None:
        return seg.latest_version


@fault("compact-unpublished", "client", ("WRT-COMPACTION-PUBLISHED",), "Compacts any ratified range, published or not.")
class CompactUnpublished(ReferenceClient):
    def _compaction_allowed(self, seg: LogSegment, start: int, end: int) -> bool:
        return 0 <= start <= end and all(v in seg.commits for v in range(start, end + 1))


@fault(
    "ignore-maintenance-policy",
    "client",
    ("WRT-MAINTENANCE-POLICY",),
    "Runs maintenance without consulting the catalog's policy.",
)
class IgnoreMaintenancePolicy(ReferenceClient):
    def _policy_allows(self, table_id: str, op: MaintenanceOp) -> bool:
        return True


@fault(
    "cleanup-without-checkpoint",
    "client",
    ("WRT-CLEANUP-NEEDS-CHECKPOINT",),
    "Without a checkpoint at or before the cut-off, cleans up as if there were one at the cut-off.",
)
class CleanupWithoutCheckpoint(ReferenceClient):
    def _cleanup_plan(self, uris: list[str], cutoff_version: int) -> list[str]:
        files = log_files(uris)
        cp = cut_off_checkpoint(files, cutoff_version)
        return files_to_delete(files, cutoff_version if cp is None else cp)


@fault(
    "cleanup-drops-after-checkpoint",
    "client",
    ("WRT-CLEANUP-KEEPS",),
    "Also deletes the published commits after the cut-off checkpoint up to the cut-off version.",
)
class CleanupDropsAfterCheckpoint(ReferenceClient):
    def _cleanup_plan(self, uris: list[str], cutoff_version: int) -> list[str]:
        files = log_files(uris)
        cp = cut_off_checkpoint(files, cutoff_version)
        if cp is None:
            return []
        extra = [f.uri for f in files if f.kind == "delta" and cp < f.version <= cutoff_version]
        return sorted(set(files_to_delete(files, cp)) | set(extra))


@fault(
    "cleanup-above-cutoff",
    "client",
    ("WRT-CLEANUP-STAGED-ABOVE",),
    "Deletes every staged commit, also those above the cut-off checkpoint.",
)
class CleanupAboveCutoff(ReferenceClient):
    def _cleanup_plan(self, uris: list[str], cutoff_version: int) -> list[str]:
        files = log_files(uris)
        cp = cut_off_checkpoint(files, cutoff_version)
        if cp is None:
            return []
        return sorted(set(files_to_delete(files, cp)) | {f.uri for f in files if f.kind == "staged"})


@fault("cleanup-keeps-staged", "client", ("WRT-CLEANUP-STAGED-BELOW",), "Never deletes staged commits.")
class CleanupKeepsStaged(ReferenceClient):
    def _cleanup_plan(self, uris: list[str], cutoff_version: int) -> list[str]:
        staged = {f.uri for f in log_files(uris) if f.kind == "staged"}
        return [u for u in plan_cleanup(uris, cutoff_version) if u not in staged]


@fault("cleanup-keeps-compactions", "client", ("WRT-CLEANUP-COMPACTION",), "Never deletes log compaction files.")
class CleanupKeepsCompactions(ReferenceClient):
    def _cleanup_plan(self, uris: list[str], cutoff_version: int) -> list[str]:
        compactions = {f.uri for f in log_files(uris) if f.kind == "compaction"}
        return [u for u in plan_cleanup(uris, cutoff_version) if u not in compactions]


@fault(
    "cleanup-compaction-after-checkpoint",
    "client",
    ("WRT-CLEANUP-COMPACTION",),
    "Deletes only log compaction files starting below the cut-off checkpoint, keeping one that starts at it.",
)
class CleanupCompactionAfterCheckpoint(ReferenceClient):
    def _cleanup_plan(self, uris: list[str], cutoff_version: int) -> list[str]:
        files = log_files(uris)
        cp = cut_off_checkpoint(files, cutoff_version)
        at_cp = {f.uri for f in files if f.kind == "compaction" and f.version == cp}
        return [u for u in plan_cleanup(uris, cutoff_version) if u not in at_cp]


# ====================================================================== discovery


@fault(
    "guess-location",
    "client",
    ("WRT-DISCOVERY", "RDR-DISCOVERY"),
    "Uses <parent of the resolved location>/<name> as the table location instead of the resolved one.",
)
class GuessLocation(ReferenceClient):
    def _table(self, name: str) -> TableInfo:
        info = super()._table(name)  # only for the table id
        parent = info.location.rstrip("/").rsplit("/", 1)[0]
        return replace(info, location=f"{parent}/{name}")


# ====================================================================== readers


class _FilesystemReader(LogReader):
    def _ratified_commits(self, table_id: str, listing: list[FileInfo]) -> GetCommitsResponse:
        published = [lf.version for lf, _ in listed_log_files(listing) if lf.kind == "delta"]
        return GetCommitsResponse([], max(published, default=-1))


@fault(
    "filesystem-reader",
    "client",
    ("RDR-UNPUBLISHED", "INT-ROUNDTRIP"),
    "Never asks the catalog for commits: reads only published files, up to the newest one.",
)
class FilesystemReader(ReferenceClient):
    reader_class = _FilesystemReader


class _PreferPublishedReader(LogReader):
    def _pick_commit(self, ratified: CommitRef | None, published: CommitRef | None) -> CommitRef | None:
        return published if published is not None else ratified


@fault(
    "prefer-published",
    "client",
    ("RDR-CATALOG-PRECEDENCE", "RDR-GOLDEN-TABLES"),
    "Uses the published file of a version even when the catalog supplies that commit.",
)
class PreferPublished(ReferenceClient):
    reader_class = _PreferPublishedReader


class _ReadPastLatestReader(LogReader):
    def _ratified_commits(self, table_id: str, listing: list[FileInfo]) -> GetCommitsResponse:
        resp = super()._ratified_commits(table_id, listing)
        published = [lf.version for lf, _ in listed_log_files(listing) if lf.kind == "delta"]
        return replace(resp, latest_version=max([resp.latest_version, *published]))


@fault(
    "read-past-latest",
    "client",
    ("RDR-IGNORE-ABOVE-LATEST", "RDR-GOLDEN-TABLES"),
    "Also uses published files above the catalog's latest ratified version.",
)
class ReadPastLatest(ReferenceClient):
    reader_class = _ReadPastLatestReader


class _TrustStagedReader(LogReader):
    def _ratified_commits(self, table_id: str, listing: list[FileInfo]) -> GetCommitsResponse:
        """Treats the newest parseable staged file of each version the catalog did not supply
        as ratified, also above the catalog's latest version."""
        resp = super()._ratified_commits(table_id, listing)
        supplied = {c.version for c in resp.commits}
        guessed: dict[int, RatifiedCommit] = {}
        entries = listed_log_files(listing)
        staged = [(fi.mtime_ms, lf.uri, lf.version) for lf, fi in entries if lf.kind == "staged"]
        for _mtime, uri, version in sorted(staged, reverse=True):  # newest first
            if version in supplied or version in guessed:
                continue
            try:
                decode_commit(self.storage.get(uri))
            except (InvalidCommitError, FileNotFoundError):
                continue
            guessed[version] = RatifiedCommit(version, staged_uri=uri)
        commits = sorted([*resp.commits, *guessed.values()], key=lambda c: c.version)
        return GetCommitsResponse(commits, max([resp.latest_version, *guessed]))


@fault(
    "trust-staged-files",
    "client",
    ("RDR-IGNORE-UNRATIFIED", "RDR-RFC-EXAMPLE"),
    "Interprets _staged_commits itself: the newest parseable staged file of a version counts as ratified.",
)
class TrustStagedFiles(ReferenceClient):
    reader_class = _TrustStagedReader


class _CatalogOnlyReader(LogReader):
    def _list_log(self, location: str) -> list[FileInfo]:
        return []


@fault(
    "catalog-only-reader",
    "client",
    # Without the listing, no golden table whose published files matter reads right either.
    ("RDR-LIST-FALLBACK", "RDR-GOLDEN-TABLES"),
    "Never lists _delta_log: only the catalog's commits are used.",
)
class CatalogOnlyReader(ReferenceClient):
    reader_class = _CatalogOnlyReader


class _MtimeReader(LogReader):
    def _commit_timestamp(self, ref: CommitRef, actions: list[Action]) -> int:
        return ref.mtime_ms if ref.mtime_ms is not None else super()._commit_timestamp(ref, actions)


@fault(
    "mtime-time-travel",
    "client",
    ("RDR-TIME-TRAVEL-ICT",),
    "Time travel by timestamp uses file modification times instead of in-commit timestamps.",
)
class MtimeTimeTravel(ReferenceClient):
    reader_class = _MtimeReader


# ====================================================================== path-based access (no catalog)


@fault(
    "path-reader",
    "client",
    ("RDR-PATH-READ-REFUSED",),
    "Given only the table's path, reads the published log as an ordinary table, ignoring catalogManaged.",
)
class PathReader(ReferenceClient):
    def _refuse_path_read(self, snapshot: Snapshot) -> Exception | None:
        return None


@fault(
    "path-writer",
    "client",
    ("WRT-PATH-WRITE-REFUSED",),
    "Given only the table's path, commits _delta_log/<v>.json through the filesystem, ignoring catalogManaged.",
)
class PathWriter(ReferenceClient):
    def _refuse_path_write(self, snapshot: Snapshot) -> Exception | None:
        return None


# ====================================================================== issue 18: free dimensions


@fault(
    "ict-own-clock",
    "client",
    ("WRT-ICT-MONOTONIC",),
    "Stamps each commit with its own clock, ignoring the previous commit's in-commit timestamp.",
)
class IctOwnClock(ReferenceClient):
    def _next_ict(self, previous: int | None) -> int:
        return self.clock()


@fault(
    "retry-stale-content",
    "client",
    ("WRT-STAGED-NO-REUSE",),
    "After a lost race the retry copies the lost attempt's bytes into a new staged file.",
)
class RetryStaleContent(ReferenceClient):
    def _stage(self, location: str, version: int, content: bytes, previous: str | None) -> str:
        return super()._stage(location, version, self.storage.get(previous) if previous else content, previous)


@fault(
    "staged-name-nineteen-zeros",
    "client",
    ("WRT-STAGED-NAME",),
    "Names staged files as 19 zeros and the version: right below version 10 only.",
)
class StagedNameNineteenZeros(ReferenceClient):
    def _staged_uri(self, location: str, version: int) -> str:
        return f"{staged_dir(location)}/{'0' * 19}{version}.{self._uuid()}.json"


@fault(
    "publish-text-order",
    "client",
    ("WRT-PUBLISH-ORDER",),
    "Publishes commits sorted as text: version 10 before version 9.",
)
class PublishTextOrder(ReferenceClient):
    def _publish_order(self, versions: list[int]) -> list[int]:
        return sorted(versions, key=str)


@fault(
    "compaction-end-exclusive",
    "client",
    ("WRT-COMPACTION-PUBLISHED",),
    "Checks a compaction range for publication with an exclusive end: the last version is not checked.",
)
class CompactionEndExclusive(ReferenceClient):
    def _compaction_allowed(self, seg: LogSegment, start: int, end: int) -> bool:
        return 0 <= start <= end and all(v in seg.published for v in range(start, end))


class _ClampingReader(LogReader):
    def snapshot(self, table_id: str, location: str, version: int | None = None) -> Snapshot:
        seg = self.segment(table_id, location)
        return self.snapshot_of(seg, None if version is not None and version > seg.latest_version else version)


@fault(
    "clamp-version-above-latest",
    "client",
    ("RDR-IGNORE-ABOVE-LATEST",),
    "A read as of a version above the catalog's latest answers the latest version instead of failing.",
)
class ClampVersionAboveLatest(ReferenceClient):
    reader_class = _ClampingReader


class _EngineTimestampReader(LogReader):
    def _commit_timestamp(self, ref: CommitRef, actions: list[Action]) -> int:
        info = act.commit_info(actions) or {}
        stamp = info.get("timestamp")
        return stamp if isinstance(stamp, int) else super()._commit_timestamp(ref, actions)


@fault(
    "commitinfo-timestamp-time-travel",
    "client",
    ("RDR-TIME-TRAVEL-ICT",),
    "Time travel by timestamp uses commitInfo.timestamp instead of the in-commit timestamp.",
)
class CommitInfoTimestampTimeTravel(ReferenceClient):
    reader_class = _EngineTimestampReader


@fault(
    "compaction-reads-one-more",
    "client",
    breaks=("WRT-COMPACTION-CONTENT",),
    description="A log compaction of x to y also folds in commit y + 1 when it exists (a range end off by one).",
)
class CompactionReadsOneMore(ReferenceClient):
    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        table = self._table(name)
        if not self._policy_allows(table.table_id, "log_compaction"):
            return False
        seg = self._log.segment(table.table_id, table.location)
        if not self._compaction_allowed(seg, start_version, end_version):
            return False
        last = end_version + 1 if end_version + 1 in seg.commits else end_version
        commits = [self._log.commit_actions(seg.commits[v]) for v in range(start_version, last + 1)]
        data = act.encode_commit(reconcile(commits))
        self.storage.put(compaction_uri(table.location, start_version, end_version), data, if_absent=True)
        return True


class _CheckpointForgetsIct(LogReader):
    def snapshot_of(self, seg: LogSegment, version: int | None = None) -> Snapshot:
        snap = super().snapshot_of(seg, version)
        if snap.checkpoint_version is not None:  # only what was replayed after the checkpoint is known
            snap.commit_infos.pop(snap.checkpoint_version, None)
        return snap


@fault(
    "ict-lost-at-checkpoint",
    "client",
    breaks=("WRT-ICT-MONOTONIC",),
    description="Takes the previous in-commit timestamp from replayed commits only: after a checkpoint of the"
    " latest version it stamps its own clock.",
)
class IctLostAtCheckpoint(ReferenceClient):
    log_class = _CheckpointForgetsIct


class _NoCheckpointReader(LogReader):
    def _base_checkpoint(self, seg: LogSegment, target: int) -> tuple[int | None, list[Action]]:
        return None, []  # every commit replayed from version 0, checkpoints never read


@fault(
    "replay-from-zero",
    "client",
    breaks=("RDR-LIST-FALLBACK",),
    description="The reader never reads checkpoints: it replays every commit from version 0 and cannot"
    " read a table after metadata cleanup.",
)
class ReplayFromZero(ReferenceClient):
    reader_class = _NoCheckpointReader


@fault(
    "refused-proposal-written-to-log",
    "client",
    ("WRT-NO-FILESYSTEM-COMMIT",),
    "When the catalog refuses a proposal (its cap on unpublished commits is reached), commits it by writing"
    " _delta_log/<v>.json itself.",
)
class RefusedProposalWrittenToLog(ReferenceClient):
    _attempt: tuple[int, bytes] | None = None

    def _before_propose(self, table: TableInfo, version: int, content: bytes) -> None:
        self._attempt = (version, content)

    def _commit(self, table: TableInfo, operation: str, build: Builder) -> int:
        try:
            return super()._commit(table, operation, build)
        except CommitRejected:
            assert self._attempt is not None
            version, content = self._attempt
            self.storage.put(delta_uri(table.location, version), content, if_absent=True)
            return version


# ====================================================================== issue 28 round 6 (helper B)


@fault(
    "checkpoint-drops-configuration",
    "client",
    ("WRT-ICT-ENABLED",),
    "Checkpoints hold the table's metaData with an empty configuration: replayed from a checkpoint, the table"
    " has in-commit timestamps off (every commit is right).",
)
class CheckpointDropsConfiguration(ReferenceClient):
    def checkpoint(self, name: str) -> int | None:
        from reference_impl.delta.checkpoint import write_checkpoint

        table = self._table(name)
        if not self._policy_allows(table.table_id, "checkpoint"):
            return None
        seg = self._log.segment(table.table_id, table.location)
        version = self._checkpoint_version(seg)
        if version is None:
            return None
        state = self._log.snapshot_of(seg, version).state_actions()
        emptied = [{"metaData": {**a["metaData"], "configuration": {}}} if "metaData" in a else a for a in state]
        write_checkpoint(self.storage, table.location, version, emptied)
        return version


class _GzipReader(LogReader):
    def commit_bytes(self, ref: CommitRef) -> bytes:
        import gzip

        data = super().commit_bytes(ref)
        return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


@fault(
    "staged-large-gzip",
    "client",
    ("WRT-STAGED-FORMAT",),
    "Staged commits above 16 KiB are written gzip-compressed (its own reader decompresses them): no other"
    " reader can parse a large ratified commit before it is published.",
)
class StagedLargeGzip(ReferenceClient):
    reader_class = _GzipReader
    log_class = _GzipReader

    def _stage(self, location: str, version: int, content: bytes, previous: str | None) -> str:
        import gzip

        packed = gzip.compress(content) if len(content) > 16 * 1024 else content
        return super()._stage(location, version, packed, previous)


@fault(
    "location-cached",
    "client",
    ("WRT-DISCOVERY",),
    "Resolves a table's name on every call but keeps the location of its first resolution: once the name is"
    " dropped and given to a new table, it writes in the dropped table's folder.",
)
class LocationCached(ReferenceClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._locations: dict[str, str] = {}

    def _table(self, name: str) -> TableInfo:
        info = super()._table(name)
        return replace(info, location=self._locations.setdefault(name, info.location))


# ---------------------------------------------------------------- readers: old versions and a publication race


class _ClampingTimeTravelReader(LogReader):
    def version_at(self, table_id: str, location: str, timestamp_ms: int) -> int:
        """A moment before the oldest version it can build gets that version ("the closest we have")."""
        from reference_impl.delta.snapshot import TimestampOutOfRange

        try:
            return super().version_at(table_id, location, timestamp_ms)
        except TimestampOutOfRange:
            seg = self.segment(table_id, location)
            oldest = seg.latest_version
            while oldest - 1 in seg.commits:
                oldest -= 1
            return oldest


@fault(
    "time-travel-clamps-to-oldest",
    "client",
    ("RDR-TIME-TRAVEL-ICT",),
    "A timestamp before the table's creation (or before the oldest commit metadata cleanup left) reads the oldest"
    " version it can build instead of refusing: a version committed after the moment asked for.",
)
class TimeTravelClampsToOldest(ReferenceClient):
    reader_class = _ClampingTimeTravelReader


class _LaterCheckpointReader(LogReader):
    def _base_checkpoint(self, seg: LogSegment, target: int) -> tuple[int | None, list[Action]]:
        """With commit 0 cleaned up and no checkpoint at or below ``target``, starts from the oldest
        checkpoint above it and replays nothing: the checkpoint's state under ``target``'s number."""
        from reference_impl.delta.checkpoint import read_checkpoint

        cp, base = super()._base_checkpoint(seg, target)
        if cp is None and 0 not in seg.commits and seg.checkpoints:
            cp = min(seg.checkpoints)
            base = read_checkpoint(self.storage, seg.location, cp)
        return cp, base


@fault(
    "old-version-from-later-checkpoint",
    "client",
    ("RDR-LIST-FALLBACK",),
    "After metadata cleanup, a read of a version below the oldest checkpoint answers the checkpoint's rows under"
    " the old version's number instead of refusing.",
)
class OldVersionFromLaterCheckpoint(ReferenceClient):
    reader_class = _LaterCheckpointReader


class _ListOnceReader(LogReader):
    def _published_meanwhile(self, listing: list[FileInfo], ratified: GetCommitsResponse) -> bool:
        return False  # LISTs before asking the catalog and never again


@fault(
    "list-before-catalog",
    "client",
    ("RDR-LIST-FALLBACK",),
    "LISTs _delta_log before asking the catalog and never again: commits another client publishes and marks in"
    " between are in neither answer, and the read fails.",
)
class ListBeforeCatalog(ReferenceClient):
    reader_class = _ListOnceReader
