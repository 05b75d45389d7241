"""The contract between lakecert and a Delta engine under test (profile ``delta-row-conflicts``).

Like the Iceberg contract (``conformance.contract.iceberg``), whose operations, rows, reads
and commit results it shares: writers start row-level operations from one table version, each is
HELD just before it writes its commit file ``_delta_log/<version>.json`` and released in the order
a schedule says. A released commit that finds the version taken reads the winning commits, runs the
engine's conflict checker and either rebases onto the next version or aborts, as it would in
production. The checks judge only what the engine did.

On a catalog-managed table (``DeltaSetup.catalog_managed``) the catalog ratifies each version; a
held commit whose engine publishes ratified commits as a separate step offers ``publish()``
(``schedules.held_run.PublishesCommit``), and the schedule says when it runs. An engine that does
not write catalog-managed tables raises ``NotSupported`` from ``create_table``.

Delta tables here are unpartitioned, with the three string columns of the Iceberg checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from conformance.contract.env import TargetEnv
from conformance.contract.iceberg import (
    CommitResult,
    HeldCommit,
    NotSupported,
    Operation,
    OpKind,
    Row,
    TableRead,
)

__all__ = [
    "CommitResult",
    "DeltaEngine",
    "DeltaEngineTarget",
    "DeltaSetup",
    "HeldCommit",
    "IsolationLevel",
    "NotSupported",
    "OpKind",
    "Operation",
    "Row",
    "TableRead",
]


class IsolationLevel(StrEnum):
    """The table property ``delta.isolationLevel`` (Delta documents both; WriteSerializable is the default)."""

    SERIALIZABLE = "Serializable"
    WRITE_SERIALIZABLE = "WriteSerializable"


@dataclass(frozen=True)
class DeltaSetup:
    """A fresh table: its isolation level, table features and initial data files.

    ``deletion_vectors``: ``delta.enableDeletionVectors`` (DELETE, UPDATE and MERGE mark rows in a
    deletion vector instead of rewriting the file). ``row_tracking``: ``delta.enableRowTracking``
    (stable row ids; with deletion vectors it is what row-level conflict resolution needs).
    ``catalog_managed``: the ``catalogManaged`` table feature (catalog-managed RFC): a catalog
    ratifies each version instead of put-if-absent on ``_delta_log/<version>.json``, and ratified
    commits stay staged until published.
    """

    isolation: IsolationLevel
    deletion_vectors: bool = False
    row_tracking: bool = False
    data_files: tuple[tuple[Row, ...], ...] = ()
    catalog_managed: bool = False

    def describe(self) -> str:
        dv = "deletion vectors on" if self.deletion_vectors else "deletion vectors off"
        rt = ", row tracking on" if self.row_tracking else ""
        cm = ", catalog-managed" if self.catalog_managed else ""
        return f"{self.isolation.value} isolation, {dv}{rt}{cm}"


@runtime_checkable
class DeltaEngine(Protocol):
    """A Delta engine under test. Every call is made from one harness thread, in order."""

    def create_table(self, name: str, setup: DeltaSetup) -> TableRead:
        """Create table ``name`` as ``setup`` says and commit its initial data files. Raise
        ``NotSupported`` when the engine cannot write such a table (the check is NOT_APPLICABLE)."""
        ...

    def begin(self, table: str, writer: int, op: Operation) -> HeldCommit:
        """Start ``op`` as writer ``writer`` on the current version of ``table``; return once it
        is held before writing its commit file (or has ended without one)."""
        ...

    def read(self, table: str, version: int | None = None) -> TableRead:
        """The rows of ``table`` at ``version`` (time travel), or at the latest version."""
        ...

    def close(self) -> None:
        """Release everything the engine holds; called once at the end of the run."""
        ...


class DeltaEngineTarget(Protocol):
    """What a target judged on ``delta-row-conflicts`` provides, besides the ``Target`` protocol."""

    def make_delta_engine(self, env: TargetEnv) -> DeltaEngine:
        """Build the Delta engine under test for this run, once; the check fixtures share it."""
        ...
