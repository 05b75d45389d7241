"""Parquet data files of the suite's tables (schema ``id: long, value: string``)."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from conformance.contract.delta import Storage
from reference_impl.delta.actions import Action, add_action

Row = dict[str, object]

ARROW_SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("value", pa.string())])


def data_file_uri(location: str, path: str) -> str:
    """Delta add paths are relative to the table root unless they are absolute URIs."""
    return path if "://" in path else f"{location.rstrip('/')}/{path}"


def encode_rows(rows: Sequence[Row]) -> bytes:
    records = [{"id": r["id"], "value": r.get("value")} for r in rows]
    table = pa.Table.from_pylist(records, schema=ARROW_SCHEMA)
    buf = io.BytesIO()
    pq.write_table(table, buf, store_schema=False)  # Delta readers need no Arrow schema blob
    return buf.getvalue()


def row_id(row: Row) -> int:
    value = row["id"]
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"id must be an int, got {value!r}")
    return value


def _stats(rows: Sequence[Row]) -> str:
    ids = [row_id(r) for r in rows]
    stats: dict[str, object] = {"numRecords": len(rows)}
    if ids:
        stats["minValues"] = {"id": min(ids)}
        stats["maxValues"] = {"id": max(ids)}
    stats["nullCount"] = {"id": 0, "value": sum(1 for r in rows if r.get("value") is None)}
    return json.dumps(stats, separators=(",", ":"))


def write_data_file(
    storage: Storage,
    location: str,
    rows: Sequence[Row],
    *,
    modification_time: int,
    file_id: str | None = None,
) -> Action:
    """Write ``rows`` as ``part-<uuid>.parquet`` under ``location``; return its add action."""
    path = f"part-{file_id or uuid.uuid4()}.parquet"
    data = encode_rows(rows)
    storage.put(data_file_uri(location, path), data, if_absent=True)
    return add_action(path, len(data), modification_time, _stats(rows))


def read_parquet(data: bytes) -> pa.Table:
    """One Parquet file's table. ``pq.read_table`` goes through Arrow's dataset layer (made for
    folders of files), which costs about six times the read of a small file: a default run reads
    hundreds of them."""
    return pq.ParquetFile(pa.BufferReader(data)).read(use_threads=False)


def read_data_file(storage: Storage, location: str, path: str) -> list[Row]:
    table = read_parquet(storage.get(data_file_uri(location, path)))
    rows: list[Row] = table.select(["id", "value"]).to_pylist()
    return rows
