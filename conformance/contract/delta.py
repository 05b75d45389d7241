"""The contract between lakecert and a system under test.

Checks only talk to targets through these types. A vendor adapter implements
``Catalog`` (a catalog target) and/or ``DeltaClient`` (a client target) and
raises the exceptions below; lakecert never inspects error messages, only the
exception class and the observable state (RFC "Catalog Responsibilities").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

# ---------------------------------------------------------------- errors


class CatalogError(Exception):
    """Base class of every error a catalog adapter reports."""


class CommitConflict(CatalogError):
    """The proposed version is already ratified (another writer won).

    ``latest_version`` is the catalog's latest ratified version when it says so
    (RFC "Commit Protocol" encourages it), otherwise ``None``.
    """

    def __init__(self, message: str = "", latest_version: int | None = None) -> None:
        super().__init__(message)
        self.latest_version = latest_version


class CommitRejected(CatalogError):
    """The proposal was refused for a reason other than a lost race (gap, policy, ...)."""


class InvalidRequest(CatalogError):
    """The request was malformed (bad path, unknown table, wrong types)."""


class TableNotFound(CatalogError):
    """No table of that name or id."""


class CatalogTimeout(CatalogError, TimeoutError):
    """The answer to a catalog call did not arrive: the catalog may or may not have acted on it.

    lakecert's nemesis raises it to a client under test after the catalog acted (a lost answer,
    docs/certify.md "The nemesis"); an adapter raises it when its transport timed out. A client that
    gets it must find out from the catalog what happened before it does anything else."""


class CredentialRefused(Exception):
    """The catalog refused lakecert's credential for a call lakecert needs to set the scene (401, or
    403 on anything but a commit proposal, which a catalog may refuse by rule): the user's set-up,
    not the product's fault. The check ends in ERROR, never FAIL; the message says which call."""


class AdapterBroken(Exception):
    """The adapter's own machinery broke, not the product: a driver built for another release of the
    system (a missing method or class, a ``LinkageError``), a worker that cannot import the release
    under test. Always an ERROR: never the product's refusal (NOT_APPLICABLE), never a FAIL."""


class NotSupported(Exception):
    """The target does not offer this optional capability.

    Raising it is only taken as NOT_APPLICABLE when the check then verifies that
    nothing observable changed.
    """


# ---------------------------------------------------------------- storage


@dataclass(frozen=True)
class FileInfo:
    uri: str
    size: int
    mtime_ms: int


@runtime_checkable
class Storage(Protocol):
    """Object storage addressed by absolute URIs (``file:///...``, ``s3://bucket/key``)."""

    def put(self, uri: str, data: bytes, *, if_absent: bool = False) -> None:
        """Write ``data``; with ``if_absent`` raise ``FileExistsError`` when it exists."""

    def get(self, uri: str) -> bytes:
        """Read a whole object; ``FileNotFoundError`` when absent."""

    def list(self, prefix_uri: str) -> list[FileInfo]:
        """Objects directly or indirectly below ``prefix_uri``, sorted by URI."""

    def delete(self, uri: str) -> None:
        """Remove an object; absent objects are ignored."""

    def exists(self, uri: str) -> bool: ...


# ---------------------------------------------------------------- catalog


@dataclass(frozen=True)
class StagingTable:
    """A unique storage location handed out before a table is registered."""

    table_id: str
    location: str


@dataclass(frozen=True)
class TableInfo:
    """What name resolution returns (RFC "Table Discovery")."""

    table_id: str
    name: str
    location: str
    catalog_managed: bool


@dataclass(frozen=True)
class RatifiedCommit:
    """One ratified commit the catalog still stores: staged location or inline content."""

    version: int
    staged_uri: str | None = None
    inline_content: bytes | None = None
    in_commit_timestamp: int | None = None


@dataclass(frozen=True)
class GetCommitsResponse:
    commits: list[RatifiedCommit]
    latest_version: int


MaintenanceOp = Literal["checkpoint", "log_compaction", "checksum", "metadata_cleanup", "vacuum"]


@dataclass(frozen=True)
class MaintenancePolicy:
    """Which maintenance operations the catalog allows clients to run on a table."""

    allowed: frozenset[str] = field(
        default_factory=lambda: frozenset({"checkpoint", "log_compaction", "checksum", "metadata_cleanup", "vacuum"})
    )

    def allows(self, op: MaintenanceOp) -> bool:
        return op in self.allowed


@runtime_checkable
class Catalog(Protocol):
    """A managing catalog for catalog-managed Delta tables."""

    def create_staging_table(self) -> StagingTable:
        """Phase 1 of table creation: reserve a unique, unnamed location."""

    def register_table(self, name: str, table_id: str) -> TableInfo:
        """Phase 3: give a staged table (whose version 0 is written) its name."""

    def resolve(self, name: str) -> TableInfo:
        """Name resolution; ``TableNotFound`` when unknown."""

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
        """Propose a commit for ``version``: exactly one of ``staged_uri``/``inline_content``.

        Returns when ratified; raises ``CommitConflict`` when ``version`` is taken,
        ``CommitRejected`` or ``InvalidRequest`` otherwise. ``NotSupported`` for
        inline commits when the catalog does not host commit content.
        """

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        """Ratified commits still stored, in [start, end], and the latest ratified version."""

    def mark_published(self, table_id: str, version: int) -> None:
        """Record that every version up to ``version`` is published to ``_delta_log``."""

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        """The catalog's maintenance policy for the table (RFC "Maintenance Operations")."""


@runtime_checkable
class DroppingCatalog(Catalog, Protocol):
    """A catalog that also offers dropping tables: optional (RFC "Creating and Dropping" leaves how
    to drop to the catalog). A catalog without ``drop_table``, or whose ``drop_table`` raises
    ``NotSupported``, makes CAT-DROP NOT_APPLICABLE."""

    def drop_table(self, name: str) -> None:
        """Remove the table's name from the catalog (a soft drop is enough); ``TableNotFound`` when
        no table has that name. No commit is made to the table."""


@dataclass(frozen=True)
class CatalogLimits:
    """The limits a catalog declares (``Target.catalog_limits`` or the target option ``limits``).

    ``None``: not declared; lakecert discovers the limit up to a ceiling of its own
    (docs/certify.md "Limits"). At a limit a call must succeed; one past it, it must be refused
    cleanly (``CommitRejected`` or ``InvalidRequest``) and change nothing, never truncated."""

    name_length: int | None = None  # longest table name accepted, in characters (code points, any script)
    inline_bytes: int | None = None  # largest inline commit accepted, in bytes
    unpublished: int | None = None  # most ratified, unpublished commits held for one table
    page_size: int | None = None  # most commits one listing page of the catalog's API holds
    commit_actions: int | None = None  # most actions in one commit


# ---------------------------------------------------------------- client


@dataclass(frozen=True)
class ReadResult:
    """What a client's read returned: the version it resolved and the rows, sorted by ``id``."""

    version: int
    rows: list[dict[str, object]]


@runtime_checkable
class DeltaClient(Protocol):
    """A Delta client bound to one catalog and one storage.

    Tables used by the suite have the schema ``id: long, value: string``.
    """

    def create_table(self, name: str) -> None:
        """Create a catalog-managed table through the catalog's staging flow."""

    def append(self, name: str, rows: Sequence[dict[str, object]]) -> int:
        """Commit an append; return the ratified version."""

    def delete(self, name: str, ids: Sequence[int]) -> int:
        """Commit a delete of rows whose ``id`` is in ``ids``; return the ratified version."""

    def publish(self, name: str) -> None:
        """Publish every ratified, unpublished commit."""

    def checkpoint(self, name: str) -> int | None:
        """Write a checkpoint where the rules allow; return its version, or ``None``."""

    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        """Write a log compaction file for the range if allowed; ``NotSupported`` if never."""

    def cleanup(self, name: str, cutoff_version: int) -> None:
        """Metadata cleanup with ``cutoff_version`` as the cut-off commit."""

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        """Read the latest snapshot, or one by version or by timestamp (time travel)."""
