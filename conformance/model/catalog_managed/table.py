"""One catalog-managed table as its clients see it: content and in-commit timestamp of every
version, publication, checkpoints, log compaction, metadata cleanup and reads.

The model learns what the RFC leaves to a client (which version it checkpoints, the in-commit
timestamp it stamps, whether it declines a job) from what the client did, and predicts what the RFC
then fixes (what a read of any version or timestamp returns, what must stay readable).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.model.catalog_managed.catalog import MAINTENANCE_OPS

Rows = dict[int, str]  # id -> value


@dataclass
class TableModel:
    versions: list[Rows] = field(default_factory=lambda: [{}])  # version -> {id: value}
    icts: dict[int, int] = field(default_factory=dict)  # version -> in-commit timestamp
    published: int = 0  # every version <= this is in _delta_log (version 0 at creation)
    checkpoints: set[int] = field(default_factory=set)
    compactions: set[tuple[int, int]] = field(default_factory=set)
    oldest_readable: int = 0  # raised by metadata cleanup: versions from here on must read
    policy: frozenset[str] = MAINTENANCE_OPS

    @property
    def latest(self) -> int:
        return len(self.versions) - 1

    def rows(self, version: int | None = None) -> list[dict[str, object]]:
        state = self.versions[self.latest if version is None else version]
        return [{"id": i, "value": v} for i, v in sorted(state.items())]

    # ------------------------------------------------------------ RFC "Commit Protocol"

    def append(self, rows: Rows, ict: int | None = None) -> int:
        self.versions.append({**self.versions[-1], **rows})
        return self._stamp(ict)

    def delete(self, ids: set[int], ict: int | None = None) -> int:
        self.versions.append({i: v for i, v in self.versions[-1].items() if i not in ids})
        return self._stamp(ict)

    def _stamp(self, ict: int | None) -> int:
        if ict is not None:
            self.icts[self.latest] = ict
        return self.latest

    # ------------------------------------------------------------ RFC "Publishing Commits"

    def publish(self, upto: int | None = None) -> None:
        """Versions are published in order, so "published up to v" is one number."""
        self.published = max(self.published, self.latest if upto is None else min(upto, self.latest))

    # --------------------------------------------- RFC "Maintenance Operations on Catalog-managed Tables"

    def allows(self, op: str) -> bool:
        """ "Delta clients must consult the catalog before running any maintenance job"."""
        return op in self.policy

    def may_checkpoint(self, version: int) -> bool:
        """A checkpoint of v needs the policy's leave and ``_delta_log/<v>.json``."""
        return self.allows("checkpoint") and 0 <= version <= self.published

    def may_compact(self, start: int, end: int) -> bool:
        """A log compaction of x..y needs the policy's leave and every version in it published."""
        return self.allows("log_compaction") and 0 <= start <= end <= self.published

    def checkpoint(self, version: int) -> None:
        self.checkpoints.add(version)

    # ------------------------------------------------------------ RFC "Metadata Cleanup" (as changed)

    def cutoff_checkpoint(self, cutoff: int) -> int | None:
        """Step 2: the newest checkpoint not newer than the cut-off commit; none: nothing to clean."""
        return max((c for c in self.checkpoints if c <= cutoff), default=None)

    def cleanup(self, cutoff: int) -> int | None:
        """What may go: everything before the cut-off checkpoint. The checkpoint and every published
        commit after it stay, so versions from the checkpoint on stay readable (by version and by
        timestamp). Returns the cut-off checkpoint, or None when the cleanup may delete nothing."""
        if not self.allows("metadata_cleanup"):
            return None
        cp = self.cutoff_checkpoint(cutoff)
        if cp is not None:
            self.oldest_readable = max(self.oldest_readable, cp)
        return cp

    # ------------------------------------------------------------ reads

    def readable(self) -> range:
        """The versions a reader must be able to read now."""
        return range(self.oldest_readable, self.latest + 1)

    def version_at(self, timestamp_ms: int) -> int | None:
        """Time travel (RFC "Publishing Commits", note on timestamps): the newest version whose
        in-commit timestamp is at or before the timestamp. None when the answer is not fixed: the
        timestamp precedes the oldest readable version (what came before may be cleaned up), or a
        timestamp of the versions involved is unknown."""
        readable = [v for v in self.readable() if v in self.icts]
        if len(readable) != len(self.readable()) or not readable or timestamp_ms < self.icts[readable[0]]:
            return None
        return max(v for v in readable if self.icts[v] <= timestamp_ms)
