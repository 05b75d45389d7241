"""What the checker reports: one anomaly per broken row (its earliest version) or version rule."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from conformance.contract.iceberg import Row


class AnomalyKind(StrEnum):
    RESURRECTED_ROW = "resurrected-row"  # every serial order deletes the row; the read shows it
    DUPLICATE_ROW = "duplicate-row"  # more rows with one id than any serial order leaves
    LOST_ROW = "lost-row"  # every serial order keeps the row; the read misses it
    WRONG_VALUE = "wrong-value"  # the row is there, with values no serial order gives
    ABORTED_WRITE_VISIBLE = "aborted-write-visible"  # only explained if an aborted operation took effect
    NOT_COMMIT_ORDER = "not-commit-order"  # some serial order explains it, but not the commit order
    VERSION_REUSED = "version-reused"  # two committed operations claim one version
    ORPHAN_VERSION = "orphan-version"  # a version no committed operation created
    DANGLING_DELETE = "dangling-delete"  # a live delete file whose data files are gone, or a position past a file's end


@dataclass(frozen=True)
class Anomaly:
    kind: AnomalyKind
    version: int  # the version whose read (or creation) breaks the rule
    row_id: str | None  # None for version anomalies
    ops: tuple[str, ...]  # the operations involved, by name
    observed: tuple[Row, ...]  # the read's rows with this id
    allowed: tuple[tuple[Row, ...], ...]  # what the serial orders leave for this id
    explanation: str  # plain words
    schedule: tuple[str, ...]  # the steps of the involved operations, in order: the minimal schedule

    def report(self) -> str:
        """The explanation followed by the schedule, for a violation message."""
        steps = "\n".join(f"  {i}. {s}" for i, s in enumerate(self.schedule, 1))
        return f"{self.explanation}\nschedule:\n{steps}" if steps else self.explanation
