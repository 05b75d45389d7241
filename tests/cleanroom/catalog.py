"""A clean-room managing catalog for catalog-managed Delta tables, kept in memory.

Written from docs/certify.md, the contract (conformance/targets/contract.py) and the catalogManaged
RFC only. The decisions that the RFC leaves to a catalog are small methods, so that each faulty
variant in ``variants.py`` replaces one of them.
"""

from __future__ import annotations

import re
import threading
import uuid
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from conformance.contract.delta import (
    CommitConflict,
    CommitRejected,
    GetCommitsResponse,
    InvalidRequest,
    MaintenancePolicy,
    RatifiedCommit,
    StagingTable,
    Storage,
    TableInfo,
    TableNotFound,
)

_TABLE_NAME = re.compile(r"[A-Za-z0-9_]{1,128}")
# RFC "Delta Log Entries": <version zero-padded to 20 digits>.<uuid>.json
_STAGED_NAME = re.compile(
    r"([0-9]{20})\.([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.json"
)


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class TableState:
    table_id: str
    location: str
    name: str | None = None  # None until registered (creation phase 3)
    latest: int = 0  # latest ratified version
    published: int = 0  # every version up to here is known to be in _delta_log/<v>.json
    stored: dict[int, RatifiedCommit] = field(default_factory=dict)  # ratified, not yet forgotten
    lock: threading.Lock = field(default_factory=threading.Lock)


class CleanCatalog:
    """The ``Catalog`` protocol over process memory; one lock per table makes ratification atomic."""

    def __init__(self, warehouse_uri: str, storage: Storage) -> None:
        self.warehouse = warehouse_uri.rstrip("/")
        self.storage = storage
        self._lock = threading.Lock()  # guards the two indexes
        self._by_id: dict[str, TableState] = {}
        self._by_name: dict[str, str] = {}

    # ------------------------------------------------------------ decisions (variants override these)

    def new_location(self, table_id: str) -> str:
        """RFC "Creating ... Tables", phase 1: a location no other table gets."""
        return f"{self.warehouse}/cr-tables/{table_id}"

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        """The staged file must be this table's, in _staged_commits/, named for ``version``, and exist."""
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.startswith(prefix) else ""
        m = _STAGED_NAME.fullmatch(rest)
        if m is None:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) != version:  # RFC: the version in the name is authoritative
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")

    def ratify_lock(self, t: TableState) -> AbstractContextManager[object]:
        """What makes check-and-store atomic against concurrent proposals."""
        return t.lock

    def check_sequence(self, t: TableState, version: int) -> None:
        """RFC "Commit Protocol": v only after v-1, and at most once (caller holds ``t.lock``)."""
        if version <= t.latest:
            raise CommitConflict(f"version {version} is already ratified", latest_version=t.latest)
        if version != t.latest + 1:
            raise CommitRejected(f"version {version} would leave a gap after {t.latest}")

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        """Record the ratified commit (caller holds ``t.lock``)."""
        t.stored[commit.version] = commit
        t.latest = commit.version

    def listed(self, t: TableState, lo: int, hi: int) -> list[RatifiedCommit]:
        """Stored commits in [lo, hi], ascending (caller holds ``t.lock``)."""
        return [t.stored[v] for v in sorted(t.stored) if lo <= v <= hi]

    def latest_of(self, t: TableState) -> int:
        return t.latest

    def forget_published(self, t: TableState, version: int) -> None:
        """Drop what publication up to ``version`` made redundant (caller holds ``t.lock``)."""
        for v in [v for v in t.stored if v <= version]:
            del t.stored[v]
        t.published = max(t.published, version)

    # ------------------------------------------------------------ lookup

    def _table(self, table_id: object, missing: type[Exception]) -> TableState:
        with self._lock:
            t = self._by_id.get(table_id) if isinstance(table_id, str) else None
        if t is None or t.name is None:
            raise missing(f"no registered table with id {table_id!r}")
        return t

    # ------------------------------------------------------------ Catalog protocol

    def create_staging_table(self) -> StagingTable:
        table_id = str(uuid.uuid4())
        t = TableState(table_id, self.new_location(table_id))
        with self._lock:
            self._by_id[table_id] = t
        return StagingTable(table_id, t.location)

    def register_table(self, name: str, table_id: str) -> TableInfo:
        if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
            raise InvalidRequest(f"bad table name {name!r}")
        with self._lock:
            t = self._by_id.get(table_id) if isinstance(table_id, str) else None
            if t is None or t.name is not None:
                raise InvalidRequest(f"no staging table {table_id!r}")
            if name in self._by_name:
                raise InvalidRequest(f"table {name!r} exists")
            if not self.storage.exists(f"{t.location}/_delta_log/{0:020d}.json"):
                raise InvalidRequest("version 0 of the staging table is not written")
            t.name = name
            self._by_name[name] = table_id
        return TableInfo(table_id, name, t.location, True)

    def resolve(self, name: str) -> TableInfo:
        with self._lock:
            table_id = self._by_name.get(name) if isinstance(name, str) else None
            t = self._by_id.get(table_id) if table_id is not None else None
        if t is None:
            raise TableNotFound(f"no table {name!r}")
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
        t = self._table(table_id, InvalidRequest)
        if not is_int(version) or version < 1:
            raise InvalidRequest(f"bad version {version!r}")
        if (staged_uri is None) == (inline_content is None):
            raise InvalidRequest("give exactly one of staged_uri and inline_content")
        if staged_uri is not None:
            if not isinstance(staged_uri, str):
                raise InvalidRequest("staged_uri must be a string")
            self.check_staged_uri(t, version, staged_uri)
        elif not isinstance(inline_content, bytes | bytearray) or not inline_content:
            raise InvalidRequest("inline_content must be non-empty bytes")
        for extra in (in_commit_timestamp, latest_published_version):
            if extra is not None and not is_int(extra):
                raise InvalidRequest(f"bad integer {extra!r}")
        content = bytes(inline_content) if inline_content is not None else None
        with self.ratify_lock(t):
            self.check_sequence(t, version)
            if latest_published_version is not None and 0 <= latest_published_version <= t.latest:
                self.forget_published(t, latest_published_version)
            self.store(t, RatifiedCommit(version, staged_uri, content, in_commit_timestamp))

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        t = self._table(table_id, TableNotFound)
        for bound in (start_version, end_version):
            if bound is not None and (not is_int(bound) or bound < 0):
                raise InvalidRequest(f"bad version bound {bound!r}")
        if start_version is not None and end_version is not None and start_version > end_version:
            raise InvalidRequest("start_version is above end_version")
        with t.lock:
            latest = self.latest_of(t)
            lo = 0 if start_version is None else start_version
            hi = latest if end_version is None else min(end_version, latest)
            return GetCommitsResponse(self.listed(t, lo, hi), latest)

    def mark_published(self, table_id: str, version: int) -> None:
        t = self._table(table_id, InvalidRequest)
        with t.lock:
            if not is_int(version) or version < 0 or version > t.latest:
                raise InvalidRequest(f"cannot mark {version!r} published; latest is {t.latest}")
            self.forget_published(t, version)

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        self._table(table_id, TableNotFound)
        return MaintenancePolicy()
