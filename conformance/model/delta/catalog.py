"""The catalog's side of a catalog-managed table, as the Delta model needs it (catalog-managed RFC
"Commit Protocol", "Getting Ratified Commits from the Catalog", "Publishing Commits").

The catalog is the commit arbiter: a proposed (staged) commit becomes version ``v`` only when the
catalog ratifies it, and a loser gets the latest ratified version as its conflict answer. Ratified
commits are served by the catalog until published into ``_delta_log``. ``ModelCatalog`` is the
model's own arbiter; the reference engine plugs the reference catalog in through the same protocol.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Protocol


class Arbiter(Protocol):
    """A catalog that ratifies the versions of one table."""

    def staged_name(self, version: int) -> str:
        """A fresh ``_delta_log/_staged_commits/<version>.<uuid>.json`` location for a proposal."""
        ...

    def ratify(self, version: int, staged: str) -> int | None:
        """Propose ``staged`` as ``version``: None when ratified, else the latest ratified version
        (the catalog's conflict answer, which the RFC encourages)."""
        ...

    def ratified(self) -> tuple[int, dict[int, str]]:
        """The latest ratified version, and the ratified commits the catalog still serves
        (the unpublished ones at least), as staged locations by version."""
        ...

    def published(self, version: int) -> None:
        """Tell the catalog every version up to ``version`` is in ``_delta_log``."""
        ...


def staged_file(prefix: str, version: int, n: int) -> str:
    """The RFC's staged-commit name: the version zero-padded to 20 digits and a UUID (here a
    counter, so that runs are reproducible)."""
    return f"{prefix}{version:020d}.{uuid.UUID(int=n)}.json"


@dataclass
class ModelCatalog:
    """A catalog in memory. ``ratify_once=False`` is the faulty catalog that ratifies a second
    proposal for a version it already ratified (replacing the first)."""

    latest: int = 0  # version 0 is written before registration and counts as published
    stored: dict[int, str] = field(default_factory=dict)  # ratified, not yet published
    ratify_once: bool = True
    proposals: int = 0

    def staged_name(self, version: int) -> str:
        self.proposals += 1
        return staged_file("_delta_log/_staged_commits/", version, self.proposals)

    def ratify(self, version: int, staged: str) -> int | None:
        if version > self.latest + 1:
            raise ValueError(f"v{version} would leave a gap after v{self.latest}")  # no correct client asks
        if version <= self.latest and self.ratify_once:
            return self.latest
        self.stored[version] = staged
        self.latest = max(self.latest, version)
        return None

    def ratified(self) -> tuple[int, dict[int, str]]:
        return self.latest, dict(self.stored)

    def published(self, version: int) -> None:
        for v in [v for v in self.stored if v <= version]:
            del self.stored[v]  # published commits need not be stored ("Terminology: Commits")
