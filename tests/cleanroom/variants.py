"""Faulty variants of the clean-room target: each breaks ONE normative rule of the catalogManaged RFC.

Every variant is a target (``tests.cleanroom.variants:<Name>``) whose catalog or client is the
correct one with one decision replaced, the way real implementations get it wrong. Its docstring
names the rule (requirement ID of docs/requirements.md, or the RFC passage when no requirement
states it yet) and the profile that judges it; ``VARIANTS`` repeats that as data for
tests/test_cleanroom.py and docs/mutation.md.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

from conformance.contract.delta import (
    Catalog,
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    RatifiedCommit,
    Storage,
    TableInfo,
)
from tests.cleanroom.catalog import CleanCatalog, TableState
from tests.cleanroom.client import Action, CleanClient, LogView, decode, encode
from tests.cleanroom.target import CleanRoomTarget

# ====================================================================== catalog (delta-cm-catalog)


class _GapAfterCreation(CleanCatalog):
    def check_sequence(self, t: TableState, version: int) -> None:
        if version <= t.latest:
            raise CommitConflict(f"version {version} is already ratified", latest_version=t.latest)
        if t.latest > 0 and version != t.latest + 1:  # "first commit" path skips the gap test
            raise CommitRejected(f"version {version} would leave a gap after {t.latest}")


class FirstCommitOverGap(CleanRoomTarget):
    """CAT-RATIFY-SEQUENTIAL (MUST, catalog): the first commit after creation is ratified over a gap.

    The gap test only runs once the table has a commit beyond version 0, so version 3 proposed on a
    fresh table is ratified (what Unity Catalog OSS 0.6.0 was seen doing).
    """

    catalog_cls = _GapAfterCreation


class _AnyVersionInName(CleanCatalog):
    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        if not staged_uri.startswith(prefix) or not staged_uri.endswith(".json"):
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class StagedNameOtherVersion(CleanRoomTarget):
    """RFC "Delta Log Entries" note (MUST-level: a staged file's version is authoritative), catalog.

    The catalog ratifies ``00000000000000000005.<uuid>.json`` as version 3: it checks the folder,
    not the version in the name. Judged by CAT-STAGED-VERSION (added for issue 18; when this set was
    written no catalog requirement stated it).
    """

    catalog_cls = _AnyVersionInName


class _EscapingStagedPath(CleanCatalog):
    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        name = staged_uri.rsplit("/", 1)[-1]
        if not staged_uri.startswith(t.location) or not name.startswith(f"{version:020d}."):
            raise InvalidRequest(f"bad staged commit {staged_uri!r}")


class StagedPathEscapes(CleanRoomTarget):
    """RFC "Terminology - Commits" (staged commit lives in _delta_log/_staged_commits/), catalog.

    Only the table prefix and the file name are checked, so ``.../_staged_commits/../../x/<v>.<uuid>.json``
    or a file that was never written is ratified. Judged by CAT-STAGED-IN-TABLE (added for issue 18;
    when this set was written no catalog requirement stated it).
    """

    catalog_cls = _EscapingStagedPath


class _ListFromStartMinusOne(CleanCatalog):
    def listed(self, t: TableState, lo: int, hi: int) -> list[RatifiedCommit]:
        return [t.stored[v] for v in sorted(t.stored) if lo - 1 <= v <= hi]  # "> start" turned into ">= start-1"


class ListRangeOffByOne(CleanRoomTarget):
    """CAT-LIST-RANGE (MUST, catalog): a bounded listing also returns the commit just below start_version."""

    catalog_cls = _ListFromStartMinusOne


class _ListExclusiveEnd(CleanCatalog):
    def listed(self, t: TableState, lo: int, hi: int) -> list[RatifiedCommit]:
        return [t.stored[v] for v in range(lo, hi) if v in t.stored]  # range() excludes hi


class ListDropsLatest(CleanRoomTarget):
    """CAT-LIST-CONTIGUOUS (MUST, catalog).

    The listing's end bound is exclusive, so the latest commit is never listed.
    """

    catalog_cls = _ListExclusiveEnd


class _ForgetOneTooMany(CleanCatalog):
    def forget_published(self, t: TableState, version: int) -> None:
        for v in [v for v in t.stored if v <= version + 1]:  # off by one: "up to and including the next"
            del t.stored[v]
        t.published = max(t.published, version)


class ForgetAboveMark(CleanRoomTarget):
    """CAT-FORGET-PUBLISHED-ONLY (MUST, catalog): publication up to b also drops commit b+1, still unpublished."""

    catalog_cls = _ForgetOneTooMany


class _LatestFromStored(CleanCatalog):
    def latest_of(self, t: TableState) -> int:
        return max(t.stored, default=0)  # SELECT max(version) FROM commits


class LatestFromStoredCommits(CleanRoomTarget):
    """CAT-LIST-LATEST (MUST, catalog): the latest version is the newest stored commit, 0 once all are published."""

    catalog_cls = _LatestFromStored


class _ConflictNamesPublished(CleanCatalog):
    def check_sequence(self, t: TableState, version: int) -> None:
        if version <= t.latest:
            raise CommitConflict(f"version {version} is taken", latest_version=t.published)
        super().check_sequence(t, version)


class ConflictReportsPublishedMark(CleanRoomTarget):
    """CAT-CONFLICT-LATEST (SHOULD, catalog).

    A conflict reports the publication mark, not the latest ratified version.
    """

    catalog_cls = _ConflictNamesPublished


class _UnlockedRatify(CleanCatalog):
    def ratify_lock(self, t: TableState) -> AbstractContextManager[object]:
        return contextlib.nullcontext()  # "the database serializes us" - but this one is a dict

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        time.sleep(0.001)  # stands for the database round trip between "SELECT max(version)" and "INSERT"
        super().store(t, commit)


class RacyRatify(CleanRoomTarget):
    """CAT-RATIFY-RACE (MUST, catalog): check-then-store without a lock; concurrent proposals can both win."""

    catalog_cls = _UnlockedRatify


class _ConflictOnlyWhenStored(CleanCatalog):
    def check_sequence(self, t: TableState, version: int) -> None:
        if version in t.stored:  # forgotten (published) versions are not seen as taken
            raise CommitConflict(f"version {version} is already ratified", latest_version=t.latest)
        if version > t.latest + 1:
            raise CommitRejected(f"version {version} would leave a gap after {t.latest}")


class ReratifyForgotten(CleanRoomTarget):
    """CAT-RATIFY-ONCE (MUST, catalog): a version published and forgotten can be ratified a second time."""

    catalog_cls = _ConflictOnlyWhenStored


class _InlineAsText(CleanCatalog):
    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if commit.inline_content is not None:  # kept in a TEXT column, trimmed
            commit = RatifiedCommit(
                commit.version, None, commit.inline_content.decode().strip().encode(), commit.in_commit_timestamp
            )
        super().store(t, commit)


class InlineTrimmed(CleanRoomTarget):
    """CAT-RETAIN-UNPUBLISHED (MUST, catalog): inline commits are served without their final newline.

    Hosting inline commits is optional (CAT-INLINE-COMMITS, MAY), but once a commit is ratified it
    must stay unchanged until published.
    """

    catalog_cls = _InlineAsText


class _StagingBySecond(CleanCatalog):
    def new_location(self, table_id: str) -> str:
        return f"{self.warehouse}/cr-tables/t{int(time.time())}"  # a timestamp "is unique enough"


class StagingLocationPerSecond(CleanRoomTarget):
    """CAT-STAGING-UNIQUE (SHOULD, catalog).

    Staging locations named by the second, so tables created together share one.
    """

    catalog_cls = _StagingBySecond


# ====================================================================== writer (delta-cm-writer)


class _WallClockIct(CleanClient):
    def next_ict(self, previous: int | None) -> int:
        return self.now_ms()


class IctWallClock(CleanRoomTarget):
    """WRT-ICT-MONOTONIC (MUST, writer).

    The in-commit timestamp is the wall clock, equal for commits in one millisecond.
    """

    client_cls = _WallClockIct


_HOSTS = itertools.count()


class _SkewedHostIct(CleanClient):
    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        super().__init__(catalog, storage)
        self.skew_ms = -3_600_000 if next(_HOSTS) % 2 else 0  # every other client runs on a host an hour behind

    def now_ms(self) -> int:
        return super().now_ms() + self.skew_ms

    def next_ict(self, previous: int | None) -> int:
        return self.now_ms()  # trusts its own clock, ignores the previous commit's timestamp


class IctClockSkew(CleanRoomTarget):
    """WRT-ICT-MONOTONIC (MUST, writer): each client stamps its own clock; a writer an hour behind goes backwards."""

    client_cls = _SkewedHostIct


class _CreateWithoutTxnId(CleanClient):
    def commit_info(self, operation: str, ict: int, *, first: bool = False) -> Action:
        action = super().commit_info(operation, ict, first=first)
        if first:
            del action["commitInfo"]["txnId"]  # CREATE TABLE goes through another code path
        return action


class CreateWithoutTxnId(CleanRoomTarget):
    """WRT-TXNID (MUST, writer): version 0 (CREATE TABLE) has no txnId in its commitInfo."""

    client_cls = _CreateWithoutTxnId


class _SessionTxnId(CleanClient):
    def txn_id(self) -> str:
        return self.session_id  # one id per client session, not per transaction


class TxnIdPerSession(CleanRoomTarget):
    """WRT-TXNID-UNIQUE (MUST, writer): the txnId is the client's session id, shared by all its commits."""

    client_cls = _SessionTxnId


class _ReproposeStagedFile(CleanClient):
    def stage(self, log: str, version: int, content: bytes, previous_uri: str | None) -> str:
        if previous_uri is not None:
            return previous_uri  # "the bytes are written already": propose the same file again
        return super().stage(log, version, content, previous_uri)


class ReuseStagedFileAfterConflict(CleanRoomTarget):
    """WRT-STAGED-NO-REUSE (MUST, writer).

    After a lost race the staged file of the old version is proposed for the new one.
    """

    client_cls = _ReproposeStagedFile


class _StaleRetry(CleanClient):
    def stage(self, log: str, version: int, content: bytes, previous_uri: str | None) -> str:
        if previous_uri is not None:
            content = self.storage.get(previous_uri)  # retry copies the first attempt instead of rebuilding it
        return super().stage(log, version, content, previous_uri)


class RetryKeepsStaleCommit(CleanRoomTarget):
    """WRT-STAGED-NO-REUSE (MUST, writer): after a conflict the old attempt's actions are copied, not written again.

    The new file carries the first attempt's commitInfo (in-commit timestamp, txnId), built
    against a snapshot that is no longer the previous version.
    """

    client_cls = _StaleRetry


class _NinteenZeros(CleanClient):
    def staged_name(self, version: int) -> str:
        return f"{'0' * 19}{version}.{uuid.uuid4()}.json"  # right for 0-9 only


class StagedNameMultiDigit(CleanRoomTarget):
    """WRT-STAGED-NAME (MUST, writer): staged names are 19 zeros and the version: 21 digits from version 10 on."""

    client_cls = _NinteenZeros


class _PublishAsText(CleanClient):
    def publish_order(self, commits: list[RatifiedCommit]) -> list[RatifiedCommit]:
        return sorted(commits, key=lambda c: str(c.version))


class PublishTextOrder(CleanRoomTarget):
    """WRT-PUBLISH-ORDER (MUST, writer): commits published sorted as text, so 10 before 9 (multi-digit only)."""

    client_cls = _PublishAsText


class _CheckpointLatest(CleanClient):
    def checkpoint_version(self, view: LogView) -> int | None:
        return view.latest  # the snapshot is buildable from the catalog, so why wait


class CheckpointUnpublished(CleanRoomTarget):
    """WRT-CHECKPOINT-PUBLISHED (MUST, writer): checkpoints the latest ratified version, published or not."""

    client_cls = _CheckpointLatest


class _CompactionRangeExclusive(CleanClient):
    def compaction_allowed(self, view: LogView, start: int, end: int) -> bool:
        return all(v in view.published for v in range(start, end))  # forgets that end is inclusive


class CompactionEndUnpublished(CleanRoomTarget):
    """WRT-COMPACTION-PUBLISHED (MUST, writer): the published test skips the range's last version."""

    client_cls = _CompactionRangeExclusive


class _StagedByCutoffCommit(CleanClient):
    def cleanup_doomed(self, view: LogView, files: list[str], checkpoint: int, cutoff: int) -> list[str]:
        doomed = super().cleanup_doomed(view, files, checkpoint, cutoff)
        staged = f"{view.info.location}/_delta_log/_staged_commits/"
        for uri in files:
            if uri.startswith(staged) and int(uri[len(staged) :][:20]) <= cutoff and uri not in doomed:
                doomed.append(uri)  # staged files up to the cut-off COMMIT, not the cut-off checkpoint
        return doomed


class CleanupStagedAboveCheckpoint(CleanRoomTarget):
    """WRT-CLEANUP-STAGED-ABOVE (MUST, writer).

    Staged commits are deleted up to the cut-off commit, above the checkpoint.
    """

    client_cls = _StagedByCutoffCommit


class _DropsCutoffCheckpoint(CleanClient):
    def cleanup_doomed(self, view: LogView, files: list[str], checkpoint: int, cutoff: int) -> list[str]:
        doomed = super().cleanup_doomed(view, files, checkpoint, cutoff)
        return doomed + [view.checkpoints[checkpoint]]  # "<=" where "<" was meant for checkpoint files


class CleanupDropsCutoffCheckpoint(CleanRoomTarget):
    """WRT-CLEANUP-KEEPS (MUST, writer): cleanup deletes the cut-off checkpoint itself."""

    client_cls = _DropsCutoffCheckpoint


class _CutoffAsCheckpoint(CleanClient):
    def cleanup_cutoff_checkpoint(self, view: LogView, cutoff: int) -> int | None:
        found = super().cleanup_cutoff_checkpoint(view, cutoff)
        return cutoff if found is None else found  # "no checkpoint: the cut-off commit will do"


class CleanupWithoutCheckpoint(CleanRoomTarget):
    """WRT-CLEANUP-NEEDS-CHECKPOINT (MUST, writer): without a checkpoint the cut-off commit is used as one."""

    client_cls = _CutoffAsCheckpoint


class _StagedBelowCheckpointOnly(CleanClient):
    def cleanup_doomed(self, view: LogView, files: list[str], checkpoint: int, cutoff: int) -> list[str]:
        doomed = super().cleanup_doomed(view, files, checkpoint, cutoff)
        at = f"{view.info.location}/_delta_log/_staged_commits/{checkpoint:020d}."
        return [uri for uri in doomed if not uri.startswith(at)]  # "<" where "<=" was meant


class CleanupKeepsStagedAtCheckpoint(CleanRoomTarget):
    """WRT-CLEANUP-STAGED-BELOW (SHOULD, writer): the staged commit at the checkpoint's version is kept."""

    client_cls = _StagedBelowCheckpointOnly


class _PolicyForCheckpointsOnly(CleanClient):
    def policy_allows(self, info: TableInfo, op: str) -> bool:
        return super().policy_allows(info, op) if op == "checkpoint" else True


class PolicyOnlyForCheckpoints(CleanRoomTarget):
    """WRT-MAINTENANCE-POLICY (MUST, writer).

    The catalog is consulted before checkpoints, not before compaction or cleanup.
    """

    client_cls = _PolicyForCheckpointsOnly


class _PrePublish(CleanClient):
    def before_propose(self, log: str, version: int, content: bytes) -> None:
        with contextlib.suppress(FileExistsError):  # "publish optimistically, the catalog will agree"
            self.storage.put(f"{log}/{self.delta_name(version)}", content, if_absent=True)


class PublishBeforeRatification(CleanRoomTarget):
    """WRT-NO-FILESYSTEM-COMMIT (MUST, writer): _delta_log/<v>.json is written before the catalog ratifies v."""

    client_cls = _PrePublish


class _DeleteInfoLast(CleanClient):
    def order_actions(self, commit_info: Action, actions: list[Action]) -> list[Action]:
        if any("remove" in a for a in actions):
            return [*actions, commit_info]  # the DELETE path appends commitInfo after the file actions
        return super().order_actions(commit_info, actions)


class DeleteCommitInfoLast(CleanRoomTarget):
    """WRT-COMMITINFO-FIRST (MUST, writer): DELETE commits put commitInfo after their remove/add actions."""

    client_cls = _DeleteInfoLast


class _WritesByPath(CleanClient):
    def append_path(self, location: str, rows: Sequence[dict[str, object]]) -> None:
        log = f"{location.rstrip('/')}/_delta_log/"
        versions = [int(f.uri[len(log) :][:20]) for f in self.storage.list(log) if f.uri[len(log) :][20:] == ".json"]
        add = self.write_data(location.rstrip("/"), rows)  # writer version 7 "is supported": commit by PUT-if-absent
        info = self.commit_info("WRITE", self.now_ms())
        self.storage.put(f"{log}{max(versions) + 1:020d}.json", encode([info, add]), if_absent=True)


class PathWriterCommits(CleanRoomTarget):
    """WRT-PATH-WRITE-REFUSED (MUST, path access): given only the path, the writer commits to the filesystem."""

    client_cls = _WritesByPath


# ====================================================================== reader (delta-cm-reader)


class _PublishedWins(CleanClient):
    def commit_sources(self, view: LogView) -> dict[int, RatifiedCommit | str]:
        sources: dict[int, RatifiedCommit | str] = dict(view.catalog_commits)
        sources.update(view.published)  # "published files are final", so they overwrite the catalog's
        return sources


class PublishedFileWins(CleanRoomTarget):
    """RDR-CATALOG-PRECEDENCE (MUST, reader).

    A published file is used instead of the catalog's commit of that version.
    """

    client_cls = _PublishedWins


class _TrustLastCheckpoint(CleanClient):
    def start_checkpoint(self, view: LogView, target: int) -> int | None:
        if target != view.latest or not self.storage.exists(view.last_checkpoint_uri):
            return super().start_checkpoint(view, target)
        version = int(json.loads(self.storage.get(view.last_checkpoint_uri))["version"])
        if version <= target:
            return super().start_checkpoint(view, target)
        # fast path for reads of the latest version: _last_checkpoint, not checked against the catalog
        view.checkpoints[version] = f"{view.info.location}/_delta_log/{version:020d}.checkpoint.parquet"
        return version


class TrustLastCheckpoint(CleanRoomTarget):
    """RDR-IGNORE-ABOVE-LATEST (MUST, reader).

    _last_checkpoint is used even when it names a version above the latest.
    """

    client_cls = _TrustLastCheckpoint


class _ClampVersion(CleanClient):
    def readable_bound(self, view: LogView, version: int | None) -> int:
        if version is not None and version > view.latest:
            return view.latest  # "as of 12" on a table at 9 answers 9
        return super().readable_bound(view, version)


class ReadAboveLatestAnswers(CleanRoomTarget):
    """RDR-IGNORE-ABOVE-LATEST (MUST, reader).

    Time travel to a version above the latest answers the latest instead of failing.
    """

    client_cls = _ClampVersion


class _StrictlyBefore(CleanClient):
    def version_at(self, timeline: list[tuple[int, int]], timestamp_ms: int) -> int:
        return super().version_at(timeline, timestamp_ms - 1)  # "before" read as strictly before


class TimeTravelStrictlyBefore(CleanRoomTarget):
    """RDR-TIME-TRAVEL-ICT (MUST, reader).

    A timestamp equal to a commit's in-commit timestamp resolves the version before.
    """

    client_cls = _StrictlyBefore


class _CommitInfoTimestamp(CleanClient):
    def timeline(self, view: LogView) -> list[tuple[int, int]]:
        out = []
        for v, source in sorted(self.commit_sources(view).items()):
            for a in decode(self.content(source)):
                if "commitInfo" in a and a["commitInfo"].get("timestamp") is not None:
                    out.append((v, int(a["commitInfo"]["timestamp"])))  # the engine's timestamp, not the ICT
        return out


class TimeTravelByCommitInfoTimestamp(CleanRoomTarget):
    """RDR-TIME-TRAVEL-ICT (MUST, reader): time travel uses commitInfo.timestamp instead of inCommitTimestamp."""

    client_cls = _CommitInfoTimestamp


class _StagedOnly(CleanClient):
    def commit_sources(self, view: LogView) -> dict[int, RatifiedCommit | str]:
        sources: dict[int, RatifiedCommit | str] = dict(view.published)
        sources.update({v: c for v, c in view.catalog_commits.items() if c.staged_uri is not None})
        return sources


class InlineCommitsIgnored(CleanRoomTarget):
    """RDR-UNPUBLISHED (MUST, reader): only staged ratified commits are read; inline ones are skipped."""

    client_cls = _StagedOnly


class _StagedBeforePublished(CleanClient):
    def commit_sources(self, view: LogView) -> dict[int, RatifiedCommit | str]:
        sources = super().commit_sources(view)
        staged = f"{view.info.location}/_delta_log/_staged_commits/"
        for f in self.storage.list(staged):
            v = int(f.uri[len(staged) :][:20])
            if v <= view.latest and v not in view.catalog_commits:
                sources[v] = f.uri  # "a staged file is the freshest copy of a version"
        return sources


class StagedFilesPreferred(CleanRoomTarget):
    """RDR-IGNORE-UNRATIFIED (MUST, reader).

    For a version the catalog no longer lists, any staged file of it is read.
    """

    client_cls = _StagedBeforePublished


class _ReplayAsText(CleanClient):
    def replay_order(self, versions: range) -> list[int]:
        return sorted(versions, key=str)  # commit files replayed in listing order of unpadded names


class ReplayTextOrder(CleanRoomTarget):
    """RDR-UNPUBLISHED / RDR-LIST-FALLBACK (MUST, reader).

    Commits replayed in text order (10 before 2), resurrecting deleted rows.
    """

    client_cls = _ReplayAsText


class _ReadsByPath(CleanClient):
    def read_path(self, location: str) -> list[dict[str, object]]:
        log = f"{location.rstrip('/')}/_delta_log/"
        commits = sorted(f.uri for f in self.storage.list(log) if f.uri[len(log) :][20:] == ".json")
        snap = self.replay(0, [decode(self.storage.get(uri)) for uri in commits])  # the published log is the table
        return self.rows(location.rstrip("/"), snap)


class PathReaderReads(CleanRoomTarget):
    """RDR-PATH-READ-REFUSED (MUST, path access): given only the path, the reader returns the published rows."""

    client_cls = _ReadsByPath


# ====================================================================== the regression set as data


@dataclass(frozen=True)
class Variant:
    target: type[CleanRoomTarget]
    profile: str
    level: str  # of the broken rule
    rule: str  # requirement ID(s) it breaks, or the RFC passage when no requirement states it
    expected: tuple[str, ...]  # requirements a catching run must FAIL (MUST) or WARN (SHOULD) on

    @property
    def name(self) -> str:
        return self.target.__name__

    @property
    def spec(self) -> str:
        return f"tests.cleanroom.variants:{self.name}"


_CAT, _WRT, _RDR, _PATH = "delta-cm-catalog", "delta-cm-writer", "delta-cm-reader", "delta-cm-path-access"
_MALFORMED = ("CAT-RATIFY-SEQUENTIAL", "CAT-RATIFY-ONCE", "CAT-LIST-RATIFIED-ONLY")

VARIANTS: list[Variant] = [
    Variant(FirstCommitOverGap, _CAT, "MUST", "CAT-RATIFY-SEQUENTIAL", ("CAT-RATIFY-SEQUENTIAL",)),
    Variant(StagedNameOtherVersion, _CAT, "MUST", "CAT-STAGED-VERSION", ("CAT-STAGED-VERSION", *_MALFORMED)),
    Variant(StagedPathEscapes, _CAT, "MUST", "CAT-STAGED-IN-TABLE", ("CAT-STAGED-IN-TABLE", *_MALFORMED)),
    Variant(ListRangeOffByOne, _CAT, "MUST", "CAT-LIST-RANGE", ("CAT-LIST-RANGE",)),
    Variant(ListDropsLatest, _CAT, "MUST", "CAT-LIST-CONTIGUOUS", ("CAT-LIST-CONTIGUOUS",)),
    Variant(ForgetAboveMark, _CAT, "MUST", "CAT-FORGET-PUBLISHED-ONLY", ("CAT-FORGET-PUBLISHED-ONLY",)),
    Variant(LatestFromStoredCommits, _CAT, "MUST", "CAT-LIST-LATEST", ("CAT-LIST-LATEST",)),
    Variant(ConflictReportsPublishedMark, _CAT, "SHOULD", "CAT-CONFLICT-LATEST", ("CAT-CONFLICT-LATEST",)),
    Variant(RacyRatify, _CAT, "MUST", "CAT-RATIFY-RACE", ("CAT-RATIFY-RACE",)),
    Variant(ReratifyForgotten, _CAT, "MUST", "CAT-RATIFY-ONCE", ("CAT-RATIFY-ONCE",)),
    Variant(InlineTrimmed, _CAT, "MUST", "CAT-RETAIN-UNPUBLISHED", ("CAT-RETAIN-UNPUBLISHED",)),
    Variant(StagingLocationPerSecond, _CAT, "SHOULD", "CAT-STAGING-UNIQUE", ("CAT-STAGING-UNIQUE",)),
    Variant(IctWallClock, _WRT, "MUST", "WRT-ICT-MONOTONIC", ("WRT-ICT-MONOTONIC",)),
    Variant(IctClockSkew, _WRT, "MUST", "WRT-ICT-MONOTONIC", ("WRT-ICT-MONOTONIC",)),
    Variant(CreateWithoutTxnId, _WRT, "MUST", "WRT-TXNID", ("WRT-TXNID",)),
    Variant(TxnIdPerSession, _WRT, "MUST", "WRT-TXNID-UNIQUE", ("WRT-TXNID-UNIQUE",)),
    Variant(ReuseStagedFileAfterConflict, _WRT, "MUST", "WRT-STAGED-NO-REUSE", ("WRT-STAGED-NO-REUSE",)),
    Variant(RetryKeepsStaleCommit, _WRT, "MUST", "WRT-STAGED-NO-REUSE", ("WRT-STAGED-NO-REUSE", "WRT-ICT-MONOTONIC")),
    Variant(StagedNameMultiDigit, _WRT, "MUST", "WRT-STAGED-NAME", ("WRT-STAGED-NAME",)),
    Variant(PublishTextOrder, _WRT, "MUST", "WRT-PUBLISH-ORDER", ("WRT-PUBLISH-ORDER",)),
    Variant(CheckpointUnpublished, _WRT, "MUST", "WRT-CHECKPOINT-PUBLISHED", ("WRT-CHECKPOINT-PUBLISHED",)),
    Variant(CompactionEndUnpublished, _WRT, "MUST", "WRT-COMPACTION-PUBLISHED", ("WRT-COMPACTION-PUBLISHED",)),
    Variant(CleanupStagedAboveCheckpoint, _WRT, "MUST", "WRT-CLEANUP-STAGED-ABOVE", ("WRT-CLEANUP-STAGED-ABOVE",)),
    Variant(CleanupDropsCutoffCheckpoint, _WRT, "MUST", "WRT-CLEANUP-KEEPS", ("WRT-CLEANUP-KEEPS",)),
    Variant(CleanupWithoutCheckpoint, _WRT, "MUST", "WRT-CLEANUP-NEEDS-CHECKPOINT", ("WRT-CLEANUP-NEEDS-CHECKPOINT",)),
    Variant(CleanupKeepsStagedAtCheckpoint, _WRT, "SHOULD", "WRT-CLEANUP-STAGED-BELOW", ("WRT-CLEANUP-STAGED-BELOW",)),
    Variant(PolicyOnlyForCheckpoints, _WRT, "MUST", "WRT-MAINTENANCE-POLICY", ("WRT-MAINTENANCE-POLICY",)),
    Variant(PublishBeforeRatification, _WRT, "MUST", "WRT-NO-FILESYSTEM-COMMIT", ("WRT-NO-FILESYSTEM-COMMIT",)),
    Variant(DeleteCommitInfoLast, _WRT, "MUST", "WRT-COMMITINFO-FIRST", ("WRT-COMMITINFO-FIRST",)),
    Variant(PathWriterCommits, _PATH, "MUST", "WRT-PATH-WRITE-REFUSED", ("WRT-PATH-WRITE-REFUSED",)),
    Variant(PublishedFileWins, _RDR, "MUST", "RDR-CATALOG-PRECEDENCE", ("RDR-CATALOG-PRECEDENCE",)),
    Variant(TrustLastCheckpoint, _RDR, "MUST", "RDR-IGNORE-ABOVE-LATEST", ("RDR-IGNORE-ABOVE-LATEST",)),
    Variant(ReadAboveLatestAnswers, _RDR, "MUST", "RDR-IGNORE-ABOVE-LATEST", ("RDR-IGNORE-ABOVE-LATEST",)),
    Variant(TimeTravelStrictlyBefore, _RDR, "MUST", "RDR-TIME-TRAVEL-ICT", ("RDR-TIME-TRAVEL-ICT",)),
    Variant(TimeTravelByCommitInfoTimestamp, _RDR, "MUST", "RDR-TIME-TRAVEL-ICT", ("RDR-TIME-TRAVEL-ICT",)),
    Variant(InlineCommitsIgnored, _RDR, "MUST", "RDR-UNPUBLISHED", ("RDR-UNPUBLISHED",)),
    Variant(StagedFilesPreferred, _RDR, "MUST", "RDR-IGNORE-UNRATIFIED", ("RDR-IGNORE-UNRATIFIED",)),
    Variant(
        ReplayTextOrder, _RDR, "MUST", "RDR-UNPUBLISHED, RDR-LIST-FALLBACK", ("RDR-UNPUBLISHED", "RDR-LIST-FALLBACK")
    ),
    Variant(PathReaderReads, _PATH, "MUST", "RDR-PATH-READ-REFUSED", ("RDR-PATH-READ-REFUSED",)),
]
