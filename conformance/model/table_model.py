"""Abstract model of one table's content per version, for the client state machine."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TableModel:
    versions: list[dict[int, str]] = field(default_factory=lambda: [{}])  # version -> {id: value}
    checkpoints: set[int] = field(default_factory=set)
    oldest_readable: int = 0  # raised by metadata cleanup

    @property
    def latest(self) -> int:
        return len(self.versions) - 1

    def rows(self, version: int | None = None) -> list[dict[str, object]]:
        state = self.versions[self.latest if version is None else version]
        return [{"id": i, "value": v} for i, v in sorted(state.items())]

    def append(self, rows: dict[int, str]) -> None:
        self.versions.append({**self.versions[-1], **rows})

    def delete(self, ids: set[int]) -> None:
        self.versions.append({i: v for i, v in self.versions[-1].items() if i not in ids})

    def cleanup(self, cutoff: int) -> None:
        below = [c for c in self.checkpoints if c <= cutoff]
        if below:
            self.oldest_readable = max(self.oldest_readable, max(below))
