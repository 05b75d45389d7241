"""Conflict validation against the snapshots committed since an operation's starting snapshot.

The switches follow Iceberg's: ``validateDataFilesExist``, ``validateDeletedFiles``,
``validateNoConflictingDeleteFiles``, ``validateNoConflictingDataFiles`` (serializable only) and
format v3's check for concurrently added deletion vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.contract.iceberg import Isolation, Operation, TableSetup
from conformance.model.iceberg.snapshot import Metadata, SnapshotOp
from conformance.model.iceberg.store import ObjectStore
from conformance.model.iceberg.writer import Written


@dataclass(frozen=True)
class Validations:
    # data files the operation references were not removed by an overwrite or a compaction
    data_files_exist: bool = True
    # ... nor by a delete (validateDeletedFiles extends the check above to DELETE snapshots)
    deleted_files: bool = True
    # no delete file added since the start deletes rows from a data file the operation references
    no_conflicting_delete_files: bool = True
    # serializable only: no data file added since the start holds a row matching the predicate
    no_conflicting_data_files: bool = True
    # format v3: no deletion vector added since the start for a data file the operation writes one for
    no_concurrent_dvs: bool = True


NONE = Validations(False, False, False, False, False)
ALL = Validations()


def validate(
    setup: TableSetup,
    checks: Validations,
    op: Operation,
    start: int,
    written: Written,
    current: Metadata,
    store: ObjectStore,
) -> str | None:
    """Why the operation conflicts with what committed after ``start``; None when it does not."""
    removal_ops = set()
    if checks.data_files_exist:
        removal_ops |= {SnapshotOp.OVERWRITE, SnapshotOp.REPLACE}
    if checks.deleted_files:
        removal_ops.add(SnapshotOp.DELETE)
    for snap in current.since(start):
        gone = snap.removed_data & written.referenced
        if gone and snap.operation in removal_ops:
            return f"data file {min(gone)} was removed at v{snap.version}"
        for name in sorted(snap.added_deletes):
            deletes = store.deletes(name)
            if checks.no_conflicting_delete_files and deletes.data_files & written.referenced:
                return f"delete file {name} added at v{snap.version} touches a data file it references"
            if setup.format_version >= 3 and checks.no_concurrent_dvs and deletes.dv_for in written.dv_files:
                return f"deletion vector {name} for {deletes.dv_for} was added at v{snap.version}"
        if (
            checks.no_conflicting_data_files
            and setup.isolation is Isolation.SERIALIZABLE
            and (op.id is not None or op.where is not None)
            and snap.operation in (SnapshotOp.APPEND, SnapshotOp.OVERWRITE)
        ):
            for name in sorted(snap.added_data):
                if any(op.matches(row) for row in store.data(name).rows):
                    return f"data file {name} added at v{snap.version} matches {op.predicate}"
    return None
