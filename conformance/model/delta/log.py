"""The table: immutable data files and the log of commits; a snapshot replays the log."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from conformance.contract.iceberg import Row
from conformance.model.delta.actions import Add, Commit, Metadata, Protocol


@dataclass(frozen=True)
class Snapshot:
    """The table at ``version``: live logical files by path, the metadata and protocol."""

    version: int
    files: dict[str, Add]
    metadata: Metadata
    protocol: Protocol


@dataclass
class Table:
    """Data files (path -> rows, written once) and the commits, version 0 first."""

    files: dict[str, tuple[Row, ...]] = field(default_factory=dict)
    commits: list[Commit] = field(default_factory=list)

    @property
    def latest(self) -> int:
        return len(self.commits) - 1

    def write_file(self, path: str, rows: tuple[Row, ...]) -> None:
        if path in self.files:
            raise KeyError(f"{path} exists")  # data files are never overwritten
        self.files[path] = rows

    def snapshot(self, version: int | None = None) -> Snapshot:
        """Log replay (PROTOCOL.md "Action Reconciliation"): the last action on a path wins."""
        v = self.latest if version is None else version
        if not 0 <= v <= self.latest:
            raise ValueError(f"no version {v}")
        live: dict[str, Add] = {}
        metadata, protocol = Metadata(()), Protocol(1, 2)
        for commit in self.commits[: v + 1]:
            for r in commit.removes:
                live.pop(r.path, None)
            for a in commit.adds:
                live[a.path] = a
            metadata = commit.metadata or metadata
            protocol = commit.protocol or protocol
        return Snapshot(v, live, metadata, protocol)

    def live_rows(self, snap: Snapshot) -> Iterator[tuple[str, int, Row]]:
        """(path, position, row) of every row no deletion vector removes, by path."""
        for path in sorted(snap.files):
            dv = snap.files[path].dv
            for pos, row in enumerate(self.files[path]):
                if pos not in dv:
                    yield path, pos, row
