"""Round 6: faulty variants of the durable clean-room baseline (tests/cleanroom_r3/base.py).

Written from the catalogManaged RFC, the public contract (conformance/contract/) and docs/certify.md
only. Each target swaps exactly one side, the catalog or the client, for a subclass that gets one
detail wrong the way a real implementation would, and is otherwise the correct baseline. ``VARIANTS``
at the end lists them with the rule each breaks.
"""

from __future__ import annotations

import bisect
import gzip
import io
import json
import uuid
from typing import Any, ClassVar, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from conformance.contract.delta import (
    CatalogLimits,
    CatalogTimeout,
    CommitConflict,
    CommitRejected,
    GetCommitsResponse,
    InvalidRequest,
    NotSupported,
    RatifiedCommit,
    TableInfo,
    TableNotFound,
)
from tests.cleanroom.catalog import _STAGED_NAME, CleanCatalog, TableState, is_int
from tests.cleanroom.client import (
    _CHECKPOINT,
    _CHECKPOINT_SCHEMA,
    _DELTA,
    SCHEMA_STRING,
    Action,
    CleanClient,
    LogView,
    ReadError,
    RetriesExhausted,
    Snapshot,
    decode,
    encode,
)
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant

# ---------------------------------------------------------------- shared pieces of the catalog


def validated_proposal(
    cat: CleanCatalog,
    t: TableState,
    version: int,
    staged_uri: str | None,
    inline_content: bytes | None,
    in_commit_timestamp: int | None,
    latest_published_version: int | None,
) -> bytes | None:
    """The baseline's checks of a proposal before the table lock; returns the inline bytes, if any."""
    if not is_int(version) or version < 1:
        raise InvalidRequest(f"bad version {version!r}")
    if (staged_uri is None) == (inline_content is None):
        raise InvalidRequest("give exactly one of staged_uri and inline_content")
    if staged_uri is not None:
        if not isinstance(staged_uri, str):
            raise InvalidRequest("staged_uri must be a string")
        cat.check_staged_uri(t, version, staged_uri)
    elif not isinstance(inline_content, bytes | bytearray) or not inline_content:
        raise InvalidRequest("inline_content must be non-empty bytes")
    for extra in (in_commit_timestamp, latest_published_version):
        if extra is not None and not is_int(extra):
            raise InvalidRequest(f"bad integer {extra!r}")
    return bytes(inline_content) if inline_content is not None else None


def validated_bounds(start_version: int | None, end_version: int | None) -> None:
    """The baseline's checks of a listing's bounds."""
    for bound in (start_version, end_version):
        if bound is not None and (not is_int(bound) or bound < 0):
            raise InvalidRequest(f"bad version bound {bound!r}")
    if start_version is not None and end_version is not None and start_version > end_version:
        raise InvalidRequest("start_version is above end_version")


# ---------------------------------------------------------------- catalog faults


class ListEndExclusiveCatalog(DurableCatalog):
    """Bug: an explicit ``end_version`` is taken as an exclusive bound (Python's ``range(start, end)``
    habit), while a listing without an end goes up to the latest version inclusive. RFC "Getting
    Ratified Commits from the Catalog" and the "Sample Catalog Client API" (``getRatifiedCommits``
    returns the ratified commits in ``[startVersion, endVersion]``). Unbounded listings, the ones
    readers make, are right, and a bound above the latest is clamped, so reads and a listing check
    with ``end`` past the latest pass; a listing of ``[v, v]`` (a writer asking whether version v
    holds its own proposal after a lost answer) comes back empty although v is stored, unpublished.
    A suite that only checks that nothing outside the range is listed misses it."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        t = self._table(table_id, TableNotFound)
        validated_bounds(start_version, end_version)
        with t.lock:
            latest = self.latest_of(t)
            lo = 0 if start_version is None else start_version
            stop = latest + 1 if end_version is None else min(end_version, latest + 1)  # half-open
            return GetCommitsResponse([t.stored[v] for v in sorted(t.stored) if lo <= v < stop], latest)


class ListEndZeroCatalog(DurableCatalog):
    """Bug: the listing's bounds are defaulted with ``or`` (``end_version or latest``), so an explicit
    ``end_version=0`` counts as "no end" and the listing returns every stored commit, all of them
    above the asked range. RFC "Getting Ratified Commits from the Catalog" / "Sample Catalog Client
    API": only commits in ``[startVersion, endVersion]``. Every bound of 1 or more is right; only a
    window ending at version 0 (a client asking for what the catalog holds of the creation commit,
    ``[0, 0]``) shows it, a boundary a suite that draws its ranges from the ratified versions (1 and
    up) never asks."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        t = self._table(table_id, TableNotFound)
        validated_bounds(start_version, end_version)
        with t.lock:
            latest = self.latest_of(t)
            lo = start_version or 0
            hi = min(end_version or latest, latest)
            return GetCommitsResponse(self.listed(t, lo, hi), latest)


class MarkBeforeJudgingCatalog(DurableCatalog):
    """Bug: a proposal's publication mark (``latest_published_version``) is applied before the proposal
    is judged, and is checked only against the proposed version (``b < version``), not against the
    latest ratified one. docs/certify.md: the proposal is judged first and the mark applied only if it
    was ratified; RFC "Commit Protocol" (a proposal that would leave a gap is refused and changes
    nothing) and "Publishing Commits" (a commit cannot be published before it is ratified). A mark at
    or above the proposed version is refused, as the suite tries; for a ratified proposal, or a stale
    one with a true mark, the order does not matter. A gap proposal (v = latest + 3) carrying a mark
    between the latest and itself is refused, yet it has already dropped every ratified, unpublished
    commit and moved the publication watermark past the latest version."""

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
        t = self._table(table_id, InvalidRequest)
        content = validated_proposal(
            self, t, version, staged_uri, inline_content, in_commit_timestamp, latest_published_version
        )
        with self.ratify_lock(t):
            mark = latest_published_version
            if mark is not None and 0 <= mark < version:  # "a mark below the proposal is plausible"
                self.forget_published(t, mark)
            self.check_sequence(t, version)
            self.store(t, RatifiedCommit(version, staged_uri, content, in_commit_timestamp))


class CapIgnoresPiggybackMarkCatalog(DurableCatalog):
    """Bug: the catalog caps unpublished commits at 10 per table (declared: ``unpublished=10``) and
    counts them as ``latest - published``; but a publication mark that arrives with a proposal
    (``latest_published_version``, UC's ``latest_backfilled_version``) is applied by deleting the stored
    rows directly, without moving the ``published`` watermark that ``mark_published`` moves. RFC
    "Catalog Responsibilities" and docs/certify.md "Limits" (a declared limit is the real one: at it a
    call succeeds). A suite that publishes with ``mark_published`` sees an exact cap; a writer that
    reports publication in its proposals, as UC clients do, is refused once ten commits were ratified
    since the last ``mark_published``, although only one of them is unpublished."""

    cap = 10

    def check_sequence(self, t: TableState, version: int) -> None:
        super().check_sequence(t, version)
        if t.latest - t.published >= self.cap:
            raise CommitRejected(f"{self.cap} commits wait to be published")

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
        t = self._table(table_id, InvalidRequest)
        content = validated_proposal(
            self, t, version, staged_uri, inline_content, in_commit_timestamp, latest_published_version
        )
        mark = latest_published_version
        with self.ratify_lock(t):
            self.check_sequence(t, version)
            if mark is not None and 0 <= mark <= t.latest:
                for v in [v for v in t.stored if v <= mark]:  # the rows go; the watermark stays
                    del t.stored[v]
            self.store(t, RatifiedCommit(version, staged_uri, content, in_commit_timestamp))


class ManagedFlagFromLogCatalog(DurableCatalog):
    """Bug: name resolution fills ``catalog_managed`` from the protocol action of the newest commit the
    catalog knows to be published, as if every commit repeated the protocol (its own engine's commits
    do). RFC "Table Discovery": name resolution says whether the table is catalog-managed. Right after
    registration (version 0 holds the protocol) and until the first publication mark, the flag is
    true; once an append without a protocol action is published and marked, resolution says the table
    is not catalog-managed, and a client trusting it goes to the filesystem. A suite that checks the
    flag on a fresh table misses it."""

    def resolve(self, name: str) -> TableInfo:
        info = super().resolve(name)
        t = self._by_id[info.table_id]
        return TableInfo(info.table_id, info.name, info.location, self.managed_per_log(t))

    def managed_per_log(self, t: TableState) -> bool:
        uri = f"{t.location}/_delta_log/{t.published:020d}.json"
        try:
            actions = decode(self.storage.get(uri))
        except FileNotFoundError:
            return True
        for a in actions:
            if "protocol" in a:
                return "catalogManaged" in (a["protocol"].get("readerFeatures") or [])
        return False


class ResolvePrefixCatalog(DurableCatalog):
    """Bug: names are kept in a sorted index (it also serves a prefix listing of tables) and resolution
    takes the first name at or after the asked one and accepts it if it starts with the asked name.
    RFC "Table Discovery" / "Reader Requirements": a name resolves to its own table's location, or to
    none. Every registered name resolves to itself (an exact match sorts first), and a name no table's
    name starts with is not found; resolving an unregistered name that is a prefix of a registered one
    (``orders`` while ``orders_2024`` exists) returns the other table, so a writer creating or writing
    ``orders`` lands in ``orders_2024``."""

    def resolve(self, name: str) -> TableInfo:
        with self._lock:
            names = sorted(self._by_name)
            i = bisect.bisect_left(names, name) if isinstance(name, str) else len(names)
            found = names[i] if i < len(names) and names[i].startswith(name) else None
            t = self._by_id.get(self._by_name[found]) if found is not None else None
        if t is None:
            raise TableNotFound(f"no table {name!r}")
        return TableInfo(t.table_id, name, t.location, True)


class ReservationLeakCatalog(DurableCatalog):
    """Bug: ratification reserves the proposed version (``reserved = version``) as soon as the sequence
    check passes, then checks that the staged file exists, and the refusal of a missing file does not
    release the reservation. RFC "Commit Protocol" (v only after v-1; a refused proposal changes
    nothing). Every proposal whose file exists is judged right, and the refusals the suite makes by
    name, folder or version are decided before the reservation. A proposal of a staged file that does
    not exist (docs/certify.md lets a catalog refuse it) leaves version v reserved: a new proposal for
    v gets a conflict although v is not ratified, and one for v+1 is ratified, leaving v missing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._reserved: dict[str, int] = {}
        super().__init__(*args, **kwargs)

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.startswith(prefix) else ""
        m = _STAGED_NAME.fullmatch(rest)
        if m is None:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")

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
        t = self._table(table_id, InvalidRequest)
        content = validated_proposal(
            self, t, version, staged_uri, inline_content, in_commit_timestamp, latest_published_version
        )
        with self.ratify_lock(t):
            top = max(t.latest, self._reserved.get(t.table_id, t.latest))
            if version <= top:
                raise CommitConflict(f"version {version} is taken", latest_version=t.latest)
            if version != top + 1:
                raise CommitRejected(f"version {version} would leave a gap after {top}")
            self._reserved[t.table_id] = version
            if staged_uri is not None and not self.storage.exists(staged_uri):
                raise InvalidRequest(f"staged file {staged_uri!r} does not exist")
            mark = latest_published_version
            if mark is not None and 0 <= mark <= t.latest:
                self.forget_published(t, mark)
            self.store(t, RatifiedCommit(version, staged_uri, content, in_commit_timestamp))


class RestartDropsIctCatalog(DurableCatalog):
    """Bug: the catalog's durable record of a ratified commit has no column for its in-commit timestamp
    (it was added to the in-memory record later), so after a restart every stored commit is served
    with ``in_commit_timestamp=None``. RFC "Commit Protocol" / "Terminology - Commits": the catalog
    stores ratified commits and serves them, unchanged, until they are published. Before a restart
    everything is exact; staged locations and inline bytes survive the restart too, so a restart check
    comparing only those passes, while a reader planning time travel from the catalog's answer finds
    the unpublished commits undated."""

    def encode_table(self, t: TableState) -> dict[str, Any]:
        doc = super().encode_table(t)
        for c in doc["stored"]:
            c.pop("ict", None)
        return doc

    def decode_table(self, doc: dict[str, Any]) -> TableState:
        for c in doc["stored"]:
            c.setdefault("ict", None)
        return super().decode_table(doc)


class MarkAdvancesToListedCatalog(DurableCatalog):
    """Bug: a publication mark is "healed" forward: after ``mark_published(b)`` the catalog checks
    storage for ``_delta_log/<b+1>.json``, ``<b+2>.json``... and takes the highest contiguous published
    file (up to its latest version) as the real watermark, dropping every stored commit up to it (the
    RFC's example of a catalog unaware that commit 7 was already published inspired it). RFC
    "Publishing Commits" and "Reading Catalog-managed Tables" (the catalog's ratified commit is
    authoritative over a published file of the same version; the catalog keeps ratified commits until
    they are published). When the files above b are the published ratified commits, dropping them is
    harmless; a file at a version above b that is not the ratified commit (a filesystem writer's, a
    leftover) makes the catalog drop the ratified commit, and readers then take the stray file."""

    def mark_published(self, table_id: str, version: int) -> None:
        t = self._table(table_id, InvalidRequest)
        with t.lock:
            if not is_int(version) or version < 0 or version > t.latest:
                raise InvalidRequest(f"cannot mark {version!r} published; latest is {t.latest}")
            top = version
            while top < t.latest and self.storage.exists(f"{t.location}/_delta_log/{top + 1:020d}.json"):
                top += 1
            self.forget_published(t, top)


# ---------------------------------------------------------------- client faults: writer


class IctLostAtCheckpointClient(ResilientClient):
    """Bug: a snapshot that starts from a checkpoint takes its in-commit timestamp from the commits
    replayed after the checkpoint; when the snapshot is the checkpoint's own version nothing is
    replayed and the previous timestamp is unknown, so the next commit is stamped with the clock alone.
    PROTOCOL.md In-Commit Timestamps, made mandatory by the RFC's "Writer Requirements": each commit's
    timestamp is above the previous commit's. With peers whose clocks agree the clock is already
    above; right after a checkpoint of the latest version, a previous commit stamped by a peer whose
    clock runs ahead is undercut. A suite that tests skew without a checkpoint, or checkpoints without
    skew, misses it."""

    def snapshot(self, view: LogView, target: int) -> Snapshot:
        sources = self.commit_sources(view)
        cp = self.start_checkpoint(view, target)
        first = 0 if cp is None else cp + 1
        missing = [v for v in range(first, target + 1) if v not in sources]
        if missing:
            raise ReadError(f"commits {missing} of version {target} are neither in the catalog nor published")
        batches: list[list[Action]] = []
        if cp is not None:
            batches.append(self.checkpoint_actions(view.checkpoints[cp]))
        batches.extend(decode(self.content(sources[v])) for v in self.replay_order(range(first, target + 1)))
        return self.replay(target, batches)


def checkpoint_bytes(snap: Snapshot, metadata: Action) -> tuple[bytes, int]:
    rows: list[dict[str, Any]] = [{"protocol": snap.protocol}, {"metaData": metadata}]
    rows += [{"add": {k: a.get(k) for k in _CHECKPOINT_SCHEMA.field("add").type.names}} for a in snap.files.values()]
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=_CHECKPOINT_SCHEMA), buf)
    return buf.getvalue(), len(rows)


class CheckpointDropsConfigurationClient(ResilientClient):
    """Bug: the checkpoint writer fills the metadata's map columns (``configuration``,
    ``format.options``) with empty maps, a leftover of working around pyarrow's map conversion, so the
    table's state at and after a checkpoint has no ``delta.enableInCommitTimestamps``. RFC "Writer
    Requirements for Catalog-managed tables" (in-commit timestamps supported and active) and
    PROTOCOL.md Checkpoints (a checkpoint holds the table's metadata). Version 0 and every commit are
    right; a suite that judges the protocol and configuration from version 0, or from commits only,
    misses that the table replayed from its checkpoint (as any reader does after metadata cleanup)
    no longer has in-commit timestamps enabled."""

    def checkpoint(self, name: str) -> int | None:
        info = self._info(name)
        if not self.policy_allows(info, "checkpoint"):
            return None
        view = self.view(info)
        version = self.checkpoint_version(view)
        if version is None:
            return None
        snap = self.snapshot(view, version)
        metadata = dict(snap.metadata)
        metadata["configuration"] = {}
        metadata["format"] = {"provider": (snap.metadata.get("format") or {}).get("provider", "parquet"), "options": {}}
        data, size = checkpoint_bytes(snap, metadata)
        log = f"{info.location}/_delta_log"
        try:
            self.storage.put(f"{log}/{version:020d}.checkpoint.parquet", data, if_absent=True)
        except FileExistsError:
            return version
        pointer = {"version": version, "size": size, "numOfAddFiles": len(snap.files)}
        self.storage.put(f"{log}/_last_checkpoint", json.dumps(pointer).encode())
        return version


class IctConfigBoolClient(ResilientClient):
    """Bug: the table's configuration is built as a Python dict with a boolean,
    ``{"delta.enableInCommitTimestamps": True}``, and serialised as JSON ``true`` instead of the string
    ``"true"`` (PROTOCOL.md: ``configuration`` is a map of strings to strings). RFC "Writer
    Requirements for Catalog-managed tables": in-commit timestamps must be enabled, which the table
    property says. The client itself reads the property leniently, so everything it writes and reads
    works; a suite that tests the property with ``str(v).lower() == "true"`` or truthiness passes it,
    while a strict reader sees a malformed (or absent) property."""

    def create_table(self, name: str) -> None:
        staging = self.catalog.create_staging_table()
        ict = self.next_ict(None)
        actions: list[Action] = [
            self.commit_info("CREATE TABLE", ict, first=True),
            {
                "protocol": {
                    "minReaderVersion": 3,
                    "minWriterVersion": 7,
                    "readerFeatures": ["catalogManaged"],
                    "writerFeatures": ["catalogManaged", "inCommitTimestamp"],
                }
            },
            {
                "metaData": {
                    "id": str(uuid.uuid4()),
                    "format": {"provider": "parquet", "options": {}},
                    "schemaString": SCHEMA_STRING,
                    "partitionColumns": [],
                    "configuration": {"delta.enableInCommitTimestamps": True},
                    "createdTime": ict,
                }
            },
        ]
        self.storage.put(f"{staging.location}/_delta_log/{self.delta_name(0)}", encode(actions), if_absent=True)
        self.catalog.register_table(name, staging.table_id)

    def replay(self, version: int, batches: Any, checkpoint: bool = False) -> Snapshot:
        snap = super().replay(version, batches, checkpoint)
        config = snap.metadata.get("configuration")
        if isinstance(config, dict):  # lenient: whatever JSON type, as a string
            snap.metadata = {
                **snap.metadata,
                "configuration": {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()},
            }
        return snap


class CleanupDeletesCheckpointCommitClient(ResilientClient):
    """Bug: metadata cleanup deletes published Delta files up to and including the cut-off
    checkpoint's version (``<=``), since "the checkpoint replaces them". RFC "Metadata Cleanup" step 3
    (delete the log entries *before* the cut-off checkpoint) and step 2 (preserve the checkpoint and
    the commits that time travel needs); in-commit timestamps live in the commits (RFC "Publishing
    Commits", note). Reads of the latest version and by version still work from the checkpoint; the
    commit of the checkpoint's version is gone, so time travel by timestamp to that version (its
    in-commit timestamp) fails, and the version is no longer dated at all. A suite that checks the
    checkpoint and the commits after it are kept misses the one at it."""

    def cleanup_doomed(self, view: LogView, files: list[str], checkpoint: int, cutoff: int) -> list[str]:
        doomed = super().cleanup_doomed(view, files, checkpoint, cutoff)
        own = f"{view.info.location}/_delta_log/{self.delta_name(checkpoint)}"
        return [*doomed, own] if own in files and own not in doomed else doomed


class CachedResolutionClient(ResilientClient):
    """Bug: the client caches name resolution for its lifetime (one ``resolve`` per table name), as
    engines cache a session's catalog lookups. RFC "Writer Requirements" / "Table Discovery": writers
    and readers discover and access the table through the catalog, at the location it resolves. With
    one table per name for the whole test every call is right; when the name is dropped and a new
    table registered under it (by another client), this client keeps writing to, and reading, the
    dropped table's location, and its appends are acknowledged although nobody can see them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._resolved: dict[str, TableInfo] = {}

    def _info(self, name: str) -> TableInfo:
        info = self._resolved.get(name)
        if info is None:
            info = self._resolved[name] = super()._info(name)
        return info


class InlineNoneMatchesClient(ResilientClient):
    """Bug: the client proposes small commits inline (RFC "Commit Protocol", option 2; staged when the
    catalog says ``NotSupported``), but after a conflict or a lost answer it asks "is version v mine?"
    with the check written for staged proposals: the stored commit's ``staged_uri`` equal to its own.
    For an inline proposal both are ``None``, so any inline commit at v, a rival's, is taken for its
    own. RFC "Commit Protocol" / "Terminology - Commits" (the catalog ratifies one proposal per
    version; the others are rejected). Against rivals that stage their commits the check is exact; when
    a rival's inline commit wins the version, the client reports v as its own and its change is lost."""

    inline_max = 64 * 1024

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._no_inline: set[str] = set()

    def proposal_is_ours(self, info: TableInfo, version: int, staged_uri: str | None, content: bytes) -> bool:
        resp = self.catalog.get_commits(info.table_id, version, version)
        if resp.latest_version < version:
            return False
        for c in resp.commits:
            if c.version == version:
                return c.staged_uri == staged_uri or (c.inline_content is not None and c.inline_content == content)
        try:
            return self.storage.get(f"{info.location}/_delta_log/{self.delta_name(version)}") == content
        except FileNotFoundError:
            return False

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
            inline = len(content) <= self.inline_max and info.table_id not in self._no_inline
            uri = None if inline else self.stage(log, version, content, None)
            self.before_propose(log, version, content)
            try:
                if uri is None:
                    self.catalog.commit(info.table_id, version, inline_content=content, in_commit_timestamp=ict)
                else:
                    self.catalog.commit(info.table_id, version, staged_uri=uri, in_commit_timestamp=ict)
            except NotSupported:
                self._no_inline.add(info.table_id)
                continue
            except (CommitConflict, CatalogTimeout):
                if not self.proposal_is_ours(info, version, uri, content):
                    continue
            self.after_ratified(info, version)
            return version
        raise RetriesExhausted(f"gave up committing to {name} after {self.max_attempts} lost races")


class StagedGzipLargeClient(ResilientClient):
    """Bug: staged commits larger than 8 KiB are written gzip-compressed (to save upload time; the
    catalog stores only their location), and the client's own reader and publisher decompress them
    transparently, so what it publishes and reads is right. RFC "Terminology - Commits": a staged
    commit has the same content and format as a published Delta file (newline-delimited JSON). Small
    commits, every append, are plain; a commit of many actions (a delete across many files) is staged
    as gzip, which no other reader of the ratified, unpublished commit can parse. A suite whose
    commits stay small never sees it."""

    gzip_above = 8 * 1024

    def stage(self, log: str, version: int, content: bytes, previous_uri: str | None) -> str:
        data = gzip.compress(content) if len(content) > self.gzip_above else content
        uri = f"{log}/_staged_commits/{self.staged_name(version)}"
        self.storage.put(uri, data, if_absent=True)
        return uri

    def content(self, source: RatifiedCommit | str) -> bytes:
        data = super().content(source)
        return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


class ConflictTidiesStagedClient(ResilientClient):
    """Bug: on a conflict the writer first deletes the staged file of its losing attempt (tidying up,
    as staged files of rejected proposals are garbage), then asks the catalog whether the version is
    its own after all. RFC "Terminology - Commits" (the catalog stores only the location of a staged
    commit; the ratified commit must stay available until published) and "Commit Protocol". A conflict
    after losing a race is tidied correctly; a conflict that answers the second delivery of the
    writer's own proposal (a duplicate from the network, or a re-send after a lost answer) finds the
    version is its own and reports it, having deleted the file the catalog ratified: the commit is
    lost for every reader and for publication."""

    def on_conflict(self, info: TableInfo, version: int, staged_uri: str, content: bytes) -> bool:
        self.storage.delete(staged_uri)
        return self.was_ratified(info, version, staged_uri, content)


# ---------------------------------------------------------------- client faults: reader


class TimeTravelClampClient(ResilientClient):
    """Bug: time travel by timestamp to a moment before the oldest readable commit returns the oldest
    readable version instead of refusing ("the closest we have"). RFC "Publishing Commits" (time
    travel by in-commit timestamps) and PROTOCOL.md: the version at a timestamp is the latest commit at
    or before it; there is none before the table's history. Every timestamp inside the history
    resolves right, the oldest version's own timestamp included; a timestamp before the table was
    created, or before the oldest commit left by metadata cleanup, returns a version committed after
    it."""

    def version_at(self, timeline: list[tuple[int, int]], timestamp_ms: int) -> int:
        eligible = [v for v, ict in timeline if ict <= timestamp_ms]
        if not eligible:
            if not timeline:
                raise ReadError(f"no version at or before {timestamp_ms}")
            return min(v for v, _ in timeline)
        return max(eligible)


class OldVersionFromLaterCheckpointClient(ResilientClient):
    """Bug: when the start of the log is gone (metadata cleanup deleted commit 0) and no checkpoint is
    at or below the asked version, the reader starts from the oldest checkpoint there is, even though
    it is above the asked version, and replays nothing. RFC "Reading Catalog-managed Tables" and
    "Metadata Cleanup": a version whose commits were cleaned up cannot be rebuilt; reads must come from
    the commits and checkpoints that exist. Before any cleanup, and for versions at or after the
    checkpoint, every read is right; after cleanup, a read of an old version (below the checkpoint)
    returns the checkpoint's rows labelled as the old version instead of refusing."""

    def start_checkpoint(self, view: LogView, target: int) -> int | None:
        candidates = [v for v in view.checkpoints if v <= target]
        if candidates:
            return max(candidates)
        if 0 not in self.commit_sources(view) and view.checkpoints:
            return min(view.checkpoints)  # "the history starts at the oldest checkpoint"
        return None


class ListBeforeCatalogClient(ResilientClient):
    """Bug: the reader LISTs ``_delta_log`` first and asks the catalog second (the LIST is slow, so the
    catalog's answer is the fresher one). RFC "Reading Catalog-managed Tables": clients first contact
    the catalog for the ratified commits, then LIST for the published ones the catalog no longer
    stores. Without concurrent publication the two orders agree; when another client publishes and
    marks between the LIST and the catalog call, the catalog no longer stores commits the LIST did not
    see, and the reader cannot build (or refuses) a version that is readable."""

    def view(self, info: TableInfo) -> LogView:
        log = f"{info.location}/_delta_log/"
        files = self.storage.list(log)
        resp = self.catalog.get_commits(info.table_id)
        latest = resp.latest_version
        published: dict[int, str] = {}
        checkpoints: dict[int, str] = {}
        for f in files:
            rel = f.uri[len(log) :]
            m = _DELTA.fullmatch(rel)
            if m and int(m.group(1)) <= latest:
                published[int(m.group(1))] = f.uri
            m = _CHECKPOINT.fullmatch(rel)
            if m and int(m.group(1)) <= latest:
                checkpoints[int(m.group(1))] = f.uri
        commits = {c.version: c for c in resp.commits if c.version <= latest}
        return LogView(info, latest, commits, published, checkpoints, f"{log}_last_checkpoint")


class ListFromCheckpointPrefixClient(ResilientClient):
    """Bug: once a checkpoint exists, the reader lists ``_delta_log`` only from the checkpoint on, and
    emulates the object store's missing "start after" with a prefix: the checkpoint's 20-digit version
    without its last two digits. That lists the checkpoint's block of a hundred versions only. RFC
    "Reading Catalog-managed Tables" (published commits the catalog no longer stores are found by
    LIST). Tables without a checkpoint, or whose published history stays in the checkpoint's hundred,
    read right; once the published versions cross the next multiple of 100 (a checkpoint at 95, versions
    up to 105 published and marked), they are not found and the read fails."""

    def listing(self, log: str) -> list[Any]:
        try:
            cp = int(json.loads(self.storage.get(f"{log}_last_checkpoint"))["version"])
        except (FileNotFoundError, KeyError, ValueError):
            return self.storage.list(log)
        return self.storage.list(f"{log}{cp:020d}"[:-2])

    def view(self, info: TableInfo) -> LogView:
        resp = self.catalog.get_commits(info.table_id)
        latest = resp.latest_version
        log = f"{info.location}/_delta_log/"
        published: dict[int, str] = {}
        checkpoints: dict[int, str] = {}
        for f in self.listing(log):
            rel = f.uri[len(log) :]
            m = _DELTA.fullmatch(rel)
            if m and int(m.group(1)) <= latest:
                published[int(m.group(1))] = f.uri
            m = _CHECKPOINT.fullmatch(rel)
            if m and int(m.group(1)) <= latest:
                checkpoints[int(m.group(1))] = f.uri
        commits = {c.version: c for c in resp.commits if c.version <= latest}
        return LogView(info, latest, commits, published, checkpoints, f"{log}_last_checkpoint")


# ---------------------------------------------------------------- targets


class ListEndExclusiveTarget(DurableTarget):
    name = "cr6-cat-list-end-exclusive"
    catalog_cls: ClassVar[type[CleanCatalog]] = ListEndExclusiveCatalog


class ListEndZeroTarget(DurableTarget):
    name = "cr6-cat-list-end-zero"
    catalog_cls: ClassVar[type[CleanCatalog]] = ListEndZeroCatalog


class MarkBeforeJudgingTarget(DurableTarget):
    name = "cr6-cat-mark-before-judging"
    catalog_cls: ClassVar[type[CleanCatalog]] = MarkBeforeJudgingCatalog


class CapIgnoresPiggybackMarkTarget(DurableTarget):
    name = "cr6-cat-cap-ignores-piggyback-mark"
    catalog_cls: ClassVar[type[CleanCatalog]] = CapIgnoresPiggybackMarkCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(unpublished=CapIgnoresPiggybackMarkCatalog.cap)


class ManagedFlagFromLogTarget(DurableTarget):
    name = "cr6-cat-managed-flag-from-log"
    catalog_cls: ClassVar[type[CleanCatalog]] = ManagedFlagFromLogCatalog


class ResolvePrefixTarget(DurableTarget):
    name = "cr6-cat-resolve-prefix"
    catalog_cls: ClassVar[type[CleanCatalog]] = ResolvePrefixCatalog


class ReservationLeakTarget(DurableTarget):
    name = "cr6-cat-reservation-leak"
    catalog_cls: ClassVar[type[CleanCatalog]] = ReservationLeakCatalog


class RestartDropsIctTarget(DurableTarget):
    name = "cr6-cat-restart-drops-ict"
    catalog_cls: ClassVar[type[CleanCatalog]] = RestartDropsIctCatalog


class MarkAdvancesToListedTarget(DurableTarget):
    name = "cr6-cat-mark-advances-to-listed"
    catalog_cls: ClassVar[type[CleanCatalog]] = MarkAdvancesToListedCatalog


class ConflictTidiesStagedTarget(DurableTarget):
    name = "cr6-wrt-conflict-tidies-staged"
    client_cls: ClassVar[type[CleanClient]] = ConflictTidiesStagedClient


class IctLostAtCheckpointTarget(DurableTarget):
    name = "cr6-wrt-ict-lost-at-checkpoint"
    client_cls: ClassVar[type[CleanClient]] = IctLostAtCheckpointClient


class CheckpointDropsConfigurationTarget(DurableTarget):
    name = "cr6-wrt-checkpoint-drops-configuration"
    client_cls: ClassVar[type[CleanClient]] = CheckpointDropsConfigurationClient


class IctConfigBoolTarget(DurableTarget):
    name = "cr6-wrt-ict-config-bool"
    client_cls: ClassVar[type[CleanClient]] = IctConfigBoolClient


class CleanupDeletesCheckpointCommitTarget(DurableTarget):
    name = "cr6-wrt-cleanup-deletes-checkpoint-commit"
    client_cls: ClassVar[type[CleanClient]] = CleanupDeletesCheckpointCommitClient


class CachedResolutionTarget(DurableTarget):
    name = "cr6-wrt-cached-resolution"
    client_cls: ClassVar[type[CleanClient]] = CachedResolutionClient


class InlineNoneMatchesTarget(DurableTarget):
    name = "cr6-wrt-inline-none-matches"
    client_cls: ClassVar[type[CleanClient]] = InlineNoneMatchesClient


class StagedGzipLargeTarget(DurableTarget):
    name = "cr6-wrt-staged-gzip-large"
    client_cls: ClassVar[type[CleanClient]] = StagedGzipLargeClient


class TimeTravelClampTarget(DurableTarget):
    name = "cr6-rdr-time-travel-clamp"
    client_cls: ClassVar[type[CleanClient]] = TimeTravelClampClient


class OldVersionFromLaterCheckpointTarget(DurableTarget):
    name = "cr6-rdr-old-version-from-later-checkpoint"
    client_cls: ClassVar[type[CleanClient]] = OldVersionFromLaterCheckpointClient


class ListBeforeCatalogTarget(DurableTarget):
    name = "cr6-rdr-list-before-catalog"
    client_cls: ClassVar[type[CleanClient]] = ListBeforeCatalogClient


class ListFromCheckpointPrefixTarget(DurableTarget):
    name = "cr6-rdr-list-from-checkpoint-prefix"
    client_cls: ClassVar[type[CleanClient]] = ListFromCheckpointPrefixClient


# ---------------------------------------------------------------- the list


def _variant(
    target: type[DurableTarget],
    profile: str,
    rules: tuple[str, ...],
    level: str,
    dimensions: tuple[str, ...],
) -> Variant:
    side: Literal["catalog", "client"] = "catalog" if target.catalog_cls is not DurableCatalog else "client"
    faulty: type[object] = target.catalog_cls if side == "catalog" else target.client_cls
    return Variant(
        name=target.name,
        target=f"{__name__}:{target.__name__}",
        side=side,
        profile=profile,
        rules=rules,
        level=level,
        dimensions=dimensions,
        doc=faulty.__doc__ or "",
    )


_CAT = "delta-cm-catalog"
_WRT = "delta-cm-writer"
_RDR = "delta-cm-reader"

VARIANTS: list[Variant] = [
    _variant(
        ListEndExclusiveTarget,
        _CAT,
        ("CAT-LIST-RANGE", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("listing-bounds", "lost-answers"),
    ),
    _variant(ListEndZeroTarget, _CAT, ("CAT-LIST-RANGE",), "MUST", ("listing-bounds",)),
    _variant(
        MarkBeforeJudgingTarget,
        _CAT,
        ("CAT-RATIFY-SEQUENTIAL", "CAT-PUBLISH-REPORT-POSSIBLE"),
        "MUST",
        ("publication-marks", "refused-proposals"),
    ),
    _variant(CapIgnoresPiggybackMarkTarget, _CAT, ("CAT-LIMIT-DECLARED",), "MUST", ("limits", "publication-marks")),
    _variant(ManagedFlagFromLogTarget, _CAT, ("CAT-RESOLVE-MANAGED",), "SHOULD", ("discovery", "publication-marks")),
    _variant(ResolvePrefixTarget, _CAT, ("CAT-RESOLVE-LOCATION",), "MUST", ("discovery", "several-tables")),
    _variant(
        ReservationLeakTarget,
        _CAT,
        ("CAT-RATIFY-SEQUENTIAL", "CAT-LIST-CONTIGUOUS"),
        "MUST",
        ("refused-proposals", "ratification"),
    ),
    _variant(RestartDropsIctTarget, _CAT, ("CAT-RATIFY-DURABLE",), "MUST", ("catalog-restart", "timestamps")),
    _variant(
        MarkAdvancesToListedTarget,
        _CAT,
        ("CAT-FORGET-PUBLISHED-ONLY", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("publication-marks", "stray-files"),
    ),
    _variant(
        IctLostAtCheckpointTarget,
        _WRT,
        ("WRT-ICT-MONOTONIC", "WRT-ICT-SKEW"),
        "MUST",
        ("clock-skew", "checkpoints"),
    ),
    _variant(CheckpointDropsConfigurationTarget, _WRT, ("WRT-ICT-ENABLED",), "MUST", ("checkpoints", "commit-content")),
    _variant(IctConfigBoolTarget, _WRT, ("WRT-ICT-ENABLED",), "MUST", ("commit-content", "encoding")),
    _variant(
        CleanupDeletesCheckpointCommitTarget,
        _WRT,
        ("WRT-CLEANUP-KEEPS",),
        "MUST",
        ("metadata-cleanup", "time-travel"),
    ),
    _variant(CachedResolutionTarget, _WRT, ("WRT-DISCOVERY",), "MUST", ("discovery", "several-clients")),
    _variant(
        InlineNoneMatchesTarget,
        _WRT,
        ("WRT-LOST-ANSWER-ONCE",),
        "MUST",
        ("lost-answers", "concurrent-proposals", "inline-commits"),
    ),
    _variant(
        ConflictTidiesStagedTarget,
        _WRT,
        ("WRT-LOST-ANSWER-ONCE",),
        "MUST",
        ("duplicate-deliveries", "lost-answers"),
    ),
    _variant(StagedGzipLargeTarget, _WRT, ("WRT-STAGED-FORMAT",), "MUST", ("large-commits", "commit-content")),
    _variant(TimeTravelClampTarget, _RDR, ("RDR-TIME-TRAVEL-ICT",), "MUST", ("time-travel", "metadata-cleanup")),
    _variant(
        OldVersionFromLaterCheckpointTarget,
        _RDR,
        ("RDR-LIST-FALLBACK",),
        "MUST",
        ("old-versions", "metadata-cleanup", "checkpoints"),
    ),
    _variant(
        ListBeforeCatalogTarget,
        _RDR,
        ("RDR-LIST-FALLBACK", "RDR-UNPUBLISHED"),
        "MUST",
        ("several-clients", "publication"),
    ),
    _variant(
        ListFromCheckpointPrefixTarget,
        _RDR,
        ("RDR-LIST-FALLBACK",),
        "MUST",
        ("long-histories", "checkpoints"),
    ),
]
