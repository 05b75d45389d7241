"""Round 4 of the clean-room faulty variants, written blind from the catalogManaged RFC, the contract and
docs/certify.md, on top of the correct round-3 baselines (``tests/cleanroom_r3/base.py``).

Each target below swaps exactly one side of ``DurableTarget`` for a subclass that carries one bug of the
kind real catalogs and clients ship: it stays hidden on the happy path (one table, one client, a
handful of versions) and shows only under a condition: a restart, a digit boundary, a listing longer
than a page, a lost answer, a second table, a clock in another zone, a partial maintenance policy.
``VARIANTS`` at the end lists them with the rule(s) they break; ``tests/test_cleanroom_r4_faults.py``
shows each one misbehaving where the baseline does not.
"""

from __future__ import annotations

import contextlib
import datetime
import itertools
import json
import os
import re
import socket
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, Literal

from conformance.contract.delta import (
    CatalogLimits,
    CatalogTimeout,
    CommitConflict,
    CommitRejected,
    GetCommitsResponse,
    InvalidRequest,
    RatifiedCommit,
    Storage,
    TableInfo,
)
from tests.cleanroom.catalog import TableState
from tests.cleanroom.client import (
    _CHECKPOINT,
    _DELTA,
    _STAGED,
    Action,
    LogView,
    decode,
    encode,
)
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant

# ==================================================================== catalog side: faulty catalogs


class WriteBehindCatalog(DurableCatalog):
    """Flushes its table state to disk every ``flush_every`` ratifications (and at publication marks)."""

    flush_every = 4

    def persist_ratified(self, t: TableState, commit: RatifiedCommit) -> None:
        if commit.version % self.flush_every == 0:
            self.persist(t)


class CounterLocationCatalog(DurableCatalog):
    """Names staging locations after an in-memory sequence that starts again at every process start."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._sequence = itertools.count(1)
        super().__init__(warehouse_uri, storage, state_dir)

    def new_location(self, table_id: str) -> str:
        return f"{self.warehouse}/cr-tables/t{next(self._sequence):06d}"


class FoldOnLoadCatalog(DurableCatalog):
    """Rebuilds its name index case-folded when it starts, but registers names as given."""

    def name_key(self, name: str) -> str:
        return name.casefold()

    def resolve(self, name: str) -> TableInfo:
        if isinstance(name, str):
            with self._lock:
                exact = name in self._by_name
            if not exact:
                info = super().resolve(self.name_key(name))
                return TableInfo(info.table_id, name, info.location, info.catalog_managed)
        return super().resolve(name)


class FirstPageCatalog(DurableCatalog):
    """Its store pages listings by ``page_size`` rows and the API hands back the first page only."""

    page_size = 8

    def listed(self, t: TableState, lo: int, hi: int) -> list[RatifiedCommit]:
        return super().listed(t, lo, hi)[: self.page_size]


class TextRangeCatalog(DurableCatalog):
    """Filters the listing range on the versions' decimal text, as a TEXT column would compare them."""

    def listed(self, t: TableState, lo: int, hi: int) -> list[RatifiedCommit]:
        return [t.stored[v] for v in sorted(t.stored) if str(lo) <= str(v) <= str(hi)]


class PiggybackForgetCatalog(DurableCatalog):
    """Takes a publication mark carried by a proposal to mean "everything below my proposal is published"."""

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
            latest_published_version=latest_published_version,
        )
        if latest_published_version is not None:
            t = self._table(table_id, InvalidRequest)
            with t.lock:
                self.forget_published(t, version - 1)


class ValidatingUnlockedCatalog(DurableCatalog):
    """Reads the staged file to validate it between the sequence check and the store, outside the lock."""

    def ratify_lock(self, t: TableState) -> contextlib.AbstractContextManager[object]:
        return contextlib.nullcontext()

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if commit.staged_uri is not None:
            for line in self.storage.get(commit.staged_uri).decode().splitlines():
                if line.strip():
                    json.loads(line)
        with t.lock:
            super().store(t, commit)


class AutoRebaseInlineCatalog(DurableCatalog):
    """Re-bases a conflicting inline proposal that only adds files onto the next free version."""

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
        kwargs: dict[str, Any] = {
            "staged_uri": staged_uri,
            "inline_content": inline_content,
            "in_commit_timestamp": in_commit_timestamp,
            "latest_published_version": latest_published_version,
        }
        while True:
            try:
                super().commit(table_id, version, **kwargs)
                return
            except CommitConflict as conflict:
                if inline_content is None or conflict.latest_version is None:
                    raise
                kinds = {next(iter(a)) for a in decode(bytes(inline_content))}
                if not kinds <= {"commitInfo", "add"}:
                    raise
                version = conflict.latest_version + 1  # blind appends commute: land it after the winner


class _Varchar64(dict[str, str]):
    """A name index whose key column holds 64 characters."""

    width = 64

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key[: self.width], value)

    def get(self, key: Any, default: Any = None) -> Any:
        return super().get(key[: self.width] if isinstance(key, str) else key, default)


class PrefixIndexCatalog(DurableCatalog):
    """Indexes names on their first 64 characters; the uniqueness test compares the whole name."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        super().__init__(warehouse_uri, storage, None)
        self._by_name = _Varchar64()
        self.state_dir = state_dir
        if state_dir is not None:
            state_dir.mkdir(parents=True, exist_ok=True)
            self.load()


class InlineTruncateCatalog(DurableCatalog):
    """Keeps inline commits in a 64 KiB column and cuts what does not fit."""

    inline_max = 64 * 1024

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if commit.inline_content is not None and len(commit.inline_content) > self.inline_max:
            commit = replace(commit, inline_content=commit.inline_content[: self.inline_max])
        super().store(t, commit)


class EvictingCatalog(DurableCatalog):
    """Holds at most ``cap`` unpublished commits per table and evicts the oldest to make room."""

    cap = 16

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        super().store(t, commit)
        held = sorted(v for v in t.stored if v > t.published)
        if len(held) > self.cap:
            for v in held[: len(held) - self.cap]:
                del t.stored[v]
            self.persist(t)


class ShortNameCatalog(DurableCatalog):
    """Refuses names at its declared maximum length, not only past it."""

    name_max = 64

    def register_table(self, name: str, table_id: str) -> TableInfo:
        if isinstance(name, str) and len(name) >= self.name_max:
            raise InvalidRequest(f"table name longer than {self.name_max} characters")
        return super().register_table(name, table_id)


class PublishedWatermarkConflictCatalog(DurableCatalog):
    """States the publication watermark as the latest version in its conflicts."""

    def check_sequence(self, t: TableState, version: int) -> None:
        if version <= t.latest:
            reported = t.published if t.stored else t.latest
            raise CommitConflict(f"version {version} is already ratified", latest_version=reported)
        if version != t.latest + 1:
            raise CommitRejected(f"version {version} would leave a gap after {t.latest}")


class BoundedLatestCatalog(DurableCatalog):
    """Reports, for a listing with an upper bound, the newest listed version as the table's latest."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        resp = super().get_commits(table_id, start_version, end_version)
        if end_version is not None and resp.commits:
            return GetCommitsResponse(resp.commits, resp.commits[-1].version)
        return resp


_LOOSE_STAGED = re.compile(r"/_delta_log/_staged_commits/(\d{20})\.[0-9a-fA-F-]{36}\.json")


class AnyTableStagedCatalog(DurableCatalog):
    """Checks the staged file's folder and name, but not that the folder belongs to the proposing table."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        m = _LOOSE_STAGED.search(staged_uri)
        if m is None or not staged_uri.endswith(m.group(0)):
            raise InvalidRequest(f"not a staged commit: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


# ==================================================================== client side: faulty writers


class LocalClockClient(ResilientClient):
    """Reads the wall clock as a naive local datetime and converts it as if it were UTC."""

    def now_ms(self) -> int:
        local = datetime.datetime.now()  # the bug: local wall time, no zone
        return int(local.replace(tzinfo=datetime.UTC).timestamp() * 1000)


class SkewDistrustClient(ResilientClient):
    """Ignores a previous in-commit timestamp that is more than an hour ahead of its own clock."""

    max_skew_ms = 3_600_000

    def next_ict(self, previous: int | None) -> int:
        now = self.now_ms()
        if previous is None or previous > now + self.max_skew_ms:
            return now  # a peer with a broken clock: do not inherit its future
        return max(now, previous + 1)


class ProcessCounterTxnClient(ResilientClient):
    """Builds txnIds from host, process id and a counter of its own instance."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._txn_seq = itertools.count(1)

    def txn_id(self) -> str:
        return f"{socket.gethostname()}-{os.getpid()}-{next(self._txn_seq)}"


class FileNameOrderPublisher(ResilientClient):
    """Publishes in the order of the staged files' names; an inline commit has none, so it goes first."""

    def publish_order(self, commits: list[RatifiedCommit]) -> list[RatifiedCommit]:
        return sorted(commits, key=lambda c: (c.staged_uri or "").rsplit("/", 1)[-1])


class RollbackOnLostMarkClient(ResilientClient):
    """Undoes its publication (deletes the files it just wrote) when the answer to the mark is lost."""

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        if not view.catalog_commits:
            return
        written: list[str] = []
        for c in self.publish_order(list(view.catalog_commits.values())):
            target = f"{info.location}/_delta_log/{self.delta_name(c.version)}"
            if c.version in view.published:
                continue
            with contextlib.suppress(FileExistsError):
                self.storage.put(target, self.content(c), if_absent=True)
                written.append(target)
        try:
            self.raw_catalog.mark_published(info.table_id, max(view.catalog_commits))
        except CatalogTimeout:
            for uri in written:  # keep _delta_log and the catalog in agreement
                self.storage.delete(uri)
            raise


class ListingOnlyOutcomeClient(ResilientClient):
    """After a lost answer, looks for its proposal in the catalog's listing only, never in _delta_log."""

    def was_ratified(self, info: TableInfo, version: int, staged_uri: str, content: bytes) -> bool:
        resp = self.catalog.get_commits(info.table_id, version, version)
        return any(
            c.version == version and (c.staged_uri == staged_uri or c.inline_content == content) for c in resp.commits
        )


class TextOrderCompactionClient(ResilientClient):
    """Reconciles a compaction range in the order of the versions' decimal text."""

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
        for v in sorted(range(start_version, end_version + 1), key=str):
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


class CutoffCommitStagedCleanupClient(ResilientClient):
    """Deletes staged commits up to the cut-off commit instead of the cut-off checkpoint."""

    def cleanup_doomed(self, view: LogView, files: list[str], checkpoint: int, cutoff: int) -> list[str]:
        doomed = super().cleanup_doomed(view, files, checkpoint, cutoff)
        log = f"{view.info.location}/_delta_log/"
        for uri in files:
            m = _STAGED.fullmatch(uri[len(log) :])
            if m and int(m.group(1)) <= cutoff and uri not in doomed:
                doomed.append(uri)
        return doomed


class NearestCheckpointCleanupClient(ResilientClient):
    """Takes the checkpoint nearest to the cut-off commit, even one after it."""

    def cleanup_cutoff_checkpoint(self, view: LogView, cutoff: int) -> int | None:
        if not view.checkpoints:
            return None
        return min(view.checkpoints, key=lambda v: (abs(v - cutoff), v))


class CachedPolicyClient(ResilientClient):
    """Asks the catalog for a table's maintenance policy once and keeps the answer for its lifetime."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._policies: dict[str, Any] = {}

    def policy_allows(self, info: TableInfo, op: str) -> bool:
        if info.table_id not in self._policies:
            self._policies[info.table_id] = self.catalog.maintenance_policy(info.table_id)
        return bool(self._policies[info.table_id].allows(op))


class CheckpointPermitCleanupClient(ResilientClient):
    """Treats metadata cleanup and checksum files as part of checkpointing when it asks the policy."""

    family = {"metadata_cleanup": "checkpoint", "checksum": "checkpoint"}

    def policy_allows(self, info: TableInfo, op: str) -> bool:
        return super().policy_allows(info, self.family.get(op, op))


class AccumulatingRetryClient(ResilientClient):
    """Appends its add action to the pending commit on every attempt, without clearing earlier ones."""

    def append(self, name: str, rows: Any) -> int:
        info = self._info(name)
        add = self.write_data(info.location, rows) if rows else None
        pending: list[Action] = []

        def build(_i: TableInfo, _s: Any, _t: int) -> list[Action]:
            if add is not None:
                pending.append(add)
            return pending

        return self.transact(name, "WRITE", build)


class ReuseStagedFileClient(ResilientClient):
    """After a lost race, rewrites its first staged file with the rebased commit and proposes it again."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._attempt = threading.local()

    def stage(self, log: str, version: int, content: bytes, previous_uri: str | None) -> str:
        reuse = getattr(self._attempt, "uri", None)
        if reuse is not None:
            self.storage.put(reuse, content)
            return str(reuse)
        uri = super().stage(log, version, content, previous_uri)
        self._attempt.uri = uri
        return uri

    def transact(self, name: str, operation: str, build: Any) -> int:
        self._attempt.uri = None
        try:
            return super().transact(name, operation, build)
        finally:
            self._attempt.uri = None


# ==================================================================== client side: faulty readers


class PublishedFirstReader(ResilientClient):
    """Lets a published Delta file win over the catalog's commit of the same version."""

    def commit_sources(self, view: LogView) -> dict[int, RatifiedCommit | str]:
        sources: dict[int, RatifiedCommit | str] = dict(view.catalog_commits)
        sources.update(view.published)
        return sources


class MtimeTimeTravelReader(ResilientClient):
    """Dates published commits by their file's modification time, unpublished ones by their ICT."""

    def timeline(self, view: LogView) -> list[tuple[int, int]]:
        mtimes = {f.uri: f.mtime_ms for f in self.storage.list(f"{view.info.location}/_delta_log/")}
        out = []
        for v, source in sorted(self.commit_sources(view).items()):
            if isinstance(source, str) and source in mtimes:
                out.append((v, mtimes[source]))
                continue
            ict = self.ict_of(decode(self.content(source)))
            if ict is not None:
                out.append((v, ict))
        return out


class PublishedProvesLatestReader(ResilientClient):
    """Raises the catalog's latest version to the newest published file it finds."""

    def view(self, info: TableInfo) -> LogView:
        base = super().view(info)
        log = f"{info.location}/_delta_log/"
        for f in self.storage.list(log):
            m = _DELTA.fullmatch(f.uri[len(log) :])
            if m and int(m.group(1)) > base.latest:
                base.published[int(m.group(1))] = f.uri  # the file proves its version ratified
        if base.published:
            base.latest = max(base.latest, max(base.published))
        return base


class StagedPrefixReader(ResilientClient):
    """Reads a staged commit as the first file in _staged_commits carrying its version."""

    def content(self, source: RatifiedCommit | str) -> bytes:
        if isinstance(source, RatifiedCommit) and source.staged_uri is not None:
            folder = source.staged_uri.rsplit("/", 1)[0]
            found = self.storage.list(f"{folder}/{source.version:020d}.")
            if found:
                return self.storage.get(found[0].uri)
        return super().content(source)


class FirstListPageReader(ResilientClient):
    """Lists _delta_log with one request and takes its first page of ``page`` entries as the whole log."""

    page = 1000

    def view(self, info: TableInfo) -> LogView:
        resp = self.catalog.get_commits(info.table_id)
        latest = resp.latest_version
        log = f"{info.location}/_delta_log/"
        published: dict[int, str] = {}
        checkpoints: dict[int, str] = {}
        for f in self.storage.list(log)[: self.page]:
            rel = f.uri[len(log) :]
            m = _DELTA.fullmatch(rel)
            if m and int(m.group(1)) <= latest:
                published[int(m.group(1))] = f.uri
            m = _CHECKPOINT.fullmatch(rel)
            if m and int(m.group(1)) <= latest:
                checkpoints[int(m.group(1))] = f.uri
        commits = {c.version: c for c in resp.commits if c.version <= latest}
        return LogView(info, latest, commits, published, checkpoints, f"{log}_last_checkpoint")


class StagedOnlyReader(ResilientClient):
    """Understands staged catalog commits only; it drops inline ones from what the catalog returned."""

    def view(self, info: TableInfo) -> LogView:
        base = super().view(info)
        base.catalog_commits = {v: c for v, c in base.catalog_commits.items() if c.staged_uri is not None}
        return base


# ==================================================================== targets


class CatalogRestartWriteBehind(DurableTarget):
    """CAT-RATIFY-DURABLE (RFC "Commit Protocol"; "Terminology - Commits", ratified commit).

    Bug: the catalog writes its table state to disk only every fourth ratification (and at publication
    marks), as a write-behind cache would. Until the process stops nothing is wrong: every answer comes
    from memory. A restart brings back the state of the last flush: the latest version goes back, the
    last ratified, unpublished commits are gone and their versions can be ratified a second time. A suite
    that never restarts the catalog, or restarts it right after a multiple of four, sees nothing."""

    name = "cr4-catalog-write-behind"
    catalog_cls: ClassVar[type[DurableCatalog]] = WriteBehindCatalog


class CatalogRestartLocationCounter(DurableTarget):
    """CAT-STAGING-UNIQUE (SHOULD; RFC "Creating and Dropping Catalog-managed Tables", phase 1).

    Bug: staging locations are named after an in-memory sequence (t000001, t000002, ...) that is not
    persisted. Within one process every location is unique; after a restart the sequence starts again
    and a new table is handed an existing table's location, so its version 0 lands among the old
    table's files. Only visible when tables are created after a restart."""

    name = "cr4-catalog-location-counter"
    catalog_cls: ClassVar[type[DurableCatalog]] = CounterLocationCatalog


class CatalogRestartCaseFold(DurableTarget):
    """CAT-RESOLVE-LOCATION (RFC "Table Discovery"; "Reader Requirements").

    Bug: names are registered and resolved exactly as given while the process runs, but the index is
    rebuilt case-folded when the catalog starts. After a restart, two tables whose names differ only
    in case (``Caps``/``caps``) collapse onto one key and both names resolve to the same table, so
    one table's readers and writers are sent to the other's location. Needs a restart and a pair of
    case-only different names."""

    name = "cr4-catalog-restart-casefold"
    catalog_cls: ClassVar[type[DurableCatalog]] = FoldOnLoadCatalog


class CatalogListFirstPage(DurableTarget):
    """CAT-LIST-CONTIGUOUS, CAT-RETAIN-UNPUBLISHED (RFC "Getting Ratified Commits from the Catalog").

    Bug: the catalog's store pages its rows (8 per page) and the listing returns the first page
    without following the continuation. With up to 8 unpublished commits, the usual case when clients
    publish promptly, the listing is complete. With publication lagging by more than 8 commits the
    listing stops short of the latest version and readers cannot build it."""

    name = "cr4-catalog-list-first-page"
    catalog_cls: ClassVar[type[DurableCatalog]] = FirstPageCatalog


class CatalogListTextRange(DurableTarget):
    """CAT-LIST-RANGE, CAT-LIST-CONTIGUOUS (RFC "Getting Ratified Commits"; "Sample Catalog Client API").

    Bug: the version range of a listing is compared as text. While every stored version and both
    bounds have the same number of digits it is right; across a digit boundary (9/10, 99/100, 999/1000)
    versions drop out of the listing or fall in where they should not ("5" > "12"). Shows only with
    unpublished commits whose versions and bounds differ in length."""

    name = "cr4-catalog-list-text-range"
    catalog_cls: ClassVar[type[DurableCatalog]] = TextRangeCatalog


class CatalogPiggybackMarkOverreach(DurableTarget):
    """CAT-FORGET-PUBLISHED-ONLY, CAT-RETAIN-UNPUBLISHED (RFC "Publishing Commits"; "Commit Protocol").

    Bug: when a proposal carries a publication mark, the catalog assumes its writer published
    everything below the proposed version and drops all stored commits up to version - 1, not up to
    the mark. A separate ``mark_published`` is handled right, and so is a piggybacked mark whenever
    publication is not lagging; with the mark below version - 1, ratified unpublished commits vanish."""

    name = "cr4-catalog-piggyback-mark"
    catalog_cls: ClassVar[type[DurableCatalog]] = PiggybackForgetCatalog


class CatalogUnlockedValidation(DurableTarget):
    """CAT-RATIFY-RACE, CAT-RATIFY-ONCE (RFC "Commit Protocol": at most once).

    Bug: to validate a staged commit the catalog reads the file between its check of the version and
    the store, and the table lock only guards the store. Sequential proposals are judged right; when
    several proposals for one version arrive while the storage read is slow, all pass the check and
    each is acknowledged, the last overwriting the others: acknowledged commits are lost."""

    name = "cr4-catalog-unlocked-validation"
    catalog_cls: ClassVar[type[DurableCatalog]] = ValidatingUnlockedCatalog


class CatalogInlineServerRebase(DurableTarget):
    """CAT-RESEND-ONCE, CAT-RATIFY-ONCE (RFC "Commit Protocol").

    Bug: an inline proposal that only adds files and loses its version is ratified by the catalog at
    the next free version ("blind appends commute"). A proposal delivered twice (a lost answer
    re-sent, a duplicate from the network) is thus ratified twice, and its rows are doubled. Staged
    proposals and inline ones that remove files or change metadata conflict as they should."""

    name = "cr4-catalog-inline-rebase"
    catalog_cls: ClassVar[type[DurableCatalog]] = AutoRebaseInlineCatalog


class CatalogNamePrefixIndex(DurableTarget):
    """CAT-RESOLVE-LOCATION, CAT-LIMIT-CLEAN-REFUSAL (RFC "Table Discovery"; certify.md "Limits").

    Bug: the name index keys on the first 64 characters while registration tests the whole name for
    uniqueness. Names up to 64 characters behave; two longer names sharing their first 64 characters
    are both accepted and the second silently takes over the first's index entry, so the first name
    resolves to the second table. A long name should be kept whole or refused cleanly."""

    name = "cr4-catalog-name-prefix-index"
    catalog_cls: ClassVar[type[DurableCatalog]] = PrefixIndexCatalog


class CatalogInlineTruncate(DurableTarget):
    """CAT-LIMIT-CLEAN-REFUSAL, CAT-INLINE-COMMITS, CAT-RETAIN-UNPUBLISHED (RFC "Commit Protocol",
    option 2; certify.md "Limits").

    Bug: inline commits are kept in a 64 KiB column; a larger one is accepted and cut to fit. Small
    inline commits round-trip byte for byte; one past 64 KiB comes back truncated (an unreadable last
    line) instead of being refused with InvalidRequest or CommitRejected."""

    name = "cr4-catalog-inline-truncate"
    catalog_cls: ClassVar[type[DurableCatalog]] = InlineTruncateCatalog


class CatalogUnpublishedEvicts(DurableTarget):
    """CAT-LIMIT-CLEAN-REFUSAL, CAT-RETAIN-UNPUBLISHED (RFC "Terminology - Commits", ratified commit;
    certify.md "Limits").

    Bug: the catalog holds at most 16 unpublished commits per table and, instead of refusing the 17th
    proposal, ratifies it and evicts the oldest unpublished commit. Invisible while clients publish
    within 16 commits (every check that keeps at most 10 unpublished); with a longer lag a ratified
    commit that was never published is gone."""

    name = "cr4-catalog-unpublished-evicts"
    catalog_cls: ClassVar[type[DurableCatalog]] = EvictingCatalog


class CatalogDeclaredNameLimitOffByOne(DurableTarget):
    """CAT-LIMIT-DECLARED (RFC "Catalog Responsibilities"; certify.md "Declare your limits").

    Bug: the target declares a 64-character name limit, and the catalog refuses names of 64 characters
    already (``>=`` for ``>``). Every name the ordinary checks use (at most 60 characters) is fine; a
    name exactly at the declared limit is refused."""

    name = "cr4-catalog-declared-name-limit"
    catalog_cls: ClassVar[type[DurableCatalog]] = ShortNameCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(name_length=64)


class CatalogConflictStatesWatermark(DurableTarget):
    """CAT-CONFLICT-LATEST (SHOULD; RFC "Commit Protocol", latest ratified commit on conflict).

    Bug: a conflict states the publication watermark as the latest version while unpublished commits
    are stored. Right when everything is published; with ratified, unpublished commits the stated
    version is too low and a writer that trusts it retries at versions that are all taken."""

    name = "cr4-catalog-conflict-watermark"
    catalog_cls: ClassVar[type[DurableCatalog]] = PublishedWatermarkConflictCatalog


class CatalogBoundedListingLatest(DurableTarget):
    """CAT-LIST-LATEST (RFC "Getting Ratified Commits from the Catalog").

    Bug: a listing with an upper bound reports its newest listed version as the table's latest. An
    unbounded listing, or one whose bound is at or above the latest, is right; a reader or writer that
    asks for a window below the latest (a time-travel read, "is my v5 ratified?") is told the table
    ends there."""

    name = "cr4-catalog-bounded-latest"
    catalog_cls: ClassVar[type[DurableCatalog]] = BoundedLatestCatalog


class CatalogStagedAnyTable(DurableTarget):
    """CAT-STAGED-IN-TABLE (RFC "Terminology - Commits", staged commit; "Commit Protocol", option 1).

    Bug: the catalog checks that a staged file sits in a ``_delta_log/_staged_commits/`` folder with a
    well-formed name for the proposed version, but not that the folder is the proposing table's. With
    one table it cannot show; with several, another table's staged file is ratified as this table's
    commit."""

    name = "cr4-catalog-staged-any-table"
    catalog_cls: ClassVar[type[DurableCatalog]] = AnyTableStagedCatalog


class WriterLocalClockAsUtc(DurableTarget):
    """WRT-ICT-WALLCLOCK (PROTOCOL.md In-Commit Timestamps; RFC "Writer Requirements").

    Bug: the writer takes the local wall clock as a naive datetime and converts it as if it were UTC.
    On a machine set to UTC it is exact and monotonicity always holds; in any other zone every
    in-commit timestamp is off by the zone's offset (5h30 under IST), and time travel by timestamp
    lands on the wrong versions."""

    name = "cr4-writer-local-clock-utc"
    client_cls: ClassVar[type[ResilientClient]] = LocalClockClient


class WriterSkewDistrust(DurableTarget):
    """WRT-ICT-SKEW, WRT-ICT-MONOTONIC (PROTOCOL.md In-Commit Timestamps).

    Bug: a previous commit stamped more than an hour ahead of the writer's clock is taken for a broken
    peer clock and ignored; the writer stamps its own time, below the previous commit's. With peers
    whose clocks agree, or a small skew, timestamps increase as they must."""

    name = "cr4-writer-skew-distrust"
    client_cls: ClassVar[type[ResilientClient]] = SkewDistrustClient


class WriterProcessCounterTxnId(DurableTarget):
    """WRT-TXNID-UNIQUE (RFC "Commit Provenance Information").

    Bug: txnIds are ``<host>-<pid>-<n>`` with ``n`` counted per client instance. One client never
    repeats itself, and clients in different processes differ; two clients of one process (two
    sessions of one engine) produce the same txnIds, across tables."""

    name = "cr4-writer-txnid-counter"
    client_cls: ClassVar[type[ResilientClient]] = ProcessCounterTxnClient


class WriterPublishByFileName(DurableTarget):
    """WRT-PUBLISH-ORDER (RFC "Publishing Commits": v-1 before v).

    Bug: the publisher orders the ratified commits by their staged file's name, which is right for
    staged commits (20-digit versions sort as numbers) but puts inline commits (no file name) first.
    When a rival's inline commit sits among staged ones, it is published before the versions below it."""

    name = "cr4-writer-publish-by-file-name"
    client_cls: ClassVar[type[ResilientClient]] = FileNameOrderPublisher


class WriterRollbackOnLostMark(DurableTarget):
    """WRT-LOST-ANSWER-ONCE (RFC "Publishing Commits"; "Commit Protocol").

    Bug: when the answer to ``mark_published`` is lost, the writer deletes the Delta files it just
    published, to keep the log and the catalog "consistent". But the catalog did act on the mark and
    dropped those commits: they now exist nowhere. Only a lost answer to the publication mark shows it."""

    name = "cr4-writer-rollback-lost-mark"
    client_cls: ClassVar[type[ResilientClient]] = RollbackOnLostMarkClient


class WriterLostAnswerListingOnly(DurableTarget):
    """WRT-LOST-ANSWER-ONCE, WRT-LOST-ANSWER-OUTCOME (RFC "Commit Protocol"; "Publishing Commits").

    Bug: after a lost answer to its proposal the writer asks the catalog, as it should, but looks for
    its commit in the listing only. When another client published the commit and the catalog dropped
    it before the writer asked, the writer concludes it lost and commits its change again at the next
    version. Needs a lost answer and a prompt publisher in between."""

    name = "cr4-writer-lost-answer-listing-only"
    client_cls: ClassVar[type[ResilientClient]] = ListingOnlyOutcomeClient


class WriterCompactionTextOrder(DurableTarget):
    """WRT-COMPACTION-CONTENT (RFC "Maintenance Operations"; PROTOCOL.md Log Compaction Files).

    Bug: the commits of a compaction range are reconciled in the order of their versions' decimal text.
    Within a range of one digit count the order is right; a range across 9/10 or 99/100 replays "10"
    before "9", so a file removed at 10 and added at 9 comes out live in the compaction file."""

    name = "cr4-writer-compaction-text-order"
    client_cls: ClassVar[type[ResilientClient]] = TextOrderCompactionClient


class WriterCleanupStagedToCutoff(DurableTarget):
    """WRT-CLEANUP-STAGED-ABOVE (RFC "Metadata Cleanup", step 3).

    Bug: the writer deletes staged commits up to the cut-off commit rather than up to the cut-off
    checkpoint. When the cut-off is the checkpoint's version nothing differs; with a cut-off above it
    and ratified, unpublished commits in between, their staged files are deleted and the table can
    no longer be read."""

    name = "cr4-writer-cleanup-staged-to-cutoff"
    client_cls: ClassVar[type[ResilientClient]] = CutoffCommitStagedCleanupClient


class WriterCleanupNearestCheckpoint(DurableTarget):
    """WRT-CLEANUP-NEEDS-CHECKPOINT, WRT-CLEANUP-KEEPS (RFC "Metadata Cleanup", step 2).

    Bug: the cut-off checkpoint is the checkpoint nearest to the cut-off commit, which may be after it.
    With a checkpoint at or just below the cut-off nothing differs; when the only (or nearest)
    checkpoint is after the cut-off, cleanup deletes commits the cut-off promised to keep, and time
    travel to them breaks."""

    name = "cr4-writer-cleanup-nearest-checkpoint"
    client_cls: ClassVar[type[ResilientClient]] = NearestCheckpointCleanupClient


class WriterCachedPolicy(DurableTarget):
    """WRT-MAINTENANCE-POLICY (RFC "Maintenance Operations": consult the catalog before every job).

    Bug: the writer fetches a table's maintenance policy on its first maintenance job and keeps it. A
    policy fixed for the table's life is obeyed; a policy the catalog tightens while the client lives
    is not, and the client goes on checkpointing or cleaning up against it."""

    name = "cr4-writer-cached-policy"
    client_cls: ClassVar[type[ResilientClient]] = CachedPolicyClient


class WriterCleanupUnderCheckpointPermit(DurableTarget):
    """WRT-MAINTENANCE-POLICY (RFC "Maintenance Operations").

    Bug: the writer asks the policy about "checkpoint" when it means to run metadata cleanup or write
    checksum files ("log maintenance"). Under all-or-nothing policies this is invisible; a partial
    policy that allows checkpoints but forbids metadata cleanup is ignored and old log files go."""

    name = "cr4-writer-cleanup-checkpoint-permit"
    client_cls: ClassVar[type[ResilientClient]] = CheckpointPermitCleanupClient


class WriterRetryAccumulatesAdds(DurableTarget):
    """WRT-FILE-ACTIONS-ONCE (PROTOCOL.md Add File and Remove File).

    Bug: the append's action list is built up across attempts: after a lost race the rebased commit
    holds the same add action once per attempt. The first attempt is right; a commit that had to be
    retried adds one path twice, which a reader that counts add actions reads as duplicated rows."""

    name = "cr4-writer-retry-accumulates-adds"
    client_cls: ClassVar[type[ResilientClient]] = AccumulatingRetryClient


class WriterReuseStagedFile(DurableTarget):
    """WRT-STAGED-NO-REUSE, WRT-STAGED-NAME (RFC "Delta Log Entries", note on staged versions).

    Bug: after a lost race the writer rewrites its first staged file with the rebased commit and
    proposes that file for the new version, though its name carries the old one. Without contention
    it is never seen; after a conflict a strict catalog refuses the proposal and the append fails (a
    lax one ratifies a file whose name says another version)."""

    name = "cr4-writer-reuse-staged-file"
    client_cls: ClassVar[type[ResilientClient]] = ReuseStagedFileClient


class ReaderPublishedWins(DurableTarget):
    """RDR-CATALOG-PRECEDENCE (RFC "Reading Catalog-managed Tables"; "Reader Requirements").

    Bug: when a version is both returned by the catalog and present as a published file, the reader
    takes the published file. Identical copies hide it; when the file for that version differs from the
    ratified commit (a bad publisher, a filesystem writer), the reader returns the wrong rows."""

    name = "cr4-reader-published-wins"
    client_cls: ClassVar[type[ResilientClient]] = PublishedFirstReader


class ReaderMtimeTimeTravel(DurableTarget):
    """RDR-TIME-TRAVEL-ICT (RFC "Publishing Commits", note on timestamps).

    Bug: time travel by timestamp dates published commits by their file modification time and only
    unpublished ones by their in-commit timestamp. With publication immediately after commit the two
    nearly agree; once publication lags, every published version looks younger than it is and a
    timestamp resolves to an older version."""

    name = "cr4-reader-mtime-time-travel"
    client_cls: ClassVar[type[ResilientClient]] = MtimeTimeTravelReader


class ReaderPublishedProvesLatest(DurableTarget):
    """RDR-IGNORE-ABOVE-LATEST (RFC "Reading Catalog-managed Tables"; "Reader Requirements").

    Bug: the reader reasons that a published ``<v>.json`` proves v ratified (true of ordinary tables)
    and raises the catalog's latest version to the newest published file. Harmless while every file is
    one the catalog ratified; a file written past the catalog's latest (a filesystem writer) is read
    as the table's latest version."""

    name = "cr4-reader-published-proves-latest"
    client_cls: ClassVar[type[ResilientClient]] = PublishedProvesLatestReader


class ReaderStagedByVersionPrefix(DurableTarget):
    """RDR-IGNORE-UNRATIFIED, RDR-UNPUBLISHED (RFC "Delta Log Entries"; "Terminology - Commits").

    Bug: the reader takes "the version is authoritative" too far: it reads a ratified staged commit as
    the first file in ``_staged_commits`` whose name starts with that version, not the file the
    catalog named. With one attempt per version it is right; an abandoned or rejected attempt that
    sorts before the ratified file is read instead."""

    name = "cr4-reader-staged-by-prefix"
    client_cls: ClassVar[type[ResilientClient]] = StagedPrefixReader


class ReaderFirstListPage(DurableTarget):
    """RDR-LIST-FALLBACK (RFC "Reading Catalog-managed Tables"; "Getting Ratified Commits").

    Bug: the reader lists ``_delta_log`` once and treats the first page (1000 entries, as an object
    store returns) as the whole log. Tables with fewer than 1000 log files read fine; past a thousand
    versions the published commits above the page, which the catalog no longer stores, are missed."""

    name = "cr4-reader-first-list-page"
    client_cls: ClassVar[type[ResilientClient]] = FirstListPageReader


class ReaderDropsInline(DurableTarget):
    """RDR-UNPUBLISHED (RFC "Reader Requirements"; "Terminology - Commits", inline commit).

    Bug: the reader only understands staged commits and drops inline ones from the catalog's answer,
    expecting to find them published. Against a writer that stages every commit (its own) nothing
    shows; a rival's inline commit that is not yet published makes the table unreadable."""

    name = "cr4-reader-drops-inline"
    client_cls: ClassVar[type[ResilientClient]] = StagedOnlyReader


# ==================================================================== the list


def _v(
    cls: type[DurableTarget],
    side: Literal["catalog", "client"],
    profile: str,
    rules: tuple[str, ...],
    level: str,
    dimensions: tuple[str, ...],
) -> Variant:
    return Variant(cls.name, f"{__name__}:{cls.__name__}", side, profile, rules, level, dimensions, cls.__doc__ or "")


_CAT, _WRT, _RDR = "delta-cm-catalog", "delta-cm-writer", "delta-cm-reader"

VARIANTS: list[Variant] = [
    _v(CatalogRestartWriteBehind, "catalog", _CAT, ("CAT-RATIFY-DURABLE",), "MUST", ("restart",)),
    _v(
        CatalogRestartLocationCounter, "catalog", _CAT, ("CAT-STAGING-UNIQUE",), "SHOULD", ("restart", "several-tables")
    ),
    _v(CatalogRestartCaseFold, "catalog", _CAT, ("CAT-RESOLVE-LOCATION",), "MUST", ("restart", "unicode-names")),
    _v(
        CatalogListFirstPage,
        "catalog",
        _CAT,
        ("CAT-LIST-CONTIGUOUS", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("publication-lag", "paging"),
    ),
    _v(
        CatalogListTextRange,
        "catalog",
        _CAT,
        ("CAT-LIST-RANGE", "CAT-LIST-CONTIGUOUS"),
        "MUST",
        ("long-history", "digit-boundary"),
    ),
    _v(
        CatalogPiggybackMarkOverreach,
        "catalog",
        _CAT,
        ("CAT-FORGET-PUBLISHED-ONLY", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("publication-lag",),
    ),
    _v(
        CatalogUnlockedValidation,
        "catalog",
        _CAT,
        ("CAT-RATIFY-RACE", "CAT-RATIFY-ONCE"),
        "MUST",
        ("concurrency", "slow-storage"),
    ),
    _v(
        CatalogInlineServerRebase,
        "catalog",
        _CAT,
        ("CAT-RESEND-ONCE", "CAT-RATIFY-ONCE"),
        "MUST",
        ("duplicate-delivery", "inline"),
    ),
    _v(
        CatalogNamePrefixIndex,
        "catalog",
        _CAT,
        ("CAT-RESOLVE-LOCATION", "CAT-LIMIT-CLEAN-REFUSAL"),
        "MUST",
        ("long-names", "several-tables", "limits"),
    ),
    _v(
        CatalogInlineTruncate,
        "catalog",
        _CAT,
        ("CAT-LIMIT-CLEAN-REFUSAL", "CAT-INLINE-COMMITS", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("large-inline", "limits"),
    ),
    _v(
        CatalogUnpublishedEvicts,
        "catalog",
        _CAT,
        ("CAT-LIMIT-CLEAN-REFUSAL", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("publication-lag", "limits"),
    ),
    _v(CatalogDeclaredNameLimitOffByOne, "catalog", _CAT, ("CAT-LIMIT-DECLARED",), "MUST", ("limits", "long-names")),
    _v(CatalogConflictStatesWatermark, "catalog", _CAT, ("CAT-CONFLICT-LATEST",), "SHOULD", ("publication-lag",)),
    _v(CatalogBoundedListingLatest, "catalog", _CAT, ("CAT-LIST-LATEST",), "MUST", ("bounded-listing",)),
    _v(CatalogStagedAnyTable, "catalog", _CAT, ("CAT-STAGED-IN-TABLE",), "MUST", ("several-tables",)),
    _v(WriterLocalClockAsUtc, "client", _WRT, ("WRT-ICT-WALLCLOCK",), "MUST", ("time-zone",)),
    _v(WriterSkewDistrust, "client", _WRT, ("WRT-ICT-SKEW", "WRT-ICT-MONOTONIC"), "MUST", ("clock-skew",)),
    _v(WriterProcessCounterTxnId, "client", _WRT, ("WRT-TXNID-UNIQUE",), "MUST", ("several-clients", "several-tables")),
    _v(WriterPublishByFileName, "client", _WRT, ("WRT-PUBLISH-ORDER",), "MUST", ("inline", "publication-lag")),
    _v(WriterRollbackOnLostMark, "client", _WRT, ("WRT-LOST-ANSWER-ONCE",), "MUST", ("lost-answer",)),
    _v(
        WriterLostAnswerListingOnly,
        "client",
        _WRT,
        ("WRT-LOST-ANSWER-ONCE", "WRT-LOST-ANSWER-OUTCOME"),
        "MUST",
        ("lost-answer", "several-clients"),
    ),
    _v(
        WriterCompactionTextOrder,
        "client",
        _WRT,
        ("WRT-COMPACTION-CONTENT",),
        "MUST",
        ("maintenance", "digit-boundary"),
    ),
    _v(
        WriterCleanupStagedToCutoff,
        "client",
        _WRT,
        ("WRT-CLEANUP-STAGED-ABOVE",),
        "MUST",
        ("maintenance", "publication-lag"),
    ),
    _v(
        WriterCleanupNearestCheckpoint,
        "client",
        _WRT,
        ("WRT-CLEANUP-NEEDS-CHECKPOINT", "WRT-CLEANUP-KEEPS"),
        "MUST",
        ("maintenance", "time-travel"),
    ),
    _v(WriterCachedPolicy, "client", _WRT, ("WRT-MAINTENANCE-POLICY",), "MUST", ("maintenance", "policy-change")),
    _v(
        WriterCleanupUnderCheckpointPermit,
        "client",
        _WRT,
        ("WRT-MAINTENANCE-POLICY",),
        "MUST",
        ("maintenance", "partial-policy"),
    ),
    _v(WriterRetryAccumulatesAdds, "client", _WRT, ("WRT-FILE-ACTIONS-ONCE",), "MUST", ("concurrency", "conflict")),
    _v(
        WriterReuseStagedFile,
        "client",
        _WRT,
        ("WRT-STAGED-NO-REUSE", "WRT-STAGED-NAME"),
        "MUST",
        ("concurrency", "conflict"),
    ),
    _v(ReaderPublishedWins, "client", _RDR, ("RDR-CATALOG-PRECEDENCE",), "MUST", ("divergent-published-file",)),
    _v(ReaderMtimeTimeTravel, "client", _RDR, ("RDR-TIME-TRAVEL-ICT",), "MUST", ("time-travel", "publication-lag")),
    _v(ReaderPublishedProvesLatest, "client", _RDR, ("RDR-IGNORE-ABOVE-LATEST",), "MUST", ("filesystem-writer",)),
    _v(
        ReaderStagedByVersionPrefix,
        "client",
        _RDR,
        ("RDR-IGNORE-UNRATIFIED", "RDR-UNPUBLISHED"),
        "MUST",
        ("abandoned-staged-files",),
    ),
    _v(ReaderFirstListPage, "client", _RDR, ("RDR-LIST-FALLBACK",), "MUST", ("long-history", "paging")),
    _v(ReaderDropsInline, "client", _RDR, ("RDR-UNPUBLISHED",), "MUST", ("inline", "several-clients")),
]
