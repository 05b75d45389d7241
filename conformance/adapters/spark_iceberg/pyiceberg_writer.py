"""pyiceberg as a second writer beside Spark, through the same reference REST catalog.

pyiceberg 0.12 writes copy-on-write only and revalidates on a refused commit. It plays INSERTs
and DELETEs, each one commit and one snapshot; UPDATE and compaction stay with Spark, because
pyiceberg has no compaction and its overwrite commits two snapshots at once.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyiceberg.catalog import load_catalog

from conformance.contract.iceberg import COLUMNS, Operation, OpKind

SCHEMA = pa.schema([pa.field(c, pa.string()) for c in COLUMNS])
PLAYS = (OpKind.INSERT, OpKind.DELETE)
# pyiceberg 0.12 reads v3 tables but its manifest writer refuses v3 (ValueError on every write).
MAX_FORMAT_VERSION = 2


class PyIcebergWriter:
    def __init__(self, properties: dict[str, str], namespace: str) -> None:
        self.catalog: Any = load_catalog("lakecert-pyiceberg", **properties)
        self.namespace = namespace

    @staticmethod
    def writes_format(version: int) -> bool:
        return version <= MAX_FORMAT_VERSION

    def run(self, table: str, op: Operation) -> None:
        """Load the table (its current snapshot is the starting snapshot), write, commit."""
        tbl = self.catalog.load_table((self.namespace, table))
        if op.kind is OpKind.INSERT:
            tbl.append(pa.Table.from_pylist([dict(zip(COLUMNS, op.values, strict=True))], schema=SCHEMA))
        elif op.kind is OpKind.DELETE:
            column, value = (COLUMNS[op.where[0]], op.where[1]) if op.where is not None else ("id", op.id or "")
            quoted = value.replace("'", "''")
            tbl.delete(delete_filter=f"{column} == '{quoted}'")
        else:
            raise ValueError(f"pyiceberg does not play {op.kind}")
