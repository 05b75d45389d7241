"""Round 3 faulty variants of the clean-room catalog and client, and their correct baselines.

Each variant is a ``DurableTarget`` (a ``CleanRoomTarget``) whose ``catalog_cls`` or ``client_cls`` is a
faulty subclass of ``DurableCatalog``/``CleanCatalog`` or ``ResilientClient``/``CleanClient`` that
breaks one MUST or SHOULD of the catalogManaged RFC the way a real implementation would, and is
otherwise correct. ``VARIANTS`` lists them with their profile, rule(s) and level; the faults are
demonstrated in ``tests/test_cleanroom_r3_faults.py``.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import datetime
import itertools
import json
import os
from collections.abc import Sequence
from typing import Any, Literal

from conformance.contract.delta import (
    CatalogLimits,
    CommitConflict,
    CommitRejected,
    GetCommitsResponse,
    MaintenancePolicy,
    RatifiedCommit,
    TableInfo,
)
from tests.cleanroom.catalog import TableState
from tests.cleanroom.client import (
    _COMPACTION,
    _DELTA,
    _STAGED,
    Action,
    LogView,
    ReadError,
    Snapshot,
    decode,
)
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant

Profile = Literal["delta-cm-catalog", "delta-cm-writer", "delta-cm-reader"]
Level = Literal["MUST", "SHOULD"]
Dimension = Literal[
    "several-tables",
    "several-clients",
    "long-history",
    "maintenance-policy",
    "time-travel-after-maintenance",
    "restart",
    "lost-answer",
    "duplicate-delivery",
    "crash",
    "clock",
    "limits",
    "txnid",
]


# ==================================================================== correct baselines


class CORRECT_DURABLE(DurableTarget):  # noqa: N801 - the brief names baselines CORRECT...
    """Correct baseline: ``DurableCatalog`` (state in JSON files under ``env.workdir``, rebuilt by
    ``restart_catalog``) and ``ResilientClient`` (asks the catalog after a lost answer)."""

    name = "cleanroom-r3-correct"
    kind = "third-party"


UNPUBLISHED_CAP = 64


class CappedCatalog(DurableCatalog):
    """Correct: at most ``cap`` ratified, unpublished commits per table; one more is refused."""

    cap = UNPUBLISHED_CAP

    def check_sequence(self, t: TableState, version: int) -> None:
        super().check_sequence(t, version)
        if version - t.published > self.cap:
            raise CommitRejected(f"table holds {self.cap} unpublished commits; publish first")


class CORRECT_DURABLE_LIMITS(DurableTarget):  # noqa: N801
    """Correct baseline with a declared, enforced cap: a catalog that refuses cleanly (``CommitRejected``)
    the proposal that would hold more than ``UNPUBLISHED_CAP`` unpublished commits of a table."""

    name = "cleanroom-r3-correct-limits"
    kind = "third-party"

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(unpublished=CappedCatalog.cap)

    catalog_cls = CappedCatalog


# ==================================================================== catalog faults


class CounterLocationCatalog(DurableCatalog):
    """Staging locations are ``cr-tables/t<n>`` from an in-memory counter that is not persisted."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._counter = itertools.count()
        super().__init__(*args, **kwargs)

    def new_location(self, table_id: str) -> str:
        return f"{self.warehouse}/cr-tables/t{next(self._counter):06d}"


class CounterLocationAfterRestart(DurableTarget):
    """CAT-STAGING-UNIQUE (SHOULD), RFC "Creating and Dropping Catalog-managed Tables" (phase 1: a unique
    storage location). The catalog names table directories from a sequence kept in memory
    (``t000000``, ``t000001``...) and never persists it: after a restart the sequence starts again
    and the next staging table gets the location of a table created before the restart (the new
    table's version 0 lands in, or collides with, the old table's log). Locations are unique within
    one catalog lifetime, so every test that creates tables without restarting passes."""

    name = "cr3-counter-location-after-restart"
    catalog_cls = CounterLocationCatalog


class HistoryListingLimitCatalog(DurableCatalog):
    """Keeps every ratified commit as history; lists them ``ORDER BY version LIMIT 100``."""

    listing_limit = 100

    def forget_published(self, t: TableState, version: int) -> None:
        t.published = max(t.published, version)  # published commits are kept as history (allowed)
        self.persist(t)

    def listed(self, t: TableState, lo: int, hi: int) -> list[RatifiedCommit]:
        return super().listed(t, lo, hi)[: self.listing_limit]


class HistoryListingLimit(DurableTarget):
    """CAT-LIST-CONTIGUOUS, CAT-RETAIN-UNPUBLISHED (MUST), RFC "Getting Ratified Commits from the Catalog".
    The catalog keeps published commits as history (allowed: it may keep them as long as it likes)
    and its listing query is ``ORDER BY version ASC LIMIT 100``. Once a table has more than 100
    versions, a listing without a start version returns the 100 oldest and silently leaves out the
    newest ones, which are the unpublished commits readers need; the listing no longer ends at the
    latest version it reports. A suite whose tables stay below 100 versions sees nothing wrong."""

    name = "cr3-history-listing-limit"
    catalog_cls = HistoryListingLimitCatalog


class EvictingCapCatalog(DurableCatalog):
    """A ring buffer of ``cap`` unpublished commits: the oldest is dropped to make room."""

    cap = UNPUBLISHED_CAP

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        super().store(t, commit)
        unpublished = sorted(v for v in t.stored if v > t.published)
        for v in unpublished[: max(0, len(unpublished) - self.cap)]:
            del t.stored[v]
        self.persist(t)


class EvictingUnpublishedCap(DurableTarget):
    """CAT-RETAIN-UNPUBLISHED (MUST), RFC "Terminology: Commits" (ratified commit: the catalog must store it
    until it is published) and "Commit Protocol". The catalog declares a cap of 64 unpublished
    commits per table, but instead of refusing the 65th proposal cleanly it accepts it and evicts
    the oldest unpublished commit (a bounded buffer): silent truncation. Versions below the
    latest vanish from listings although nothing published them. Only visible with more than 64
    unpublished commits; certification itself never holds more than 10."""

    name = "cr3-evicting-unpublished-cap"
    catalog_cls = EvictingCapCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(unpublished=UNPUBLISHED_CAP)


class WriteBehindCatalog(DurableCatalog):
    """Flushes a table's state on every 8th ratification (and on registration and publication)."""

    flush_every = 8

    def persist_ratified(self, t: TableState, commit: RatifiedCommit) -> None:
        if commit.version % self.flush_every == 0:
            self.persist(t)


class WriteBehindState(DurableTarget):
    """CAT-RATIFY-ONCE, CAT-RETAIN-UNPUBLISHED (MUST), RFC "Commit Protocol" (ratify v at most once;
    store ratified commits until published). To save writes the catalog flushes a table's state
    only every 8th ratification (group commit) but answers every proposal at once. A restart
    loses the ratifications since the last flush: their commits are no longer listed, the latest
    version goes back, and those versions are ratified a second time for other writers. Without
    a restart (or with one right after a flush) the catalog is exact."""

    name = "cr3-write-behind-state"
    catalog_cls = WriteBehindCatalog


class LatestFromStoredCatalog(DurableCatalog):
    """On recovery the latest version is the newest stored commit (``SELECT max(version)``)."""

    def recovered_latest(self, t: TableState, persisted: int) -> int:
        return max(t.stored, default=0)


class RecoverLatestFromStored(DurableTarget):
    """CAT-RATIFY-ONCE, CAT-LIST-LATEST (MUST), RFC "Commit Protocol" (at most once) and "Getting Ratified
    Commits" (the latest ratified version is authoritative). After a restart the catalog derives a
    table's latest version from the commits it still stores. When every commit was published and
    forgotten, that is 0: the catalog reports latest 0 and ratifies version 1 again over a published
    ``1.json``. A restart with at least one unpublished commit recovers the right number."""

    name = "cr3-recover-latest-from-stored"
    catalog_cls = LatestFromStoredCatalog


class InlineRebaseCatalog(DurableCatalog):
    """Server-side rebase of blind inline appends: a taken version is moved to the next free one."""

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
        except CommitConflict as conflict:
            if inline_content is None or not self.blind_append(inline_content) or conflict.latest_version is None:
                raise
            super().commit(
                table_id,
                conflict.latest_version + 1,
                inline_content=inline_content,
                in_commit_timestamp=in_commit_timestamp,
                latest_published_version=latest_published_version,
            )

    @staticmethod
    def blind_append(content: bytes) -> bool:
        try:
            actions = decode(content)
        except (ValueError, UnicodeDecodeError):
            return False
        return all(set(a) <= {"add", "commitInfo"} for a in actions)


class InlineServerRebase(DurableTarget):
    """CAT-RATIFY-ONCE (MUST), RFC "Commit Protocol" (ratify version v at most once; a later proposal for it
    gets a conflict) and "Delta Log Entries" (the proposed version is authoritative). As an
    optimisation the catalog rebases inline proposals that only add files: when the version is
    taken it ratifies the content at the next free version and answers success. A duplicate delivery
    of an inline append (a transport retry) is ratified twice; a writer believes its commit is at
    version v while it is at v+k. Staged proposals, and inline ones that conflict with a metadata
    change, still get their conflict, so the usual conflict tests pass."""

    name = "cr3-inline-server-rebase"
    catalog_cls = InlineRebaseCatalog


class NameKeyTruncationCatalog(DurableCatalog):
    """Checks a name in full but keys the name index by its first 64 characters (a VARCHAR(64))."""

    key_length = 64

    def name_key(self, name: str) -> str:
        return name[: self.key_length]

    def register_table(self, name: str, table_id: str) -> TableInfo:
        info = super().register_table(name, table_id)
        with self._lock:
            self._by_name.pop(name, None)
            self._by_name[self.name_key(name)] = table_id
        return info

    def resolve(self, name: str) -> TableInfo:
        info = super().resolve(self.name_key(name) if isinstance(name, str) else name)
        return dataclasses.replace(info, name=name)


class NameKeyTruncation(DurableTarget):
    """CAT-RESOLVE-LOCATION (MUST), RFC "Table Discovery". Names up to 128 characters are accepted, but the
    name index stores only their first 64 characters, while the "name taken" check compares the full
    name. A second table whose name shares its first 64 characters with an existing one is
    registered and silently takes over the index entry: resolving the first name now returns the
    second table's location (a client writes into the wrong table). Every name of 64 characters or
    less, and any single long name, resolves correctly."""

    name = "cr3-name-key-truncation"
    catalog_cls = NameKeyTruncationCatalog


class InlineTruncationCatalog(DurableCatalog):
    """Stores inline content in a 64 KiB column; longer content is cut without a word."""

    column_bytes = 65_535

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if commit.inline_content is not None and len(commit.inline_content) > self.column_bytes:
            commit = dataclasses.replace(commit, inline_content=commit.inline_content[: self.column_bytes])
        super().store(t, commit)


class InlineTruncation(DurableTarget):
    """CAT-RETAIN-UNPUBLISHED (MUST), CAT-INLINE-COMMITS (MAY), RFC "Terminology: Commits" (inline commit;
    the catalog stores the ratified content until publication, unchanged) and the limits contract
    (past a limit, refuse cleanly, never truncate). The catalog keeps inline content in a 65,535-byte
    column: a larger inline commit is ratified and served back cut short, often in the middle of a
    JSON line. Small inline commits round-trip byte for byte."""

    name = "cr3-inline-truncation"
    catalog_cls = InlineTruncationCatalog


class GlobalListingCacheCatalog(DurableCatalog):
    """Caches listings by (start, end, generation); the generation moves on every change of any table."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._generation = 0
        self._cache: dict[tuple[int | None, int | None, int], GetCommitsResponse] = {}
        super().__init__(*args, **kwargs)

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        super().store(t, commit)
        self._generation += 1

    def forget_published(self, t: TableState, version: int) -> None:
        super().forget_published(t, version)
        self._generation += 1

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        key = (start_version, end_version, self._generation)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        resp = super().get_commits(table_id, start_version, end_version)
        self._cache = {key: resp}
        return resp


class GlobalListingCache(DurableTarget):
    """CAT-LIST-RATIFIED-ONLY, CAT-LIST-LATEST (MUST), RFC "Getting Ratified Commits from the Catalog".
    The catalog caches the last listing response, invalidated by a generation counter that every
    ratification or publication (of any table) moves on, but the cache key forgets the table id.
    Listing table B right after table A with the same bounds and no change in between returns A's
    commits and A's latest version for B. With one table, or a write between the two listings, it
    is exact."""

    name = "cr3-global-listing-cache"
    catalog_cls = GlobalListingCacheCatalog


# ==================================================================== client faults


_PROCESS_TAG = f"{os.getpid()}"


class CounterTxnClient(ResilientClient):
    """txnId = engine/process tag + a per-client counter."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._txn_counter = itertools.count(1)

    def txn_id(self) -> str:
        return f"cleanroom-{_PROCESS_TAG}-{next(self._txn_counter)}"


class TxnIdPerClientCounter(DurableTarget):
    """WRT-TXNID-UNIQUE (MUST), RFC "Commit Provenance Information" (commitInfo.txnId is a unique transaction
    identifier). The client builds txnIds from the process id and a counter that every client object
    starts at 1. One client never repeats itself, so a one-writer suite passes; two clients of the
    same process writing one table produce ``cleanroom-<pid>-1`` twice."""

    name = "cr3-txnid-per-client-counter"
    client_cls = CounterTxnClient


class VersionTxnClient(ResilientClient):
    """txnId = client session + the version it proposes."""

    def commit_info_for(self, info: TableInfo, version: int, operation: str, ict: int) -> Action:
        action = self.commit_info(operation, ict)
        action["commitInfo"]["txnId"] = f"{self.session_id}-{version}"
        return action


class TxnIdPerVersion(DurableTarget):
    """NEW rule WRT-TXNID-GLOBAL: "A txnId identifies one transaction: no two commits share it, in one table
    or across tables" (SHOULD; WRT-TXNID-UNIQUE only judges one table). RFC "Commit Provenance
    Information" and "Writer Requirements" (a unique transaction identifier). The client derives the
    txnId from its session and the version it proposes: unique within a table (and a retry at a new
    version gets a new id), but the same client writing version 1 of two tables uses one txnId for
    two transactions, which breaks any catalog or tool that keys transactions by txnId."""

    name = "cr3-txnid-per-version"
    client_cls = VersionTxnClient


class BlindRetryClient(ResilientClient):
    """A lost answer is treated as a lost race: the whole write is run again and proposed again."""

    def on_lost_answer(self, info: TableInfo, version: int, staged_uri: str, content: bytes) -> bool:
        return False

    def append(self, name: str, rows: Sequence[dict[str, object]]) -> int:
        # Each attempt writes its own data file (correct after a real conflict: the loser's is orphaned).
        return self.transact(name, "WRITE", lambda info, _s, _t: [self.write_data(info.location, rows)] if rows else [])


class BlindRetryOnTimeout(DurableTarget):
    """NEW rule WRT-LOST-ANSWER: "After a lost answer to a proposal the writer asks the catalog whether it was
    ratified; an acknowledged write is committed exactly once" (MUST; RFC "Catalog-managed tables":
    the catalog is the source of truth for whether a commit attempt succeeded; "Commit Protocol").
    On ``CatalogTimeout`` the client assumes it lost and runs the write again like after a conflict
    (new data file, next version). When the catalog had ratified the first proposal, the append is
    committed twice (rows duplicated, the wrong version acknowledged). Conflicts and clean successes
    are handled correctly."""

    name = "cr3-blind-retry-on-timeout"
    client_cls = BlindRetryClient


class TrustLatestClient(ResilientClient):
    """After a lost answer: if the catalog's latest version reached ours, the commit is assumed ours."""

    def on_lost_answer(self, info: TableInfo, version: int, staged_uri: str, content: bytes) -> bool:
        return self.catalog.get_commits(info.table_id).latest_version >= version


class TrustLatestOnTimeout(DurableTarget):
    """NEW rule WRT-LOST-ANSWER (as above; the acknowledged commit must be the writer's own), MUST; RFC
    "Commit Protocol" (the catalog ratifies one proposal per version, others are rejected). After a
    lost answer the client asks the catalog, but only compares version numbers: if the latest
    ratified version is at least the one it proposed, it reports success. When the lost answer was
    a conflict (a rival won the version), the client acknowledges a commit that does not exist and
    its rows are lost. When the lost answer was a success, it is right, which is what a nemesis
    that only drops successful answers sees."""

    name = "cr3-trust-latest-on-timeout"
    client_cls = TrustLatestClient


class OrphanGcClient(ResilientClient):
    """Metadata cleanup also removes staged files the catalog does not list (orphans of crashed writers)."""

    def cleanup_doomed(self, view: LogView, files: list[str], checkpoint: int, cutoff: int) -> list[str]:
        doomed = super().cleanup_doomed(view, files, checkpoint, cutoff)
        log = f"{view.info.location}/_delta_log/"
        ratified = {c.staged_uri for c in view.catalog_commits.values() if c.staged_uri}
        for uri in files:
            if _STAGED.fullmatch(uri[len(log) :]) and uri not in ratified and uri not in doomed:
                doomed.append(uri)
        return doomed


class OrphanStagedGc(DurableTarget):
    """WRT-CLEANUP-STAGED-ABOVE (MUST), RFC "Metadata Cleanup" step 3 (only staged commits at or below the
    cut-off checkpoint's version are deleted). To tidy up after writers that crashed between
    staging and proposing, metadata cleanup also deletes every staged file the catalog does not list
    as ratified, whatever its version. That includes another writer's staged commit that is about to
    be proposed: its proposal then points at a missing file (refused, or worse, ratified without
    content). Without a concurrent writer or a crashed one, nothing above the checkpoint is staged
    but unratified, so single-writer cleanup tests pass."""

    name = "cr3-orphan-staged-gc"
    client_cls = OrphanGcClient


class PolicyCacheClient(ResilientClient):
    """Caches each table's maintenance policy for the client's lifetime."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._policies: dict[str, MaintenancePolicy] = {}

    def policy_allows(self, info: TableInfo, op: str) -> bool:
        policy = self._policies.get(info.table_id)
        if policy is None:
            policy = self._policies[info.table_id] = self.catalog.maintenance_policy(info.table_id)
        return policy.allows(op)  # type: ignore[arg-type]


class CachedMaintenancePolicy(DurableTarget):
    """WRT-MAINTENANCE-POLICY (MUST), RFC "Maintenance Operations on Catalog-managed Tables" (clients must
    consult the catalog before running any maintenance job). The client asks for a table's policy
    once and caches it: a policy the catalog narrows later (checkpoints forbidden after the first
    one) is ignored and the client keeps checkpointing. A suite that sets the policy before the
    client's first maintenance call, or uses a fresh client per call, sees it obey."""

    name = "cr3-cached-maintenance-policy"
    client_cls = PolicyCacheClient


class ChecksumWithCheckpointClient(ResilientClient):
    """Writes the version checksum file alongside every checkpoint (only 'checkpoint' is consulted)."""

    def checkpoint(self, name: str) -> int | None:
        version = super().checkpoint(name)
        if version is None:
            return None
        info = self._info(name)
        view = self.view(info)
        snap = self.snapshot(view, version)
        crc = {
            "tableSizeBytes": sum(int(a.get("size", 0)) for a in snap.files.values()),
            "numFiles": len(snap.files),
            "numMetadata": 1,
            "numProtocol": 1,
            "inCommitTimestampOpt": snap.in_commit_timestamp,
            "protocol": snap.protocol,
            "metadata": snap.metadata,
        }
        with contextlib.suppress(FileExistsError):
            self.storage.put(f"{info.location}/_delta_log/{version:020d}.crc", json.dumps(crc).encode(), if_absent=True)
        return version


class ChecksumBesideCheckpoint(DurableTarget):
    """WRT-MAINTENANCE-POLICY (MUST), RFC "Maintenance Operations" (policies cover checkpoints, log compaction
    and version checksum files; clients honour them). The client writes a ``<v>.crc`` next to every
    checkpoint it writes and only asks whether checkpoints are allowed. Under a partial policy that
    allows checkpoints but not checksums, it writes forbidden checksum files. Under the default
    allow-everything policy, or a policy forbidding checkpoints, it is right."""

    name = "cr3-checksum-beside-checkpoint"
    client_cls = ChecksumWithCheckpointClient


class IndexTimeTravelClient(ResilientClient):
    """Time travel by binary search over the in-commit timestamps, returning the position found."""

    def version_at(self, timeline: list[tuple[int, int]], timestamp_ms: int) -> int:
        icts = [ict for _, ict in timeline]
        i = bisect.bisect_right(icts, timestamp_ms) - 1
        if i < 0:
            raise ReadError(f"no version at or before {timestamp_ms}")
        return i  # the position in the timeline, taken for the version


class TimeTravelIndexAfterCleanup(DurableTarget):
    """RDR-TIME-TRAVEL-ICT (MUST), RFC "Publishing Commits" (note: time travel by in-commit timestamps).
    Time travel by timestamp bisects the list of (version, inCommitTimestamp) of the readable
    commits and returns the index it found instead of that entry's version. While the history
    starts at version 0 the index is the version. After metadata cleanup deleted the commits before
    the cut-off checkpoint, the timeline starts at the checkpoint's version and every timestamp
    resolves to a version too old by that many (or to a cleaned-up version that cannot be read)."""

    name = "cr3-time-travel-index-after-cleanup"
    client_cls = IndexTimeTravelClient


class WallClockTzClient(ResilientClient):
    """Takes the local wall-clock time and labels it UTC."""

    def now_ms(self) -> int:
        local = datetime.datetime.now()  # noqa: DTZ005 - the fault: a naive local time
        return int(local.replace(tzinfo=datetime.UTC).timestamp() * 1000)


class LocalTimeAsUtc(DurableTarget):
    """NEW rule WRT-ICT-EPOCH: "inCommitTimestamp is the commit time in milliseconds since the Unix epoch,
    whatever the writer's time zone" (MUST; PROTOCOL.md In-Commit Timestamps, RFC "Publishing
    Commits": catalog-managed tables rely on in-commit timestamps for time travel; RDR-TIME-TRAVEL-ICT
    then resolves the wrong versions). The client reads the naive local wall-clock time and stamps
    it as UTC. On a UTC machine (every CI runner) it is exact; in any other zone every
    inCommitTimestamp is off by the zone's offset (hours in the future east of Greenwich), so time
    travel to "now" misses the commits just made, and tables written from two zones interleave
    wrong times."""

    name = "cr3-local-time-as-utc"
    client_cls = WallClockTzClient


class OwnClockIctClient(ResilientClient):
    """Keeps in-commit timestamps monotonic against the client's own previous commit only."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._last_ict: int | None = None

    def next_ict(self, previous: int | None) -> int:
        ict = super().next_ict(self._last_ict)
        self._last_ict = ict
        return ict


class IctMonotonicPerClient(DurableTarget):
    """WRT-ICT-MONOTONIC (MUST), PROTOCOL.md In-Commit Timestamps (each commit's timestamp is strictly above the
    previous commit's; the RFC makes them mandatory). The client guards monotonicity against the last
    timestamp it produced itself instead of the table's previous commit. With one writer that is the
    same thing; when another writer whose clock runs ahead committed the previous version, this
    client's timestamp goes backwards."""

    name = "cr3-ict-monotonic-per-client"
    client_cls = OwnClockIctClient


class PublishOwnClient(ResilientClient):
    """Publishes only the commits it ratified itself, then marks the highest of them published."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._mine: dict[str, set[int]] = {}

    def after_ratified(self, info: TableInfo, version: int) -> None:
        self._mine.setdefault(info.table_id, set()).add(version)

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        mine = self._mine.get(info.table_id, set())
        done = -1
        for c in self.publish_order([c for c in view.catalog_commits.values() if c.version in mine]):
            if c.version not in view.published:
                with contextlib.suppress(FileExistsError):
                    target = f"{info.location}/_delta_log/{self.delta_name(c.version)}"
                    self.storage.put(target, self.content(c), if_absent=True)
            done = max(done, c.version)
        if done >= 0:
            self.catalog.mark_published(info.table_id, done)


class PublishOwnCommitsOnly(DurableTarget):
    """WRT-PUBLISH-ORDER (MUST), INT-PUBLISH-PATH-READABLE; RFC "Publishing Commits" (v-1 before v). The
    client keeps a list of the commits it ratified and publishes those, telling the catalog that
    everything up to the highest is published. If another writer crashed between ratification and
    publication, its version v-1 is skipped, the catalog is told v is published, drops v-1, and the
    commit is lost from both the catalog and ``_delta_log``. With one writer, or writers that all
    publish, every version gets published in order."""

    name = "cr3-publish-own-commits-only"
    client_cls = PublishOwnClient


class WindowReadClient(ResilientClient):
    """Asks the catalog only for the 50 versions after the newest published one."""

    window = 50

    def view(self, info: TableInfo) -> LogView:
        log = f"{info.location}/_delta_log/"
        published_max = max(
            (int(m.group(1)) for f in self.storage.list(log) if (m := _DELTA.fullmatch(f.uri[len(log) :]))),
            default=0,
        )
        resp = self.catalog.get_commits(info.table_id, published_max + 1, published_max + self.window)
        full = super().view(info)
        commits = {c.version: c for c in resp.commits if c.version <= full.latest}
        return dataclasses.replace(full, catalog_commits=commits)


class UnpublishedWindow(DurableTarget):
    """RDR-UNPUBLISHED (MUST), RFC "Reader Requirements" (readers must contact the catalog for the unpublished
    ratified commits) and "Getting Ratified Commits". Assuming a catalog never holds more than 50
    unpublished commits, the client asks for the ratified commits in [newest published + 1, newest
    published + 50] only. With more than 50 unpublished commits (a publisher that is down, a long
    batch of small commits) the versions above the window are never fetched: reads of the latest
    version fail and writes cannot build their snapshot. Suites that keep at most 10 unpublished
    commits never see it."""

    name = "cr3-unpublished-window"
    client_cls = WindowReadClient


class CompactionReadClient(ResilientClient):
    """Replays log compaction files in place of the commits they cover (a read optimisation)."""

    def snapshot(self, view: LogView, target: int) -> Snapshot:
        log = f"{view.info.location}/_delta_log/"
        ranges: dict[int, tuple[int, str]] = {}
        for f in self.storage.list(log):
            m = _COMPACTION.fullmatch(f.uri[len(log) :])
            if m and int(m.group(2)) <= view.latest:
                ranges[int(m.group(1))] = (int(m.group(2)), f.uri)
        if not ranges:
            return super().snapshot(view, target)
        sources = self.commit_sources(view)
        cp = self.start_checkpoint(view, target)
        v = 0 if cp is None else cp + 1
        batches: list[list[Action]] = []
        if cp is not None:
            batches.append(self.checkpoint_actions(view.checkpoints[cp]))
        while v <= target:
            hit = ranges.get(v)
            if hit is not None:  # the fault: no check that the range ends at or below ``target``
                batches.append(decode(self.storage.get(hit[1])))
                v = hit[0] + 1
                continue
            if v not in sources:
                raise ReadError(f"commit {v} of version {target} is neither in the catalog nor published")
            batches.append(decode(self.content(sources[v])))
            v += 1
        snap = self.replay(target, batches)
        if target in sources:
            snap.in_commit_timestamp = self.ict_of(decode(self.content(sources[target])))
        return snap


class CompactionOvershoot(DurableTarget):
    """NEW rule RDR-COMPACTION-RANGE: "A reader uses a log compaction file x..y only for a snapshot at version
    y or later" (MUST; PROTOCOL.md Log Compaction Files; reads of old versions, INT-RATIFIED-READABLE).
    The reader replaces commits x..y by the compaction file that starts at x, but only checks where
    the range starts. Reading an older version inside a compacted range (time travel, or the
    snapshot a writer builds) replays the later commits too and returns rows that did not exist
    yet. Latest reads are right, so it only shows with compaction plus reads of old versions."""

    name = "cr3-compaction-overshoot"
    client_cls = CompactionReadClient


class NameKeyedContentClient(ResilientClient):
    """Caches commit content by file name (commits are immutable, so the cache never expires)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._content: dict[str, bytes] = {}

    def content(self, source: RatifiedCommit | str) -> bytes:
        if not isinstance(source, str):
            return super().content(source)
        key = source.rsplit("/", 1)[-1]
        hit = self._content.get(key)
        if hit is None:
            hit = self._content[key] = super().content(source)
        return hit


class ContentCacheByFileName(DurableTarget):
    """RDR-DISCOVERY, RDR-LIST-FALLBACK (MUST), RFC "Reader Requirements" (read from the location the
    catalog resolves) and "Reading Catalog-managed Tables". Published Delta files are immutable, so
    the client caches their content, keyed by file name (``00000000000000000001.json``) instead of the
    full URI. A client that reads two tables replays the first table's published commits for the
    second: its data files are looked up in the wrong table (the read fails) or, with absolute
    paths, the wrong rows come back. Staged and inline commits, and one-table tests, are
    unaffected."""

    name = "cr3-content-cache-by-file-name"
    client_cls = NameKeyedContentClient


# ==================================================================== registry


def _v(
    cls: type[DurableTarget],
    profile: Profile,
    rules: tuple[str, ...],
    level: Level,
    dims: tuple[Dimension, ...],
) -> Variant:
    side: Literal["catalog", "client"] = "catalog" if profile == "delta-cm-catalog" else "client"
    return Variant(cls.name, f"{__name__}:{cls.__name__}", side, profile, rules, level, dims, cls.__doc__ or "")


WRT_LOST_ANSWER = (
    "NEW WRT-LOST-ANSWER: after a lost answer to a proposal the writer asks the catalog whether its own proposal "
    "was ratified; an acknowledged write is committed exactly once"
)

VARIANTS: list[Variant] = [
    # catalog
    _v(
        CounterLocationAfterRestart,
        "delta-cm-catalog",
        ("CAT-STAGING-UNIQUE",),
        "SHOULD",
        ("restart", "several-tables"),
    ),
    _v(
        HistoryListingLimit,
        "delta-cm-catalog",
        ("CAT-LIST-CONTIGUOUS", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("long-history",),
    ),
    _v(EvictingUnpublishedCap, "delta-cm-catalog", ("CAT-RETAIN-UNPUBLISHED",), "MUST", ("limits", "long-history")),
    _v(WriteBehindState, "delta-cm-catalog", ("CAT-RATIFY-ONCE", "CAT-RETAIN-UNPUBLISHED"), "MUST", ("restart",)),
    _v(RecoverLatestFromStored, "delta-cm-catalog", ("CAT-RATIFY-ONCE", "CAT-LIST-LATEST"), "MUST", ("restart",)),
    _v(InlineServerRebase, "delta-cm-catalog", ("CAT-RATIFY-ONCE",), "MUST", ("duplicate-delivery",)),
    _v(NameKeyTruncation, "delta-cm-catalog", ("CAT-RESOLVE-LOCATION",), "MUST", ("limits", "several-tables")),
    _v(InlineTruncation, "delta-cm-catalog", ("CAT-RETAIN-UNPUBLISHED", "CAT-INLINE-COMMITS"), "MUST", ("limits",)),
    _v(
        GlobalListingCache,
        "delta-cm-catalog",
        ("CAT-LIST-RATIFIED-ONLY", "CAT-LIST-LATEST"),
        "MUST",
        ("several-tables",),
    ),
    # client
    _v(TxnIdPerClientCounter, "delta-cm-writer", ("WRT-TXNID-UNIQUE",), "MUST", ("txnid", "several-clients")),
    _v(
        TxnIdPerVersion,
        "delta-cm-writer",
        ("NEW WRT-TXNID-GLOBAL: no two commits share a txnId, in one table or across tables",),
        "SHOULD",
        ("txnid", "several-tables"),
    ),
    _v(BlindRetryOnTimeout, "delta-cm-writer", (WRT_LOST_ANSWER,), "MUST", ("lost-answer", "duplicate-delivery")),
    _v(TrustLatestOnTimeout, "delta-cm-writer", (WRT_LOST_ANSWER,), "MUST", ("lost-answer", "several-clients")),
    _v(OrphanStagedGc, "delta-cm-writer", ("WRT-CLEANUP-STAGED-ABOVE",), "MUST", ("crash", "several-clients")),
    _v(CachedMaintenancePolicy, "delta-cm-writer", ("WRT-MAINTENANCE-POLICY",), "MUST", ("maintenance-policy",)),
    _v(ChecksumBesideCheckpoint, "delta-cm-writer", ("WRT-MAINTENANCE-POLICY",), "MUST", ("maintenance-policy",)),
    _v(
        TimeTravelIndexAfterCleanup,
        "delta-cm-reader",
        ("RDR-TIME-TRAVEL-ICT",),
        "MUST",
        ("time-travel-after-maintenance",),
    ),
    _v(
        LocalTimeAsUtc,
        "delta-cm-writer",
        ("NEW WRT-ICT-EPOCH: inCommitTimestamp is milliseconds since the Unix epoch whatever the writer's time zone",),
        "MUST",
        ("clock",),
    ),
    _v(IctMonotonicPerClient, "delta-cm-writer", ("WRT-ICT-MONOTONIC",), "MUST", ("clock", "several-clients")),
    _v(
        PublishOwnCommitsOnly,
        "delta-cm-writer",
        ("WRT-PUBLISH-ORDER", "INT-PUBLISH-PATH-READABLE"),
        "MUST",
        ("crash", "several-clients"),
    ),
    _v(UnpublishedWindow, "delta-cm-reader", ("RDR-UNPUBLISHED",), "MUST", ("long-history",)),
    _v(
        CompactionOvershoot,
        "delta-cm-reader",
        ("NEW RDR-COMPACTION-RANGE: a log compaction file x..y serves only snapshots at version y or later",),
        "MUST",
        ("time-travel-after-maintenance",),
    ),
    _v(ContentCacheByFileName, "delta-cm-reader", ("RDR-DISCOVERY", "RDR-LIST-FALLBACK"), "MUST", ("several-tables",)),
]

CORRECT_BASELINES = [f"{__name__}:CORRECT_DURABLE", f"{__name__}:CORRECT_DURABLE_LIMITS"]
