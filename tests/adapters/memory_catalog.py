"""An independent, thread-safe, in-memory managing catalog for catalog-managed Delta tables.

A lakecert *catalog* target, written from docs/certify.md and the catalogManaged RFC only.
It deliberately imports the contract through the pre-0.2 paths (``conformance.targets.*``), which
stay as re-export shims for one release: this adapter is the proof that old adapters still load.
"""

from __future__ import annotations

import re
import threading
import uuid
from dataclasses import dataclass, field

from conformance.targets.contract import (
    Catalog,
    CommitConflict,
    CommitRejected,
    DeltaClient,
    GetCommitsResponse,
    InvalidRequest,
    MaintenancePolicy,
    RatifiedCommit,
    StagingTable,
    Storage,
    TableInfo,
    TableNotFound,
)
from conformance.targets.target import TargetEnv

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,254}")
# The UUID in its 8-4-4-4-12 form: ``uuid.UUID`` alone also takes the dashes anywhere (it strips them).
_HEX = "[0-9A-Fa-f]"
_STAGED = re.compile(rf"([0-9]{{20}})\.({_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}})\.json")


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass
class _Table:
    table_id: str
    location: str
    name: str | None = None  # None while only staged (RFC creation phase 1)
    latest: int = 0  # latest ratified version
    published: int = 0  # every version <= this is in _delta_log/<v>.json
    commits: dict[int, RatifiedCommit] = field(default_factory=dict)  # unpublished, ratified
    lock: threading.Lock = field(default_factory=threading.Lock)


class MemoryCatalog:
    """Implements the ``Catalog`` protocol; all state lives in this process."""

    def __init__(self, warehouse_uri: str, storage: Storage, max_unpublished: int) -> None:
        self._warehouse = warehouse_uri.rstrip("/")
        self._storage = storage
        self._max_unpublished = max_unpublished
        self._lock = threading.Lock()  # guards the two registries below
        self._by_id: dict[str, _Table] = {}
        self._by_name: dict[str, str] = {}

    # -- helpers
    def _log(self, t: _Table) -> str:
        return f"{t.location}/_delta_log"

    def _registered(self, table_id: object, exc: type[Exception]) -> _Table:
        with self._lock:
            t = self._by_id.get(table_id) if isinstance(table_id, str) else None
        if t is None or t.name is None:
            raise exc(f"unknown table id {table_id!r}")
        return t

    def _advance_published(self, t: _Table, version: int) -> None:
        """Move the published watermark to ``version`` (caller holds ``t.lock``)."""
        if not _is_int(version) or version < 0 or version > t.latest:
            raise InvalidRequest(f"cannot mark version {version!r} published (latest {t.latest})")
        # Trust the caller's word (lakecert marks versions without writing <v>.json).
        for v in range(t.published + 1, version + 1):
            t.commits.pop(v, None)
        t.published = max(t.published, version)

    # -- Catalog protocol
    def create_staging_table(self) -> StagingTable:
        table_id = str(uuid.uuid4())
        t = _Table(table_id, f"{self._warehouse}/tables/{table_id}")
        with self._lock:
            self._by_id[table_id] = t
        return StagingTable(table_id, t.location)

    def register_table(self, name: str, table_id: str) -> TableInfo:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise InvalidRequest(f"bad table name {name!r}")
        with self._lock:
            t = self._by_id.get(table_id) if isinstance(table_id, str) else None
            if t is None or t.name is not None:
                raise InvalidRequest(f"unknown or already registered table id {table_id!r}")
            if name in self._by_name:
                raise InvalidRequest(f"name {name!r} is taken")
            if not self._storage.exists(f"{self._log(t)}/{0:020d}.json"):
                raise InvalidRequest("version 0 has not been written")
            t.name = name  # version 0 is published: latest = published = 0
            self._by_name[name] = table_id
        return TableInfo(table_id, name, t.location, True)

    def resolve(self, name: str) -> TableInfo:
        with self._lock:
            table_id = self._by_name.get(name) if isinstance(name, str) else None
            if table_id is None:
                raise TableNotFound(f"no table named {name!r}")
            t = self._by_id[table_id]
        return TableInfo(t.table_id, name, t.location, True)

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
        t = self._registered(table_id, InvalidRequest)
        # Validate the proposal's shape before looking at table state.
        if not _is_int(version) or version < 0:
            raise InvalidRequest(f"bad version {version!r}")
        if (staged_uri is None) == (inline_content is None):
            raise InvalidRequest("exactly one of staged_uri / inline_content is required")
        if staged_uri is not None:
            prefix = f"{self._log(t)}/_staged_commits/"
            m = (
                _STAGED.fullmatch(staged_uri[len(prefix) :])
                if isinstance(staged_uri, str) and staged_uri.startswith(prefix)
                else None
            )
            if m is None or int(m.group(1)) != version:
                raise InvalidRequest(f"bad staged commit path {staged_uri!r} for version {version}")
            try:
                uuid.UUID(m.group(2))
            except ValueError as e:
                raise InvalidRequest(f"bad uuid in {staged_uri!r}") from e
        elif not isinstance(inline_content, (bytes, bytearray)) or not inline_content:
            raise InvalidRequest("inline_content must be non-empty bytes")
        if in_commit_timestamp is not None and not _is_int(in_commit_timestamp):
            raise InvalidRequest(f"bad in_commit_timestamp {in_commit_timestamp!r}")
        if latest_published_version is not None and not _is_int(latest_published_version):
            raise InvalidRequest(f"bad latest_published_version {latest_published_version!r}")
        with t.lock:  # ratification is atomic per table
            if version <= t.latest:
                raise CommitConflict(f"version {version} already ratified", latest_version=t.latest)
            if version != t.latest + 1:
                raise CommitRejected(f"gap: latest is {t.latest}, proposed {version}")
            if latest_published_version is not None and latest_published_version > t.published:
                self._advance_published(t, latest_published_version)
            if t.latest - t.published >= self._max_unpublished:
                raise CommitRejected(f"{t.latest - t.published} commits unpublished; publish first")
            content = bytes(inline_content) if inline_content is not None else None
            t.commits[version] = RatifiedCommit(version, staged_uri, content, in_commit_timestamp)
            t.latest = version

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        t = self._registered(table_id, TableNotFound)
        for v in (start_version, end_version):
            if v is not None and (not _is_int(v) or v < 0):
                raise InvalidRequest(f"bad version bound {v!r}")
        if start_version is not None and end_version is not None and start_version > end_version:
            raise InvalidRequest("start_version > end_version")
        lo = 0 if start_version is None else start_version
        with t.lock:
            hi = t.latest if end_version is None else min(end_version, t.latest)
            commits = [t.commits[v] for v in sorted(t.commits) if lo <= v <= hi]
            return GetCommitsResponse(commits, t.latest)

    def mark_published(self, table_id: str, version: int) -> None:
        t = self._registered(table_id, InvalidRequest)
        with t.lock:
            if _is_int(version) and 0 <= version <= t.published:
                return  # already known; idempotent
            self._advance_published(t, version)

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        self._registered(table_id, TableNotFound)
        return MaintenancePolicy()  # clients may run every maintenance operation


class MemoryCatalogTarget:
    name = "memory-catalog"
    kind = "third-party"
    sides = frozenset({"catalog"})

    def __init__(self, max_unpublished: int = 1000) -> None:
        if not _is_int(max_unpublished) or max_unpublished < 1:
            raise ValueError(f"max_unpublished must be a positive int, got {max_unpublished!r}")
        self.max_unpublished = max_unpublished

    def version(self) -> str:
        return "memory-catalog 0.1.0"

    def make_catalog(self, env: TargetEnv) -> Catalog:
        return MemoryCatalog(env.warehouse_uri, env.storage, self.max_unpublished)

    def make_client(self, catalog: Catalog, env: TargetEnv) -> DeltaClient:
        raise NotImplementedError("memory-catalog ships a catalog only")

    def close(self) -> None:
        pass
