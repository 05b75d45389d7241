"""What the checker reads: operations with their versions, reads of versions, and the schedule."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.contract.iceberg import COLUMNS, KEEP, OpKind, Row, Values, Where


@dataclass(frozen=True)
class OpRecord:
    """One write operation as the engine reported it.

    ``start_version`` is the version it read (its starting snapshot); ``commit_version`` the version
    its commit created, or None when it aborted. ``values`` are the set values of an UPDATE or
    the row of an INSERT. ``where`` is a predicate on a non-key column (then ``id`` is None).
    """

    name: str  # "T0", "T1"... as the schedule calls it
    kind: OpKind
    id: str | None
    values: Values = KEEP
    start_version: int = 0
    commit_version: int | None = None
    writer: int | None = None
    where: Where | None = None

    @property
    def committed(self) -> bool:
        return self.commit_version is not None

    def matches(self, row: Row) -> bool:
        """Whether ``row`` satisfies the operation's predicate (UPDATE, DELETE)."""
        if self.where is not None:
            return row[self.where[0]] == self.where[1]
        return row[0] == self.id

    @property
    def predicate(self) -> str:
        return f"{COLUMNS[self.where[0]]}={self.where[1]}" if self.where is not None else f"id={self.id}"


@dataclass(frozen=True)
class ReadRecord:
    """The rows a read returned for table version ``version``; with an engine that can audit its
    delete files (``DeleteFileAudit``), also the delete files of that version that point nowhere."""

    version: int
    rows: tuple[Row, ...]
    dangling: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScheduleStep:
    """One step of the schedule that produced the history, for explanations."""

    text: str
    op: str | None = None  # the operation the step belongs to; None for set-up and reads


@dataclass(frozen=True)
class History:
    """Everything the checker judges. Versions up to ``initial_version`` are the set-up's."""

    initial_version: int = 0
    initial_rows: tuple[Row, ...] = ()
    ops: tuple[OpRecord, ...] = ()
    reads: tuple[ReadRecord, ...] = ()
    schedule: tuple[ScheduleStep, ...] = ()

    @property
    def committed(self) -> tuple[OpRecord, ...]:
        return tuple(sorted((o for o in self.ops if o.committed), key=lambda o: o.commit_version or 0))

    @property
    def aborted(self) -> tuple[OpRecord, ...]:
        return tuple(o for o in self.ops if not o.committed)
