"""The Writer role's state machine (spec "State machine") and what a writer carries between steps."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from operator import attrgetter

from conformance.contract.iceberg import Operation, Row
from conformance.model.iceberg.files import Position
from conformance.model.iceberg.snapshot import EMPTY, SnapshotOp


class Step(StrEnum):
    READY = "READY"
    READ_DATA_FILES = "READ_DATA_FILES"
    WRITE_DATA_FILES = "WRITE_DATA_FILES"
    WRITE_METADATA_FILES = "WRITE_METADATA_FILES"
    COMMIT = "COMMIT"
    COMMITTED = "COMMITTED"
    ABORTED = "ABORTED"


IDLE = frozenset({Step.READY, Step.COMMITTED, Step.ABORTED})  # a writer here may start an operation


@dataclass(frozen=True)
class Written:
    """The files an operation wrote, and what its commit will remove."""

    operation: SnapshotOp
    added_data: frozenset[str] = EMPTY
    removed_data: frozenset[str] = EMPTY
    added_deletes: frozenset[str] = EMPTY
    removed_deletes: frozenset[str] = EMPTY
    referenced: frozenset[str] = EMPTY  # data files it deletes rows from or rewrites
    dv_files: frozenset[str] = EMPTY  # format v3: data files it writes a deletion vector for


@dataclass(frozen=True)
class Writer:
    index: int
    step: Step = Step.READY
    op: Operation | None = None
    name: str = ""  # the operation's name in the history ("T0"...)
    op_seq: int = 0  # operations this writer started; names its files
    start_version: int = 0
    base: str = ""  # the metadata file it last refreshed to
    files: frozenset[str] = EMPTY  # data files the scan selected (to rewrite or to delete from)
    hits: tuple[tuple[Position, Row], ...] = ()  # rows the scan matched
    written: Written | None = None
    staged: str = ""  # the metadata file it asks the catalog to swap in
    reason: str = ""  # why its last operation aborted
    _hash: list[int] = field(default_factory=list, init=False, compare=False, repr=False)

    def __hash__(self) -> int:
        # every new world hashes its writers; the fields are immutable, so compute it once
        if not self._hash:
            self._hash.append(hash(_key(self)))
        return self._hash[0]

    def but(self, **changes: object) -> Writer:
        """A copy with ``changes``: ``dataclasses.replace`` re-runs the frozen ``__init__`` and is the
        slowest part of a model step."""
        if not changes.keys() <= FIELDS:
            raise TypeError(f"Writer has no field {sorted(changes.keys() - FIELDS)}")
        new = object.__new__(Writer)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        new.__dict__["_hash"] = []
        return new

    @property
    def idle(self) -> bool:
        return self.step in IDLE


HASHED = tuple(f.name for f in fields(Writer) if f.compare)
FIELDS = frozenset(HASHED)
_key = attrgetter(*HASHED)  # the compared fields as a tuple, in C
