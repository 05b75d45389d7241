"""Round 9 (writer B): faulty variants of the resilient clean-room client (writers and readers).

Each target swaps exactly one side of ``DurableTarget`` (always the client here) for a faulty subclass.
Written from the RFC, the public contract, docs/certify.md and the clean-room baselines only.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import time
from typing import ClassVar

from conformance.contract.delta import Catalog, CatalogTimeout, RatifiedCommit, ReadResult, Storage
from tests.cleanroom.client import (
    _CHECKPOINT,
    _STAGED,
    Action,
    CleanClient,
    LogView,
    ReadError,
    RetriesExhausted,
    Snapshot,
    decode,
)
from tests.cleanroom_r3.base import DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant, variant_of

# ================================================================ correct helper


class PublishHookClient(ResilientClient):
    """Correct helper (not a variant): ``ResilientClient`` whose publisher asks ``published_bytes`` what
    to write for each ratified commit (the ratified bytes, unchanged), ``None`` meaning "do not copy"."""

    def published_bytes(self, c: RatifiedCommit) -> bytes | None:
        return self.content(c)

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        done = -1
        for c in self.publish_order(list(view.catalog_commits.values())):
            target = f"{info.location}/_delta_log/{self.delta_name(c.version)}"
            if c.version not in view.published:
                data = self.published_bytes(c)
                if data is not None:
                    with contextlib.suppress(FileExistsError):
                        self.storage.put(target, data, if_absent=True)
            done = max(done, c.version)
        for _ in range(self.max_attempts if done >= 0 else 0):
            try:  # a mark never goes back: sending it again after a lost answer is harmless
                self.catalog.mark_published(info.table_id, done)
                return
            except CatalogTimeout:
                continue
        if done >= 0:
            raise RetriesExhausted(f"no answer from the catalog to the publication mark of v{done}")


# ================================================================ writing clients


class PublishSkipsInlineClient(PublishHookClient):
    """cr9b-wrt-publish-skips-inline. WRT-PUBLISH-ORDER (MUST), RFC "Publishing Commits" (version v-1 is
    published before version v). Bug: the publisher copies staged commits with a storage-side copy of
    the staged file and has no file to copy for an *inline* commit (its content lives in the catalog), so
    it skips it ("the catalog keeps inline commits itself"), copies the staged commits around it, and
    reports the newest one published: ``_delta_log`` gets v+1 without v, and the catalog, told v is
    published, drops the inline commit, which is then nowhere. Why a shallow suite misses it: this
    client never proposes inline commits itself, so a suite that publishes what the client under test
    wrote sees a perfect log; only a table holding another writer's inline commit (the RFC's worked
    example has one) between staged ones, published by this client, shows the gap."""

    def published_bytes(self, c: RatifiedCommit) -> bytes | None:
        if c.staged_uri is None:
            return None  # inline: nothing to copy server-side
        return self.storage.get(c.staged_uri)


class PublishFinalNewlineClient(PublishHookClient):
    """cr9b-wrt-publish-final-newline. WRT-PUBLISH-IDENTICAL (MUST), RFC "Publishing Commits" (the
    published Delta file has exactly the content of the ratified commit). Bug: the publisher
    "normalises" newline-delimited JSON so that log files can be concatenated: a ratified commit whose
    last line lacks its final newline is published with one appended. Why a shallow suite misses it:
    every commit this client writes ends with a newline, so its own commits are copied byte for byte;
    only a foreign ratified commit without the final newline (valid NDJSON, e.g. an inline commit of
    another engine) is published altered, and only a byte comparison, not a replay, sees it."""

    def published_bytes(self, c: RatifiedCommit) -> bytes | None:
        data = self.content(c)
        return data if data.endswith(b"\n") else data + b"\n"


class TxnIdSeededRngClient(ResilientClient):
    """cr9b-wrt-txnid-seeded-rng. WRT-TXNID-UNIQUE (MUST), RFC "Commit Provenance Information" (a unique
    transaction identifier). Bug: txnIds are 128 random bits in UUID form drawn from a client-owned
    ``random.Random`` (to make test runs reproducible) seeded with the process id and the wall clock in
    whole seconds. Within one client they never repeat; two clients of one process built in the same
    second draw the same sequence, so their n-th commits share a txnId, in one table or across tables.
    Why a shallow suite misses it: it checks the txnIds of one client's commits for uniqueness (all
    distinct); two clients' first commits must be compared to see the collision."""

    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        super().__init__(catalog, storage)
        self.txn_seed = os.getpid() * 1_000_003 + int(time.time())
        self._rng = random.Random(self.txn_seed)

    def txn_id(self) -> str:
        h = f"{self._rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class CleanupSupersededCheckpointsClient(ResilientClient):
    """cr9b-wrt-cleanup-superseded-checkpoints. WRT-CLEANUP-KEEPS (MUST), RFC "Metadata Cleanup" step 2/3
    (the cut-off checkpoint and every commit after it stay). Bug: besides what step 3 deletes below the
    cut-off checkpoint, cleanup removes every checkpoint older than the newest one in the log ("a newer
    checkpoint supersedes it"), also when the newest checkpoint lies above the cut-off commit: the
    cut-off checkpoint itself is deleted, and versions between it and the newer checkpoint, whose
    earlier commits are gone, can no longer be read. Why a shallow suite misses it: with a single
    checkpoint (the usual cleanup test) the newest checkpoint is the cut-off one and nothing extra goes;
    only a second checkpoint above the cut-off exposes it."""

    def cleanup_doomed(self, view: LogView, files: list[str], checkpoint: int, cutoff: int) -> list[str]:
        doomed = super().cleanup_doomed(view, files, checkpoint, cutoff)
        log = f"{view.info.location}/_delta_log/"
        cps = {int(m.group(1)): u for u in files if (m := _CHECKPOINT.fullmatch(u[len(log) :]))}
        if cps:
            newest = max(cps)
            doomed += [u for v, u in cps.items() if v < newest and u not in doomed]
        return doomed


class CheckpointTidiesStagedClient(ResilientClient):
    """cr9b-wrt-checkpoint-tidies-staged. WRT-MAINTENANCE-POLICY (MUST), RFC "Maintenance Operations on
    Catalog-managed Tables" (clients consult the catalog and run no maintenance job its policy forbids).
    Bug: after writing a checkpoint of version v (allowed by the policy), the client tidies up the
    staged commits at or below v, which are published and covered by the checkpoint, as Delta engines
    clean the log after a checkpoint; it never asks the policy about ``metadata_cleanup``, which this
    deletion is. Why a shallow suite misses it: it checks that ``cleanup`` does nothing under a policy
    that forbids metadata cleanup (true) and that ``checkpoint`` writes a checkpoint; it does not look at
    what else the checkpoint call deleted."""

    def checkpoint(self, name: str) -> int | None:
        version = super().checkpoint(name)
        if version is not None:
            info = self._info(name)
            staged = f"{info.location}/_delta_log/_staged_commits/"
            log = f"{info.location}/_delta_log/"
            for f in self.storage.list(staged):
                m = _STAGED.fullmatch(f.uri[len(log) :])
                if m and int(m.group(1)) <= version:
                    self.storage.delete(f.uri)
        return version


class CleanupStagedByMtimeClient(ResilientClient):
    """cr9b-wrt-cleanup-staged-by-mtime. WRT-CLEANUP-STAGED-ABOVE (MUST), RFC "Metadata Cleanup" step 3
    (only staged commits at or below the cut-off checkpoint's version are deleted). Bug: staged commits
    are judged by age, not version: a staged file older than the cut-off checkpoint file (modification
    time) is taken to be covered by it ("it was published before the checkpoint was written"). A
    ratified, unpublished commit staged *before* the checkpoint of an earlier published version was
    written is deleted, and the catalog then serves a commit whose file is gone. Why a shallow suite
    misses it: a cleanup test usually commits, publishes, checkpoints and then commits more; the staged
    commits above the checkpoint are younger than it and stay. Only an unpublished commit staged before
    the checkpoint (publish, commit, checkpoint, cleanup) shows it."""

    def cleanup(self, name: str, cutoff_version: int) -> None:
        info = self._info(name)
        if not self.policy_allows(info, "metadata_cleanup"):
            return
        view = self.view(info)
        checkpoint = self.cleanup_cutoff_checkpoint(view, cutoff_version)
        if checkpoint is None:
            return
        log = f"{info.location}/_delta_log/"
        listing = self.storage.list(log)
        cp_uri = view.checkpoints[checkpoint]
        cp_mtime = next(f.mtime_ms for f in listing if f.uri == cp_uri)
        files = [f.uri for f in listing]
        doomed = [
            u for u in self.cleanup_doomed(view, files, checkpoint, cutoff_version) if "/_staged_commits/" not in u
        ]
        doomed += [f.uri for f in listing if "/_staged_commits/" in f.uri and f.mtime_ms <= cp_mtime]
        for uri in doomed:
            self.storage.delete(uri)


# ================================================================ reading clients


class InlineReplayedFirstClient(ResilientClient):
    """cr9b-rdr-inline-replayed-first. RDR-UNPUBLISHED (MUST), RFC "Reader Requirements" (the reader
    includes the ratified, unpublished commits, staged or inline, as the versions they are). Bug: to
    overlap I/O, the snapshot replays what it already holds first (the checkpoint, the inline commits the
    catalog returned) and then the commits it must fetch (published and staged files), each group in
    version order. An inline commit that removes a file a staged commit before it added is replayed
    before that add: the removed file comes back. Why a shallow suite misses it: in the RFC's worked
    example (published 0-6, staged 7-8, inline 9) and in any table whose inline commits are the newest,
    or only append, the order makes no difference; only an inline delete between staged commits does."""

    def snapshot(self, view: LogView, target: int) -> Snapshot:
        sources = self.commit_sources(view)
        cp = self.start_checkpoint(view, target)
        first = 0 if cp is None else cp + 1
        missing = [v for v in range(first, target + 1) if v not in sources]
        if missing:
            raise ReadError(f"commits {missing} of version {target} are neither in the catalog nor published")
        versions = list(range(first, target + 1))

        def in_hand(v: int) -> bool:
            s = sources[v]
            return isinstance(s, RatifiedCommit) and s.inline_content is not None

        ordered = [v for v in versions if in_hand(v)] + [v for v in versions if not in_hand(v)]
        batches: list[list[Action]] = []
        if cp is not None:
            batches.append(self.checkpoint_actions(view.checkpoints[cp]))
        batches.extend(decode(self.content(sources[v])) for v in ordered)
        snap = self.replay(target, batches)
        last = sources.get(target)
        if last is not None:
            snap.in_commit_timestamp = self.ict_of(decode(self.content(last)))
        return snap


class TimestampMemoClient(ResilientClient):
    """cr9b-rdr-timestamp-memo. RDR-TIME-TRAVEL-ICT (MUST), RFC "Publishing Commits" (note on timestamps:
    time travel resolves the latest version whose in-commit timestamp is at or before the asked time).
    Bug: the reader memoises the resolution of (table, timestamp) to a version, reasoning that history
    is immutable. It is not for a timestamp at or after the newest commit's: a later commit whose
    in-commit timestamp is still at or before it (the time asked was in the future, or a writer's clock
    lags) changes the answer, but the memo returns the old version. Why a shallow suite misses it: it
    asks each timestamp once, or asks timestamps inside the history, whose answers never change."""

    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        super().__init__(catalog, storage)
        self._tt_memo: dict[tuple[str, int], int] = {}

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        info = self._info(name)
        view = self.view(info)
        if timestamp_ms is not None:
            key = (info.table_id, timestamp_ms)
            if key not in self._tt_memo:
                self._tt_memo[key] = self.version_at(self.timeline(view), timestamp_ms)
            version = self._tt_memo[key]
        target = self.readable_bound(view, version)
        snap = self.snapshot(view, target)
        return ReadResult(target, self.rows(info.location, snap))


class TimestampZeroFalsyClient(ResilientClient):
    """cr9b-rdr-timestamp-zero-falsy. RDR-TIME-TRAVEL-ICT (MUST), RFC "Publishing Commits" (time travel by
    in-commit timestamp: a time before every commit resolves to no version). Bug: the read path tests its
    optional arguments for truth (``if timestamp_ms:``), so a time-travel read at timestamp 0 (the
    epoch, long before every commit) is taken for a read without a timestamp and returns the latest
    version instead of being refused. Why a shallow suite misses it: its "too early" timestamp is the
    first commit's minus some margin, a large positive number, which is refused correctly."""

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        info = self._info(name)
        view = self.view(info)
        if timestamp_ms:
            version = self.version_at(self.timeline(view), timestamp_ms)
        target = self.readable_bound(view, version)
        snap = self.snapshot(view, target)
        return ReadResult(target, self.rows(info.location, snap))


class LastCheckpointPointerClient(ResilientClient):
    """cr9b-rdr-last-checkpoint-pointer. RDR-IGNORE-ABOVE-LATEST (MUST), RFC "Reading Catalog-managed
    Tables" / "Reader Requirements" (files above the catalog's latest ratified version are ignored).
    Bug: for a read of the latest version the reader starts, as Delta readers do, from the checkpoint
    that ``_delta_log/_last_checkpoint`` names, without checking it against the catalog's latest
    version (it filters the LIST of Delta files and checkpoints, but trusts the pointer). A checkpoint
    above the latest ratified version (left by a path-based or crashed writer) is read as the table's
    state. Why a shallow suite misses it: it plants ``<latest+1>.json`` or staged files above the latest
    version, which are ignored; reads of older versions take the LIST path; only a checkpoint with its
    pointer above the latest version shows it."""

    def snapshot(self, view: LogView, target: int) -> Snapshot:
        if target == view.latest:
            try:
                pointer = json.loads(self.storage.get(view.last_checkpoint_uri))
            except FileNotFoundError:
                pointer = None
            if pointer is not None:
                cp = int(pointer["version"])
                log = view.last_checkpoint_uri[: -len("_last_checkpoint")]
                sources = self.commit_sources(view)
                batches: list[list[Action]] = [self.checkpoint_actions(f"{log}{cp:020d}.checkpoint.parquet")]
                batches.extend(decode(self.content(sources[v])) for v in range(cp + 1, target + 1))
                snap = self.replay(target, batches)
                if target in sources:
                    snap.in_commit_timestamp = self.ict_of(decode(self.content(sources[target])))
                return snap
        return super().snapshot(view, target)


# ================================================================ targets


class PublishSkipsInlineTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PublishSkipsInlineClient


class PublishFinalNewlineTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PublishFinalNewlineClient


class TxnIdSeededRngTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = TxnIdSeededRngClient


class CleanupSupersededCheckpointsTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CleanupSupersededCheckpointsClient


class CheckpointTidiesStagedTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CheckpointTidiesStagedClient


class CleanupStagedByMtimeTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CleanupStagedByMtimeClient


class InlineReplayedFirstTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = InlineReplayedFirstClient


class TimestampMemoTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = TimestampMemoClient


class TimestampZeroFalsyTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = TimestampZeroFalsyClient


class LastCheckpointPointerTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = LastCheckpointPointerClient


# ================================================================ the list


_W = "delta-cm-writer"
_R = "delta-cm-reader"

VARIANTS: list[Variant] = [
    variant_of(
        "cr9b-wrt-publish-skips-inline",
        PublishSkipsInlineTarget,
        "client",
        _W,
        ("WRT-PUBLISH-ORDER",),
        "MUST",
        ("publication", "inline", "mixed-writers"),
    ),
    variant_of(
        "cr9b-wrt-publish-final-newline",
        PublishFinalNewlineTarget,
        "client",
        _W,
        ("WRT-PUBLISH-IDENTICAL",),
        "MUST",
        ("publication", "encoding", "mixed-writers"),
    ),
    variant_of(
        "cr9b-wrt-txnid-seeded-rng",
        TxnIdSeededRngTarget,
        "client",
        _W,
        ("WRT-TXNID-UNIQUE",),
        "MUST",
        ("provenance", "multiple-clients", "time"),
    ),
    variant_of(
        "cr9b-wrt-cleanup-superseded-checkpoints",
        CleanupSupersededCheckpointsTarget,
        "client",
        _W,
        ("WRT-CLEANUP-KEEPS",),
        "MUST",
        ("maintenance", "long-history"),
    ),
    variant_of(
        "cr9b-wrt-checkpoint-tidies-staged",
        CheckpointTidiesStagedTarget,
        "client",
        _W,
        ("WRT-MAINTENANCE-POLICY",),
        "MUST",
        ("maintenance", "policy"),
    ),
    variant_of(
        "cr9b-wrt-cleanup-staged-by-mtime",
        CleanupStagedByMtimeTarget,
        "client",
        _W,
        ("WRT-CLEANUP-STAGED-ABOVE",),
        "MUST",
        ("maintenance", "time", "ordering"),
    ),
    variant_of(
        "cr9b-rdr-inline-replayed-first",
        InlineReplayedFirstTarget,
        "client",
        _R,
        ("RDR-UNPUBLISHED",),
        "MUST",
        ("ordering", "inline", "mixed-writers"),
    ),
    variant_of(
        "cr9b-rdr-timestamp-memo",
        TimestampMemoTarget,
        "client",
        _R,
        ("RDR-TIME-TRAVEL-ICT",),
        "MUST",
        ("time-travel", "caching"),
    ),
    variant_of(
        "cr9b-rdr-timestamp-zero-falsy",
        TimestampZeroFalsyTarget,
        "client",
        _R,
        ("RDR-TIME-TRAVEL-ICT",),
        "MUST",
        ("time-travel", "boundaries"),
    ),
    variant_of(
        "cr9b-rdr-last-checkpoint-pointer",
        LastCheckpointPointerTarget,
        "client",
        _R,
        ("RDR-IGNORE-ABOVE-LATEST",),
        "MUST",
        ("maintenance", "above-latest"),
    ),
]
