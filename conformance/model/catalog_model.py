"""Abstract model of a managing catalog, as the RFC constrains it.

It predicts the outcome of each proposal and what a listing may contain. The
model is deliberately permissive where the RFC is: a catalog may drop commits at
or below the publication mark, so those are neither required nor forbidden.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Expect = Literal["ratified", "conflict", "refused"]


@dataclass
class CatalogModel:
    latest: int = 0
    published: int = 0
    ratified: dict[int, str] = field(default_factory=dict)  # version -> staged URI

    def propose(self, version: int, uri: str) -> Expect:
        if version <= self.latest:
            return "conflict"
        if version > self.latest + 1:
            return "refused"
        self.latest = version
        self.ratified[version] = uri
        return "ratified"

    def forget(self, version: int) -> None:
        """Undo a predicted ratification the catalog refused."""
        self.ratified.pop(version, None)
        self.latest = version - 1

    def mark_published(self, version: int) -> None:
        self.published = max(self.published, version)

    def must_list(self, start: int, end: int | None) -> dict[int, str]:
        """Commits a listing of [start, end] must contain: the unpublished ones in range."""
        hi = self.latest if end is None else min(end, self.latest)
        return {v: u for v, u in self.ratified.items() if self.published < v and start <= v <= hi}

    def may_list(self, start: int, end: int | None) -> dict[int, str]:
        hi = self.latest if end is None else min(end, self.latest)
        return {v: u for v, u in self.ratified.items() if start <= v <= hi}
