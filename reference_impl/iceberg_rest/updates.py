"""Table updates as Java's ``TableMetadata.Builder`` applies them, where pyiceberg 0.12 differs.

pyiceberg applies the updates; this adapts what it would refuse or get wrong for a REST catalog:

- ``upgrade-format-version`` to 3: pyiceberg models v3 metadata but refuses the upgrade (its
  highest writable version is 2), so a v3 create transaction failed. The upgrade is applied to 2
  by pyiceberg and the result re-read as v3 (row lineage is then set by ``with_row_lineage``).
- ``add-sort-order``: the id a client sends is a proposal. Java reuses the id of an equal order
  already in the table and otherwise assigns the next free one; pyiceberg refuses an id that is
  taken, so two replace transactions that each add "order 1" could not both commit in turn.
  ``set-default-sort-order`` with -1 ("the one just added") is resolved to the id chosen.
"""

from __future__ import annotations

from pyiceberg.table.metadata import TableMetadata, TableMetadataUtil
from pyiceberg.table.sorting import SortOrder
from pyiceberg.table.update import (
    AddSortOrderUpdate,
    SetDefaultSortOrderUpdate,
    TableUpdate,
    UpgradeFormatVersionUpdate,
)

_PYICEBERG_MAX_FORMAT = 2
_LAST_ADDED = -1


def _order_id(orders: list[SortOrder], proposed: SortOrder) -> int:
    if not proposed.fields:
        return 0  # the unsorted order always has id 0
    for order in orders:
        if order.fields == proposed.fields:
            return order.order_id
    return max((o.order_id for o in orders), default=0) + 1


def adapt(base: TableMetadata, updates: tuple[TableUpdate, ...]) -> tuple[tuple[TableUpdate, ...], int | None]:
    """The updates for pyiceberg, and the format version to re-read the result as (None: as applied)."""
    orders = list(base.sort_orders)
    last_order: int | None = None
    target_format: int | None = None
    adapted: list[TableUpdate] = []
    for update in updates:
        if isinstance(update, UpgradeFormatVersionUpdate) and update.format_version > _PYICEBERG_MAX_FORMAT:
            target_format = update.format_version
            update = UpgradeFormatVersionUpdate.model_validate(
                {"format-version": max(base.format_version, _PYICEBERG_MAX_FORMAT)}
            )
        elif isinstance(update, AddSortOrderUpdate):
            last_order = _order_id(orders, update.sort_order)
            if any(o.order_id == last_order for o in orders):
                continue  # already in the table: nothing to add
            order = update.sort_order.model_copy(update={"order_id": last_order})
            orders.append(order)
            update = AddSortOrderUpdate.model_validate({"sort-order": order})
        elif (
            isinstance(update, SetDefaultSortOrderUpdate)
            and update.sort_order_id == _LAST_ADDED
            and last_order is not None
        ):
            update = SetDefaultSortOrderUpdate.model_validate({"sort-order-id": last_order})
        adapted.append(update)
    return tuple(adapted), target_format


def reformat(metadata: TableMetadata, format_version: int | None) -> TableMetadata:
    """``metadata`` re-read at ``format_version`` (an upgrade pyiceberg applied only up to 2)."""
    if format_version is None or format_version <= metadata.format_version:
        return metadata
    return TableMetadataUtil.parse_obj({**metadata.model_dump(), "format-version": format_version})
