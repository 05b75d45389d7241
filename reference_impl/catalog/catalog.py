"""The reference catalog: a correct ``contract.Catalog`` over SQLite or PostgreSQL.

The catalog ratifies, and binds each ratified staged commit to the bytes it was
ratified with: the RFC's catalog "stores only the location" of a staged commit
("Terminology: Commits") yet relies on "the content of a ratified commit is
immutable" ("Publishing Commits"), and a catalog that judges content (refusing
protocol or metadata changes from low-privilege writers, the RFC's first
motivation) must serve what it judged. So with a storage the catalog keeps the
bytes it read at ratification (``ratified_content``) and serves a staged commit
whose file no longer holds them as an inline commit of the kept bytes. The
staged file is read with ``read_commit_file``: bounded, never blocking.

Every decision a faulty variant may get wrong lives in one small ``_hook``
method, so a variant (``reference_impl/faults/catalog_faults.py``) overrides
exactly one behaviour.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from conformance.contract.delta import (
    CatalogLimits,
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
from reference_impl.catalog.store import CatalogStore, TableRow, Tx
from reference_impl.storage.commit_file import DEFAULT_READ_LIMITS, CommitFileError, ReadLimits, read_commit_file

KNOWN_MAINTENANCE_OPS = MaintenancePolicy().allowed
# Letters and digits of any script (``\w``), combining marks (a decomposed accent), emoji and other
# pictographs, and ``_ . -``: never whitespace, separators of paths or control characters.
_TABLE_NAME = re.compile(r"[\w.\-\u0300-\u036f\u2600-\u27bf\U0001f300-\U0001faff]+")
# What the reference declares and enforces (``ReferenceCatalog.LIMITS``, docs/certify.md "Limits").
NAME_LENGTH = 255  # characters of a table name, as Unity Catalog's names
INLINE_BYTES = 1024 * 1024  # bytes of one inline commit: the server's request body cap
_HEX = "[0-9a-fA-F]"
# RFC "Delta Log Entries": _delta_log/_staged_commits/<20-digit version>.<uuid>.json
# ASCII digits: \d also takes other scripts' decimal digits, which int() reads as 0-9 (another object's name).
_STAGED_NAME = re.compile(rf"([0-9]{{20}})\.{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}\.json")


class DroppedTable(InvalidRequest):
    """The table was registered and then dropped: for a server, "not found" (an ``InvalidRequest``, as
    for any table that is not registered, for in-process callers)."""


# What a caller (the server) stores with a registration, a drop or a ratification, in the same
# transaction, given that transaction and the table's id: its records of the table and of the
# commit's file (size, modification time). Kept apart, a kill -9 or a full disk between the two
# left a ratified commit without its details, or a dropped table's name taken by a stale record.
Alongside = Callable[[Tx, str], None]


@dataclass
class _Pending:
    record: Alongside
    ran: bool = False


_ALONGSIDE: ContextVar[_Pending | None] = ContextVar("lakecert_catalog_alongside", default=None)


@contextmanager
def alongside(record: Alongside | None) -> Iterator[Callable[[], bool]]:
    """Run ``record(tx, table_id)`` inside the write transaction of the next registration, drop or
    ratification this context makes; yields a function telling whether it ran (a faulty variant that
    overrides those steps may not run it: the caller then stores its records on its own)."""
    if record is None:
        yield lambda: False
        return
    pending = _Pending(record)
    token = _ALONGSIDE.set(pending)
    try:
        yield lambda: pending.ran
    finally:
        _ALONGSIDE.reset(token)


def _run_alongside(tx: Tx, table_id: str) -> None:
    """The pending record, last in the transaction: after every check that may refuse it."""
    pending = _ALONGSIDE.get()
    if pending is not None and not pending.ran:
        pending.record(tx, table_id)
        pending.ran = True


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def delta_file_uri(location: str, version: int) -> str:
    return f"{location}/_delta_log/{version:020d}.json"


def staged_dir_uri(location: str) -> str:
    return f"{location}/_delta_log/_staged_commits/"


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
        raise InvalidRequest(f"invalid table name {name!r}")
    return name


def check_commit(location: str, commit: RatifiedCommit) -> None:
    """A well-formed commit for a table at ``location``, else ``InvalidRequest``."""
    if not _is_int(commit.version) or commit.version < 0:
        raise InvalidRequest(f"invalid version {commit.version!r}")
    if (commit.staged_uri is None) == (commit.inline_content is None):
        raise InvalidRequest("exactly one of staged_uri and inline_content is required")
    if commit.staged_uri is not None:
        uri = commit.staged_uri
        prefix = staged_dir_uri(location)
        # Directly inside this table's staging directory: no sub-directory, no "..".
        match = _STAGED_NAME.fullmatch(uri[len(prefix) :]) if isinstance(uri, str) else None
        if not isinstance(uri, str) or not uri.startswith(prefix) or match is None:
            raise InvalidRequest(f"not a staged commit of this table: {uri!r}")
        # The version in the file name is authoritative (RFC "Delta Log Entries").
        if int(match.group(1)) != commit.version:
            raise InvalidRequest(f"{uri!r} is not staged for version {commit.version}")
    elif not isinstance(commit.inline_content, bytes) or not commit.inline_content:
        raise InvalidRequest("inline_content must be non-empty bytes")
    ict = commit.in_commit_timestamp
    if ict is not None and not (_is_int(ict) and ict >= 0):
        raise InvalidRequest(f"invalid in_commit_timestamp {ict!r}")


class ReferenceCatalog:
    """Catalog-managed tables in a database shared by threads and processes: a SQLite file
    (``db_path`` a path) or a PostgreSQL database (a ``postgresql://`` URL; ``store.py``).

    With ``storage`` given, registration checks that version 0 was written and ratification
    binds a staged commit to its bytes (read within ``read_limits``).

    ``LIMITS`` are what the catalog enforces, refusing one past each with ``InvalidRequest`` or
    ``CommitRejected`` before anything is written; ``declared_limits`` is what its target tells
    lakecert (the same, unless a faulty variant misstates them). ``None``: no limit of its own.
    """

    LIMITS = CatalogLimits(name_length=NAME_LENGTH, inline_bytes=INLINE_BYTES)

    @classmethod
    def declared_limits(cls) -> CatalogLimits:
        """The limits the reference target declares for this catalog (``Target.catalog_limits``)."""
        return cls.LIMITS

    def __init__(
        self,
        db_path: str | Path,
        warehouse_uri: str,
        storage: Storage | None = None,
        *,
        read_limits: ReadLimits = DEFAULT_READ_LIMITS,
        durable: bool = True,
    ) -> None:
        self._store = CatalogStore(db_path, durable=durable)
        self.warehouse_uri = warehouse_uri.rstrip("/")
        self._storage = storage
        self.read_limits = read_limits

    def close(self) -> None:
        self._store.close()

    # ------------------------------------------- RFC "Creating and Dropping"

    def create_staging_table(self) -> StagingTable:
        """Phase 1: a fresh table id and a location no other table has."""
        table_id = str(uuid.uuid4())
        location = self._staging_location(table_id)
        with self._store.write() as tx:
            tx.insert_table(table_id, location)
        return StagingTable(table_id, location)

    def register_table(self, name: str, table_id: str) -> TableInfo:
        """Phase 3: name a staged table whose version 0 exists; 0 counts as published."""
        _check_name(name)
        self._check_name_length(name)
        with self._store.read() as tx:
            row = tx.table(table_id) if isinstance(table_id, str) else None
        if row is None or row.name is not None or row.latest_version >= 0:  # >= 0: registered, maybe dropped
            raise InvalidRequest(f"no unregistered staging table {table_id!r}")
        # Storage I/O happens outside the write transaction: never hold the lock on I/O.
        if self._storage is not None and not self._storage.exists(delta_file_uri(row.location, 0)):
            raise InvalidRequest(f"version 0 of {table_id} is not written")
        with self._store.write() as tx:
            row = tx.table(table_id)
            if row is None or row.name is not None or row.latest_version >= 0:  # registered concurrently
                raise InvalidRequest(f"table {table_id!r} is already registered")
            if tx.table_by_name(name) is not None:
                raise InvalidRequest(f"name {name!r} is taken")
            tx.register(table_id, name, latest=0, published=0)
            row = tx.table(table_id)
            _run_alongside(tx, table_id)
        assert row is not None
        return self._table_info(row)

    def drop_table(self, name: str) -> None:
        """RFC "Creating and Dropping": a soft drop, the name is removed from the catalog. The files
        and the catalog's record of the table stay; the name may be given to a new table, and the
        dropped table can be neither resolved nor committed to, nor registered again."""
        with self._store.write() as tx:
            row = tx.table_by_name(name) if isinstance(name, str) else None
            if row is None:
                raise TableNotFound(name)
            tx.unregister(row.table_id)
            _run_alongside(tx, row.table_id)

    # ---------------------------------------------- RFC "Table Discovery"

    def resolve(self, name: str) -> TableInfo:
        with self._store.read() as tx:
            row = tx.table_by_name(name) if isinstance(name, str) else None
        if row is None:
            raise TableNotFound(name)
        return self._table_info(row)

    # ---------------------------------------------- RFC "Commit Protocol"

    def commit(
        self,
        table_id: str,
        version: int,
        *,
        staged_uri: str | None = None,
        inline_content: bytes | None = None,
        in_commit_timestamp: int | None = None,
        latest_published_version: int | None = None,
        staged_content: bytes | None = None,
    ) -> None:
        """``staged_content``: the bytes of ``staged_uri`` a caller already read and judged (the
        server), bound as they are; otherwise the catalog reads the file itself (with a storage)."""
        # Validate everything before touching the store: a bad request changes nothing.
        with self._store.read() as tx:
            row = self._registered(tx, table_id)
        if not _is_int(version) or version < 1:
            raise InvalidRequest(f"invalid version {version!r}")
        proposal = RatifiedCommit(version, staged_uri, inline_content, in_commit_timestamp)
        self._check_proposal(row.location, proposal)
        self._check_inline_size(proposal)
        published = latest_published_version
        # Nothing at or above the proposed version can be published yet.
        if published is not None and not (_is_int(published) and 0 <= published < version):
            raise InvalidRequest(f"invalid latest_published_version {published!r}")
        content = staged_content
        if staged_uri is not None and content is None and self._storage is not None:
            content = self._read_staged(row.location, staged_uri)  # outside the transaction: I/O
        self._ratify(row.table_id, proposal, published, content)

    def _check_proposal(self, location: str, proposal: RatifiedCommit) -> None:
        """A well-formed proposal: a staged file of this version in this table's staging folder."""
        check_commit(location, proposal)

    def _read_staged(self, location: str, staged_uri: str) -> bytes:
        try:
            return read_commit_file(self._storage, staged_uri, location, self.read_limits)
        except CommitFileError as e:
            raise InvalidRequest(f"the staged commit cannot be read: {e}") from e

    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        """Check and record in one write transaction: exactly one proposal per version wins.
        ``content``: the bytes of a staged proposal, kept with it."""
        with self._store.write() as tx:
            row = tx.table(table_id)
            assert row is not None
            # Read under the table's write lock, as a drop changes it: a drop that committed after the
            # read in ``commit`` wins, and the proposal is refused instead of ratified on a dropped table.
            self._registered_row(row)
            self._check_version(row.latest_version, proposal.version)
            self._check_unpublished(row, proposal.version)
            self._write_commit(tx, table_id, proposal)
            if proposal.staged_uri is not None and content is not None:
                tx.bind_content(table_id, proposal.version, content)
            tx.raise_latest(table_id, proposal.version)
            if published is not None:
                self._publish(tx, table_id, published)
            _run_alongside(tx, table_id)

    # ------------------------------------------- the catalog's own limits

    def _check_name_length(self, name: str) -> None:
        """A name longer than the limit is refused whole: never shortened (two names would meet)."""
        limit = self.LIMITS.name_length
        if limit is not None and len(name) > limit:
            raise InvalidRequest(f"table names have at most {limit} characters, this one {len(name)}")

    def _check_inline_size(self, proposal: RatifiedCommit) -> None:
        """An inline commit larger than the limit is refused whole: never stored cut."""
        limit = self.LIMITS.inline_bytes
        content = proposal.inline_content
        if limit is not None and content is not None and len(content) > limit:
            raise InvalidRequest(f"inline commits have at most {limit} bytes, this one {len(content)}")

    def _check_unpublished(self, row: TableRow, version: int) -> None:
        """Past the cap on ratified, unpublished commits the proposal is refused (the writer publishes
        first); an older unpublished commit is never dropped to make room (RFC "Commit Protocol")."""
        limit = self.LIMITS.unpublished
        if limit is not None and version - max(row.latest_published_version, 0) > limit:
            raise CommitRejected(f"at most {limit} unpublished commits: publish before proposing v{version}")

    def _check_version(self, latest: int, version: int) -> None:
        """The RFC's "must not ratify v until it has ratified v - 1, and ... at most once"."""
        if version <= latest:
            # The RFC encourages telling the loser the latest ratified version.
            raise CommitConflict(f"version {version} is already ratified", latest_version=latest)
        if version > latest + 1:
            raise CommitRejected(f"version {version} would leave a gap after {latest}")

    def _write_commit(self, tx: Tx, table_id: str, commit: RatifiedCommit) -> None:
        # A plain INSERT: the primary key is a second guard against ratifying twice.
        tx.insert_commit(table_id, commit)

    # ------------------------------- RFC "Getting Ratified Commits from the Catalog"

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        for bound in (start_version, end_version):
            if bound is not None and not (_is_int(bound) and bound >= 0):
                raise InvalidRequest(f"invalid version bound {bound!r}")
        if start_version is not None and end_version is not None and start_version > end_version:
            raise InvalidRequest("start_version > end_version")
        # One snapshot, so the listing and the latest version agree.
        with self._store.read() as tx:
            row = self._registered(tx, table_id)
            stored = self._stored_commits(tx, table_id)
            kept = tx.bound_contents(table_id)
        start = 0 if start_version is None else start_version
        end = row.latest_version if end_version is None else end_version
        listed = self._select_listing(stored, start, end)
        served = [self._as_ratified(row.location, c, kept.get(c.version)) for c in listed]
        return GetCommitsResponse([self._served(c) for c in served], self._listed_latest(row))

    def _stored_commits(self, tx: Tx, table_id: str) -> list[RatifiedCommit]:
        """Every commit the catalog still stores for the table, ascending."""
        return tx.commits(table_id)

    def _select_listing(self, commits: list[RatifiedCommit], start: int, end: int) -> list[RatifiedCommit]:
        """The stored commits in [start, end], ascending. Because only commits at or below
        the published mark are ever dropped, this is a contiguous run ending at latest."""
        return [c for c in commits if start <= c.version <= end]

    def _listed_latest(self, row: TableRow) -> int:
        """The latest ratified version, authoritative, also when nothing is listed."""
        return row.latest_version

    def _as_ratified(self, location: str, commit: RatifiedCommit, kept: bytes | None) -> RatifiedCommit:
        """A staged commit as ratified: its file while that still holds the bytes kept at ratification,
        else (rewritten, replaced, gone) those bytes as an inline commit. Never the changed file."""
        if commit.staged_uri is None or kept is None:
            return commit
        try:
            if read_commit_file(self._storage, commit.staged_uri, location, self.read_limits) == kept:
                return commit
        except CommitFileError:
            pass
        return RatifiedCommit(commit.version, None, kept, commit.in_commit_timestamp)

    def _served(self, commit: RatifiedCommit) -> RatifiedCommit:
        """A stored commit as readers get it: unchanged (inline content byte for byte)."""
        return commit

    # ----------------------------------------------- RFC "Publishing Commits"

    def mark_published(self, table_id: str, version: int) -> None:
        with self._store.write() as tx:
            row = self._registered(tx, table_id)
            if not _is_int(version) or not 0 <= version <= row.latest_version:
                raise InvalidRequest(f"cannot mark version {version!r} published")
            self._publish(tx, table_id, version)

    def _publish(self, tx: Tx, table_id: str, version: int) -> None:
        tx.raise_published(table_id, version)  # the mark never goes back
        row = tx.table(table_id)
        assert row is not None
        self._drop_on_publish(tx, table_id, row.latest_published_version)

    def _drop_on_publish(self, tx: Tx, table_id: str, published: int) -> None:
        """Published commits need not be stored ("Terminology: Commits"); unpublished
        ones must be, so drop exactly the versions <= the published mark."""
        tx.delete_commits(table_id, up_to=published)

    # ---------------------------------------- RFC "Maintenance Operations"

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        with self._store.read() as tx:
            row = self._existing(tx, table_id)
        if row.policy_json is None:
            return MaintenancePolicy()
        return MaintenancePolicy(allowed=frozenset(json.loads(row.policy_json)["allowed"]))

    def set_maintenance_policy(self, table_id: str, policy: MaintenancePolicy) -> None:
        """Admin: which maintenance operations clients may run on the table."""
        unknown = set(policy.allowed) - KNOWN_MAINTENANCE_OPS
        if unknown:
            raise InvalidRequest(f"unknown maintenance operations {sorted(unknown)}")
        with self._store.write() as tx:
            self._existing(tx, table_id)
            tx.set_policy(table_id, json.dumps({"allowed": sorted(policy.allowed)}))

    # ---------------------------------------------------------- seeding

    def import_table(
        self,
        name: str,
        location: str,
        latest_version: int,
        commits: list[RatifiedCommit],
        latest_published_version: int = -1,
    ) -> TableInfo:
        """Admin: register an existing table with a given catalog state (reader scenarios).

        ``commits`` are the stored ratified commits: contiguous, ascending, ending at
        ``latest_version``. With a published mark >= 0 they must cover every version
        above it (the catalog may not have lost an unpublished commit); -1 = unknown.
        """
        _check_name(name)
        if not isinstance(location, str) or not location:
            raise InvalidRequest(f"invalid location {location!r}")
        latest, published = latest_version, latest_published_version
        if not _is_int(latest) or latest < 0:
            raise InvalidRequest(f"invalid latest_version {latest!r}")
        if not _is_int(published) or not -1 <= published <= latest:
            raise InvalidRequest(f"invalid latest_published_version {published!r}")
        for commit in commits:
            check_commit(location, commit)
        versions = [c.version for c in commits]
        if versions and versions != list(range(latest - len(versions) + 1, latest + 1)):
            raise InvalidRequest(f"commits {versions} are not contiguous up to {latest}")
        first_stored = versions[0] if versions else latest + 1
        if published >= 0 and first_stored > published + 1:
            raise InvalidRequest("unpublished versions are missing from commits")
        table_id = str(uuid.uuid4())
        with self._store.write() as tx:
            if tx.table_by_name(name) is not None:
                raise InvalidRequest(f"name {name!r} is taken")
            tx.insert_table(table_id, location, name=name, latest=latest, published=published)
            for commit in commits:
                tx.insert_commit(table_id, commit)
            row = tx.table(table_id)
        assert row is not None
        return self._table_info(row)

    # ---------------------------------------------------------- helpers

    def _staging_location(self, table_id: str) -> str:
        """A location derived from the unique table id, hence unique."""
        return f"{self.warehouse_uri}/tables/{table_id}"

    def _table_info(self, row: TableRow) -> TableInfo:
        """Name resolution result: the storage location and "catalog-managed"."""
        assert row.name is not None
        return TableInfo(row.table_id, row.name, row.location, catalog_managed=True)

    @staticmethod
    def _existing(tx: Tx, table_id: str) -> TableRow:
        row = tx.table(table_id) if isinstance(table_id, str) else None
        if row is None:
            raise TableNotFound(table_id)
        return row

    @classmethod
    def _registered(cls, tx: Tx, table_id: str) -> TableRow:
        return cls._registered_row(cls._existing(tx, table_id))

    @staticmethod
    def _registered_row(row: TableRow) -> TableRow:
        if row.name is None and row.latest_version >= 0:  # registered once (version 0), then dropped
            raise DroppedTable(f"table {row.table_id} was dropped")
        if row.name is None:
            raise InvalidRequest(f"table {row.table_id} is staged but not registered")
        return row
