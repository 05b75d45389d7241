"""Numbers in table metadata within what Iceberg's format and its readers can hold.

Iceberg's JSON numbers are Java ``int``s and ``long``s (spec, "Table Metadata"); Python's ints
have no bound, so without a check the catalog stored a ``snapshot-id`` or ``sequence-number`` of
2^63, which no Java reader can parse. Snapshot ids are non-negative (Java generates them so) and
``-1`` is the format's "no current snapshot": a snapshot with id -1 made current is a table that
looks empty to every reader. Sequence numbers start at 0 and only grow. Checked on every
metadata the catalog would store or adopt (a commit's result, a registered file).
"""

from __future__ import annotations

from typing import Any

from pyiceberg.table.metadata import TableMetadata

from reference_impl.iceberg_rest import errors

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def out_of_range(value: Any) -> bool:
    """Whether a parsed JSON value holds an integer outside Java's ``long`` anywhere inside it."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            if not LONG_MIN <= item <= LONG_MAX:
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def check_table_metadata(metadata: TableMetadata) -> None:
    """400 unless every id and sequence number of ``metadata`` is one Iceberg's readers accept."""
    if out_of_range(metadata.model_dump()):
        raise errors.bad_request("Table metadata holds a number outside the range of a 64-bit long")
    ids = set()
    for snapshot in metadata.snapshots:
        if snapshot.snapshot_id < 0:
            raise errors.bad_request(f"Invalid snapshot-id {snapshot.snapshot_id}: snapshot ids are non-negative")
        if snapshot.parent_snapshot_id is not None and snapshot.parent_snapshot_id < 0:
            raise errors.bad_request(f"Invalid parent-snapshot-id {snapshot.parent_snapshot_id}")
        if snapshot.sequence_number is not None and snapshot.sequence_number < 0:
            raise errors.bad_request(f"Invalid sequence-number {snapshot.sequence_number}")
        ids.add(snapshot.snapshot_id)
    last_sequence = getattr(metadata, "last_sequence_number", 0)
    if last_sequence is not None and last_sequence < 0:
        raise errors.bad_request(f"Invalid last-sequence-number {last_sequence}")
    current = metadata.current_snapshot_id
    if current is not None and current not in ids:
        raise errors.bad_request(f"current-snapshot-id {current} names no snapshot of the table")
    for name, ref in metadata.refs.items():
        if ref.snapshot_id not in ids:
            raise errors.bad_request(f"Ref {name!r} points at snapshot {ref.snapshot_id}, which the table lacks")
