"""What a catalog-managed table's ``_delta_log`` may and must hold, given the table's model.

RFC "Delta Log Entries" and "Writer Requirements": ``_delta_log/<v>.json`` exists only for
ratified versions (writers never commit through the file system) and, once published, stays until
metadata cleanup may delete it; ``_staged_commits/<v>.<uuid>.json`` of a ratified, unpublished
version above the cut-off checkpoint stays, since readers get it from the catalog. Maintenance files
(checkpoints, log compactions) only for published versions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from conformance.model.catalog_managed.table import TableModel

LogKind = Literal["delta", "staged", "checkpoint", "compaction", "checksum"]


@dataclass(frozen=True)
class LogEntry:
    kind: LogKind
    version: int
    end_version: int | None = None
    name: str = ""


@dataclass(frozen=True)
class LogFault:
    """``kind``: "above-latest" (a published file for a version not ratified), "lost-published" (a
    published commit the cleanup had to keep is gone), "lost-staged" (a ratified staged commit gone
    before publication), "unpublished-maintenance" (a checkpoint or compaction over unpublished
    versions)."""

    kind: Literal["above-latest", "lost-published", "lost-staged", "unpublished-maintenance"]
    detail: str


def judge_log(model: TableModel, entries: Iterable[LogEntry], ratified_staged: dict[int, str]) -> list[LogFault]:
    """Faults of a listing of ``_delta_log`` (``ratified_staged``: version -> ratified staged file name,
    for the versions the catalog ratified from a staged file)."""
    entries = list(entries)
    faults: list[LogFault] = []
    delta = {e.version for e in entries if e.kind == "delta"}
    staged = {e.name for e in entries if e.kind == "staged"}
    for v in sorted(delta):
        if v > model.latest:
            faults.append(LogFault("above-latest", f"_delta_log/{v:020d}.json exists; the latest ratified is v{v}"))
    for v in range(model.oldest_readable, model.published + 1):
        if v not in delta:
            faults.append(LogFault("lost-published", f"published v{v} is gone, at or after the cut-off checkpoint"))
    for v, name in sorted(ratified_staged.items()):
        if model.published < v <= model.latest and v > model.oldest_readable and name not in staged:
            faults.append(LogFault("lost-staged", f"ratified, unpublished v{v} ({name}) was deleted"))
    for e in entries:
        top = e.end_version if e.kind == "compaction" and e.end_version is not None else e.version
        if e.kind in ("checkpoint", "compaction") and top > model.published:
            faults.append(
                LogFault(
                    "unpublished-maintenance", f"{e.kind} of v{e.version}-v{top} above published v{model.published}"
                )
            )
    return faults
