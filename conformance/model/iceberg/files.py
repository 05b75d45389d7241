"""Immutable files in the object store: data files and positional delete files."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.contract.iceberg import Row

Position = tuple[str, int]  # (data file name, row position in it)


@dataclass(frozen=True)
class DataFile:
    name: str
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class DeleteFile:
    """Positional deletes. In format v3 it is a deletion vector: every deleted position of the one
    data file ``dv_for``, replacing that file's previous vector."""

    name: str
    positions: frozenset[Position]
    dv_for: str | None = None

    @property
    def data_files(self) -> frozenset[str]:
        return frozenset(f for f, _ in self.positions)
