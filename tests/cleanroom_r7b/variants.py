"""Round 7b faulty variants: each target swaps exactly one side of the durable baseline
(``tests.cleanroom_r3.base.DurableTarget``) for a subclass with one plausible bug.

Written from the catalogManaged RFC, the public contract (``conformance/contract``), docs/certify.md
and the clean-room baselines only. Every fault is reachable through the contract alone and is
otherwise correct; ``VARIANTS`` at the end lists them with the rule each one breaks.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import threading
import time
from collections.abc import Sequence
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq

from conformance.contract.delta import (
    CatalogLimits,
    CatalogTimeout,
    CommitConflict,
    CommitRejected,
    GetCommitsResponse,
    InvalidRequest,
    RatifiedCommit,
    TableInfo,
    TableNotFound,
)
from tests.cleanroom.catalog import CleanCatalog, TableState, is_int
from tests.cleanroom.client import (
    _CHECKPOINT,
    _CHECKPOINT_SCHEMA,
    _CHECKSUM,
    _COMPACTION,
    _DELTA,
    _STAGED,
    Action,
    CleanClient,
    LogView,
    RetriesExhausted,
    Snapshot,
    decode,
    encode,
)
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant

# RFC "Delta Log Entries": <version zero-padded to 20 digits>.<uuid>.json
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_STAGED_EXACT = re.compile(rf"(\d{{20}})\.({_UUID})\.json")


# ====================================================================== catalog faults


class PathOnlyStagedCatalog(DurableCatalog):
    """Bug: the catalog judges a staged commit's location by the *path* part of its URI only
    (``urlsplit(uri).path``), as a catalog that never touches storage itself and "normalises" URIs
    would: the scheme and the authority (the bucket of ``s3://bucket/key``, the host of ``file://``)
    are dropped before the table's staging prefix is compared. It checks the name (20-digit version,
    UUID, ``.json``), the version in it and ``..`` segments exactly as the baseline does; it does not
    check that the file exists (a catalog may ratify without storage access, docs/certify.md).
    RFC "Terminology - Commits" (a staged commit is written at ``_delta_log/_staged_commits/<v>.<uuid>.json``
    of the table) and "Commit Protocol" option 1: a proposal whose file is not in the table's own
    staging folder must be refused and change nothing (CAT-STAGED-IN-TABLE). A suite that tries
    ``..``, ``_delta_log/`` itself and another table's folder, all under the same scheme and bucket,
    never sees it; a staged URI in another bucket (or on another scheme) that repeats the table's key
    is ratified, and readers fetch a file from a place that is not the table's."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = urlsplit(f"{t.location}/_delta_log/_staged_commits/").path
        path = urlsplit(staged_uri).path
        rest = path[len(prefix) :] if path.startswith(prefix) else ""
        m = _STAGED_EXACT.fullmatch(rest)
        if m is None:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")


_STAGED_PREFIX_ONLY = re.compile(rf"(\d{{20}})\.({_UUID})\.json")


class UnanchoredStagedNameCatalog(DurableCatalog):
    """Bug: the staged name is validated with ``re.match`` (anchored at the start only) instead of
    ``fullmatch``: ``<20 digits>.<uuid>.json`` must begin the name, but anything may follow it. A name
    ``00000000000000000003.<uuid>.json.tmp`` (an upload's temporary name, a client that renames after
    writing), ``....jsonl`` or ``....json.crc`` is ratified as long as the file exists. RFC "Delta Log
    Entries" / "Terminology - Commits": a staged commit is ``<v>.<uuid>.json``; docs/certify.md: a
    staged name that is not ``<20-digit version>.<uuid>.json`` is refused and changes nothing
    (CAT-STAGED-NAME). A suite that tries a published-style name (``0...03.json``) and a UUID part that
    is no UUID is refused correctly; a well-formed name with a suffix was never proposed."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.startswith(prefix) else ""
        m = _STAGED_PREFIX_ONLY.match(rest)  # the bug: match, not fullmatch
        if m is None or "/" in rest:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class NegativeResolveCacheCatalog(DurableCatalog):
    """Bug: to shed load from clients that poll for a table to appear, ``resolve`` caches "no such
    table" answers for 30 seconds (a negative cache, as DNS does), and ``register_table`` does not
    invalidate the entry. RFC "Table Discovery" and "Reader Requirements": resolving a table's name
    returns its location (CAT-RESOLVE-LOCATION); a registered table that does not resolve cannot be
    read or written through the catalog at all. A suite that never resolves a name before creating it
    sees nothing; an engine that does "create if not exists" (resolve, then create and register) or a
    reader that looked for the table a moment before its creation gets ``TableNotFound`` for a table
    that exists, deterministically, for the next 30 seconds."""

    negative_ttl_s: ClassVar[float] = 30.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._negative: dict[str, float] = {}
        self._negative_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def resolve(self, name: str) -> TableInfo:
        now = time.monotonic()
        with self._negative_lock:
            until = self._negative.get(name) if isinstance(name, str) else None
        if until is not None and now < until:
            raise TableNotFound(f"no table {name!r} (cached)")
        try:
            return super().resolve(name)
        except TableNotFound:
            if isinstance(name, str):
                with self._negative_lock:
                    self._negative[name] = now + self.negative_ttl_s
            raise


class LazyRegistrationCatalog(DurableCatalog):
    """Bug: registration is kept in memory and reaches the table's state file only with the table's
    next persisted change (its first ratification), "to save a write": ``register_table`` does not
    persist. While the process lives nothing differs. After a restart, a table that was registered
    but has no commit beyond version 0 comes back as an unnamed staging table: its name no longer
    resolves and its commits are refused. RFC "Commit Protocol" / "Terminology - Commits": the catalog
    stores what it ratified (version 0 at registration, docs/certify.md "its latest version is then
    0") durably (CAT-RATIFY-DURABLE), and name resolution returns the table's location
    (CAT-RESOLVE-LOCATION). A restart check whose tables all hold commits (v3, v13, a long history)
    passes; a freshly created table at the moment of the restart is lost."""

    def register_table(self, name: str, table_id: str) -> TableInfo:
        return CleanCatalog.register_table(self, name, table_id)


class NewlineCountActionsCatalog(DurableCatalog):
    """Bug: the catalog declares (and enforces) a limit of 64 actions per inline commit, but counts a
    commit's actions as its newline characters (``content.count(b"\\n")``), the cheap way to count
    NDJSON lines. Commits that end with a newline are counted exactly, so 64 actions are accepted and
    65 refused cleanly; a commit whose last action has no final newline (valid newline-delimited JSON)
    is counted one short, and 65 actions are ratified whole past the declared limit. docs/certify.md
    "Limits" (a declared limit is exact: one past it is refused) and RFC "Catalog Responsibilities"
    (CAT-LIMIT-DECLARED). A suite that builds its over-limit commit with a final newline, as every
    encoder does, sees an exact limit."""

    action_limit: ClassVar[int] = 64

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
        if isinstance(inline_content, bytes | bytearray) and inline_content.count(b"\n") > self.action_limit:
            raise CommitRejected(f"more than {self.action_limit} actions in one commit")
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            latest_published_version=latest_published_version,
        )


class CatalogWideCapCatalog(DurableCatalog):
    """Bug: the catalog declares a cap of 10 ratified, unpublished commits per table (as Unity Catalog
    has), but its quota counter is keyed by the catalog (metastore) rather than by the table: the cap
    is checked against the unpublished commits of *all* tables together. A publication mark carried by
    the proposal is taken into account, and the proposal is refused cleanly (``CommitRejected``,
    nothing changed). With one table at a time it is exact: the 10th unpublished commit is ratified,
    the 11th refused. With several tables, each well below the cap, a valid proposal is refused as soon
    as the tables together hold 10 unpublished commits. docs/certify.md "Limits" (at the declared limit
    a call succeeds) and RFC "Catalog Responsibilities" (CAT-LIMIT-DECLARED): a limit declared per table
    must hold per table. A suite that exercises the cap on a fresh table of its own, after publishing
    everything else, never sees the other tables' share."""

    cap: ClassVar[int] = 10

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._pending_mark = threading.local()
        super().__init__(*args, **kwargs)

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
        self._pending_mark.value = latest_published_version
        try:
            super().commit(
                table_id,
                version,
                staged_uri=staged_uri,
                inline_content=inline_content,
                in_commit_timestamp=in_commit_timestamp,
                latest_published_version=latest_published_version,
            )
        finally:
            self._pending_mark.value = None

    def check_sequence(self, t: TableState, version: int) -> None:
        super().check_sequence(t, version)
        mark = getattr(self._pending_mark, "value", None)
        own = [v for v in t.stored if v > t.published and (mark is None or mark > t.latest or v > mark)]
        with self._lock:
            others = [x for x in self._by_id.values() if x is not t]
        unpublished = len(own) + sum(len([v for v in x.stored if v > x.published]) for x in others)  # the bug
        if unpublished >= self.cap:
            raise CommitRejected(f"{unpublished} commits wait for publication (cap {self.cap})")


class StaleRejectedCatalog(DurableCatalog):
    """Bug: the sequence check compares the proposed version with the latest one only: the latest
    version itself is a lost race (``CommitConflict``), anything else that is not ``latest + 1`` is
    "out of order" (``CommitRejected``), lumping a stale proposal, for a version ratified long ago,
    together with a gap. RFC "Commit Protocol" (a version is ratified at most once; a proposal for a
    taken version has lost to its winner) and CAT-RATIFY-ONCE (any later proposal for a ratified
    version gets a conflict). Clients treat a rejection as final and a conflict as "rebase and retry",
    so a writer two or more versions behind gives up instead of rebasing. A suite whose racing writers
    are at most one version behind (two writers, one version) always meets the conflict."""

    def check_sequence(self, t: TableState, version: int) -> None:
        if version == t.latest:
            raise CommitConflict(f"version {version} is already ratified", latest_version=t.latest)
        if version != t.latest + 1:
            raise CommitRejected(f"version {version} is out of order; latest is {t.latest}")


class ClampThenValidateCatalog(DurableCatalog):
    """Bug: ``get_commits`` clamps ``end_version`` to the latest version *before* it validates the
    range, so a range wholly above the latest version, ``start > latest`` with ``end >= start`` (a
    writer asking "is version v mine?" after a lost answer, ``get_commits(v, v)``, a reader polling a
    window ahead), is refused as ``start > end`` with ``InvalidRequest`` instead of answered with an
    empty listing and the latest version. Without an end, or with a range that reaches down to the
    latest, it is right. RFC "Getting Ratified Commits from the Catalog" and the "Sample Catalog Client
    API" (in all cases the response includes the latest ratified version) and docs/certify.md (an end
    above the latest is clamped): CAT-LIST-LATEST. A suite that probes bounds above the latest only one
    at a time (start alone, or end alone) never sends both."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        t = self._table(table_id, TableNotFound)
        for bound in (start_version, end_version):
            if bound is not None and (not is_int(bound) or bound < 0):
                raise InvalidRequest(f"bad version bound {bound!r}")
        with t.lock:
            latest = self.latest_of(t)
            lo = 0 if start_version is None else start_version
            hi = latest if end_version is None else min(end_version, latest)
            if start_version is not None and end_version is not None and lo > hi:  # the bug: hi is clamped
                raise InvalidRequest("start_version is above end_version")
            return GetCommitsResponse(self.listed(t, lo, hi), latest)


class MarkOneAboveLatestCatalog(DurableCatalog):
    """Bug: ``mark_published`` accepts a mark one above the latest ratified version (its bound is
    ``version > latest + 1``, written so that a client may report "the version I am publishing right
    now" while its proposal is in flight), and applies it: it drops every stored commit, all of them
    at or below the latest version, although the report names a version that is not even ratified and
    so cannot be true. Marks at or below the latest are judged exactly, and marks two or more above are
    refused. docs/certify.md and RFC "Publishing Commits" (a commit cannot be published before it is
    ratified; a publication report for a version not yet ratified is refused or ignored and never
    makes the catalog drop a commit): CAT-PUBLISH-REPORT-POSSIBLE. A suite that tries a mark far above
    the latest (latest + 5, a huge number) sees a clean refusal; the one mark a client can plausibly get
    wrong by one is taken."""

    def mark_published(self, table_id: str, version: int) -> None:
        t = self._table(table_id, InvalidRequest)
        with t.lock:
            if not is_int(version) or version < 0 or version > t.latest + 1:  # the bug: + 1
                raise InvalidRequest(f"cannot mark {version!r} published; latest is {t.latest}")
            self.forget_published(t, version)


# ====================================================================== client faults (writer)


class CreateWithoutTxnIdClient(ResilientClient):
    """Bug: the commitInfo of the table-creating commit (version 0) carries no ``txnId``: the writer
    draws transaction ids from the catalog session of a table, and at creation there is no table yet,
    so the create path builds its commitInfo without one. Every later commit has a fresh UUID.
    RFC "Commit Provenance Information" and "Writer Requirements for Catalog-managed tables": the
    ``commitInfo`` action must contain a ``txnId`` (WRT-TXNID). A suite that judges the commits of
    appends and deletes, the ones it made the client write, never opens version 0."""

    def commit_info(self, operation: str, ict: int, *, first: bool = False) -> Action:
        info = super().commit_info(operation, ict, first=first)
        if first:
            del info["commitInfo"]["txnId"]
        return info


class CheckpointFeatureListClient(ResilientClient):
    """Bug: the checkpoint writer builds the checkpoint's protocol row with a helper that takes one
    feature list (a leftover of legacy features, where every reader feature is a writer feature) and
    passes the *reader* features for both columns, so the checkpoint's ``writerFeatures`` is
    ``["catalogManaged"]``: ``inCommitTimestamp`` is gone from the table's state at and after every
    checkpoint. Commits are right; only replays that start from a checkpoint see it. RFC "Writer
    Requirements for Catalog-managed tables" (in-commit timestamps must be supported and active) and
    PROTOCOL.md Checkpoints (a checkpoint holds the table's protocol): WRT-ICT-ENABLED (``catalogManaged``
    stays in both lists, so the protocol versions and that feature still look right). A suite that
    judges the protocol in version 0 only, or checks that a checkpoint exists and replays to the right
    rows, never looks at its protocol row."""

    def checkpoint_rows(self, snap: Snapshot) -> list[dict[str, Any]]:
        proto = snap.protocol
        features = list(proto.get("readerFeatures") or [])
        protocol = {
            "minReaderVersion": proto.get("minReaderVersion"),
            "minWriterVersion": proto.get("minWriterVersion"),
            "readerFeatures": features,
            "writerFeatures": features,  # the bug: the reader list for both columns
        }
        rows: list[dict[str, Any]] = [{"protocol": protocol}, {"metaData": snap.metadata}]
        rows += [
            {"add": {k: a.get(k) for k in _CHECKPOINT_SCHEMA.field("add").type.names}} for a in snap.files.values()
        ]
        return rows

    def checkpoint(self, name: str) -> int | None:
        return _write_checkpoint(self, name, self.checkpoint_rows, latest_state=False)


def _write_checkpoint(client: CleanClient, name: str, rows_of: Any, *, latest_state: bool) -> int | None:
    """``CleanClient.checkpoint`` with the row builder and the snapshot choice as parameters."""
    info = client._info(name)
    if not client.policy_allows(info, "checkpoint"):
        return None
    view = client.view(info)
    version = client.checkpoint_version(view)
    if version is None:
        return None
    snap = client.snapshot(view, view.latest if latest_state else version)
    rows: list[dict[str, Any]] = rows_of(snap)
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=_CHECKPOINT_SCHEMA), buf)
    log = f"{info.location}/_delta_log"
    try:
        client.storage.put(f"{log}/{version:020d}.checkpoint.parquet", buf.getvalue(), if_absent=True)
    except FileExistsError:
        return version
    pointer = {"version": version, "size": len(rows), "numOfAddFiles": len(snap.files)}
    client.storage.put(f"{log}/_last_checkpoint", json.dumps(pointer).encode())
    return version


def _plain_rows(snap: Snapshot) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [{"protocol": snap.protocol}, {"metaData": snap.metadata}]
    rows += [{"add": {k: a.get(k) for k in _CHECKPOINT_SCHEMA.field("add").type.names}} for a in snap.files.values()]
    return rows


class CheckpointCurrentStateClient(ResilientClient):
    """Bug: the checkpoint is named for the newest *published* version, as the rules require, but its
    content is the writer's current snapshot of the table, the latest ratified version (the snapshot the
    writer keeps anyway), including the ratified commits above it that are not published yet. When
    everything is published the two are the same version and the checkpoint is exact. RFC "Maintenance
    Operations on Catalog-managed Tables" (a checkpoint of version v only once ``_delta_log/<v>.json``
    exists, i.e. only of published content; WRT-CHECKPOINT-PUBLISHED) and PROTOCOL.md Checkpoints (a
    checkpoint of v holds the state at v): a read of version v, replayed from the checkpoint, sees the
    rows of the unpublished commits above v and misses the rows they deleted. A suite that publishes
    before checkpointing, or only checks the checkpoint's name, misses it."""

    def checkpoint(self, name: str) -> int | None:
        return _write_checkpoint(self, name, _plain_rows, latest_state=True)


class IctTieClient(ResilientClient):
    """Bug: the in-commit timestamp is ``max(clock, previous)`` ("never go back in time") instead of
    ``max(clock, previous + 1)``. With a clock that moves on between commits it is always right; when the
    previous commit was stamped ahead of the writer's clock (a skewed peer, a commit in the same
    millisecond) the new commit carries the *same* timestamp as the previous one. PROTOCOL.md In-Commit
    Timestamps (each timestamp strictly greater than the previous commit's, made mandatory by the RFC's
    "Writer Requirements"): WRT-ICT-MONOTONIC, WRT-ICT-SKEW. A suite that checks ``>=``, or never puts a
    peer's commit ahead of the writer's clock, sees ordered timestamps."""

    def next_ict(self, previous: int | None) -> int:
        now = self.now_ms()
        return now if previous is None else max(now, previous)


class CleanupStagedStrictClient(ResilientClient):
    """Bug: metadata cleanup uses one comparison for every kind of log file, "before the cut-off
    checkpoint" (``version < checkpoint``), as it must for Delta files, checkpoints and checksum files;
    so the staged commits *at* the cut-off checkpoint's version stay (and log compaction files starting
    at it are handled right, ``<=``). Everything above the checkpoint is kept as it must be. RFC "Metadata
    Cleanup" step 3 (also delete all the staged commit files having version <= the cut-off checkpoint's
    version): WRT-CLEANUP-STAGED-BELOW. A suite that checks that staged files well below the checkpoint
    are gone, and that nothing above it is touched, never looks at the one staged file at its version."""

    def cleanup_doomed(self, view: LogView, files: list[str], checkpoint: int, cutoff: int) -> list[str]:
        log = f"{view.info.location}/_delta_log/"
        doomed = []
        for uri in files:
            rel = uri[len(log) :]
            for pattern in (_DELTA, _CHECKPOINT, _CHECKSUM, _STAGED):  # the bug: _STAGED judged with "<"
                m = pattern.fullmatch(rel)
                if m and int(m.group(1)) < checkpoint:
                    doomed.append(uri)
            m = _COMPACTION.fullmatch(rel)
            if m and int(m.group(1)) <= checkpoint:
                doomed.append(uri)
        return doomed


class PublishBeforeRatifyClient(ResilientClient):
    """Bug: to take publication off the commit's critical path the writer writes ``_delta_log/<v>.json``
    with PUT-if-absent right after staging, *before* it proposes ``v`` to the catalog (mixing the RFC's
    option 3, ratify-by-PUT-if-absent, into option 1), and deletes that file again when the catalog
    says the version went to someone else. Every version that ends up ratified is published with the
    ratified bytes, in order, so the log a suite finds at the end is exactly right. RFC "Writer
    Requirements for Catalog-managed tables" (writers must not perform ordinary filesystem-based
    commits) and "Terminology - Commits" (the existence of ``<v>.json`` proves that v is ratified):
    WRT-NO-FILESYSTEM-COMMIT. Between the put and the catalog's answer, and for good if the writer
    crashes or loses the race without cleaning up, the log holds a version the catalog never ratified;
    a suite that judges ``_delta_log`` only after each call returns, never at the moment of the
    proposal, sees a correct log."""

    def before_propose(self, log: str, version: int, content: bytes) -> None:
        with contextlib.suppress(FileExistsError):
            self.storage.put(f"{log}/{self.delta_name(version)}", content, if_absent=True)

    def _withdraw(self, info: TableInfo, version: int, content: bytes) -> None:
        uri = f"{info.location}/_delta_log/{self.delta_name(version)}"
        with contextlib.suppress(FileNotFoundError):
            if self.storage.get(uri) == content:
                self.storage.delete(uri)

    def on_conflict(self, info: TableInfo, version: int, staged_uri: str, content: bytes) -> bool:
        ours = super().on_conflict(info, version, staged_uri, content)
        if not ours:
            self._withdraw(info, version, content)
        return ours

    def on_lost_answer(self, info: TableInfo, version: int, staged_uri: str, content: bytes) -> bool:
        ours = super().on_lost_answer(info, version, staged_uri, content)
        if not ours:
            self._withdraw(info, version, content)
        return ours


class CompactionDropsForeignRemovesClient(ResilientClient):
    """Bug: the log compaction writer reconciles the range's actions and drops every ``remove`` whose
    file the range itself never added ("a tombstone for a file we do not list is noise"); a file added
    and removed inside the range is reconciled right. A compaction of x..y whose commits delete rows of
    a file added before x thus loses the delete: a reader that uses the compaction file instead of the
    commits x..y keeps the deleted rows. RFC "Maintenance Operations on Catalog-managed Tables" and
    PROTOCOL.md Log Compaction Files (a compaction of x..y holds the reconciled actions of exactly the
    commits x..y, tombstones included): WRT-COMPACTION-CONTENT. A suite whose compacted ranges hold
    appends only, or start at the version that added the deleted file, sees an exact compaction."""

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
                    if path in adds:
                        adds.pop(path)
                        removes[path] = a
                    # the bug: a remove of a file added before the range is dropped
                elif "commitInfo" not in a:
                    other.append(a)
        body = encode([*other, *adds.values(), *removes.values()])
        uri = f"{info.location}/_delta_log/{start_version:020d}.{end_version:020d}.compacted.json"
        with contextlib.suppress(FileExistsError):
            self.storage.put(uri, body, if_absent=True)
        return True


class RebaseWithoutRereadClient(ResilientClient):
    """Bug: after a lost race whose conflict names the latest version (``CommitConflict.latest_version``,
    as the RFC encourages), the writer saves a round trip: it proposes at ``latest + 1`` with the
    actions it built on its old snapshot instead of reading the winner's commits and building them
    again. For a blind append the actions are the same and all is well; for a delete (or any commit
    whose actions depend on the table's files) the retried commit removes the file the winner already
    replaced and adds its rows minus its own deletions next to the winner's replacement: the winner's
    delete is undone, surviving rows are doubled, and the loser's own delete does not hold. RFC
    "Delta Log Entries" (the commit for version v holds the actions to apply to the state at v-1),
    "Commit Protocol" (a loser rebases over the ratified winner, read from the catalog:
    WRT-REBASE-UNPUBLISHED) and "no acknowledged commit is lost"
    (INT-NO-LOST-COMMIT). Also its in-commit timestamp is built on the old snapshot's. A suite whose
    concurrent writers only append sees every row."""

    def transact(self, name: str, operation: str, build: Any) -> int:
        info = self._info(name)
        log = f"{info.location}/_delta_log"
        stale: tuple[Snapshot, int] | None = None
        for _ in range(self.max_attempts):
            if stale is None:
                view = self.view(info)
                snap = self.snapshot(view, view.latest)
                version = view.latest + 1
            else:
                snap, version = stale[0], stale[1] + 1  # the bug: no re-read of the winner's commits
            stale = None
            ict = self.next_ict(snap.in_commit_timestamp)
            actions: list[Action] = build(info, snap, ict)
            content = encode(self.order_actions(self.commit_info_for(info, version, operation, ict), actions))
            uri = self.stage(log, version, content, None)
            self.before_propose(log, version, content)
            try:
                self.catalog.commit(info.table_id, version, staged_uri=uri, in_commit_timestamp=ict)
            except CommitConflict as e:
                if not self.on_conflict(info, version, uri, content):
                    if e.latest_version is not None and e.latest_version >= version:
                        stale = (snap, e.latest_version)
                    continue
            except CatalogTimeout:
                if not self.on_lost_answer(info, version, uri, content):
                    continue
            self.after_ratified(info, version)
            return version
        raise RetriesExhausted(f"gave up committing to {name} after {self.max_attempts} lost races")


# ====================================================================== client faults (reader)


class TimelineFromCheckpointClient(ResilientClient):
    """Bug: time travel by timestamp searches the log segment of the latest snapshot, the newest
    checkpoint and the commits after it, as if that were the table's history: once a checkpoint exists,
    a timestamp before the checkpoint's commit finds no version and the read is refused, though the
    commits before it are still published and readable by version. RFC "Publishing Commits" (time
    travel by in-commit timestamps) and PROTOCOL.md (the version at a timestamp is the latest commit
    at or before it): RDR-TIME-TRAVEL-ICT. A suite that time-travels on tables without checkpoints, or
    only to timestamps after the newest one, resolves every timestamp right."""

    def timeline(self, view: LogView) -> list[tuple[int, int]]:
        out = super().timeline(view)
        if view.checkpoints:
            newest = max(view.checkpoints)
            out = [(v, ict) for v, ict in out if v >= newest]  # the bug: the segment, not the history
        return out


class CompleteLinesOnlyClient(ResilientClient):
    """Bug: the commit loader keeps only complete lines: content that does not end with a newline has
    its last line dropped, a guard meant for a staged file read while it is still being uploaded. Every
    commit this client writes ends with a newline; a ratified commit of another writer whose last action
    has no final newline (valid newline-delimited JSON, and an inline commit's content is whatever the
    writer sent) loses that action: its last ``add`` (or ``remove``) is not applied, and publishing
    copies it cut. RFC "Reader Requirements" (readers include the ratified, unpublished commits,
    RDR-UNPUBLISHED) and "Publishing Commits" (the published file is the ratified commit,
    WRT-PUBLISH-IDENTICAL). A suite whose commits all come from ordinary encoders never meets it."""

    def content(self, source: RatifiedCommit | str) -> bytes:
        data = super().content(source)
        if data and not data.endswith(b"\n"):
            data = data[: data.rfind(b"\n") + 1]  # the bug: the unterminated last line is dropped
        return data


class PublishedTimelineClient(ResilientClient):
    """Bug: time travel by timestamp dates only published commits (the in-commit timestamps are read
    from the ``_delta_log/<v>.json`` files, where the reader keeps its timestamp index); the ratified,
    unpublished commits the catalog serves are readable by version and as the latest snapshot, but no
    timestamp resolves to them. A timestamp after the newest unpublished commit resolves to the newest
    published version, an older snapshot. RFC "Reader Requirements" (readers include the ratified,
    unpublished commits: RDR-UNPUBLISHED) and "Publishing Commits" (time travel by in-commit
    timestamps: RDR-TIME-TRAVEL-ICT). A suite that publishes before it time-travels, or only travels to
    old versions, never sees it."""

    def timeline(self, view: LogView) -> list[tuple[int, int]]:
        out = []
        for v, uri in sorted(view.published.items()):
            ict = self.ict_of(decode(self.content(uri)))
            if ict is not None:
                out.append((v, ict))
        return out


# ====================================================================== targets


class PathOnlyStagedTarget(DurableTarget):
    name = "cr7b-cat-staged-path-only"
    catalog_cls = PathOnlyStagedCatalog


class UnanchoredStagedNameTarget(DurableTarget):
    name = "cr7b-cat-staged-name-unanchored"
    catalog_cls = UnanchoredStagedNameCatalog


class NegativeResolveCacheTarget(DurableTarget):
    name = "cr7b-cat-negative-resolve-cache"
    catalog_cls = NegativeResolveCacheCatalog


class LazyRegistrationTarget(DurableTarget):
    name = "cr7b-cat-lazy-registration"
    catalog_cls = LazyRegistrationCatalog


class NewlineCountActionsTarget(DurableTarget):
    name = "cr7b-cat-actions-count-newlines"
    catalog_cls = NewlineCountActionsCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(commit_actions=NewlineCountActionsCatalog.action_limit)


class CatalogWideCapTarget(DurableTarget):
    name = "cr7b-cat-cap-catalog-wide"
    catalog_cls = CatalogWideCapCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(unpublished=CatalogWideCapCatalog.cap)


class StaleRejectedTarget(DurableTarget):
    name = "cr7b-cat-stale-rejected"
    catalog_cls = StaleRejectedCatalog


class ClampThenValidateTarget(DurableTarget):
    name = "cr7b-cat-range-clamp-then-validate"
    catalog_cls = ClampThenValidateCatalog


class MarkOneAboveLatestTarget(DurableTarget):
    name = "cr7b-cat-mark-one-above-latest"
    catalog_cls = MarkOneAboveLatestCatalog


class CleanupStagedStrictTarget(DurableTarget):
    name = "cr7b-wrt-cleanup-staged-strict"
    client_cls = CleanupStagedStrictClient


class PublishBeforeRatifyTarget(DurableTarget):
    name = "cr7b-wrt-publish-before-ratify"
    client_cls = PublishBeforeRatifyClient


class CreateWithoutTxnIdTarget(DurableTarget):
    name = "cr7b-wrt-create-no-txnid"
    client_cls = CreateWithoutTxnIdClient


class CheckpointFeatureListTarget(DurableTarget):
    name = "cr7b-wrt-checkpoint-writer-features"
    client_cls = CheckpointFeatureListClient


class CheckpointCurrentStateTarget(DurableTarget):
    name = "cr7b-wrt-checkpoint-current-state"
    client_cls = CheckpointCurrentStateClient


class IctTieTarget(DurableTarget):
    name = "cr7b-wrt-ict-tie"
    client_cls = IctTieClient


class CompactionDropsForeignRemovesTarget(DurableTarget):
    name = "cr7b-wrt-compaction-drops-removes"
    client_cls = CompactionDropsForeignRemovesClient


class RebaseWithoutRereadTarget(DurableTarget):
    name = "cr7b-wrt-rebase-without-reread"
    client_cls = RebaseWithoutRereadClient


class TimelineFromCheckpointTarget(DurableTarget):
    name = "cr7b-rdr-timeline-from-checkpoint"
    client_cls = TimelineFromCheckpointClient


class CompleteLinesOnlyTarget(DurableTarget):
    name = "cr7b-rdr-complete-lines-only"
    client_cls = CompleteLinesOnlyClient


class PublishedTimelineTarget(DurableTarget):
    name = "cr7b-rdr-timeline-published-only"
    client_cls = PublishedTimelineClient


# ====================================================================== the list


def _variant(
    target: type[DurableTarget],
    side: Literal["catalog", "client"],
    profile: str,
    rules: Sequence[str],
    level: str,
    dimensions: Sequence[str],
) -> Variant:
    faulty = target.catalog_cls if side == "catalog" else target.client_cls
    return Variant(
        name=target.name,
        target=f"{__name__}:{target.__name__}",
        side=side,
        profile=profile,
        rules=tuple(rules),
        level=level,
        dimensions=tuple(dimensions),
        doc=" ".join((faulty.__doc__ or "").split()),
    )


_CAT = "delta-cm-catalog"
_WRT = "delta-cm-writer"
_RDR = "delta-cm-reader"

VARIANTS: list[Variant] = [
    _variant(PathOnlyStagedTarget, "catalog", _CAT, ["CAT-STAGED-IN-TABLE"], "MUST", ["staged-paths", "encoding"]),
    _variant(UnanchoredStagedNameTarget, "catalog", _CAT, ["CAT-STAGED-NAME"], "MUST", ["staged-paths", "encoding"]),
    _variant(NegativeResolveCacheTarget, "catalog", _CAT, ["CAT-RESOLVE-LOCATION"], "MUST", ["discovery", "caching"]),
    _variant(
        LazyRegistrationTarget,
        "catalog",
        _CAT,
        ["CAT-RATIFY-DURABLE", "CAT-RESOLVE-LOCATION"],
        "MUST",
        ["catalog-restart", "several-tables"],
    ),
    _variant(NewlineCountActionsTarget, "catalog", _CAT, ["CAT-LIMIT-DECLARED"], "MUST", ["limits", "encoding"]),
    _variant(CatalogWideCapTarget, "catalog", _CAT, ["CAT-LIMIT-DECLARED"], "MUST", ["limits", "several-tables"]),
    _variant(StaleRejectedTarget, "catalog", _CAT, ["CAT-RATIFY-ONCE"], "MUST", ["concurrency", "conflicts"]),
    _variant(ClampThenValidateTarget, "catalog", _CAT, ["CAT-LIST-LATEST"], "MUST", ["listing-edges", "lost-answers"]),
    _variant(
        MarkOneAboveLatestTarget,
        "catalog",
        _CAT,
        ["CAT-PUBLISH-REPORT-POSSIBLE"],
        "SHOULD",
        ["publication-marks", "unpublished-runs"],
    ),
    _variant(
        CleanupStagedStrictTarget,
        "client",
        _WRT,
        ["WRT-CLEANUP-STAGED-BELOW"],
        "SHOULD",
        ["metadata-cleanup", "maintenance"],
    ),
    _variant(
        PublishBeforeRatifyTarget,
        "client",
        _WRT,
        ["WRT-NO-FILESYSTEM-COMMIT"],
        "MUST",
        ["publication", "concurrency"],
    ),
    _variant(CreateWithoutTxnIdTarget, "client", _WRT, ["WRT-TXNID"], "MUST", ["commit-content"]),
    _variant(
        CheckpointFeatureListTarget,
        "client",
        _WRT,
        ["WRT-ICT-ENABLED"],
        "MUST",
        ["checkpoints", "commit-content"],
    ),
    _variant(
        CheckpointCurrentStateTarget,
        "client",
        _WRT,
        ["WRT-CHECKPOINT-PUBLISHED"],
        "MUST",
        ["checkpoints", "unpublished-runs", "old-versions"],
    ),
    _variant(IctTieTarget, "client", _WRT, ["WRT-ICT-MONOTONIC", "WRT-ICT-SKEW"], "MUST", ["clocks"]),
    _variant(
        CompactionDropsForeignRemovesTarget,
        "client",
        _WRT,
        ["WRT-COMPACTION-CONTENT"],
        "MUST",
        ["log-compaction", "maintenance"],
    ),
    _variant(
        RebaseWithoutRereadTarget,
        "client",
        _WRT,
        ["INT-NO-LOST-COMMIT", "WRT-REBASE-UNPUBLISHED"],
        "MUST",
        ["concurrency", "several-clients"],
    ),
    _variant(
        TimelineFromCheckpointTarget,
        "client",
        _RDR,
        ["RDR-TIME-TRAVEL-ICT"],
        "MUST",
        ["time-travel", "checkpoints", "old-versions"],
    ),
    _variant(
        CompleteLinesOnlyTarget,
        "client",
        _RDR,
        ["RDR-UNPUBLISHED", "WRT-PUBLISH-IDENTICAL"],
        "MUST",
        ["commit-content", "encoding", "inline-commits"],
    ),
    _variant(
        PublishedTimelineTarget,
        "client",
        _RDR,
        ["RDR-TIME-TRAVEL-ICT", "RDR-UNPUBLISHED"],
        "MUST",
        ["time-travel", "unpublished-runs"],
    ),
]
