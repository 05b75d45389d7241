"""Snapshots and metadata files. A snapshot stands for its manifest list and manifests: the live
data and delete files, and what its commit added and removed (what validation inspects)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class SnapshotOp(StrEnum):
    """The snapshot summary's operation; validations filter removed files by it."""

    APPEND = "append"
    OVERWRITE = "overwrite"  # copy-on-write rewrite, or row delta that adds data files
    DELETE = "delete"  # only removes rows: delete files, or data files dropped whole
    REPLACE = "replace"  # compaction


EMPTY: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Snapshot:
    version: int  # the sequence number: the table version
    operation: SnapshotOp
    data_files: frozenset[str] = EMPTY
    delete_files: frozenset[str] = EMPTY
    added_data: frozenset[str] = EMPTY
    removed_data: frozenset[str] = EMPTY
    added_deletes: frozenset[str] = EMPTY


@dataclass(frozen=True)
class Metadata:
    """A metadata file: the snapshot log, version 0 (the empty table) first, the current last."""

    snapshots: tuple[Snapshot, ...]
    _hash: list[int] = field(default_factory=list, init=False, compare=False, repr=False)

    def __hash__(self) -> int:
        # stores hash their metadata files on every put; a metadata file never changes
        if not self._hash:
            self._hash.append(hash(self.snapshots))
        return self._hash[0]

    @property
    def current(self) -> Snapshot:
        return self.snapshots[-1]

    @property
    def version(self) -> int:
        return self.current.version

    def since(self, version: int) -> tuple[Snapshot, ...]:
        """Snapshots committed after ``version``: what a writer that started there must validate."""
        return tuple(s for s in self.snapshots if s.version > version)

    def at(self, version: int) -> Snapshot:
        return next(s for s in self.snapshots if s.version == version)
