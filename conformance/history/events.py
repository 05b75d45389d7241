"""What the checker reads: operations with their versions, reads of versions, and the schedule."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.contract.iceberg import KEEP, OpKind, Row, Values


@dataclass(frozen=True)
class OpRecord:
    """One write operation as the engine reported it.

    ``start_version`` is the version it read (its starting snapshot); ``commit_version`` the version
    its commit created, or None when it aborted. ``values`` are the set values of an UPDATE or
    the row of an INSERT.
    """

    name: str  # "T0", "T1"... as the schedule calls it
    kind: OpKind
    id: str | None
    values: Values = KEEP
    start_version: int = 0
    commit_version: int | None = None
    writer: int | None = None

    @property
    def committed(self) -> bool:
        return self.commit_version is not None


@dataclass(frozen=True)
class ReadRecord:
    """The rows a read returned for table version ``version``."""

    version: int
    rows: tuple[Row, ...]


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
