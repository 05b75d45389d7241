"""Classic single-file Parquet checkpoints and ``_last_checkpoint`` (PROTOCOL.md "Checkpoints").

One row per action; each row sets exactly one of the struct columns ``protocol``,
``metaData`` and ``add`` (a subset of Delta's checkpoint schema: no tombstones, txn or
domain metadata, which the suite's tables never need).
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from conformance.contract.delta import Storage
from reference_impl.delta.actions import Action, kind
from reference_impl.delta.data_files import read_parquet
from reference_impl.delta.log_paths import checkpoint_uri, last_checkpoint_uri, multipart_checkpoint_uri

_STR_MAP = pa.map_(pa.string(), pa.string())
CHECKPOINT_SCHEMA = pa.schema(
    [
        pa.field(
            "protocol",
            pa.struct(
                [
                    ("minReaderVersion", pa.int32()),
                    ("minWriterVersion", pa.int32()),
                    ("readerFeatures", pa.list_(pa.string())),
                    ("writerFeatures", pa.list_(pa.string())),
                ]
            ),
        ),
        pa.field(
            "metaData",
            pa.struct(
                [
                    ("id", pa.string()),
                    ("name", pa.string()),
                    ("description", pa.string()),
                    ("format", pa.struct([("provider", pa.string()), ("options", _STR_MAP)])),
                    ("schemaString", pa.string()),
                    ("partitionColumns", pa.list_(pa.string())),
                    ("configuration", _STR_MAP),
                    ("createdTime", pa.int64()),
                ]
            ),
        ),
        pa.field(
            "add",
            pa.struct(
                [
                    ("path", pa.string()),
                    ("partitionValues", _STR_MAP),
                    ("size", pa.int64()),
                    ("modificationTime", pa.int64()),
                    ("dataChange", pa.bool_()),
                    ("stats", pa.string()),
                    ("tags", _STR_MAP),
                ]
            ),
        ),
    ]
)
_COLUMNS = tuple(CHECKPOINT_SCHEMA.names)


def encode_checkpoint(actions: Sequence[Action]) -> bytes:
    """Parquet bytes for protocol, metaData and add actions (others are refused)."""
    rows: list[dict[str, Any]] = []
    for action in actions:
        k = kind(action)
        if k not in _COLUMNS:
            raise ValueError(f"{k} actions are not stored in this checkpoint format")
        rows.append({k: action[k]})
    table = pa.Table.from_pylist(rows, schema=CHECKPOINT_SCHEMA)
    buf = io.BytesIO()
    pq.write_table(table, buf, store_schema=False)  # Delta readers need no Arrow schema blob
    return buf.getvalue()


def _to_py(value: Any, typ: pa.DataType) -> Any:
    """Arrow's Python values with maps as dicts (``to_pylist`` gives lists of pairs)."""
    if value is None:
        return None
    if isinstance(typ, pa.MapType):
        return {k: _to_py(v, typ.item_type) for k, v in value}
    if isinstance(typ, pa.StructType):
        return {f.name: _to_py(value[f.name], f.type) for f in typ if value.get(f.name) is not None}
    if isinstance(typ, pa.ListType):
        return [_to_py(v, typ.value_type) for v in value]
    return value


def decode_checkpoint(data: bytes) -> list[Action]:
    table = read_parquet(data)
    present = [c for c in _COLUMNS if c in table.column_names]
    actions: list[Action] = []
    for row in table.select(present).to_pylist():
        for col in present:
            if row[col] is not None:
                actions.append({col: _to_py(row[col], CHECKPOINT_SCHEMA.field(col).type)})
    return actions


def write_checkpoint(storage: Storage, location: str, version: int, actions: Sequence[Action]) -> bool:
    """Write the checkpoint (if absent) and point ``_last_checkpoint`` at it; False if it existed."""
    data = encode_checkpoint(actions)
    try:
        storage.put(checkpoint_uri(location, version), data, if_absent=True)
    except FileExistsError:
        return False
    last = read_last_checkpoint(storage, location)
    if last is None or int(last.get("version", -1)) <= version:
        hint = {
            "version": version,
            "size": len(actions),
            "sizeInBytes": len(data),
            "numOfAddFiles": sum(1 for a in actions if "add" in a),
        }
        storage.put(last_checkpoint_uri(location), json.dumps(hint, separators=(",", ":")).encode())
    return True


def write_multipart_checkpoint(
    storage: Storage, location: str, version: int, actions: Sequence[Action], parts: int, *, skip: int | None = None
) -> list[str]:
    """The checkpoint as ``parts`` files, ``<v>.checkpoint.<i>.<parts>.parquet`` (PROTOCOL "Checkpoints":
    the actions split over the parts, in order), leaving out part ``skip`` (a writer that died between
    parts: no checkpoint at all). Writes no ``_last_checkpoint`` (``write_last_checkpoint``); returns the
    URIs written. The reference reads and writes only single-file checkpoints; the suite plants these."""
    size = -(-len(actions) // parts)  # ceil: every part holds at least one action when there are enough
    written = []
    for part in range(1, parts + 1):
        if part == skip:
            continue
        uri = multipart_checkpoint_uri(location, version, part, parts)
        storage.put(uri, encode_checkpoint(actions[(part - 1) * size : part * size]), if_absent=True)
        written.append(uri)
    return written


def write_last_checkpoint(storage: Storage, location: str, hint: dict[str, Any]) -> None:
    """Overwrite ``_last_checkpoint`` with ``hint`` whatever it says (the suite plants stale hints, and
    hints naming a checkpoint that does not exist: it is only a hint)."""
    storage.put(last_checkpoint_uri(location), json.dumps(hint, separators=(",", ":")).encode())


def read_checkpoint(storage: Storage, location: str, version: int) -> list[Action]:
    return decode_checkpoint(storage.get(checkpoint_uri(location, version)))


def read_last_checkpoint(storage: Storage, location: str) -> dict[str, Any] | None:
    """The ``_last_checkpoint`` hint, or None when absent or unreadable (it is only a hint)."""
    try:
        hint = json.loads(storage.get(last_checkpoint_uri(location)))
    except (FileNotFoundError, ValueError):
        return None
    return hint if isinstance(hint, dict) else None
