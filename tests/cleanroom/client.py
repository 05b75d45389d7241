"""A clean-room Delta client for catalog-managed tables: writer, reader, publisher, maintenance.

Written from docs/certify.md, the contract and the catalogManaged RFC (plus Delta's PROTOCOL.md for
the file formats) only. All I/O goes through the ``Storage`` lakecert hands over; data files and
checkpoints are Parquet written with pyarrow. Decisions the RFC constrains are small methods, so
that each faulty variant in ``variants.py`` replaces one of them.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from conformance.contract.delta import (
    Catalog,
    CatalogTimeout,
    CommitConflict,
    RatifiedCommit,
    ReadResult,
    Storage,
    TableInfo,
)

Action = dict[str, Any]

_DELTA = re.compile(r"([0-9]{20})\.json")
_CHECKPOINT = re.compile(r"([0-9]{20})\.checkpoint\.parquet")
_COMPACTION = re.compile(r"([0-9]{20})\.([0-9]{20})\.compacted\.json")
_CHECKSUM = re.compile(r"([0-9]{20})\.crc")
_STAGED = re.compile(r"_staged_commits/([0-9]{20})\.[^/]+\.json")

SCHEMA_STRING = json.dumps(
    {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": True, "metadata": {}},
            {"name": "value", "type": "string", "nullable": True, "metadata": {}},
        ],
    },
    separators=(",", ":"),
)
_ROWS = pa.schema([("id", pa.int64()), ("value", pa.string())])
_MAP = pa.map_(pa.string(), pa.string())
_CHECKPOINT_SCHEMA = pa.schema(
    [
        (
            "protocol",
            pa.struct(
                [
                    ("minReaderVersion", pa.int32()),
                    ("minWriterVersion", pa.int32()),
                    ("readerFeatures", pa.list_(pa.string())),
                    ("writerFeatures", pa.list_(pa.string())),
                ]
            ),
        ),
        (
            "metaData",
            pa.struct(
                [
                    ("id", pa.string()),
                    ("format", pa.struct([("provider", pa.string()), ("options", _MAP)])),
                    ("schemaString", pa.string()),
                    ("partitionColumns", pa.list_(pa.string())),
                    ("configuration", _MAP),
                    ("createdTime", pa.int64()),
                ]
            ),
        ),
        (
            "add",
            pa.struct(
                [
                    ("path", pa.string()),
                    ("partitionValues", _MAP),
                    ("size", pa.int64()),
                    ("modificationTime", pa.int64()),
                    ("dataChange", pa.bool_()),
                    ("stats", pa.string()),
                ]
            ),
        ),
    ]
)


class ReadError(LookupError):
    """The asked version or timestamp cannot be read (above the latest, before the history, cleaned up)."""


class CatalogManagedTableError(PermissionError):
    """A catalog-managed table was addressed by path (RFC: filesystem-based access is not supported)."""


class RetriesExhausted(RuntimeError):
    """Too many lost races in a row."""


def encode(actions: Iterable[Action]) -> bytes:
    """Newline-delimited JSON, one action per line (the published Delta file format)."""
    return b"".join(json.dumps(a, separators=(",", ":")).encode() + b"\n" for a in actions)


def decode(content: bytes) -> list[Action]:
    return [json.loads(line) for line in content.decode().split("\n") if line.strip()]


def _as_dict(value: Any) -> dict[str, str]:
    """Parquet maps come back from pyarrow as lists of pairs."""
    if isinstance(value, dict):
        return dict(value)
    return dict(value or [])


@dataclass
class LogView:
    """What a reader knows of a table's log, bounded by the catalog's latest ratified version."""

    info: TableInfo
    latest: int
    catalog_commits: dict[int, RatifiedCommit]
    published: dict[int, str]  # version -> _delta_log/<v>.json URI, at or below latest
    checkpoints: dict[int, str]  # version -> checkpoint URI, at or below latest
    last_checkpoint_uri: str


@dataclass
class Snapshot:
    version: int
    protocol: Action
    metadata: Action
    files: dict[str, Action] = field(default_factory=dict)  # path -> add action
    in_commit_timestamp: int | None = None


class CleanClient:
    """The ``DeltaClient`` protocol (and the optional path-access one) for one catalog and one storage."""

    engine_info = "cleanroom-client/0.1"
    max_attempts = 200

    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        self.catalog = catalog
        self.storage = storage
        self._lock = threading.Lock()
        self.session_id = str(uuid.uuid4())

    # ------------------------------------------------------------ decisions (variants override these)

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def next_ict(self, previous: int | None) -> int:
        """PROTOCOL.md In-Commit Timestamps: strictly above the previous commit's, else the clock."""
        now = self.now_ms()
        return now if previous is None else max(now, previous + 1)

    def txn_id(self) -> str:
        """RFC "Commit Provenance Information": a unique identifier per transaction."""
        return str(uuid.uuid4())

    def commit_info(self, operation: str, ict: int, *, first: bool = False) -> Action:
        return {
            "commitInfo": {
                "inCommitTimestamp": ict,
                "timestamp": ict,
                "operation": operation,
                "txnId": self.txn_id(),
                "engineInfo": self.engine_info,
            }
        }

    def order_actions(self, commit_info: Action, actions: list[Action]) -> list[Action]:
        """PROTOCOL.md In-Commit Timestamps: commitInfo is the first action of a commit."""
        return [commit_info, *actions]

    def staged_name(self, version: int) -> str:
        return f"{version:020d}.{uuid.uuid4()}.json"

    def delta_name(self, version: int) -> str:
        return f"{version:020d}.json"

    def stage(self, log: str, version: int, content: bytes, previous_uri: str | None) -> str:
        """Write the proposal for ``version`` to a fresh staged file (RFC: staged files are never reused)."""
        uri = f"{log}/_staged_commits/{self.staged_name(version)}"
        self.storage.put(uri, content, if_absent=True)
        return uri

    def before_propose(self, log: str, version: int, content: bytes) -> None:
        """Hook between staging and proposing; the correct client does nothing here."""

    def publish_order(self, commits: list[RatifiedCommit]) -> list[RatifiedCommit]:
        """RFC "Publishing Commits": v-1 before v."""
        return sorted(commits, key=lambda c: c.version)

    def checkpoint_version(self, view: LogView) -> int | None:
        """Checkpoints only of published versions (RFC "Maintenance Operations")."""
        return max(view.published) if view.published else None

    def compaction_allowed(self, view: LogView, start: int, end: int) -> bool:
        return all(v in view.published for v in range(start, end + 1))

    def policy_allows(self, info: TableInfo, op: str) -> bool:
        """RFC "Maintenance Operations": consult the catalog before every maintenance job."""
        return self.catalog.maintenance_policy(info.table_id).allows(op)  # type: ignore[arg-type]

    def cleanup_cutoff_checkpoint(self, view: LogView, cutoff: int) -> int | None:
        """Metadata Cleanup step 2: the newest checkpoint not newer than the cut-off commit."""
        below = [v for v in view.checkpoints if v <= cutoff]
        return max(below) if below else None

    def cleanup_doomed(self, view: LogView, files: list[str], checkpoint: int, cutoff: int) -> list[str]:
        """Metadata Cleanup step 3: what goes, given the cut-off checkpoint's version."""
        log = f"{view.info.location}/_delta_log/"
        doomed = []
        for uri in files:
            rel = uri[len(log) :]
            for pattern in (_DELTA, _CHECKPOINT, _CHECKSUM):
                m = pattern.fullmatch(rel)
                if m and int(m.group(1)) < checkpoint:
                    doomed.append(uri)
            m = _COMPACTION.fullmatch(rel)
            if m and int(m.group(1)) <= checkpoint:
                doomed.append(uri)
            m = _STAGED.fullmatch(rel)
            if m and int(m.group(1)) <= checkpoint:
                doomed.append(uri)
        return doomed

    def commit_sources(self, view: LogView) -> dict[int, RatifiedCommit | str]:
        """RFC "Reading Catalog-managed Tables": the catalog's commit wins over a published file."""
        sources: dict[int, RatifiedCommit | str] = dict(view.published)
        sources.update(view.catalog_commits)
        return sources

    def readable_bound(self, view: LogView, version: int | None) -> int:
        """The version a read resolves: the latest, or the asked one if it exists."""
        if version is None:
            return view.latest
        if version < 0 or version > view.latest:
            raise ReadError(f"version {version} does not exist; latest is {view.latest}")
        return version

    def replay_order(self, versions: range) -> list[int]:
        return list(versions)

    def start_checkpoint(self, view: LogView, target: int) -> int | None:
        candidates = [v for v in view.checkpoints if v <= target]
        return max(candidates) if candidates else None

    def ict_of(self, actions: list[Action]) -> int | None:
        for a in actions:
            if "commitInfo" in a:
                value = a["commitInfo"].get("inCommitTimestamp")
                return int(value) if value is not None else None
        return None

    def version_at(self, timeline: list[tuple[int, int]], timestamp_ms: int) -> int:
        """Time travel: the latest version whose in-commit timestamp is at or before ``timestamp_ms``."""
        eligible = [v for v, ict in timeline if ict <= timestamp_ms]
        if not eligible:
            raise ReadError(f"no version at or before {timestamp_ms}")
        return max(eligible)

    def catalog_managed(self, protocol: Action) -> bool:
        return "catalogManaged" in (protocol.get("readerFeatures") or []) + (protocol.get("writerFeatures") or [])

    # ------------------------------------------------------------ log access

    def _info(self, name: str) -> TableInfo:
        return self.catalog.resolve(name)

    def view(self, info: TableInfo) -> LogView:
        """Ask the catalog first (latest version, unpublished commits), then LIST the log."""
        resp = self.catalog.get_commits(info.table_id)
        latest = resp.latest_version
        log = f"{info.location}/_delta_log/"
        published: dict[int, str] = {}
        checkpoints: dict[int, str] = {}
        for f in self.storage.list(log):
            rel = f.uri[len(log) :]
            m = _DELTA.fullmatch(rel)
            if m and int(m.group(1)) <= latest:  # RFC: ignore anything above the latest ratified version
                published[int(m.group(1))] = f.uri
            m = _CHECKPOINT.fullmatch(rel)
            if m and int(m.group(1)) <= latest:
                checkpoints[int(m.group(1))] = f.uri
        commits = {c.version: c for c in resp.commits if c.version <= latest}
        return LogView(info, latest, commits, published, checkpoints, f"{log}_last_checkpoint")

    def content(self, source: RatifiedCommit | str) -> bytes:
        if isinstance(source, str):
            return self.storage.get(source)
        if source.inline_content is not None:
            return source.inline_content
        assert source.staged_uri is not None
        return self.storage.get(source.staged_uri)

    def checkpoint_actions(self, uri: str) -> list[Action]:
        table = pq.read_table(io.BytesIO(self.storage.get(uri)))
        actions: list[Action] = []
        for row in table.to_pylist():
            for key in ("protocol", "metaData", "add", "remove"):
                if row.get(key) is not None:
                    actions.append({key: row[key]})
        return actions

    def replay(self, version: int, batches: Iterable[list[Action]], checkpoint: bool = False) -> Snapshot:
        snap = Snapshot(version, {}, {})
        for actions in batches:
            for a in actions:
                if "protocol" in a:
                    snap.protocol = a["protocol"]
                elif "metaData" in a:
                    snap.metadata = a["metaData"]
                elif "add" in a:
                    snap.files[a["add"]["path"]] = a["add"]
                elif "remove" in a:
                    snap.files.pop(a["remove"]["path"], None)
                elif "commitInfo" in a:
                    ict = a["commitInfo"].get("inCommitTimestamp")
                    snap.in_commit_timestamp = int(ict) if ict is not None else None
        return snap

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
        snap = self.replay(target, batches)
        if cp is not None and target == cp and target in sources:
            snap.in_commit_timestamp = self.ict_of(decode(self.content(sources[target])))
        return snap

    def timeline(self, view: LogView) -> list[tuple[int, int]]:
        """(version, in-commit timestamp) of every commit still readable."""
        out = []
        for v, source in sorted(self.commit_sources(view).items()):
            ict = self.ict_of(decode(self.content(source)))
            if ict is not None:
                out.append((v, ict))
        return out

    def rows(self, location: str, snap: Snapshot) -> list[dict[str, object]]:
        rows: list[dict[str, object]] = []
        for path in snap.files:
            uri = path if "://" in path else f"{location}/{path}"
            rows.extend(pq.read_table(io.BytesIO(self.storage.get(uri))).to_pylist())
        return sorted(rows, key=lambda r: r["id"])  # type: ignore[arg-type,return-value]

    # ------------------------------------------------------------ writing

    def write_data(self, location: str, rows: Sequence[dict[str, object]]) -> Action:
        buf = io.BytesIO()
        table = pa.Table.from_pylist([{"id": r["id"], "value": r["value"]} for r in rows], schema=_ROWS)
        pq.write_table(table, buf)
        data = buf.getvalue()
        path = f"part-{uuid.uuid4()}.parquet"
        self.storage.put(f"{location}/{path}", data, if_absent=True)
        ids = [int(r["id"]) for r in rows]  # type: ignore[call-overload]
        stats = {"numRecords": len(rows), "minValues": {"id": min(ids)}, "maxValues": {"id": max(ids)}}
        return {
            "add": {
                "path": path,
                "partitionValues": {},
                "size": len(data),
                "modificationTime": self.now_ms(),
                "dataChange": True,
                "stats": json.dumps(stats, separators=(",", ":")),
            }
        }

    def ratified_as(self, table_id: str, version: int, uri: str | None, log: str, content: bytes) -> bool:
        """Whether ``version`` is this proposal (``uri``, ``content``): held by the catalog as ``uri``,
        or, once ratified, published and forgotten by the catalog, published with this content (asked
        again if the catalog's answer is lost too)."""
        for _ in range(self.max_attempts):
            try:
                resp = self.catalog.get_commits(table_id, version, version)
            except CatalogTimeout:
                continue
            if any(c.version == version for c in resp.commits):
                return any(c.version == version and c.staged_uri == uri for c in resp.commits)
            if resp.latest_version < version:
                return False
            try:
                return self.storage.get(f"{log}/{version:020d}.json") == content
            except FileNotFoundError:
                return False
        raise RetriesExhausted(f"no answer from the catalog about v{version}")

    def transact(self, name: str, operation: str, build: Any) -> int:
        """Propose the next version through the catalog; after a lost race, rebuild and retry."""
        info = self._info(name)
        log = f"{info.location}/_delta_log"
        previous_uri: str | None = None
        for _ in range(self.max_attempts):
            view = self.view(info)
            snap = self.snapshot(view, view.latest)
            version = view.latest + 1
            ict = self.next_ict(snap.in_commit_timestamp)
            actions: list[Action] = build(info, snap, ict)
            content = encode(self.order_actions(self.commit_info(operation, ict), actions))
            previous_uri = self.stage(log, version, content, previous_uri)
            self.before_propose(log, version, content)
            try:
                self.catalog.commit(info.table_id, version, staged_uri=previous_uri, in_commit_timestamp=ict)
            except (CommitConflict, CatalogTimeout):
                # A conflict may answer a second delivery of this very proposal, and a lost answer says
                # nothing: the catalog, the source of truth, says whether the version is ours.
                if self.ratified_as(info.table_id, version, previous_uri, log, content):
                    return version
                continue
            return version
        raise RetriesExhausted(f"gave up committing to {name} after {self.max_attempts} lost races")

    # ------------------------------------------------------------ DeltaClient protocol

    def create_table(self, name: str) -> None:
        staging = self.catalog.create_staging_table()
        ict = self.next_ict(None)
        actions = [
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
                    "configuration": {"delta.enableInCommitTimestamps": "true"},
                    "createdTime": ict,
                }
            },
        ]
        self.storage.put(f"{staging.location}/_delta_log/{self.delta_name(0)}", encode(actions), if_absent=True)
        self.catalog.register_table(name, staging.table_id)

    def append(self, name: str, rows: Sequence[dict[str, object]]) -> int:
        info = self._info(name)
        add = self.write_data(info.location, rows) if rows else None  # data files may be reused across retries
        return self.transact(name, "WRITE", lambda _i, _s, _t: [add] if add else [])

    def delete(self, name: str, ids: Sequence[int]) -> int:
        doomed = set(ids)

        def build(info: TableInfo, snap: Snapshot, ict: int) -> list[Action]:
            actions: list[Action] = []
            for path, add in sorted(snap.files.items()):
                uri = path if "://" in path else f"{info.location}/{path}"
                rows = pq.read_table(io.BytesIO(self.storage.get(uri))).to_pylist()
                kept = [r for r in rows if r["id"] not in doomed]
                if len(kept) == len(rows):
                    continue
                actions.append(
                    {
                        "remove": {
                            "path": path,
                            "deletionTimestamp": ict,
                            "dataChange": True,
                            "extendedFileMetadata": True,
                            "partitionValues": {},
                            "size": add.get("size", 0),
                        }
                    }
                )
                if kept:
                    actions.append(self.write_data(info.location, kept))
            return actions

        return self.transact(name, "DELETE", build)

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        done = -1
        for c in self.publish_order(list(view.catalog_commits.values())):
            target = f"{info.location}/_delta_log/{self.delta_name(c.version)}"
            if c.version not in view.published:
                with contextlib.suppress(FileExistsError):  # published by someone else: the same ratified bytes
                    self.storage.put(target, self.content(c), if_absent=True)
            done = max(done, c.version)
        for _ in range(self.max_attempts if done >= 0 else 0):
            try:  # a mark never goes back: sending it again after a lost answer is harmless
                self.catalog.mark_published(info.table_id, done)
                return
            except CatalogTimeout:
                continue
        if done >= 0:
            raise RetriesExhausted(f"no answer from the catalog to the publication mark of v{done}")

    def checkpoint(self, name: str) -> int | None:
        info = self._info(name)
        if not self.policy_allows(info, "checkpoint"):
            return None
        view = self.view(info)
        version = self.checkpoint_version(view)
        if version is None:
            return None
        snap = self.snapshot(view, version)
        rows: list[dict[str, Any]] = [{"protocol": snap.protocol}, {"metaData": snap.metadata}]
        rows += [
            {"add": {k: a.get(k) for k in _CHECKPOINT_SCHEMA.field("add").type.names}} for a in snap.files.values()
        ]
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows, schema=_CHECKPOINT_SCHEMA), buf)
        log = f"{info.location}/_delta_log"
        try:
            self.storage.put(f"{log}/{version:020d}.checkpoint.parquet", buf.getvalue(), if_absent=True)
        except FileExistsError:
            return version
        pointer = {"version": version, "size": len(rows), "numOfAddFiles": len(snap.files)}
        self.storage.put(f"{log}/_last_checkpoint", json.dumps(pointer).encode())
        return version

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
                    removes[a["remove"]["path"]] = a
                    adds.pop(a["remove"]["path"], None)
                elif "commitInfo" not in a:
                    other.append(a)
        body = encode([*other, *adds.values(), *removes.values()])
        uri = f"{info.location}/_delta_log/{start_version:020d}.{end_version:020d}.compacted.json"
        with contextlib.suppress(FileExistsError):
            self.storage.put(uri, body, if_absent=True)
        return True

    def cleanup(self, name: str, cutoff_version: int) -> None:
        info = self._info(name)
        if not self.policy_allows(info, "metadata_cleanup"):
            return
        view = self.view(info)
        checkpoint = self.cleanup_cutoff_checkpoint(view, cutoff_version)
        if checkpoint is None:
            return  # step 2: nothing to clean up without a cut-off checkpoint
        files = [f.uri for f in self.storage.list(f"{info.location}/_delta_log/")]
        for uri in self.cleanup_doomed(view, files, checkpoint, cutoff_version):
            self.storage.delete(uri)

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        info = self._info(name)
        view = self.view(info)
        if timestamp_ms is not None:
            version = self.version_at(self.timeline(view), timestamp_ms)
        target = self.readable_bound(view, version)
        snap = self.snapshot(view, target)
        return ReadResult(target, self.rows(info.location, snap))

    # ------------------------------------------------------------ path access (refused)

    def _path_protocol(self, location: str) -> Action:
        log = f"{location.rstrip('/')}/_delta_log/"
        versions = sorted(int(m.group(1)) for f in self.storage.list(log) if (m := _DELTA.fullmatch(f.uri[len(log) :])))
        protocol: Action = {}
        for v in versions:
            for a in decode(self.storage.get(f"{log}{v:020d}.json")):
                if "protocol" in a:
                    protocol = a["protocol"]
        return protocol

    def read_path(self, location: str) -> list[dict[str, object]]:
        if self.catalog_managed(self._path_protocol(location)):
            raise CatalogManagedTableError(f"{location} is catalog-managed; read it through its catalog")
        raise NotImplementedError("this client reads catalog-managed tables only")

    def append_path(self, location: str, rows: Sequence[dict[str, object]]) -> None:
        if self.catalog_managed(self._path_protocol(location)):
            raise CatalogManagedTableError(f"{location} is catalog-managed; write it through its catalog")
        raise NotImplementedError("this client writes catalog-managed tables only")
