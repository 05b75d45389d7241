"""One delta-rs writer (or the set-up/reader) in a process of its own, driven over a pipe.

Some deltalake calls keep Python's GIL while they wait on the network (``alter`` does), so a call
held by the proxy would freeze every thread of its process, the proxy's included. A process per
writer keeps the held call from stopping anyone else, and mirrors one client per writer.

Messages in: ("create", uri, options, config, data_files), ("begin", uri, options, op),
("read", uri, options, version), ("version",), ("stop",). Out: ("ok", value) or ("error", class name, text);
"begin" answers ("started", version) first, then ("ok", None) or an error when the operation ends.
"""

from __future__ import annotations

from multiprocessing.connection import Connection
from typing import Any

from conformance.contract.iceberg import COLUMNS, Operation, OpKind, Row


def arrow(rows: list[Row]) -> Any:
    import pyarrow as pa

    schema = pa.schema([(c, pa.string()) for c in COLUMNS])
    return pa.Table.from_pylist([dict(zip(COLUMNS, r, strict=True)) for r in rows], schema=schema)


def _full(op: Operation) -> Row:
    return (op.values[0] or "", op.values[1] or "", op.values[2] or "")


def predicate(op: Operation) -> str:
    """The SQL predicate delta-rs parses: ``id = '<id>'``, or the non-key column's (``Operation.where``)."""
    column, value = (COLUMNS[op.where[0]], op.where[1]) if op.where is not None else ("id", op.id or "")
    quoted = value.replace("'", "''")
    return f"{column} = '{quoted}'"


def run_operation(dt: Any, op: Operation) -> object:
    """The delta-rs public-API call for ``op`` on the loaded table ``dt`` (its version is the start)."""
    from deltalake import write_deltalake

    where = predicate(op)
    if op.kind is OpKind.INSERT:
        return write_deltalake(dt, arrow([_full(op)]), mode="append")
    if op.kind is OpKind.UPDATE:
        values = {c: v for c, v in zip(COLUMNS, op.values, strict=True) if v is not None and c != "id"}
        return dt.update(new_values=values, predicate=where)
    if op.kind is OpKind.DELETE:
        return dt.delete(where)
    if op.kind is OpKind.MERGE:
        return (
            dt.merge(arrow([_full(op)]), predicate="t.id = s.id", source_alias="s", target_alias="t")
            .when_matched_update(updates={"color": "s.color", "label": "s.label"})
            .when_not_matched_insert_all()
            .execute()
        )
    if op.kind is OpKind.COMPACT:
        return dt.optimize.compact()
    return dt.alter.set_table_properties({"delta.logRetentionDuration": "interval 31 days"})


def _create(uri: str, options: dict[str, str], config: dict[str, str], data_files: list[list[Row]]) -> int:
    from deltalake import DeltaTable, write_deltalake

    DeltaTable.create(uri, arrow([]).schema, configuration=config, storage_options=options)
    for rows in data_files:  # one append per data file
        write_deltalake(uri, arrow(rows), mode="append", storage_options=options)
    return int(DeltaTable(uri, storage_options=options).version())


def _read(uri: str, options: dict[str, str], version: int | None) -> tuple[int, list[Row]]:
    from deltalake import DeltaTable

    dt = DeltaTable(uri, version=version, storage_options=options)
    rows = sorted((r["id"], r["color"], r["label"]) for r in dt.to_pyarrow_table().to_pylist())
    return int(dt.version()), rows


def serve(conn: Connection, site: str | None = None) -> None:
    """The worker's loop (the process target). ``site``: a folder holding the deltalake release under
    test (``artifacts.pypi``), searched before lakecert's own environment."""
    if site:
        import sys

        sys.path.insert(0, site)
    import deltalake
    from deltalake import DeltaTable

    while True:
        msg = conn.recv()
        try:
            if msg[0] == "stop":
                return
            if msg[0] == "version":  # what this process really imported
                conn.send(("ok", str(deltalake.__version__)))
            elif msg[0] == "create":
                conn.send(("ok", _create(*msg[1:])))
            elif msg[0] == "read":
                conn.send(("ok", _read(*msg[1:])))
            elif msg[0] == "begin":
                _, uri, options, op = msg
                dt = DeltaTable(uri, storage_options=options)
                conn.send(("started", int(dt.version())))
                run_operation(dt, op)
                conn.send(("ok", None))
        except Exception as e:  # sent back and judged by the engine: a conflict is an abort
            conn.send(("error", type(e).__name__, str(e)))
