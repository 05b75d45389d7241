"""Round 8b: faulty variants of the durable clean-room target, each with exactly one fault.

Each target swaps one side, the catalog or the client, of ``tests.cleanroom_r3.base.DurableTarget``
for a faulty subclass of ``DurableCatalog`` or ``ResilientClient``. Written from the RFC, the public
contract, docs/certify.md and the clean-room baselines only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from pathlib import Path
from typing import Any, ClassVar, Literal

from conformance.contract.delta import (
    CatalogLimits,
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    RatifiedCommit,
    Storage,
    TableInfo,
)
from tests.cleanroom.catalog import _STAGED_NAME, _TABLE_NAME, CleanCatalog, TableState
from tests.cleanroom.client import (
    _DELTA,
    Action,
    CleanClient,
    LogView,
    Snapshot,
    decode,
    encode,
)
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant

# ================================================================ catalog faults


class GlobalWatermarkCatalog(DurableCatalog):
    """Bug: the publication watermark ("backfilled up to") is one catalog-wide value, not one per
    table: every ``mark_published(b)`` raises it, and every listing hides stored commits at or below
    it, in every table. RFC "Publishing Commits" / "Terminology - Commits": a catalog may drop only
    commits of *that* table that are published; every ratified, unpublished commit stays served.
    With one table (or tables published in lock step) it is invisible; a second table whose
    unpublished commits lie below another table's mark loses them from its listing (latest still
    says they exist), so its readers miss rows and its history is not contiguous."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._watermark = -1
        super().__init__(warehouse_uri, storage, state_dir)

    def forget_published(self, t: TableState, version: int) -> None:
        super().forget_published(t, version)
        self._watermark = max(self._watermark, version)

    def listed(self, t: TableState, lo: int, hi: int) -> list[RatifiedCommit]:
        return [c for c in super().listed(t, lo, hi) if c.version > self._watermark]


class SharedConflictLatestCatalog(DurableCatalog):
    """Bug: a version conflict states, as the latest ratified version, the version of the last
    ratification of the whole catalog (a single "last ratified" field kept for metrics and reused in
    the error), not the table's own latest. RFC "Commit Protocol": the catalog tells the loser the
    latest ratified commit. With one table, or the conflicting table being the last one committed,
    it is right; a conflict on table A right after a commit to table B states B's version."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._last_ratified = 0
        super().__init__(warehouse_uri, storage, state_dir)

    def check_sequence(self, t: TableState, version: int) -> None:
        if version <= t.latest:
            raise CommitConflict(f"version {version} is already ratified", latest_version=self._last_ratified)
        super().check_sequence(t, version)

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        super().store(t, commit)
        self._last_ratified = commit.version


class NameReservedFirstCatalog(DurableCatalog):
    """Bug: registration reserves the name in the name index *before* the slow storage check that
    version 0 exists (to close a race between two registrations of one name), and does not release it
    when that check refuses the registration. RFC "Creating and Dropping Catalog-managed Tables" and
    "Table Discovery": a refused registration changes nothing; resolving a name returns the table's
    location. After one refused registration (version 0 not written yet) the name resolves to the
    unregistered staging location and the real registration is refused as "exists". A suite whose
    clients always write version 0 first never sees it."""

    def register_table(self, name: str, table_id: str) -> TableInfo:
        if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
            raise InvalidRequest(f"bad table name {name!r}")
        with self._lock:
            t = self._by_id.get(table_id) if isinstance(table_id, str) else None
            if t is None or t.name is not None:
                raise InvalidRequest(f"no staging table {table_id!r}")
            if name in self._by_name:
                raise InvalidRequest(f"table {name!r} exists")
            self._by_name[name] = table_id  # reserve first
            if not self.storage.exists(f"{t.location}/_delta_log/{0:020d}.json"):
                raise InvalidRequest("version 0 of the staging table is not written")
            t.name = name
        with t.lock:
            self.persist(t)
        return TableInfo(table_id, name, t.location, True)


class PiggybackAfterStoreCatalog(DurableCatalog):
    """Bug: the publication mark carried by a proposal (``latest_published_version``) is applied
    *after* the proposal is ratified, and bounded by the new latest version; so a mark equal to the
    proposed version (not ratified when it was sent, so not published) is honoured and drops the
    commit just ratified. RFC "Publishing Commits": a report of publication for a version not yet
    ratified is refused or ignored; every ratified, unpublished commit stays served. Marks below the
    proposed version (the usual case) work; only a mark of the proposed version itself shows it."""

    def commit(
        self,
        table_id: str,
        version: int,
        *,
        staged_uri: str | None = None,
        inline_content: bytes | None = None,
        in_commit_timestamp: int | None = None,
        latest_published_version: int | None = None,
    ) -> None:
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
        )
        mark = latest_published_version
        if isinstance(mark, int) and not isinstance(mark, bool):
            t = self._by_id[table_id]
            with t.lock:
                if 0 <= mark <= t.latest:
                    self.forget_published(t, mark)


class RestartForgetsManagedCatalog(DurableCatalog):
    """Bug: whether a table is catalog-managed is kept in an in-memory table-properties cache that
    registration fills; the state files do not carry it, and after a restart resolution defaults to
    ``catalog_managed=False`` for every table registered before the restart. RFC "Table Discovery":
    name resolution says whether the table is catalog-managed. Before any restart it is right; after
    one, a client that trusts the flag may address the table by path."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._managed: set[str] = set()
        super().__init__(warehouse_uri, storage, state_dir)

    def register_table(self, name: str, table_id: str) -> TableInfo:
        info = super().register_table(name, table_id)
        self._managed.add(info.table_id)
        return info

    def resolve(self, name: str) -> TableInfo:
        info = super().resolve(name)
        return dataclasses.replace(info, catalog_managed=info.table_id in self._managed)


class StagedVersionSuffixCatalog(DurableCatalog):
    """Bug: the staged file's version is compared as text, with the zero padding dealt with by a
    suffix test (``digits.endswith(str(version))``) instead of an integer comparison. RFC "Delta Log
    Entries": the version in a staged file's name is authoritative; proposing it for another version
    is refused. A proposal of v+1's file for v is refused as it should be; the staged file of
    version 11 proposed as version 1 (or 21 as 1, 12 as 2) is ratified as the wrong version. Only a
    history past ten versions, or a suite that tries such pairs, shows it."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.startswith(prefix) else ""
        m = _STAGED_NAME.fullmatch(rest)
        if m is None:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if not m.group(1).endswith(str(version)):
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


UNPUBLISHED_CAP = 10


class CapOffByOneCatalog(DurableCatalog):
    """Bug: the catalog declares a cap of 10 ratified, unpublished commits per table
    (``CatalogLimits(unpublished=10)``) but checks it *including* the proposal being judged with
    ``>=``: the 10th unpublished commit is already refused (cleanly, as a rejection). RFC "Catalog
    Responsibilities" / docs/certify.md "Limits": a declared limit is the real limit; a call at it
    succeeds. A suite that only probes one past the cap, or never fills it, sees a clean refusal."""

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        # Judged after the sequence check and after a publication mark carried by the proposal.
        if len(t.stored) + 1 >= UNPUBLISHED_CAP:
            raise CommitRejected(f"table holds {len(t.stored)} unpublished commits; publish first")
        super().store(t, commit)


class BufferedGapCatalog(DurableCatalog):
    """Bug: a proposal that would leave a gap is refused (``CommitRejected``), but the catalog keeps it
    in a buffer of "early" proposals (pipelining writers send v+1 before v's answer) and ratifies it
    as soon as the gap is filled. RFC "Commit Protocol": v only after v-1; a refused proposal changes
    nothing, and "Terminology - Commits": a rejected proposal is never part of the table. A suite
    that checks the refusal and the listing right after it sees nothing; once v-1 is ratified the
    rejected proposal shows up as the ratified v, and the writer that ratifies v properly loses."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._early: dict[tuple[str, int], RatifiedCommit] = {}
        super().__init__(warehouse_uri, storage, state_dir)

    def commit(
        self,
        table_id: str,
        version: int,
        *,
        staged_uri: str | None = None,
        inline_content: bytes | None = None,
        in_commit_timestamp: int | None = None,
        latest_published_version: int | None = None,
    ) -> None:
        try:
            super().commit(
                table_id,
                version,
                staged_uri=staged_uri,
                inline_content=inline_content,
                in_commit_timestamp=in_commit_timestamp,
                latest_published_version=latest_published_version,
            )
        except CommitRejected:
            content = None if inline_content is None else bytes(inline_content)
            self._early[(table_id, version)] = RatifiedCommit(version, staged_uri, content, in_commit_timestamp)
            raise
        t = self._by_id[table_id]
        with t.lock:
            while (nxt := self._early.pop((table_id, t.latest + 1), None)) is not None:
                self.store(t, nxt)


# ================================================================ client faults


class ResumeOrphanClient(ResilientClient):
    """Bug: "resume an interrupted commit": before proposing version v the writer looks in
    ``_staged_commits/`` for a staged file of v and, if there is one, proposes it first, assuming it is
    its own proposal whose answer was lost in a crash. RFC "Terminology - Commits" (a staged commit
    is not part of the table until ratified) and the crash rules: after a writer crashed between
    staging and proposing, the next writer ignores the orphan. Without a crash there is no orphan and
    every commit is right; after one, the dead writer's change is committed by another writer."""

    def before_propose(self, log: str, version: int, content: bytes) -> None:
        prefix = f"{log}/_staged_commits/{version:020d}."
        mine = [f.uri for f in self.storage.list(prefix)]
        for uri in mine:
            if self.storage.get(uri) == content:
                continue
            info = self._resume_info
            try:
                self.catalog.commit(info.table_id, version, staged_uri=uri)
            except (CommitConflict, CommitRejected, InvalidRequest):
                continue
            return  # resumed: our own proposal now loses the version and is rebuilt for the next

    def transact(self, name: str, operation: str, build: Any) -> int:
        self._resume_info = self._info(name)
        return super().transact(name, operation, build)


_DV_PROTOCOL: Action = {
    "minReaderVersion": 3,
    "minWriterVersion": 7,
    "readerFeatures": ["deletionVectors"],
    "writerFeatures": ["deletionVectors", "catalogManaged", "inCommitTimestamp"],
}


class DeleteProtocolTemplateClient(ResilientClient):
    """Bug: every DELETE "enables deletion vectors": it (re)states a protocol action built
    from a fixed template that lists ``deletionVectors`` and forgets ``catalogManaged`` in
    ``readerFeatures`` (the template predates catalog-managed tables). RFC "Catalog-managed Table
    Enablement": the protocol has ``catalogManaged`` in both feature lists, at every version. A suite
    that checks the protocol of version 0, or of appends only, does not see it."""

    def delete(self, name: str, ids: Any) -> int:
        self._deleting = True
        try:
            return super().delete(name, ids)
        finally:
            self._deleting = False

    def order_actions(self, commit_info: Action, actions: list[Action]) -> list[Action]:
        if getattr(self, "_deleting", False):
            actions = [{"protocol": dict(_DV_PROTOCOL)}, *actions]
        return super().order_actions(commit_info, actions)


class CompactionEndExclusiveClient(ResilientClient):
    """Bug: log compaction reconciles ``range(start, end)`` (Python's habit) but names the file
    ``<start>.<end>.compacted.json``: the last commit of the range is left out. PROTOCOL.md Log
    Compaction Files / RFC "Maintenance Operations": a compaction file x..y holds the reconciled
    actions of exactly the commits x to y. A suite that checks only that compaction of published
    versions succeeds, or compares rows without reading the file, does not see it."""

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
        for v in range(start_version, end_version):
            for a in decode(self.content(sources[v])):
                if "add" in a:
                    adds[a["add"]["path"]] = a
                    removes.pop(a["add"]["path"], None)
                elif "remove" in a:
                    removes[a["remove"]["path"]] = a
                    adds.pop(a["remove"]["path"], None)
                elif "commitInfo" not in a:
                    other.append(a)
        body = encode([*other, *adds.values(), *removes.values()])
        uri = f"{info.location}/_delta_log/{start_version:020d}.{end_version:020d}.compacted.json"
        with contextlib.suppress(FileExistsError):
            self.storage.put(uri, body, if_absent=True)
        return True


class CleanupByCutoffClient(ResilientClient):
    """Bug: metadata cleanup finds the cut-off checkpoint correctly (and does nothing without one),
    but then deletes the published Delta files below the *cut-off commit* instead of below the cut-off
    checkpoint's version. RFC "Metadata Cleanup" step 2/3: the cut-off checkpoint and every commit
    after it stay. When the cut-off is a checkpoint's version (what a shallow suite asks) both are
    the same; with a cut-off above the newest checkpoint the commits between them are deleted and
    versions after the checkpoint can no longer be read."""

    def cleanup_doomed(self, view: LogView, files: list[str], checkpoint: int, cutoff: int) -> list[str]:
        doomed = super().cleanup_doomed(view, files, checkpoint, cutoff)
        log = f"{view.info.location}/_delta_log/"
        for uri in files:
            m = _DELTA.fullmatch(uri[len(log) :])
            if m and int(m.group(1)) < cutoff and uri not in doomed:
                doomed.append(uri)
        return doomed


_KNOWN_OPS = frozenset({"checkpoint", "log_compaction", "checksum", "metadata_cleanup", "vacuum"})
_OP_ALIASES = {"log_compaction": "compaction"}


class PolicyAliasClient(ResilientClient):
    """Bug: the client checks a maintenance job against the operations the policy *forbids*
    (the known operations minus the allowed ones) under its own name for the job, and calls log
    compaction "compaction": that name is never among the forbidden ones, so compaction runs under a
    policy that forbids ``log_compaction``. RFC "Maintenance Operations": the client consults the
    catalog and runs no job its policy forbids. Under allow-all or allow-nothing-but-checked-ops
    suites (checkpoint, cleanup) it is right; only a partial policy forbidding compaction shows it."""

    def policy_allows(self, info: TableInfo, op: str) -> bool:
        policy = self.catalog.maintenance_policy(info.table_id)
        forbidden = _KNOWN_OPS - set(policy.allowed)
        return _OP_ALIASES.get(op, op) not in forbidden


class CommitInfoTimestampClient(ResilientClient):
    """Bug: time travel dates a commit by ``commitInfo.timestamp`` (the writer's wall clock, what
    readers used before in-commit timestamps) and falls back to ``inCommitTimestamp`` only when the
    former is absent. RFC "Publishing Commits" (note on timestamps) / PROTOCOL.md In-Commit
    Timestamps: time travel resolves versions by in-commit timestamp. Writers that put the same value
    in both fields (this package's own) hide it; a commit from a writer whose ``timestamp`` differs
    (a skewed clock; the in-commit timestamp pushed above its predecessor) is dated wrongly."""

    def ict_of(self, actions: list[Action]) -> int | None:
        for a in actions:
            if "commitInfo" in a:
                info = a["commitInfo"]
                value = info.get("timestamp", info.get("inCommitTimestamp"))
                return int(value) if value is not None else None
        return None


class CatalogIctTimelineClient(ResilientClient):
    """Bug: to avoid reading staged files, time travel dates the commits the catalog still holds by
    the in-commit timestamp the catalog recorded with the proposal (``RatifiedCommit.in_commit_
    timestamp``) and skips those for which the catalog recorded none; only published commits are
    read. The in-commit timestamp is optional in the catalog's API. RFC "Publishing Commits" /
    "Reader Requirements": time travel resolves by the commits' in-commit timestamps, unpublished
    commits included. Writers that always send it (this package's own) hide it; a writer that does
    not, or an inline commit proposed without it, makes a timestamp in its range resolve too early."""

    def timeline(self, view: LogView) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for v, source in sorted(self.commit_sources(view).items()):
            if isinstance(source, RatifiedCommit):
                if source.in_commit_timestamp is not None:
                    out.append((v, source.in_commit_timestamp))
                continue
            ict = self.ict_of(decode(self.content(source)))
            if ict is not None:
                out.append((v, ict))
        return out


class LowercaseReadNameClient(ResilientClient):
    """Bug: the read path treats table names as SQL identifiers and resolves them lower-cased (the
    writer resolves them as given). RFC "Reader Requirements" / "Table Discovery": the reader finds
    the table through the catalog by its name and reads the location the catalog resolves for it.
    With lower-case names (what most suites use) it is right; ``Sales`` is read from ``sales`` (another
    table) or not found."""

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> Any:
        return super().read(name.lower(), version=version, timestamp_ms=timestamp_ms)


class IctFromCatalogOnlyClient(ResilientClient):
    """Bug: to stamp a commit the writer takes the previous in-commit timestamp from the catalog's
    record of the latest commit (``RatifiedCommit.in_commit_timestamp``); when the catalog no longer
    holds it (published and dropped) it falls back to the clock alone. PROTOCOL.md In-Commit
    Timestamps: strictly above the previous commit's, also when a skewed peer stamped that one ahead
    of this writer's clock. Unpublished predecessors, or peers with honest clocks, hide it; a
    published commit stamped far ahead is followed by a commit stamped below it."""

    def snapshot(self, view: LogView, target: int) -> Snapshot:
        snap = super().snapshot(view, target)
        held = view.catalog_commits.get(target)
        snap.in_commit_timestamp = held.in_commit_timestamp if held is not None else None
        return snap


_COMPACTED = re.compile(r"(\d{20})\.(\d{20})\.compacted\.json")


class CompactionAsCutoffClient(ResilientClient):
    """Bug: metadata cleanup accepts a log compaction file as the cut-off point when no checkpoint is
    at or before the cut-off ("a compaction file lets readers skip its commits"): it takes the
    newest compaction end at or before the cut-off as if it were a checkpoint's version. RFC
    "Metadata Cleanup" step 2: without a checkpoint at or before the cut-off commit, nothing is
    deleted; a compaction file holds the changes of its range, not the table's state. With a
    checkpoint present (the usual setup) it is right; a table with only compaction files loses
    version 0 and every commit before the compaction's end, and can no longer be read."""

    def cleanup_cutoff_checkpoint(self, view: LogView, cutoff: int) -> int | None:
        found = super().cleanup_cutoff_checkpoint(view, cutoff)
        if found is not None:
            return found
        log = f"{view.info.location}/_delta_log/"
        ends = [
            int(m.group(2))
            for f in self.storage.list(log)
            if (m := _COMPACTED.fullmatch(f.uri[len(log) :])) and int(m.group(2)) <= cutoff
        ]
        return max(ends) if ends else None


# ================================================================ targets


class GlobalWatermarkTarget(DurableTarget):
    name = "cr8b-global-watermark"
    catalog_cls: ClassVar[type[CleanCatalog]] = GlobalWatermarkCatalog


class SharedConflictLatestTarget(DurableTarget):
    name = "cr8b-shared-conflict-latest"
    catalog_cls: ClassVar[type[CleanCatalog]] = SharedConflictLatestCatalog


class NameReservedFirstTarget(DurableTarget):
    name = "cr8b-name-reserved-first"
    catalog_cls: ClassVar[type[CleanCatalog]] = NameReservedFirstCatalog


class PiggybackAfterStoreTarget(DurableTarget):
    name = "cr8b-piggyback-after-store"
    catalog_cls: ClassVar[type[CleanCatalog]] = PiggybackAfterStoreCatalog


class RestartForgetsManagedTarget(DurableTarget):
    name = "cr8b-restart-forgets-managed"
    catalog_cls: ClassVar[type[CleanCatalog]] = RestartForgetsManagedCatalog


class StagedVersionSuffixTarget(DurableTarget):
    name = "cr8b-staged-version-suffix"
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedVersionSuffixCatalog


class CapOffByOneTarget(DurableTarget):
    name = "cr8b-cap-off-by-one"
    catalog_cls: ClassVar[type[CleanCatalog]] = CapOffByOneCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(unpublished=UNPUBLISHED_CAP)


class ResumeOrphanTarget(DurableTarget):
    name = "cr8b-resume-orphan"
    client_cls: ClassVar[type[CleanClient]] = ResumeOrphanClient


class DeleteProtocolTemplateTarget(DurableTarget):
    name = "cr8b-delete-protocol-template"
    client_cls: ClassVar[type[CleanClient]] = DeleteProtocolTemplateClient


class CompactionEndExclusiveTarget(DurableTarget):
    name = "cr8b-compaction-end-exclusive"
    client_cls: ClassVar[type[CleanClient]] = CompactionEndExclusiveClient


class CleanupByCutoffTarget(DurableTarget):
    name = "cr8b-cleanup-by-cutoff"
    client_cls: ClassVar[type[CleanClient]] = CleanupByCutoffClient


class PolicyAliasTarget(DurableTarget):
    name = "cr8b-policy-alias"
    client_cls: ClassVar[type[CleanClient]] = PolicyAliasClient


class CommitInfoTimestampTarget(DurableTarget):
    name = "cr8b-commitinfo-timestamp"
    client_cls: ClassVar[type[CleanClient]] = CommitInfoTimestampClient


class CatalogIctTimelineTarget(DurableTarget):
    name = "cr8b-catalog-ict-timeline"
    client_cls: ClassVar[type[CleanClient]] = CatalogIctTimelineClient


class LowercaseReadNameTarget(DurableTarget):
    name = "cr8b-lowercase-read-name"
    client_cls: ClassVar[type[CleanClient]] = LowercaseReadNameClient


class IctFromCatalogOnlyTarget(DurableTarget):
    name = "cr8b-ict-from-catalog-only"
    client_cls: ClassVar[type[CleanClient]] = IctFromCatalogOnlyClient


class BufferedGapTarget(DurableTarget):
    name = "cr8b-buffered-gap"
    catalog_cls: ClassVar[type[CleanCatalog]] = BufferedGapCatalog


class CompactionAsCutoffTarget(DurableTarget):
    name = "cr8b-compaction-as-cutoff"
    client_cls: ClassVar[type[CleanClient]] = CompactionAsCutoffClient


# ================================================================ records


def _v(
    name: str,
    target: type[DurableTarget],
    fault: type,
    side: Literal["catalog", "client"],
    profile: str,
    rules: tuple[str, ...],
    level: str,
    dimensions: tuple[str, ...],
) -> Variant:
    doc = re.sub(r"\s+", " ", fault.__doc__ or "").strip()
    return Variant(
        name, f"tests.cleanroom_r8b.variants:{target.__name__}", side, profile, rules, level, dimensions, doc
    )


VARIANTS: list[Variant] = [
    _v(
        "cr8b-cat-global-publish-watermark",
        GlobalWatermarkTarget,
        GlobalWatermarkCatalog,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RETAIN-UNPUBLISHED", "CAT-FORGET-PUBLISHED-ONLY", "CAT-LIST-CONTIGUOUS"),
        "MUST",
        ("several tables", "publication"),
    ),
    _v(
        "cr8b-cat-conflict-latest-catalog-wide",
        SharedConflictLatestTarget,
        SharedConflictLatestCatalog,
        "catalog",
        "delta-cm-catalog",
        ("CAT-CONFLICT-LATEST",),
        "SHOULD",
        ("several tables", "concurrent proposals"),
    ),
    _v(
        "cr8b-cat-name-reserved-before-check",
        NameReservedFirstTarget,
        NameReservedFirstCatalog,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RESOLVE-LOCATION",),
        "MUST",
        ("table creation", "refusals change nothing"),
    ),
    _v(
        "cr8b-cat-piggyback-mark-after-store",
        PiggybackAfterStoreTarget,
        PiggybackAfterStoreCatalog,
        "catalog",
        "delta-cm-catalog",
        ("CAT-PUBLISH-REPORT-POSSIBLE", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("publication marks", "commit protocol"),
    ),
    _v(
        "cr8b-cat-restart-forgets-managed",
        RestartForgetsManagedTarget,
        RestartForgetsManagedCatalog,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RESOLVE-MANAGED",),
        "SHOULD",
        ("catalog restart", "table discovery"),
    ),
    _v(
        "cr8b-cat-staged-version-suffix",
        StagedVersionSuffixTarget,
        StagedVersionSuffixCatalog,
        "catalog",
        "delta-cm-catalog",
        ("CAT-STAGED-VERSION",),
        "MUST",
        ("long histories", "staged names"),
    ),
    _v(
        "cr8b-cat-cap-off-by-one",
        CapOffByOneTarget,
        CapOffByOneCatalog,
        "catalog",
        "delta-cm-catalog",
        ("CAT-LIMIT-DECLARED",),
        "MUST",
        ("limits", "unpublished runs"),
    ),
    _v(
        "cr8b-wrt-resume-orphan-staged",
        ResumeOrphanTarget,
        ResumeOrphanClient,
        "client",
        "delta-cm-writer",
        ("WRT-CRASH-RECOVERY",),
        "MUST",
        ("client crashes", "staged commits"),
    ),
    _v(
        "cr8b-wrt-delete-protocol-template",
        DeleteProtocolTemplateTarget,
        DeleteProtocolTemplateClient,
        "client",
        "delta-cm-writer",
        ("WRT-PROTOCOL-VERSIONS",),
        "MUST",
        ("commit content", "deletes"),
    ),
    _v(
        "cr8b-wrt-compaction-end-exclusive",
        CompactionEndExclusiveTarget,
        CompactionEndExclusiveClient,
        "client",
        "delta-cm-writer",
        ("WRT-COMPACTION-CONTENT",),
        "MUST",
        ("log compaction", "maintenance"),
    ),
    _v(
        "cr8b-wrt-cleanup-deltas-below-cutoff",
        CleanupByCutoffTarget,
        CleanupByCutoffClient,
        "client",
        "delta-cm-writer",
        ("WRT-CLEANUP-KEEPS",),
        "MUST",
        ("metadata cleanup", "reads of old versions"),
    ),
    _v(
        "cr8b-wrt-policy-op-alias",
        PolicyAliasTarget,
        PolicyAliasClient,
        "client",
        "delta-cm-writer",
        ("WRT-MAINTENANCE-POLICY",),
        "MUST",
        ("partial maintenance policies", "log compaction"),
    ),
    _v(
        "cr8b-rdr-tt-commitinfo-timestamp",
        CommitInfoTimestampTarget,
        CommitInfoTimestampClient,
        "client",
        "delta-cm-reader",
        ("RDR-TIME-TRAVEL-ICT",),
        "MUST",
        ("time travel", "clock skew"),
    ),
    _v(
        "cr8b-rdr-tt-catalog-recorded-ict",
        CatalogIctTimelineTarget,
        CatalogIctTimelineClient,
        "client",
        "delta-cm-reader",
        ("RDR-TIME-TRAVEL-ICT", "RDR-UNPUBLISHED"),
        "MUST",
        ("time travel", "inline commits"),
    ),
    _v(
        "cr8b-rdr-lowercase-name",
        LowercaseReadNameTarget,
        LowercaseReadNameClient,
        "client",
        "delta-cm-reader",
        ("RDR-DISCOVERY",),
        "MUST",
        ("names", "several tables"),
    ),
    _v(
        "cr8b-wrt-ict-from-catalog-only",
        IctFromCatalogOnlyTarget,
        IctFromCatalogOnlyClient,
        "client",
        "delta-cm-writer",
        ("WRT-ICT-SKEW", "WRT-ICT-MONOTONIC"),
        "MUST",
        ("clock skew", "publication"),
    ),
    _v(
        "cr8b-cat-buffered-gap-proposal",
        BufferedGapTarget,
        BufferedGapCatalog,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RATIFY-SEQUENTIAL", "CAT-LIST-RATIFIED-ONLY"),
        "MUST",
        ("concurrent proposals", "refusals change nothing"),
    ),
    _v(
        "cr8b-wrt-cleanup-compaction-as-cutoff",
        CompactionAsCutoffTarget,
        CompactionAsCutoffClient,
        "client",
        "delta-cm-writer",
        ("WRT-CLEANUP-NEEDS-CHECKPOINT",),
        "MUST",
        ("metadata cleanup", "log compaction"),
    ),
]
