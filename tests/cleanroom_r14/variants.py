"""Round 14: faulty variants of the durable clean-room catalog.

Each target swaps exactly the catalog side of ``DurableTarget`` for a faulty subclass. Written from the
RFC, the public contract, docs/certify.md and the clean-room baselines only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from conformance.contract.delta import (
    CatalogLimits,
    CommitRejected,
    GetCommitsResponse,
    InvalidRequest,
    RatifiedCommit,
    Storage,
)
from tests.cleanroom.catalog import CleanCatalog, TableState
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget
from tests.cleanroom_r3.variant import Variant, variant_of

# ================================================================ 1. listing cache


class ClosedRangeCacheCatalog(DurableCatalog):
    """cr14-cat-closed-range-listing-cache. CAT-LIST-LATEST (MUST), CAT-LIST-CONTIGUOUS (MUST); RFC
    "Getting Ratified Commits from the Catalog" (every listing carries the true latest ratified version;
    the listed commits run contiguously up to it). Bug: to shed load from readers that poll, the catalog
    caches the answer to every listing with an explicit ``end_version`` ("a closed range of ratified
    history never changes"), keyed by ``(table_id, start, end)`` and never invalidated; open-ended
    listings (``end_version=None``) always go to the store. The reasoning forgets that the answer also
    carries the table's latest version, and that a range whose end lies above the latest is not closed
    yet: once more versions are ratified, repeating a bounded listing returns the old latest and misses
    the new commits inside the range. A shallow suite lists with open ends, or asks each bounded range
    once; a writer asking ``get_commits(v, v)`` "is v mine?" before and after a rival's ratification is
    told the version is still free."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._cache: dict[tuple[str, int | None, int | None], GetCommitsResponse] = {}
        self._cache_lock = threading.Lock()
        super().__init__(warehouse_uri, storage, state_dir)

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        key = (table_id, start_version, end_version)
        if end_version is not None:
            with self._cache_lock:
                hit = self._cache.get(key)
            if hit is not None:
                return hit
        resp = super().get_commits(table_id, start_version, end_version)
        if end_version is not None:
            with self._cache_lock:
                self._cache[key] = resp
        return resp


class ClosedRangeCacheTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ClosedRangeCacheCatalog


# ================================================================ 2. lease lock


class _Lease:
    """A lease on one table's commit path, as a lock service grants it: it lapses after ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.cond = threading.Condition()
        self.holder: object | None = None
        self.until = 0.0

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        me = object()
        with self.cond:
            while self.holder is not None and time.monotonic() < self.until:
                self.cond.wait(max(0.0, self.until - time.monotonic()))
            self.holder = me  # a lapsed lease is taken over: its holder is presumed dead
            self.until = time.monotonic() + self.seconds
        try:
            yield
        finally:
            with self.cond:
                if self.holder is me:
                    self.holder = None
                    self.cond.notify_all()


class LeaseLapseCatalog(DurableCatalog):
    """cr14-cat-ratify-lease-lapses. CAT-RATIFY-RACE (MUST); RFC "Commit Protocol" (of concurrent
    proposals for one version exactly one is ratified, every other one gets a conflict). Bug: the
    catalog's commit path is serialised per table by a *lease* (as a distributed lock service grants:
    0.25 s, taken over once it lapses so that a crashed holder cannot block the table), and ratification
    is write-ahead: the new state is persisted first and shown in memory only after the write. The
    holder is not fenced: when the state write takes longer than the lease (a large state file, a slow
    disk, a GC pause), a second proposal for the same version takes the lapsed lease, still sees the
    version free, and is ratified too; both proposers are told they won and the first one's commit is
    overwritten. With a fast disk every race is serialised correctly, so a suite that races proposals
    on small tables and a local disk never sees two winners."""

    LEASE_SECONDS: ClassVar[float] = 0.25

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._leases: dict[str, _Lease] = {}
        self._leases_lock = threading.Lock()
        super().__init__(warehouse_uri, storage, state_dir)

    def ratify_lock(self, t: TableState) -> AbstractContextManager[object]:
        with self._leases_lock:
            lease = self._leases.setdefault(t.table_id, _Lease(self.LEASE_SECONDS))
        return lease.held()

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        # Write-ahead: the state with the commit is durable before memory (and so readers) show it.
        ahead = TableState(t.table_id, t.location, t.name, commit.version, t.published, {**t.stored})
        ahead.stored[commit.version] = commit
        self.persist(ahead)
        CleanCatalog.store(self, t, commit)


class LeaseLapseTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = LeaseLapseCatalog


# ================================================================ 3. staged name, `$`

# The same pattern as the baseline's, but matched with ``re.match`` and a closing ``$``.
_STAGED_NAME_DOLLAR = re.compile(
    r"([0-9]{20})\.([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.json$"
)


class StagedNameDollarCatalog(DurableCatalog):
    """cr14-cat-staged-name-dollar-newline. CAT-STAGED-NAME (MUST); RFC "Terminology - Commits" (staged
    commit) and "Delta Log Entries" (a staged commit is ``<20-digit version>.<uuid>.json``). Bug: the staged
    file name is validated with ``re.match(r"...\\.json$")`` instead of ``re.fullmatch``. In Python ``$``
    also matches just before a final newline, so a file named ``<v>.<uuid>.json\\n`` (a name read from a
    line of text with its line ending kept, which object stores and POSIX file systems both allow) passes
    and is ratified under that name: a file that is not a staged commit by the RFC's pattern, which other
    readers and cleanup never take for one. Every name a suite writes by hand (missing UUID, unpadded
    version, wrong extension, prefix or suffix text) is refused; only the trailing line ending slips."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.startswith(prefix) else ""
        m = _STAGED_NAME_DOLLAR.match(rest)
        if m is None:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class StagedNameDollarTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedNameDollarCatalog


# ================================================================ 4. declared actions limit


class ActionCapCatalog(DurableCatalog):
    """Correct helper (not a variant): refuses an inline commit of more than ``ACTIONS`` actions (every
    line holding an action counts, ``commitInfo`` included), before anything changes; declared as
    ``commit_actions`` by ``ActionCapTarget``."""

    ACTIONS: ClassVar[int] = 8

    def count_actions(self, content: bytes) -> int:
        return sum(1 for line in content.split(b"\n") if line.strip())

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
        if isinstance(inline_content, bytes | bytearray) and self.count_actions(bytes(inline_content)) > self.ACTIONS:
            raise CommitRejected(f"an inline commit holds at most {self.ACTIONS} actions")
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            latest_published_version=latest_published_version,
        )


class ActionCapTarget(DurableTarget):
    """Correct helper: ``ActionCapCatalog`` with its limit declared."""

    catalog_cls: ClassVar[type[CleanCatalog]] = ActionCapCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(commit_actions=ActionCapCatalog.ACTIONS)


class ActionCapSkipsCommitInfoCatalog(ActionCapCatalog):
    """cr14-cat-action-cap-skips-commitinfo. CAT-LIMIT-DECLARED (MUST); RFC "Catalog Responsibilities" and
    docs/certify.md "Limits" (a declared limit is the real one: a call at it succeeds, one past it is
    refused). Bug: the catalog declares ``commit_actions=8`` and enforces it on the actions that change the
    table (add, remove, metaData, protocol, ...), skipping the ``commitInfo`` line as bookkeeping ("every
    commit has one, it costs nothing"). A commit of eight actions in all passes, as it should; one of nine,
    a ``commitInfo`` and eight file actions, passes too, past the declared limit. A suite that tries one
    past the limit with file actions only, or counts the limit as file actions itself, sees it hold."""

    def count_actions(self, content: bytes) -> int:
        n = 0
        for line in content.split(b"\n"):
            if not line.strip():
                continue
            try:
                action = json.loads(line)
            except ValueError:
                n += 1
                continue
            if not (isinstance(action, dict) and "commitInfo" in action):
                n += 1
        return n


class ActionCapSkipsCommitInfoTarget(ActionCapTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ActionCapSkipsCommitInfoCatalog


# ================================================================ 5. state written outside the lock


class PersistOutsideLockCatalog(DurableCatalog):
    """cr14-cat-persist-after-unlock. CAT-RATIFY-DURABLE (MUST); RFC "Commit Protocol" and "Terminology -
    Commits" (ratified commits survive a catalog restart, the latest version stays). Bug: so that a slow
    state write does not block listings and other proposals of the table, ratification takes a snapshot
    of the table's state under the table lock and writes it after releasing the lock. Two ratifications
    of one table close together can then write out of order: the earlier snapshot (without the later
    commit) lands last and replaces the newer file. Both proposers were answered "ratified"; after a
    restart the later commit is gone, its version is free again and is ratified a second time. Sequential
    commits, and restarts after a quiet period, are always right: only a restart after proposals that
    overlapped their state writes shows the loss."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._deferred = threading.local()
        super().__init__(warehouse_uri, storage, state_dir)

    def persist_ratified(self, t: TableState, commit: RatifiedCommit) -> None:
        self._deferred.doc = (t.table_id, self.encode_table(t))  # written once the lock is released

    def write_doc(self, table_id: str, doc: dict[str, Any]) -> None:
        if self.state_dir is None:
            return
        path = self.state_dir / f"{table_id}.json"
        tmp = path.with_suffix(f".{uuid.uuid4().hex}.tmp")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, path)

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
        self._deferred.doc = None
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            latest_published_version=latest_published_version,
        )
        pending: tuple[str, dict[str, Any]] | None = self._deferred.doc
        self._deferred.doc = None
        if pending is not None:
            self.write_doc(*pending)


class PersistOutsideLockTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = PersistOutsideLockCatalog


# ================================================================ 6. in-commit timestamp as local wall time


class IctLocalWallTimeCatalog(DurableCatalog):
    """cr14-cat-ict-local-walltime-fold. CAT-RETAIN-UNPUBLISHED (MUST); RFC "Terminology - Commits" (a
    ratified commit stays stored, unchanged, and served until it is published) and docs/certify.md (a
    served in-commit timestamp is the one proposed, whatever the host's zone). Bug: the catalog keeps a
    commit's in-commit timestamp in a date-time column without zone, converted to and from the host's
    local wall time consistently (local on the way in, local on the way out), so it round-trips in any
    zone, UTC or not, with or without an offset. But a wall time carries no DST fold: in the hour a zone
    repeats when daylight saving ends, the second occurrence is read back as the first, and the served
    timestamp is an hour early (time travel by timestamp on unpublished commits then resolves the wrong
    version). Zones without DST (UTC, fixed offsets such as POSIX ``LKW10`` or ``IST-5:30``) never show it,
    and neither does any timestamp outside that one hour a year."""

    def wall_time_column(self, ict: int) -> int:
        wall = datetime.fromtimestamp(ict // 1000).replace(microsecond=(ict % 1000) * 1000).isoformat()
        back = datetime.fromisoformat(wall)  # naive: the fold is gone
        return round(back.timestamp() * 1000)

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if commit.in_commit_timestamp is not None:
            commit = dataclasses.replace(commit, in_commit_timestamp=self.wall_time_column(commit.in_commit_timestamp))
        super().store(t, commit)


class IctLocalWallTimeTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = IctLocalWallTimeCatalog


# ================================================================ 7. state write refused, memory kept


class StateWriteRefusedCatalog(DurableCatalog):
    """cr14-cat-state-write-refused-kept. CAT-LIST-RATIFIED-ONLY (MUST), CAT-LIMIT-CLEAN-REFUSAL (MUST); RFC
    "Terminology - Commits" (a proposed commit is ratified or rejected; rejected proposals are never listed)
    and docs/certify.md "Limits" (one past a limit of the catalog the call is refused and changes nothing).
    Bug: the table's state is one record of the catalog's store, which holds at most 256 KiB (inline
    commits included, base64-encoded). Ratification updates the table in memory first, then writes the
    record; when the record would be too large the write is refused and the proposer gets
    ``CommitRejected``, but the in-memory update is not rolled back: the refused commit is listed as
    ratified, the latest version moves past it, and every later proposal is refused the same way. A
    suite with small inline commits, or one that only checks that an oversized inline commit is refused,
    never sees it; only listing after a refusal near the store's size does."""

    STATE_BYTES: ClassVar[int] = 256 * 1024

    def persist(self, t: TableState) -> None:
        if self.state_dir is not None and len(json.dumps(self.encode_table(t))) > self.STATE_BYTES:
            raise CommitRejected(f"the state of table {t.table_id} would exceed {self.STATE_BYTES} bytes")
        super().persist(t)


class StateWriteRefusedTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StateWriteRefusedCatalog


# ================================================================ 8. inline commits kept as lines


class InlineSplitlinesCatalog(DurableCatalog):
    """cr14-cat-inline-rows-splitlines. CAT-RETAIN-UNPUBLISHED (MUST); RFC "Terminology - Commits" (inline
    commit; a ratified commit stays stored, unchanged, until it is published) and "Commit Protocol"
    option 2. Bug: the catalog keeps an inline commit as one row per action (so that listings can stream
    actions), split with ``str.splitlines()`` and joined back with ``"\\n"`` (a final newline kept when
    there was one). ``splitlines`` also breaks at U+2028, U+2029 and U+0085, which JSON allows raw inside
    strings (Jackson, and ``json.dumps(ensure_ascii=False)``, write them unescaped): an action whose
    value holds one is cut in two and served as two lines that are no JSON, and a CRLF commit comes back
    LF. Commits written with ASCII escapes (Python's default ``json.dumps``), and every other letter of
    any script, round-trip byte for byte, so padding with accents, CJK or emoji never shows it."""

    def as_rows(self, content: bytes) -> bytes:
        text = content.decode("utf-8")
        rows = text.splitlines()
        return ("\n".join(rows) + ("\n" if text.endswith("\n") else "")).encode("utf-8")

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if commit.inline_content is not None:
            commit = dataclasses.replace(commit, inline_content=self.as_rows(commit.inline_content))
        super().store(t, commit)


class InlineSplitlinesTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = InlineSplitlinesCatalog


# ================================================================ the variants

VARIANTS: list[Variant] = [
    variant_of(
        "cr14-cat-closed-range-listing-cache",
        ClosedRangeCacheTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-LIST-LATEST", "CAT-LIST-CONTIGUOUS"),
        "MUST",
        ("caching", "listing-bounds", "repeated-calls"),
    ),
    variant_of(
        "cr14-cat-ratify-lease-lapses",
        LeaseLapseTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RATIFY-RACE",),
        "MUST",
        ("concurrency", "slow-storage", "time"),
    ),
    variant_of(
        "cr14-cat-staged-name-dollar-newline",
        StagedNameDollarTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-STAGED-NAME",),
        "MUST",
        ("encodings", "file-names"),
    ),
    variant_of(
        "cr14-cat-action-cap-skips-commitinfo",
        ActionCapSkipsCommitInfoTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-LIMIT-DECLARED",),
        "MUST",
        ("limits", "sizes"),
    ),
    variant_of(
        "cr14-cat-persist-after-unlock",
        PersistOutsideLockTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RATIFY-DURABLE",),
        "MUST",
        ("restart", "concurrency", "ordering"),
    ),
    variant_of(
        "cr14-cat-ict-local-walltime-fold",
        IctLocalWallTimeTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RETAIN-UNPUBLISHED",),
        "MUST",
        ("time", "time-zones", "dst"),
    ),
    variant_of(
        "cr14-cat-state-write-refused-kept",
        StateWriteRefusedTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-LIST-RATIFIED-ONLY", "CAT-LIMIT-CLEAN-REFUSAL"),
        "MUST",
        ("sizes", "limits", "error-paths"),
    ),
    variant_of(
        "cr14-cat-inline-rows-splitlines",
        InlineSplitlinesTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RETAIN-UNPUBLISHED",),
        "MUST",
        ("encodings", "inline-content"),
    ),
]
