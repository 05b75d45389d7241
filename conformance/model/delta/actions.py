"""The Delta protocol's actions, reduced to what conflict detection reads (PROTOCOL.md "Actions").

A logical file is its path plus its deletion vector (PROTOCOL.md "Deletion Vectors"): updating a
file's deletion vector is a ``remove`` of the path with the old vector and an ``add`` of the same
path with the new one, in one commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

NO_ROWS: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Add:
    """``add``: the file ``path`` is live, minus the row positions in its deletion vector ``dv``."""

    path: str
    dv: frozenset[int] = NO_ROWS
    data_change: bool = True


@dataclass(frozen=True)
class Remove:
    """``remove``: the logical file ``path`` (with deletion vector ``dv``) is no longer live."""

    path: str
    dv: frozenset[int] = NO_ROWS
    data_change: bool = True


@dataclass(frozen=True)
class Metadata:
    """``metaData``: the table's configuration (schema and partitioning never change here)."""

    configuration: tuple[tuple[str, str], ...]

    def get(self, key: str, default: str = "") -> str:
        return dict(self.configuration).get(key, default)


@dataclass(frozen=True)
class Protocol:
    """``protocol``: reader and writer versions with the table features they name."""

    min_reader: int
    min_writer: int
    features: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Txn:
    """``txn``: the last version an application (``app_id``) committed, for idempotent writes."""

    app_id: str
    version: int


@dataclass(frozen=True)
class CommitInfo:
    """``commitInfo``: the operation and whether it is a blind append (it read nothing)."""

    operation: str
    is_blind_append: bool = False


Action = Add | Remove | Metadata | Protocol | Txn | CommitInfo


@dataclass(frozen=True)
class Commit:
    """One ``_delta_log/<version>.json``: the actions a transaction committed."""

    version: int
    actions: tuple[Action, ...]
    writer: str  # the transaction's name in the history ("T0"...), or "set-up"

    # Cached: a commit never changes, and every snapshot replays every commit before it (picking
    # the same actions out again was 4.6 % of a profiled default run).

    @cached_property
    def adds(self) -> tuple[Add, ...]:
        return tuple(a for a in self.actions if isinstance(a, Add))

    @cached_property
    def removes(self) -> tuple[Remove, ...]:
        return tuple(a for a in self.actions if isinstance(a, Remove))

    @cached_property
    def metadata(self) -> Metadata | None:
        return next((a for a in self.actions if isinstance(a, Metadata)), None)

    @cached_property
    def protocol(self) -> Protocol | None:
        return next((a for a in self.actions if isinstance(a, Protocol)), None)

    @property
    def txns(self) -> tuple[Txn, ...]:
        return tuple(a for a in self.actions if isinstance(a, Txn))

    @property
    def blind_append(self) -> bool:
        return any(isinstance(a, CommitInfo) and a.is_blind_append for a in self.actions)
