"""Round 8: faulty variants of the durable clean-room catalog and the resilient client.

Each target swaps exactly one side of ``DurableTarget`` for a faulty subclass. Written from the RFC, the
public contract, docs/certify.md and the clean-room baselines only.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from conformance.contract.delta import (
    CatalogLimits,
    CatalogTimeout,
    CommitConflict,
    CommitRejected,
    GetCommitsResponse,
    InvalidRequest,
    RatifiedCommit,
    ReadResult,
    Storage,
    TableInfo,
)
from tests.cleanroom.catalog import CleanCatalog, TableState
from tests.cleanroom.client import Action, CleanClient, LogView, ReadError, RetriesExhausted, decode, encode
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant, variant_of

# ================================================================ catalog faults


class CappedCatalog(DurableCatalog):
    """Correct helper (not a variant): a durable catalog with a cap of ``CAP`` ratified, unpublished
    commits per table, counted as ``latest - published`` after any piggy-backed publication mark."""

    CAP: ClassVar[int] = 16

    def unpublished(self, t: TableState) -> int:
        return t.latest - t.published

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if self.unpublished(t) >= self.CAP:
            raise CommitRejected(f"table holds {self.CAP} unpublished commits; publish first")
        super().store(t, commit)


class CappedTarget(DurableTarget):
    """Correct helper: ``CappedCatalog`` with its cap declared."""

    catalog_cls: ClassVar[type[CleanCatalog]] = CappedCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(unpublished=CappedCatalog.CAP)


class CapCountsHistoryCatalog(CappedCatalog):
    """cr8-cat-cap-counts-history. The catalog keeps published commits as history (allowed: it may keep
    them as long as it likes) and enforces its declared cap of 16 *unpublished* commits by counting the
    rows it stores (``len(stored)``), published history included. RFC "Terminology - Commits" / certify.md
    "Limits": the declared limit is the real one. A shallow suite tests the cap on a fresh table (17
    proposals without publishing): right. After a table has 16 versions, all published, every proposal is
    refused, though nothing is unpublished: a long history under a cap is never tried."""

    def forget_published(self, t: TableState, version: int) -> None:
        t.published = max(t.published, version)  # keep the rows as history
        self.persist(t)

    def unpublished(self, t: TableState) -> int:
        return len(t.stored)


class CapCountsHistoryTarget(CappedTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = CapCountsHistoryCatalog


class RestartPublishedRecomputedCatalog(CappedCatalog):
    """cr8-cat-restart-published-recomputed. On load the catalog recomputes the publication watermark from
    the commits it still stores (``min(stored) - 1``) instead of reading the persisted one, and takes 0 when
    nothing is stored. RFC "Commit Protocol" (ratified state survives; proposals go on at latest + 1). With
    unpublished commits left the value is right; after a restart of a table whose every commit was
    published, it counts the whole history as unpublished and refuses the next proposal against its cap of
    16 once the table has 16 versions: a restart check on a short table passes."""

    def decode_table(self, doc: dict[str, Any]) -> TableState:
        t = super().decode_table(doc)
        t.published = min(t.stored) - 1 if t.stored else 0
        return t


class RestartPublishedRecomputedTarget(CappedTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = RestartPublishedRecomputedCatalog


class RestartLocationNormalisedCatalog(DurableCatalog):
    """cr8-cat-restart-location-normalised. On load the catalog "normalises" each table's location with
    ``pathlib`` (to strip a trailing slash), which folds the ``//`` of ``scheme://`` into ``/``
    (``file:///w/t`` becomes ``file:/w/t``, ``s3://b/k`` becomes ``s3:/b/k``). RFC "Table Discovery":
    name resolution returns the table's location. Before a restart every answer is right; after one the
    catalog resolves a location where nothing of the table is, and refuses the table's own staged files."""

    def decode_table(self, doc: dict[str, Any]) -> TableState:
        t = super().decode_table(doc)
        t.location = str(PurePosixPath(t.location))
        return t


class RestartLocationNormalisedTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = RestartLocationNormalisedCatalog


class MarkAfterStoreCatalog(DurableCatalog):
    """cr8-cat-mark-after-store. A proposal's piggy-backed publication mark (``latest_published_version``)
    is applied after the proposal is stored and bounded by the new latest version ("the writer may have
    published the very commit it proposes"). A mark equal to the proposed version, a report about a
    version not ratified when it was sent, makes the catalog drop the commit it just ratified although
    nobody published it. RFC "Publishing Commits" (the catalog forgets only published commits) and
    CAT-PUBLISH-REPORT-POSSIBLE. Marks below the proposed version, what clients send, are right."""

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
        lpv = latest_published_version
        if lpv is not None:
            t = self._table(table_id, InvalidRequest)
            with t.lock:
                if isinstance(lpv, int) and 0 <= lpv <= t.latest:
                    self.forget_published(t, lpv)


class MarkAfterStoreTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = MarkAfterStoreCatalog


class RestartManagedFlagCatalog(DurableCatalog):
    """cr8-cat-restart-managed-flag. The catalog records per table whether it is catalog-managed and
    persists it as ``catalog_managed``, but reads it back as ``catalogManaged`` (a field renamed in one
    place), defaulting to False. RFC "Table Discovery": name resolution says whether the table is
    catalog-managed. Right until the first restart; afterwards every table resolves as not managed, and a
    client trusting the flag would read it by path."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._managed: dict[str, bool] = {}
        super().__init__(warehouse_uri, storage, state_dir)

    def encode_table(self, t: TableState) -> dict[str, Any]:
        doc = super().encode_table(t)
        doc["catalog_managed"] = self._managed.get(t.table_id, True)
        return doc

    def decode_table(self, doc: dict[str, Any]) -> TableState:
        t = super().decode_table(doc)
        self._managed[t.table_id] = bool(doc.get("catalogManaged", False))
        return t

    def create_staging_table(self) -> Any:
        staging = super().create_staging_table()
        self._managed[staging.table_id] = True
        return staging

    def register_table(self, name: str, table_id: str) -> TableInfo:
        info = super().register_table(name, table_id)
        return TableInfo(info.table_id, info.name, info.location, self._managed.get(info.table_id, True))

    def resolve(self, name: str) -> TableInfo:
        info = super().resolve(name)
        return TableInfo(info.table_id, info.name, info.location, self._managed.get(info.table_id, False))


class RestartManagedFlagTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = RestartManagedFlagCatalog


_LOOSE_STAGED = re.compile(r"(\d{20})\.([0-9a-fA-F-]{36})\.json")


class StagedUuidLooseCatalog(DurableCatalog):
    """cr8-cat-staged-uuid-loose. The staged file name's UUID part is checked as "36 hex digits or dashes"
    (``[0-9a-fA-F-]{36}``) instead of the 8-4-4-4-12 UUID form. RFC "Delta Log Entries" / "Terminology -
    Commits": a staged commit is ``<20-digit version>.<uuid>.json``. Names with a missing UUID, a short one
    or a wrong suffix are refused, which is what a shallow suite tries; a 36-character hex run without
    dashes, or dashes in the wrong places, is ratified."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.startswith(prefix) else ""
        m = _LOOSE_STAGED.fullmatch(rest)
        if m is None:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class StagedUuidLooseTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedUuidLooseCatalog


class RegisterUpsertCatalog(DurableCatalog):
    """cr8-cat-register-upsert. Registering a name that is taken by another table re-points the name at
    the new table ("CREATE OR REPLACE", kind to a client retrying a creation) instead of refusing it. RFC
    "Table Discovery" / "Creating and Dropping": a name resolves to its table; the catalog does not drop
    a table as a side effect of creating another. A suite that creates each table under a fresh name
    never sees it; a second creation under a taken name succeeds and the first table's name now resolves
    to the second table's location (its commits are unreachable by name)."""

    def register_table(self, name: str, table_id: str) -> TableInfo:
        with self._lock:
            old = self._by_name.get(name)
            if old is not None and old != table_id:
                del self._by_name[name]
        return super().register_table(name, table_id)


class RegisterUpsertTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = RegisterUpsertCatalog


_ANY_STAGED = re.compile(
    r"(\d{20})\.([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.json"
)


class StagedVersionPreviousCatalog(DurableCatalog):
    """cr8-cat-staged-version-previous. To spare writers that lost a race a second upload, the catalog
    accepts a staged file named for version ``v - 1`` as a proposal for ``v`` ("a rebased staged file").
    RFC "Delta Log Entries" (the version in a staged file's name is authoritative; a staged file is never
    ratified for another version). Proposals whose name is far from the proposed version are refused, the
    case a shallow suite tries; the off-by-one, the one a real writer produces, is ratified."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.startswith(prefix) else ""
        m = _ANY_STAGED.fullmatch(rest)
        if m is None:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) not in (version, version - 1):
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class StagedVersionPreviousTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedVersionPreviousCatalog


# ================================================================ client faults


class AdoptOrphanStagedClient(ResilientClient):
    """cr8-wrt-adopt-orphan-staged. Before it commits, the writer "resumes an interrupted commit": if
    ``_staged_commits`` holds a file for ``latest + 1`` that the catalog does not list, it proposes that
    file first (a crashed writer's staged commit, never proposed), then writes its own change on top.
    RFC "Terminology - Commits" (a staged commit not ratified is not part of the table) and "Commit
    Protocol"; WRT-CRASH-RECOVERY: the next writer ignores the orphan. Without a crash between staging
    and proposing nothing differs; after one, the crashed writer's rows appear in the table."""

    def transact(self, name: str, operation: str, build: Any) -> int:
        info = self._info(name)
        view = self.view(info)
        nxt = view.latest + 1
        folder = f"{info.location}/_delta_log/_staged_commits/"
        mine = f"{folder}{nxt:020d}."
        orphans = [f.uri for f in self.storage.list(folder) if f.uri.startswith(mine) and f.uri.endswith(".json")]
        if orphans and nxt not in view.catalog_commits:
            with contextlib.suppress(CommitConflict, CommitRejected, InvalidRequest, CatalogTimeout):
                self.catalog.commit(info.table_id, nxt, staged_uri=orphans[0])
        return super().transact(name, operation, build)


class AdoptOrphanStagedTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = AdoptOrphanStagedClient


class MarkBeforeCopyClient(ResilientClient):
    """cr8-wrt-mark-before-copy. The publisher reports the publication to the catalog first and copies the
    commits to ``_delta_log`` afterwards (it holds their content in memory, so it thought the order did
    not matter), and when the answer to the mark is lost it stops with an error before copying ("the
    catalog is unreachable"). RFC "Publishing Commits" (copy first, then tell the catalog);
    WRT-LOST-ANSWER-ONCE. Without a lost answer the log ends up complete; after a lost mark the catalog
    has forgotten commits that were never published: they are lost for good."""

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        commits = self.publish_order(list(view.catalog_commits.values()))
        if not commits:
            return
        done = max(c.version for c in commits)
        try:
            self.raw_catalog.mark_published(info.table_id, done)
        except CatalogTimeout as e:
            raise RetriesExhausted(f"catalog unreachable while publishing {name}") from e
        for c in commits:
            target = f"{info.location}/_delta_log/{self.delta_name(c.version)}"
            if c.version not in view.published:
                with contextlib.suppress(FileExistsError):
                    self.storage.put(target, self.content(c), if_absent=True)


class MarkBeforeCopyTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = MarkBeforeCopyClient


class NameTruncatedLookupClient(ResilientClient):
    """cr8-wrt-name-truncated-lookup. The client's SQL layer caps identifiers at 64 characters: table names
    are truncated when a table is looked up (append, delete, read, publish, maintenance), but not when it is
    created (the creation path hands the name straight to the catalog). RFC "Table Discovery" / "Writer
    Requirements": the table is found through the catalog by its name. Names of up to 64 characters work;
    a longer one is created and then not found, or, when another table's name is its first 64 characters,
    the client writes to and reads from that other table."""

    def _info(self, name: str) -> TableInfo:
        return self.catalog.resolve(name[:64])


class NameTruncatedLookupTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = NameTruncatedLookupClient


class SessionCachedListingClient(ResilientClient):
    """cr8-rdr-session-cached-listing. For read consistency within a session the client keeps the catalog's
    listing (latest version and ratified commits) of a table and reuses it for reads, refreshing it only
    when it commits to that table itself. RFC "Reader Requirements" (readers contact the catalog for the
    latest version and the ratified commits) and "Reading Catalog-managed Tables". A suite that writes and
    reads through one client sees its own commits; a reader client beside another writer keeps returning
    the version of its first read."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._listings: dict[str, GetCommitsResponse] = {}

    def listing(self, info: TableInfo) -> GetCommitsResponse:
        if info.table_id not in self._listings:
            self._listings[info.table_id] = self.catalog.get_commits(info.table_id)
        return self._listings[info.table_id]

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        info = self._info(name)
        resp = self.listing(info)
        full = self.view(info)
        commits = {c.version: c for c in resp.commits}
        published = {v: u for v, u in full.published.items() if v <= resp.latest_version}
        checkpoints = {v: u for v, u in full.checkpoints.items() if v <= resp.latest_version}
        view = LogView(info, resp.latest_version, commits, published, checkpoints, full.last_checkpoint_uri)
        if timestamp_ms is not None:
            version = self.version_at(self.timeline(view), timestamp_ms)
        target = self.readable_bound(view, version)
        return ReadResult(target, self.rows(info.location, self.snapshot(view, target)))

    def after_ratified(self, info: TableInfo, version: int) -> None:
        self._listings.pop(info.table_id, None)


class SessionCachedListingTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = SessionCachedListingClient


class TxnIdKeptAfterLostAnswerClient(ResilientClient):
    """cr8-wrt-txnid-kept-after-lost-answer. The writer keeps a transaction's txnId across its retries
    (a retried proposal is the same transaction) and clears it when a proposal is answered "ratified". A
    proposal whose answer was lost, then found ratified by asking the catalog, leaves the id in place, and
    the client's next transaction reuses it. RFC "Commit Provenance Information" (a unique transaction
    identifier). Without lost answers every commit has its own id; after one, two commits share one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending_txn: str | None = None

    def txn_id(self) -> str:
        if self._pending_txn is None:
            self._pending_txn = super().txn_id()
        return self._pending_txn

    def transact(self, name: str, operation: str, build: Any) -> int:
        info = self._info(name)
        log = f"{info.location}/_delta_log"
        for _ in range(self.max_attempts):
            view = self.view(info)
            snap = self.snapshot(view, view.latest)
            version = view.latest + 1
            ict = self.next_ict(snap.in_commit_timestamp)
            actions: list[Action] = build(info, snap, ict)
            content = encode(self.order_actions(self.commit_info_for(info, version, operation, ict), actions))
            uri = self.stage(log, version, content, None)
            try:
                self.catalog.commit(info.table_id, version, staged_uri=uri, in_commit_timestamp=ict)
            except CommitConflict:
                if not self.on_conflict(info, version, uri, content):
                    continue
                return version
            except CatalogTimeout:
                if not self.on_lost_answer(info, version, uri, content):
                    continue
                return version  # ratified after all; the pending id is not cleared here
            self._pending_txn = None
            return version
        raise RetriesExhausted(f"gave up committing to {name}")


class TxnIdKeptAfterLostAnswerTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = TxnIdKeptAfterLostAnswerClient


class PublishSkipsOnLostListingClient(ResilientClient):
    """cr8-wrt-publish-skips-on-lost-listing. Publication is treated as best-effort housekeeping: when the
    answer to the listing it starts with is lost, ``publish`` returns quietly ("the next publish will
    catch up"), though the caller asked for every ratified commit to be published. RFC "Publishing
    Commits"; WRT-LOST-ANSWER-ONCE (a lost listing answer changes nothing of the outcome). Without a lost
    answer it publishes everything; after one, ``publish`` returns and ``_delta_log`` misses the commits."""

    def publish(self, name: str) -> None:
        info = self._info(name)
        try:
            self.raw_catalog.get_commits(info.table_id)
        except CatalogTimeout:
            return
        super().publish(name)


class PublishSkipsOnLostListingTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PublishSkipsOnLostListingClient


class ShortPageStopClient(ResilientClient):
    """cr8-rdr-short-page-stop. The client fetches the catalog's ratified commits in windows of 100
    versions (``get_commits(start, start + 99)``) from version 0 and stops at the first window that holds
    fewer than 100 commits, taking it for the last page. RFC "Getting Ratified Commits from the Catalog"
    and "Reader Requirements" (the reader includes every ratified, unpublished commit). Tables below 100
    versions read right; once the catalog holds unpublished commits above version 99 (a long history whose
    older commits are published and forgotten, or a long unpublished run), the reader misses them."""

    window: ClassVar[int] = 100

    def view(self, info: TableInfo) -> LogView:
        full = super().view(info)
        commits: dict[int, RatifiedCommit] = {}
        start = 0
        while True:
            resp = self.catalog.get_commits(info.table_id, start, start + self.window - 1)
            commits.update({c.version: c for c in resp.commits})
            if len(resp.commits) < self.window:
                break
            start += self.window
        full.catalog_commits = commits
        return full


class ShortPageStopTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = ShortPageStopClient


class TimeTravelSecondsClient(ResilientClient):
    """cr8-rdr-time-travel-seconds. Time travel by timestamp compares in-commit timestamps at the
    granularity of seconds (both sides ``// 1000``, as its planner's TIMESTAMP(0) does). RFC "Publishing
    Commits" (time travel by in-commit timestamp): the version at ``t`` is the latest commit whose
    in-commit timestamp is at or before ``t`` in milliseconds. With commits seconds apart it is right; a
    read at a commit's own timestamp when the next commit came in the same second returns the next one."""

    def version_at(self, timeline: list[tuple[int, int]], timestamp_ms: int) -> int:
        eligible = [v for v, ict in timeline if ict // 1000 <= timestamp_ms // 1000]
        if not eligible:
            raise ReadError(f"no version at or before {timestamp_ms}")
        return max(eligible)


class TimeTravelSecondsTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = TimeTravelSecondsClient


class CompactionFallbackCheckpointClient(ResilientClient):
    """cr8-wrt-compaction-fallback-checkpoint. When the catalog's policy forbids log compaction, the client
    falls back to "the next best thing" and writes a checkpoint of the newest published version, without
    asking the policy again about checkpoints (it asked about maintenance once, for compaction). RFC
    "Maintenance Operations on Catalog-managed Tables" (clients consult the catalog before every maintenance
    job and honour its policy). Under all-or-nothing policies nothing shows (allowed: compaction runs; all
    forbidden: suites rarely ask for compaction then); a partial policy that forbids both compaction and
    checkpoints but allows another job gets a checkpoint from a compaction request."""

    _unchecked = False

    def policy_allows(self, info: TableInfo, op: str) -> bool:
        return True if self._unchecked else super().policy_allows(info, op)

    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        info = self._info(name)
        if not self.policy_allows(info, "log_compaction"):
            self.checkpoint_unchecked(info)
            return False
        return super().compact_log(name, start_version, end_version)

    def checkpoint_unchecked(self, info: TableInfo) -> None:
        self._unchecked = True  # "we already asked"
        try:
            self.checkpoint(info.name)
        finally:
            self._unchecked = False


class CompactionFallbackCheckpointTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CompactionFallbackCheckpointClient


class CleanupAlsoVacuumsClient(ResilientClient):
    """cr8-wrt-cleanup-also-vacuums. Metadata cleanup also deletes the data files that the commits it
    removes had tombstoned (``remove`` actions of the Delta files before the cut-off checkpoint), "since
    nobody can read them any more". That is vacuum, a separate maintenance operation of the catalog's
    policy, and the client asks only whether metadata cleanup is allowed. RFC "Maintenance Operations on
    Catalog-managed Tables" (honour the policy for every operation). Under an allow-all policy nothing shows;
    a policy that allows metadata cleanup but forbids vacuum sees data files deleted."""

    def cleanup(self, name: str, cutoff_version: int) -> None:
        info = self._info(name)
        if not self.policy_allows(info, "metadata_cleanup"):
            return
        view = self.view(info)
        checkpoint = self.cleanup_cutoff_checkpoint(view, cutoff_version)
        doomed_data: list[str] = []
        if checkpoint is not None:
            for ver, uri in sorted(view.published.items()):
                if ver < checkpoint:
                    for a in decode(self.storage.get(uri)):
                        if "remove" in a:
                            path = a["remove"]["path"]
                            doomed_data.append(path if "://" in path else f"{info.location}/{path}")
        super().cleanup(name, cutoff_version)
        for uri in doomed_data:
            self.storage.delete(uri)


class CleanupAlsoVacuumsTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CleanupAlsoVacuumsClient


# ================================================================ the list


VARIANTS: list[Variant] = [
    variant_of(
        "cr8-cat-cap-counts-history",
        CapCountsHistoryTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-LIMIT-DECLARED",),
        "MUST",
        ("limits", "long-history", "publication"),
    ),
    variant_of(
        "cr8-cat-restart-published-recomputed",
        RestartPublishedRecomputedTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RATIFY-DURABLE",),
        "MUST",
        ("restart", "limits", "long-history"),
    ),
    variant_of(
        "cr8-cat-restart-location-normalised",
        RestartLocationNormalisedTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RESOLVE-LOCATION", "CAT-RATIFY-DURABLE"),
        "MUST",
        ("restart", "encoding"),
    ),
    variant_of(
        "cr8-cat-mark-after-store",
        MarkAfterStoreTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-PUBLISH-REPORT-POSSIBLE", "CAT-RETAIN-UNPUBLISHED"),
        "SHOULD",
        ("publication", "piggy-backed-mark"),
    ),
    variant_of(
        "cr8-cat-restart-managed-flag",
        RestartManagedFlagTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RESOLVE-MANAGED",),
        "SHOULD",
        ("restart", "discovery"),
    ),
    variant_of(
        "cr8-cat-staged-uuid-loose",
        StagedUuidLooseTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-STAGED-NAME",),
        "MUST",
        ("staged-names", "validation"),
    ),
    variant_of(
        "cr8-cat-register-upsert",
        RegisterUpsertTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RESOLVE-LOCATION",),
        "MUST",
        ("several-tables", "discovery", "creation"),
    ),
    variant_of(
        "cr8-cat-staged-version-previous",
        StagedVersionPreviousTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-STAGED-VERSION",),
        "MUST",
        ("staged-names", "concurrency", "rebase"),
    ),
    variant_of(
        "cr8-wrt-adopt-orphan-staged",
        AdoptOrphanStagedTarget,
        "client",
        "delta-cm-writer",
        ("WRT-CRASH-RECOVERY",),
        "MUST",
        ("client-crash", "staged-commits"),
    ),
    variant_of(
        "cr8-wrt-mark-before-copy",
        MarkBeforeCopyTarget,
        "client",
        "delta-cm-writer",
        ("WRT-LOST-ANSWER-ONCE",),
        "MUST",
        ("lost-answers", "publication"),
    ),
    variant_of(
        "cr8-wrt-name-truncated-lookup",
        NameTruncatedLookupTarget,
        "client",
        "delta-cm-writer",
        ("WRT-DISCOVERY", "RDR-DISCOVERY"),
        "MUST",
        ("limits", "long-names", "several-tables"),
    ),
    variant_of(
        "cr8-rdr-session-cached-listing",
        SessionCachedListingTarget,
        "client",
        "delta-cm-reader",
        ("RDR-UNPUBLISHED",),
        "MUST",
        ("several-clients", "caching"),
    ),
    variant_of(
        "cr8-wrt-txnid-kept-after-lost-answer",
        TxnIdKeptAfterLostAnswerTarget,
        "client",
        "delta-cm-writer",
        ("WRT-TXNID-UNIQUE",),
        "MUST",
        ("lost-answers", "txnid"),
    ),
    variant_of(
        "cr8-wrt-publish-skips-on-lost-listing",
        PublishSkipsOnLostListingTarget,
        "client",
        "delta-cm-writer",
        ("WRT-LOST-ANSWER-ONCE",),
        "MUST",
        ("lost-answers", "publication"),
    ),
    variant_of(
        "cr8-rdr-short-page-stop",
        ShortPageStopTarget,
        "client",
        "delta-cm-reader",
        ("RDR-UNPUBLISHED",),
        "MUST",
        ("long-history", "page-sizes", "unpublished-runs"),
    ),
    variant_of(
        "cr8-rdr-time-travel-seconds",
        TimeTravelSecondsTarget,
        "client",
        "delta-cm-reader",
        ("RDR-TIME-TRAVEL-ICT",),
        "MUST",
        ("time-travel", "timestamps"),
    ),
    variant_of(
        "cr8-wrt-compaction-fallback-checkpoint",
        CompactionFallbackCheckpointTarget,
        "client",
        "delta-cm-writer",
        ("WRT-MAINTENANCE-POLICY",),
        "MUST",
        ("maintenance", "partial-policy", "checkpoints"),
    ),
    variant_of(
        "cr8-wrt-cleanup-also-vacuums",
        CleanupAlsoVacuumsTarget,
        "client",
        "delta-cm-writer",
        ("WRT-MAINTENANCE-POLICY",),
        "MUST",
        ("maintenance", "partial-policy", "metadata-cleanup", "old-versions"),
    ),
]
