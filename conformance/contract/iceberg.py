"""The contract between lakecert and an Iceberg engine under test (profile ``iceberg-row-delta``).

The Iceberg checks drive row-level writes of concurrent writers through controlled interleavings
(spec ``iceberg-concurrency-model.md``). An engine runs each operation up to the moment it asks the
catalog to swap the table's metadata pointer and is HELD there; the harness then releases held
commits in the order a schedule says. A real engine (Spark, pyiceberg) implements this by committing
through lakecert's reference REST catalog, which parks the commit request until it is released; a
commit refused there (409) makes the engine refresh, revalidate and retry on its own, as it would in
production. The checks judge only what the engine did: which operations committed, at which table
version, and what each version contains.

The table has three string columns; the first, ``id``, identifies a row (Iceberg has no primary
keys: the workload never inserts an id it has not deleted). A predicate is ``id = <value>``, or
(``Operation.where``) ``<column> = <value>`` on a non-key column.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from conformance.contract.delta import NotSupported
from conformance.contract.env import TargetEnv

COLUMNS = ("id", "color", "label")

Row = tuple[str, str, str]
# Values an UPDATE sets, per column; None keeps the column. An INSERT gives the full row.
Values = tuple[str | None, str | None, str | None]
KEEP: Values = (None, None, None)
# A predicate on a non-key column: (column index, 1 or 2; value), e.g. (1, "red") is color = 'red'
Where = tuple[int, str]

__all__ = [
    "COLUMNS",
    "KEEP",
    "CommitResult",
    "DeleteFileAudit",
    "EngineTarget",
    "HeldCommit",
    "IcebergEngine",
    "Isolation",
    "Mode",
    "NotSupported",
    "OpKind",
    "Operation",
    "Row",
    "TableRead",
    "TableSetup",
    "Values",
    "Where",
]


class Mode(StrEnum):
    """How row-level UPDATEs and DELETEs rewrite the table (``write.{update,delete}.mode``)."""

    COPY_ON_WRITE = "copy-on-write"
    MERGE_ON_READ = "merge-on-read"  # positional delete files (deletion vectors in format v3)


class Isolation(StrEnum):
    """``write.{update,delete}.isolation-level``."""

    SNAPSHOT = "snapshot"
    SERIALIZABLE = "serializable"


class OpKind(StrEnum):
    INSERT = "INSERT"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    COMPACT = "COMPACT"  # rewrite data files; never changes the rows
    # Delta's too (profile delta-row-conflicts); Iceberg engines are never asked for them.
    MERGE = "MERGE"  # upsert of ``values``: update the row with its id, or insert it when there is none
    METADATA = "METADATA"  # a table property change; never changes the rows


@dataclass(frozen=True)
class Operation:
    """One write: ``kind`` with the predicate ``id = <id>``.

    INSERT: ``values`` is the full row and ``id`` its first column. UPDATE: ``values`` holds the
    columns to set (None keeps one). DELETE: only ``id``. COMPACT: rewrites the data files holding
    rows with ``id`` (every data file when ``id`` is None). ``where`` replaces the id predicate of
    an UPDATE or DELETE by one on a non-key column (``id`` is then None).
    """

    kind: OpKind
    id: str | None = None
    values: Values = KEEP
    where: Where | None = None

    def matches(self, row: Row) -> bool:
        """Whether ``row`` satisfies the operation's predicate."""
        if self.where is not None:
            return row[self.where[0]] == self.where[1]
        return row[0] == self.id

    @property
    def predicate(self) -> str:
        if self.where is not None:
            return f"{COLUMNS[self.where[0]]}={self.where[1]}"
        return f"id={self.id}"

    def describe(self) -> str:
        if self.kind is OpKind.INSERT:
            return f"INSERT {self.values}"
        if self.kind is OpKind.UPDATE:
            sets = ", ".join(f"{c}={v}" for c, v in zip(COLUMNS, self.values, strict=True) if v is not None)
            return f"UPDATE SET {sets} WHERE {self.predicate}"
        if self.kind is OpKind.DELETE:
            return f"DELETE WHERE {self.predicate}"
        if self.kind is OpKind.MERGE:
            return f"MERGE {self.values} ON id (update when matched, insert otherwise)"
        if self.kind is OpKind.METADATA:
            return "SET TBLPROPERTIES (a table property change)"
        return "COMPACT" + (f" files WHERE id={self.id}" if self.id is not None else " all data files")


@dataclass(frozen=True)
class TableSetup:
    """A fresh table: its write modes, isolation level, format version and initial data files.

    ``data_files`` holds the initial rows grouped by data file. Checks put a row they write
    concurrently in a file together with other rows, so that a merge-on-read DELETE must write a
    delete file instead of dropping the whole data file (a metadata-only delete).
    """

    update_mode: Mode
    delete_mode: Mode
    isolation: Isolation
    format_version: int = 2
    data_files: tuple[tuple[Row, ...], ...] = ()

    def mode(self, kind: OpKind) -> Mode:
        """The write mode of an operation of ``kind``: DELETE's, or UPDATE's for the rest."""
        return self.delete_mode if kind is OpKind.DELETE else self.update_mode

    def describe(self) -> str:
        return (
            f"update {self.update_mode.value}, delete {self.delete_mode.value}, "
            f"{self.isolation.value} isolation, format v{self.format_version}"
        )


@dataclass(frozen=True)
class TableRead:
    """The rows of the table at ``version`` (the snapshot's sequence number)."""

    version: int
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class CommitResult:
    """How a released operation ended.

    ``committed`` False means the engine gave up on a conflict (validation failed). ``version``
    is the table version the commit created (None when aborted); ``reason`` is the engine's
    message, for the reproducer only.
    """

    committed: bool
    version: int | None
    reason: str = ""


@runtime_checkable
class HeldCommit(Protocol):
    """An operation that has scanned, written its files and its metadata, and now waits at the
    catalog boundary."""

    @property
    def start_version(self) -> int:
        """The table version the operation started from (its starting snapshot)."""
        ...

    def release(self) -> CommitResult:
        """Let the commit reach the catalog and wait until the operation ends.

        When the catalog refuses the swap because another commit landed first, the engine
        refreshes, revalidates and retries as it normally does; the result is the final outcome.
        Called exactly once.
        """
        ...


@runtime_checkable
class IcebergEngine(Protocol):
    """An Iceberg engine under test. Every call is made from one harness thread, in order."""

    def create_table(self, name: str, setup: TableSetup) -> TableRead:
        """Create table ``name`` as ``setup`` says and write its initial data files.

        Returns the table as read right after the setup. Raise ``NotSupported`` when the engine
        cannot write tables with these modes, isolation or format version; the check then ends
        NOT_APPLICABLE.
        """
        ...

    def begin(self, table: str, writer: int, op: Operation) -> HeldCommit:
        """Start ``op`` as writer ``writer`` (one session or client per writer) on the current
        version of ``table``, and return once it is held at the catalog boundary.

        A writer holds at most one operation at a time. An operation that aborts before it
        reaches the catalog returns a handle whose ``release`` reports the abort.
        """
        ...

    def read(self, table: str, version: int | None = None) -> TableRead:
        """The rows of ``table`` at ``version`` (time travel), or at the current version."""
        ...

    def close(self) -> None:
        """Release everything the engine holds; called once at the end of the run."""
        ...


@runtime_checkable
class DeleteFileAudit(Protocol):
    """Optional: an engine that can list, per table version, the delete files that point nowhere
    (spec "Possible violation": a delete committed against a data file another commit removed).
    Without it the checks of ICE-NO-DANGLING-DELETES are NOT_APPLICABLE."""

    def dangling_deletes(self, table: str, version: int) -> tuple[str, ...]:
        """Names of the live delete files of ``version`` none of whose data files is live, or
        that name a position past the end of a live data file."""
        ...


class EngineTarget(Protocol):
    """What a target with the ``engine`` side provides, besides the ``Target`` protocol."""

    def make_engine(self, env: TargetEnv) -> IcebergEngine:
        """Build the engine under test for this run, once; the check fixtures share it."""
        ...
