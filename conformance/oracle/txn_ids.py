"""Every txnId a run has seen, to find one used by two commits of any tables.

RFC "Writer Requirements for Catalog-managed tables" and "Commit Provenance Information": the
``commitInfo`` of every commit carries "a unique transaction identifier". Unique within a table is
not enough: a per-client counter repeats across tables, and a catalog or an auditor that keys
transactions by txnId (across its tables) then conflates them. Checks run in one process per run
(a shard is a process too), so the registry is one per process: a repeat across shards goes unseen,
within a shard never.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from threading import Lock


@dataclass(frozen=True)
class Use:
    """Where a txnId was seen: the check, the table and the version."""

    check: str
    table: str
    version: int

    def __str__(self) -> str:
        return f"v{self.version} of {self.table} (in {self.check})"


class TxnIdRegistry:
    def __init__(self) -> None:
        self._seen: dict[str, Use] = {}
        self._lock = Lock()

    def record(self, txn_id: str, use: Use) -> Use | None:
        """Remember ``txn_id`` at ``use``; the earlier use of it by another commit, if any.

        The same commit seen twice (read again by a later check) is no repeat."""
        with self._lock:
            first = self._seen.setdefault(txn_id, use)
        if first == use or (first.table, first.version) == (use.table, use.version):
            return None
        return first

    def record_table(self, check: str, table: str, txn_ids: Mapping[int, str | None]) -> list[str]:
        """Remember the txnIds of a table's commits (version -> txnId; ``None``: none, which is
        another rule's); each one some other commit of the run used before, in plain words."""
        repeats = []
        for version, txn in sorted(txn_ids.items()):
            if txn is None:
                continue
            first = self.record(txn, Use(check, table, version))
            if first is not None:
                repeats.append(f"v{version} of {table} reuses txnId {txn!r} of {first}")
        return repeats
