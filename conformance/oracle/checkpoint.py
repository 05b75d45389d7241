"""The actions of a Parquet checkpoint (PROTOCOL "Checkpoints", "Checkpoint Schema").

A checkpoint is a Parquet file with one row per action: each row sets exactly one of the
top-level struct columns named after the action types (``protocol``, ``metaData``, ``add``,
``remove``, ``txn``, ...), the others are null. This reads any such file, whatever subset of
columns its writer chose, into the same action objects a commit holds.
"""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from conformance.oracle.commits import Action


class CheckpointFormatError(ValueError):
    """A file that is not a readable checkpoint: not Parquet, or a row that is no single action."""


def _plain(value: Any, type_: pa.DataType) -> Any:
    """Arrow's Python values as JSON's: maps (lists of pairs in ``to_pylist``) become objects."""
    if value is None:
        return None
    if pa.types.is_map(type_):
        return {k: _plain(v, type_.item_type) for k, v in value}
    if pa.types.is_struct(type_):
        fields = [type_.field(i) for i in range(type_.num_fields)]
        return {f.name: _plain(value.get(f.name), f.type) for f in fields}
    if pa.types.is_list(type_) or pa.types.is_large_list(type_):
        return [_plain(v, type_.value_type) for v in value]
    return value


def decode(data: bytes) -> list[Action]:
    """The actions of one checkpoint file (or one part of a multi-part checkpoint), in row order."""
    try:
        table = pq.read_table(io.BytesIO(data))
    except (pa.ArrowInvalid, OSError) as e:
        raise CheckpointFormatError(f"not a Parquet file: {e}") from e
    columns = [(f.name, f.type) for f in table.schema if pa.types.is_struct(f.type)]
    actions: list[Action] = []
    for n, row in enumerate(table.to_pylist()):
        present = [(name, type_) for name, type_ in columns if row.get(name) is not None]
        if len(present) != 1:
            raise CheckpointFormatError(f"row {n} sets {len(present)} action columns, not one")
        name, type_ = present[0]
        actions.append({name: _plain(row[name], type_)})
    return actions
