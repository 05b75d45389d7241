"""Round 12b: faulty variants of the resilient clean-room client (writers and readers).

Each target swaps exactly one side of ``DurableTarget`` (here always the client) for a faulty subclass.
Written from the RFC, the public contract, docs/certify.md and the clean-room baselines only.
"""

from __future__ import annotations

import contextlib
import json
import re
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar

from conformance.contract.delta import Catalog, CatalogTimeout, RatifiedCommit, ReadResult, Storage, TableInfo
from tests.cleanroom.client import (
    Action,
    CleanClient,
    LogView,
    ReadError,
    Snapshot,
    decode,
    encode,
)
from tests.cleanroom_r3.base import DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant, variant_of

_DELTA = re.compile(r"(\d{20})\.json")
_COMPACTION = re.compile(r"(\d{20})\.(\d{20})\.compacted\.json")
# Classic and multi-part checkpoint names (PROTOCOL.md "Checkpoints").
_ANY_CHECKPOINT = re.compile(r"(\d{20})\.checkpoint\.(?:(\d{10})\.(\d{10})\.)?parquet")


# ================================================================ writing clients


class PostCommitChecksumClient(ResilientClient):
    """cr12b-wrt-postcommit-checksum. WRT-MAINTENANCE-POLICY (MUST); RFC "Maintenance Operations on
    Catalog-managed Tables" (maintenance covers checkpoints, log compaction *and version checksum files*;
    clients must consult the catalog before running any maintenance job). Bug: like Spark's post-commit
    hook, the writer writes ``_delta_log/<v>.crc`` (the version checksum: size, file count, in-commit
    timestamp) right after each of its commits is ratified; WRT-CHECKSUM-ANYTIME lets it do so before
    publication, and the engineer took that as "checksums need no permission". It never asks the
    catalog's policy, so under a policy that forbids ``checksum`` every append and delete still runs the
    forbidden job. Why a shallow suite misses it: the policy is tested through the maintenance calls
    (``checkpoint``, ``compact_log``, ``cleanup``) which all honour it; nobody looks for ``.crc`` files
    after a plain append under a policy without ``checksum``."""

    def after_ratified(self, info: TableInfo, version: int) -> None:
        with contextlib.suppress(Exception):  # a post-commit hook never fails the commit
            view = self.view(info)
            snap = self.snapshot(view, version)
            crc = {
                "tableSizeBytes": sum(int(a.get("size", 0)) for a in snap.files.values()),
                "numFiles": len(snap.files),
                "numMetadata": 1,
                "numProtocol": 1,
                "inCommitTimestampOpt": snap.in_commit_timestamp,
                "metadata": snap.metadata,
                "protocol": snap.protocol,
            }
            uri = f"{info.location}/_delta_log/{version:020d}.crc"
            self.storage.put(uri, json.dumps(crc).encode(), if_absent=True)


class PostCommitChecksumTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PostCommitChecksumClient


class CompactionCancelsOutClient(ResilientClient):
    """cr12b-wrt-compaction-cancels-out. WRT-COMPACTION-CONTENT (MUST); RFC "Maintenance Operations on
    Catalog-managed Tables" and PROTOCOL.md "Log Compaction Files" / "Action Reconciliation" (a
    compaction file x..y holds the *reconciled* actions of commits x..y: a removed file leaves its
    ``remove`` tombstone). Bug: the compaction writer reconciles file actions as a net diff: an ``add``
    and a later ``remove`` of the same path inside the range "cancel out" and both are dropped, as if the
    file had never existed. Removes of files added before the range, and adds that survive, are written
    right. Why a shallow suite misses it: ranges of appends only, or a delete of a file written before
    the range, compact correctly; only a range holding both the birth and the deletion of a file (append
    then delete of those rows, both inside x..y) loses the tombstone, which readers of the live files
    never miss (VACUUM and change readers do)."""

    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        info = self._info(name)
        if not self.policy_allows(info, "log_compaction"):
            return False
        view = self.view(info)
        if (
            start_version < 0
            or start_version > end_version
            or not self.compaction_allowed(view, start_version, end_version)
        ):
            return False
        sources = self.commit_sources(view)
        adds: dict[str, Action] = {}
        removes: dict[str, Action] = {}
        other: list[Action] = []
        for v in range(start_version, end_version + 1):
            for a in decode(self.content(sources[v])):
                if "add" in a:
                    adds[a["add"]["path"]] = a
                    removes.pop(a["add"]["path"], None)
                elif "remove" in a:
                    path = a["remove"]["path"]
                    if path in adds:  # born and dead inside the range: net nothing
                        del adds[path]
                    else:
                        removes[path] = a
                elif "commitInfo" not in a:
                    other.append(a)
        body = encode([*other, *adds.values(), *removes.values()])
        uri = f"{info.location}/_delta_log/{start_version:020d}.{end_version:020d}.compacted.json"
        with contextlib.suppress(FileExistsError):
            self.storage.put(uri, body, if_absent=True)
        return True


class CompactionCancelsOutTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CompactionCancelsOutClient


class OutcomeUnknownAssumedLostClient(ResilientClient):
    """cr12b-wrt-outcome-unknown-assumed-lost. WRT-LOST-ANSWER-ONCE (MUST); RFC "Commit Protocol" and
    "Terminology - Commits" (the catalog is the source of truth for whether a commit attempt succeeded).
    Bug: after a lost answer (or a conflict) the writer asks the catalog whether its proposal was
    ratified, as it should, but asks once, on the raw connection: when the answer to *that* listing is
    lost too, it concludes "not ratified, nobody said otherwise" and rebuilds the commit at the next
    version, so the change lands twice. Why a shallow suite misses it: every single lost answer (the
    proposal's, a listing's, a mark's) is handled right; the fault needs the recovery listing itself to
    be lost, two losses in one operation, as a flaky network or a catalog restart produces."""

    def was_ratified(self, info: TableInfo, version: int, staged_uri: str, content: bytes) -> bool:
        try:
            resp = self.raw_catalog.get_commits(info.table_id, version, version)
        except CatalogTimeout:
            return False  # the fault: an unknown outcome taken for a loss
        if resp.latest_version < version:
            return False
        for c in resp.commits:
            if c.version == version:
                return c.staged_uri == staged_uri or (c.inline_content is not None and c.inline_content == content)
        try:
            return self.storage.get(f"{info.location}/_delta_log/{self.delta_name(version)}") == content
        except FileNotFoundError:
            return False


class OutcomeUnknownAssumedLostTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = OutcomeUnknownAssumedLostClient


class CleanupPartialMultipartClient(ResilientClient):
    """cr12b-wrt-cleanup-partial-multipart. WRT-CLEANUP-NEEDS-CHECKPOINT (MUST); RFC "Metadata Cleanup"
    step 2 (without a checkpoint at or before the cut-off commit, do not proceed). Bug: to cooperate with
    engines that write multi-part checkpoints (``<v>.checkpoint.<i>.<n>.parquet``), metadata cleanup
    counts a version as checkpointed when any checkpoint file of it is listed, without checking that
    every part ``1..n`` of the set is there. A multi-part checkpoint whose writer died between parts is no
    checkpoint; the cleanup takes it for the cut-off checkpoint and deletes every commit before it, so
    those versions can no longer be read at all. Why a shallow suite misses it: it runs cleanup without
    any checkpoint (nothing deleted: right) and with this client's own single-file checkpoints (right);
    an incomplete multi-part set is never planted."""

    def cleanup_cutoff_checkpoint(self, view: LogView, cutoff: int) -> int | None:
        log = f"{view.info.location}/_delta_log/"
        found = {v for v in view.checkpoints if v <= cutoff}
        for f in self.storage.list(log):
            m = _ANY_CHECKPOINT.fullmatch(f.uri[len(log) :])
            if m and int(m.group(1)) <= min(cutoff, view.latest):
                found.add(int(m.group(1)))  # the fault: one part stands for the whole set
        return max(found) if found else None


class CleanupPartialMultipartTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CleanupPartialMultipartClient


class ParallelPublishClient(ResilientClient):
    """cr12b-wrt-parallel-publish. WRT-PUBLISH-ORDER (MUST); RFC "Publishing Commits" (version v-1 must be
    published before version v). Bug: to catch up a long backlog faster, the publisher copies the
    ratified commits to ``_delta_log/<v>.json`` with a pool of 4 workers (submitted in version order) and
    sends the publication mark only once all copies are done. The final log is complete and identical;
    but while the copies run, a slow PUT of v leaves v+1 (and v+2...) published before it: a reader or a
    cleanup listing ``_delta_log`` then sees a gap. Why a shallow suite misses it: it judges the log after
    ``publish`` returns (complete, in the right bytes), and with one or two unpublished commits on a fast
    local store the copies even finish in order most of the time."""

    workers: ClassVar[int] = 4

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        commits = self.publish_order(list(view.catalog_commits.values()))

        def copy(c: RatifiedCommit) -> None:
            if c.version in view.published:
                return
            target = f"{info.location}/_delta_log/{self.delta_name(c.version)}"
            with contextlib.suppress(FileExistsError):
                self.storage.put(target, self.content(c), if_absent=True)

        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            list(pool.map(copy, commits))
        if commits:
            self.catalog.mark_published(info.table_id, max(c.version for c in commits))


class ParallelPublishTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = ParallelPublishClient


# ================================================================ reading clients


class PublishedListingCacheClient(ResilientClient):
    """cr12b-rdr-listing-cache-by-latest. RDR-LIST-FALLBACK (MUST); RFC "Reading Catalog-managed Tables"
    and "Getting Ratified Commits from the Catalog" (commits the catalog no longer stores are read from
    the published files in ``_delta_log``). Bug: LISTing ``_delta_log`` is the slow part of a read, so the
    reader caches the published files and checkpoints it listed per table, and LISTs again only when the
    catalog's latest ratified version has moved since ("no new version, no new log file"). But
    publication changes where commits live without moving the latest version: once another client
    publishes and the catalog drops the commits it held, the cached listing has neither them nor their
    published files, and the read fails (or, after a cleanup, misses a checkpoint). Why a shallow suite
    misses it: every read there follows a write (the latest version moved) or uses a fresh client; a
    second read by the same client after someone else's publication, with no commit in between, is
    needed."""

    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        super().__init__(catalog, storage)
        self._listing: dict[str, tuple[int, dict[int, str], dict[int, str]]] = {}

    def read_view(self, info: TableInfo) -> LogView:
        resp = self.catalog.get_commits(info.table_id)
        latest = resp.latest_version
        cached = self._listing.get(info.location)
        if cached is not None and cached[0] == latest:
            published, checkpoints = dict(cached[1]), dict(cached[2])
        else:
            fresh = self.view(info)  # a full LIST, bounded by the catalog's latest version
            latest, published, checkpoints = fresh.latest, fresh.published, fresh.checkpoints
            self._listing[info.location] = (latest, dict(published), dict(checkpoints))
            resp = self.catalog.get_commits(info.table_id)
        commits = {c.version: c for c in resp.commits if c.version <= latest}
        return LogView(info, latest, commits, published, checkpoints, f"{info.location}/_delta_log/_last_checkpoint")

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        info = self._info(name)
        view = self.read_view(info)
        if timestamp_ms is not None:
            version = self.version_at(self.timeline(view), timestamp_ms)
        target = self.readable_bound(view, version)
        snap = self.snapshot(view, target)
        return ReadResult(target, self.rows(info.location, snap))


class PublishedListingCacheTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PublishedListingCacheClient


class CompactionOverCatalogClient(ResilientClient):
    """cr12b-rdr-compaction-over-catalog. RDR-CATALOG-PRECEDENCE (MUST); RFC "Reading Catalog-managed
    Tables" / "Reader Requirements" (when the catalog returns a commit for version v, the reader uses it
    and ignores a published file of v). Bug: to replay fewer files the reader uses log compaction files:
    walking from its start (checkpoint + 1, or 0) to the target version, wherever a compaction file
    ``x.y`` starts with ``y`` at or below the target it takes the file in place of commits x..y. It checks
    the range against the target but never against the catalog's answer: a compaction file derived from
    published files overrides the catalog's ratified commits of those versions. Why a shallow suite
    misses it: it plants a divergent published ``<v>.json`` (ignored correctly: single commits follow
    catalog precedence) and compaction files are only ever written by correct writers over published
    versions, whose content equals the catalog's; only a compaction over a version the catalog serves
    differently shows it."""

    def compactions(self, view: LogView) -> dict[int, tuple[int, str]]:
        log = f"{view.info.location}/_delta_log/"
        out: dict[int, tuple[int, str]] = {}
        for f in self.storage.list(log):
            m = _COMPACTION.fullmatch(f.uri[len(log) :])
            if m and int(m.group(2)) <= view.latest:
                x, y = int(m.group(1)), int(m.group(2))
                if x <= y and y > out.get(x, (-1, ""))[0]:
                    out[x] = (y, f.uri)
        return out

    def snapshot(self, view: LogView, target: int) -> Snapshot:
        sources = self.commit_sources(view)
        cp = self.start_checkpoint(view, target)
        first = 0 if cp is None else cp + 1
        compacted = self.compactions(view)
        batches: list[list[Action]] = []
        if cp is not None:
            batches.append(self.checkpoint_actions(view.checkpoints[cp]))
        v = first
        while v <= target:
            span = compacted.get(v)
            if span is not None and span[0] <= target:
                batches.append(decode(self.storage.get(span[1])))
                v = span[0] + 1
                continue
            if v not in sources:
                raise ReadError(f"commit {v} of version {target} is neither in the catalog nor published")
            batches.append(decode(self.content(sources[v])))
            v += 1
        snap = self.replay(target, batches)
        if target in sources:
            snap.in_commit_timestamp = self.ict_of(decode(self.content(sources[target])))
        return snap


class CompactionOverCatalogTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CompactionOverCatalogClient


class TimelineUnboundedListingClient(ResilientClient):
    """cr12b-rdr-timeline-unbounded-listing. RDR-IGNORE-ABOVE-LATEST (MUST); RFC "Reading Catalog-managed
    Tables" / "Reader Requirements" (if the catalog says v is the latest ratified version, clients ignore
    later versions that may have been published). Bug: time travel by timestamp keeps its own (version,
    in-commit timestamp) index, built from a LIST of every ``_delta_log/<v>.json`` (overlaid with the
    catalog's ratified commits); the bound to the catalog's latest version is applied to reads by
    version and to the latest snapshot, not to this index. A published file above the latest ratified
    version (a rogue or stale filesystem write) whose timestamp is at or before the asked time is taken
    as the version at that time, and the read is refused as "above the latest" instead of returning the
    latest version. Why a shallow suite misses it: it plants files above the latest version and reads the
    latest snapshot or a version (both right), and tests time travel on clean logs."""

    def timeline(self, view: LogView) -> list[tuple[int, int]]:
        log = f"{view.info.location}/_delta_log/"
        sources: dict[int, RatifiedCommit | str] = {}
        for f in self.storage.list(log):
            m = _DELTA.fullmatch(f.uri[len(log) :])
            if m:
                sources[int(m.group(1))] = f.uri  # the fault: no bound to view.latest
        sources.update(view.catalog_commits)
        out: list[tuple[int, int]] = []
        for v, source in sorted(sources.items()):
            with contextlib.suppress(ValueError, FileNotFoundError):
                ict = self.ict_of(decode(self.content(source)))
                if ict is not None:
                    out.append((v, ict))
        return out


class TimelineUnboundedListingTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = TimelineUnboundedListingClient


# ================================================================ the list


VARIANTS: list[Variant] = [
    variant_of(
        "cr12b-wrt-postcommit-checksum",
        PostCommitChecksumTarget,
        "client",
        "delta-cm-writer",
        ("WRT-MAINTENANCE-POLICY",),
        "MUST",
        ("maintenance-policy", "checksum"),
    ),
    variant_of(
        "cr12b-wrt-compaction-cancels-out",
        CompactionCancelsOutTarget,
        "client",
        "delta-cm-writer",
        ("WRT-COMPACTION-CONTENT",),
        "MUST",
        ("maintenance", "log-compaction", "deletes"),
    ),
    variant_of(
        "cr12b-wrt-outcome-unknown-assumed-lost",
        OutcomeUnknownAssumedLostTarget,
        "client",
        "delta-cm-writer",
        ("WRT-LOST-ANSWER-ONCE",),
        "MUST",
        ("lost-answers", "retries"),
    ),
    variant_of(
        "cr12b-wrt-cleanup-partial-multipart",
        CleanupPartialMultipartTarget,
        "client",
        "delta-cm-writer",
        ("WRT-CLEANUP-NEEDS-CHECKPOINT",),
        "MUST",
        ("maintenance", "metadata-cleanup", "checkpoints"),
    ),
    variant_of(
        "cr12b-wrt-parallel-publish",
        ParallelPublishTarget,
        "client",
        "delta-cm-writer",
        ("WRT-PUBLISH-ORDER",),
        "MUST",
        ("publication", "ordering", "concurrency"),
    ),
    variant_of(
        "cr12b-rdr-listing-cache-by-latest",
        PublishedListingCacheTarget,
        "client",
        "delta-cm-reader",
        ("RDR-LIST-FALLBACK",),
        "MUST",
        ("caching", "several-clients", "publication"),
    ),
    variant_of(
        "cr12b-rdr-compaction-over-catalog",
        CompactionOverCatalogTarget,
        "client",
        "delta-cm-reader",
        ("RDR-CATALOG-PRECEDENCE",),
        "MUST",
        ("log-compaction", "catalog-precedence"),
    ),
    variant_of(
        "cr12b-rdr-timeline-unbounded-listing",
        TimelineUnboundedListingTarget,
        "client",
        "delta-cm-reader",
        ("RDR-IGNORE-ABOVE-LATEST",),
        "MUST",
        ("time-travel", "rogue-files"),
    ),
]
