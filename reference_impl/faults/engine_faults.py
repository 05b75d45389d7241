"""Faulty variants of the reference Iceberg engine: each is the model with one preset switch
flipped. The registered ``cls`` takes the run's ``TargetEnv`` and returns the engine."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from conformance.contract.target import TargetEnv
from conformance.model.iceberg import CORRECTED, NONE, SPARK, Preset, Validations
from reference_impl.faults.base import fault
from reference_impl.iceberg import ModelEngine

# Row-level writes that ignore concurrent deletes: no validateDeletedFiles or
# validateNoConflictingDeleteFiles (merge-on-read), no validateNoConflictingDeletes (copy-on-write).
_MOR_IGNORES_DELETES = Validations(deleted_files=False, no_conflicting_delete_files=False)
_COW_IGNORES_DELETES = Validations(data_files_exist=False, deleted_files=False, no_conflicting_delete_files=False)


def _without_data_conflicts(v: Validations) -> Validations:
    return replace(v, no_conflicting_data_files=False)


class _PresetEngine(ModelEngine):
    PRESET: ClassVar[Preset]

    def __init__(self, env: TargetEnv | None = None) -> None:
        super().__init__(self.PRESET)


@fault(
    "spark-delete-validation",
    "engine",
    ("ICE-NO-RESURRECTION", "ICE-SERIALIZABLE-READS", "ICE-NON-KEY-PREDICATES"),
    "Spark's choices: a merge-on-read DELETE skips the deleted-file and delete-file checks (resurrected row).",
)
class SparkDeleteValidation(_PresetEngine):
    PRESET = SPARK


@fault(
    "no-delete-file-validation",
    "engine",
    (
        "ICE-NO-RESURRECTION",
        "ICE-NO-DUPLICATE-ROW",
        "ICE-SERIALIZABLE-READS",
        "ICE-NON-KEY-PREDICATES",
        "ICE-REINSERT-AFTER-DELETE",
    ),
    "UPDATE and DELETE, in both write modes, ignore deletes committed since their starting snapshot.",
)
class NoDeleteFileValidation(_PresetEngine):
    PRESET = replace(
        CORRECTED,
        name="no-delete-file-validation",
        update_mor=_MOR_IGNORES_DELETES,
        delete_mor=_MOR_IGNORES_DELETES,
        update_cow=_COW_IGNORES_DELETES,
        delete_cow=_COW_IGNORES_DELETES,
    )


@fault(
    "no-data-file-validation-serializable",
    "engine",
    ("ICE-SERIALIZABLE-COMMIT-ORDER",),
    "Serializable isolation without the conflicting-data-files check: writes miss concurrent inserts.",
)
class NoDataFileValidationSerializable(_PresetEngine):
    PRESET = replace(
        CORRECTED,
        name="no-data-file-validation-serializable",
        update_cow=_without_data_conflicts(CORRECTED.update_cow),
        update_mor=_without_data_conflicts(CORRECTED.update_mor),
        delete_cow=_without_data_conflicts(CORRECTED.delete_cow),
        delete_mor=_without_data_conflicts(CORRECTED.delete_mor),
    )


@fault(
    "compaction-skips-validation",
    "engine",
    ("ICE-COMPACTION-PRESERVES-ROWS", "ICE-SERIALIZABLE-READS"),
    "A data file compaction commits over concurrent deletes and rewrites without validating.",
)
class CompactionSkipsValidation(_PresetEngine):
    PRESET = replace(CORRECTED, name="compaction-skips-validation", compaction=NONE)


@fault(
    "abort-after-swap",
    "engine",
    ("ICE-ABORT-LEAVES-NO-TRACE", "ICE-SERIALIZABLE-READS"),
    "The writer swaps the metadata pointer first and validates after, reporting ABORTED too late.",
)
class AbortAfterSwap(_PresetEngine):
    PRESET = replace(CORRECTED, name="abort-after-swap", validate_before_swap=False)


@fault(
    "catalog-blind-swap",
    "engine",
    # A replaced commit's deletes are lost with it: the deleted rows come back.
    ("ICE-ONE-VERSION-PER-COMMIT", "ICE-SERIALIZABLE-READS", "ICE-NO-RESURRECTION"),
    "The catalog swaps the metadata pointer without comparing it: a later commit replaces an earlier one.",
)
class CatalogBlindSwap(_PresetEngine):
    PRESET = replace(CORRECTED, name="catalog-blind-swap", compare_and_swap=False)


@fault(
    "no-conflict-validation",
    "engine",
    (
        "ICE-NO-RESURRECTION",
        "ICE-NO-DUPLICATE-ROW",
        "ICE-COMPACTION-PRESERVES-ROWS",
        "ICE-SERIALIZABLE-COMMIT-ORDER",
        "ICE-SERIALIZABLE-READS",
        "ICE-NON-KEY-PREDICATES",
        "ICE-REINSERT-AFTER-DELETE",
        "ICE-NO-DANGLING-DELETES",
    ),
    "No write validates anything: only the catalog's compare-and-swap orders the commits.",
)
class NoConflictValidation(_PresetEngine):
    PRESET = replace(
        CORRECTED,
        name="no-conflict-validation",
        update_cow=NONE,
        update_mor=NONE,
        delete_cow=NONE,
        delete_mor=NONE,
        compaction=NONE,
    )


# Merge-on-read row deltas that skip validateDataFilesExist and validateDeletedFiles: their delete
# files may target a data file a compaction or a copy-on-write rewrite already removed.
_ROW_DELTA_SKIPS_FILES_EXIST = Validations(data_files_exist=False, deleted_files=False)


@fault(
    "row-delta-skips-data-files-exist",
    "engine",
    ("ICE-NO-DANGLING-DELETES", "ICE-COMPACTION-PRESERVES-ROWS", "ICE-SERIALIZABLE-READS"),
    "Merge-on-read UPDATE and DELETE commit delete files without checking their data files still exist.",
)
class RowDeltaSkipsDataFilesExist(_PresetEngine):
    PRESET = replace(
        CORRECTED,
        name="row-delta-skips-data-files-exist",
        update_mor=_ROW_DELTA_SKIPS_FILES_EXIST,
        delete_mor=_ROW_DELTA_SKIPS_FILES_EXIST,
    )
