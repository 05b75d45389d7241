"""The Spark SQL text of the contract's row operations, shared by the two Spark engines (Iceberg
tables through the REST catalog, Delta tables by path): only the table name and what each format
does for MERGE, compaction and metadata differ, and those stay with the engines."""

from __future__ import annotations

from conformance.contract.iceberg import COLUMNS, Operation, OpKind


def sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def predicate(op: Operation) -> str | None:
    """``id = <value>``, or ``<column> = <value>`` for a non-key predicate; None without either."""
    if op.where is not None:
        return f"{COLUMNS[op.where[0]]} = {sql_str(op.where[1])}"
    return f"id = {sql_str(op.id)}" if op.id is not None else None


def row_statement(name: str, op: Operation) -> str | None:
    """INSERT, UPDATE or DELETE of ``op`` on the table ``name``; None for the other kinds."""
    if op.kind is OpKind.INSERT:
        return f"INSERT INTO {name} VALUES ({', '.join(sql_str(v or '') for v in op.values)})"
    if op.kind is OpKind.UPDATE:
        sets = ", ".join(f"{c} = {sql_str(v)}" for c, v in zip(COLUMNS, op.values, strict=True) if v is not None)
        return f"UPDATE {name} SET {sets} WHERE {predicate(op)}"
    if op.kind is OpKind.DELETE:
        return f"DELETE FROM {name} WHERE {predicate(op)}"
    return None
