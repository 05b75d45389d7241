"""Which validations each kind of operation runs, per write mode: an engine's choices as data."""

from __future__ import annotations

from dataclasses import dataclass, replace

from conformance.contract.iceberg import Mode, OpKind
from conformance.model.iceberg.validation import ALL, NONE, Validations


@dataclass(frozen=True)
class Preset:
    name: str
    insert: Validations
    update_cow: Validations
    update_mor: Validations
    delete_cow: Validations
    delete_mor: Validations
    compaction: Validations
    validate_before_swap: bool = True  # False: swap first, validate after (a faulty variant)
    compare_and_swap: bool = True  # False: the catalog swaps blindly (a faulty variant)

    def validations(self, kind: OpKind, mode: Mode) -> Validations:
        cow = mode is Mode.COPY_ON_WRITE
        if kind is OpKind.UPDATE:
            return self.update_cow if cow else self.update_mor
        if kind is OpKind.DELETE:
            return self.delete_cow if cow else self.delete_mor
        return self.compaction if kind is OpKind.COMPACT else self.insert


# Spark's SparkPositionDeltaWrite (Iceberg 1.10-1.11): a merge-on-read DELETE only checks that the
# data files it references still exist; UPDATE (and MERGE) add the deleted-file and delete-file
# checks. Copy-on-write always checks concurrent deletes. Data conflicts: serializable only
# (applied by `validate`). Compaction (RewriteFiles) needs its files present and free of new deletes.
SPARK = Preset(
    name="spark",
    insert=NONE,
    update_cow=ALL,
    update_mor=ALL,
    delete_cow=ALL,
    delete_mor=Validations(deleted_files=False, no_conflicting_delete_files=False),
    compaction=Validations(no_conflicting_data_files=False),
)

# The fix the spec suggests: a merge-on-read DELETE validates like an UPDATE.
CORRECTED = replace(SPARK, name="corrected", delete_mor=ALL)
