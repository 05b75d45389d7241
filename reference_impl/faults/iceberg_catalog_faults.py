"""Faulty variants of the reference Iceberg REST catalog (profile ``iceberg-catalog-commit``).

Each overrides one hook of ``RestCatalogService`` (``_check_requirement`` or ``_to_store``);
everything else, the HTTP layer included, stays correct.
"""

from __future__ import annotations

from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.refs import SnapshotRefType
from pyiceberg.table.update import (
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    TableRequirement,
)

from reference_impl.faults.base import fault
from reference_impl.iceberg_rest import errors
from reference_impl.iceberg_rest.catalog import RestCatalogService, metadata_file_location, metadata_json
from reference_impl.iceberg_rest.names import Namespace


def _ignoring(skipped: type[TableRequirement]) -> type[RestCatalogService]:
    """A catalog that never checks one requirement type (and checks every other one)."""

    class Ignores(RestCatalogService):
        def _check_requirement(
            self, namespace: Namespace, table: str, requirement: TableRequirement, base: TableMetadata | None
        ) -> None:
            if not isinstance(requirement, skipped):
                super()._check_requirement(namespace, table, requirement, base)

    Ignores.__name__ = Ignores.__qualname__ = f"Ignores{skipped.__name__}"
    return Ignores


# One variant per requirement type of the REST spec; ignoring the branch requirement also lets
# every racing commit through.
IGNORED: dict[type[TableRequirement], str] = {
    AssertCreate: "assert-create",
    AssertTableUUID: "assert-table-uuid",
    AssertRefSnapshotId: "assert-ref-snapshot-id",
    AssertLastAssignedFieldId: "assert-last-assigned-field-id",
    AssertCurrentSchemaId: "assert-current-schema-id",
    AssertLastAssignedPartitionId: "assert-last-assigned-partition-id",
    AssertDefaultSpecId: "assert-default-spec-id",
    AssertDefaultSortOrderId: "assert-default-sort-order-id",
}
for _requirement, _kind in IGNORED.items():
    _breaks: tuple[str, ...] = ("ICE-CAT-REQUIREMENT-TYPES",)
    if _requirement is AssertRefSnapshotId:
        _breaks = ("ICE-CAT-ATOMIC-REQUIREMENTS", *_breaks)
    fault(f"iceberg-catalog-ignores-{_kind}", "iceberg-catalog", _breaks, f"Never checks {_kind}.")(
        _ignoring(_requirement)
    )


@fault(
    "iceberg-catalog-refusal-leaves-file",
    "iceberg-catalog",
    breaks=("ICE-CAT-REFUSAL-NO-TRACE",),
    description="Writes the next metadata file before checking requirements and keeps it when it refuses.",
)
class RefusalLeavesFile(RestCatalogService):
    def _check_requirement(
        self, namespace: Namespace, table: str, requirement: TableRequirement, base: TableMetadata | None
    ) -> None:
        try:
            super()._check_requirement(namespace, table, requirement, base)
        except Exception:
            if base is not None:
                self.write_new_file(metadata_file_location(base, 99999), metadata_json(base))
            raise


@fault(
    "iceberg-catalog-drops-tags",
    "iceberg-catalog",
    breaks=("ICE-CAT-SNAPSHOTS-KEPT",),
    description="Stores a commit's metadata without its tag refs.",
)
class DropsTags(RestCatalogService):
    def _to_store(self, metadata: TableMetadata) -> TableMetadata:
        refs = {name: ref for name, ref in metadata.refs.items() if ref.snapshot_ref_type != SnapshotRefType.TAG}
        return metadata.model_copy(update={"refs": refs})


@fault(
    "iceberg-catalog-untyped-conflict",
    "iceberg-catalog",
    breaks=("ICE-CAT-CONFLICT-TYPE",),
    description="Refuses a commit whose requirement fails with 409 but names no error type (as Nessie 0.99 does).",
)
class UntypedConflict(RestCatalogService):
    def _check_requirement(
        self, namespace: Namespace, table: str, requirement: TableRequirement, base: TableMetadata | None
    ) -> None:
        try:
            super()._check_requirement(namespace, table, requirement, base)
        except errors.IcebergApiError as e:
            raise errors.IcebergApiError(e.code, "", e.message) from None
