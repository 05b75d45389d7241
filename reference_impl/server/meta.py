"""The server's own records, beside the catalog's tables in the same SQLite file.

The wrapped ``ReferenceCatalog`` (or faulty variant) knows tables by id and name only. UC's
API also has catalogs, schemas, named staging tables, columns and properties: those live
here. The catalog stays the only authority on ratification and names; this store is
written after the catalog accepted an operation, never instead of it.

``table_row`` and ``stored_commit`` read the catalog's true state (not what a faulty
variant serves): the server's policies (UC's limit on unpublished commits, idempotent
replays) must not depend on a fault under test.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.contract.delta import RatifiedCommit
from reference_impl.catalog.store import CatalogStore, TableRow, Tx

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS uc_catalogs (
        name TEXT PRIMARY KEY, id TEXT NOT NULL, comment TEXT, properties TEXT NOT NULL,
        storage_root TEXT, created_at INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS uc_schemas (
        catalog_name TEXT NOT NULL, name TEXT NOT NULL, id TEXT NOT NULL, comment TEXT,
        properties TEXT NOT NULL, storage_root TEXT, created_at INTEGER NOT NULL,
        PRIMARY KEY (catalog_name, name))""",
    """CREATE TABLE IF NOT EXISTS uc_staging_tables (
        table_id TEXT PRIMARY KEY, catalog_name TEXT NOT NULL, schema_name TEXT NOT NULL,
        name TEXT NOT NULL, location TEXT NOT NULL, created_at INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS uc_tables (
        table_id TEXT PRIMARY KEY, catalog_name TEXT NOT NULL, schema_name TEXT NOT NULL,
        name TEXT NOT NULL, columns TEXT NOT NULL, properties TEXT NOT NULL, comment TEXT,
        created_at INTEGER NOT NULL, UNIQUE (catalog_name, schema_name, name))""",
    """CREATE TABLE IF NOT EXISTS uc_commit_files (
        table_id TEXT NOT NULL, file_name TEXT NOT NULL, file_size INTEGER NOT NULL,
        modification_time INTEGER NOT NULL, PRIMARY KEY (table_id, file_name))""",
)


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Namespace:
    """A catalog (``schema_name`` None) or a schema."""

    catalog_name: str
    schema_name: str | None
    id: str
    comment: str | None
    properties: dict[str, str]
    storage_root: str | None
    created_at: int


@dataclass(frozen=True)
class StagingRecord:
    table_id: str
    catalog_name: str
    schema_name: str
    name: str
    location: str


@dataclass(frozen=True)
class TableRecord:
    table_id: str
    catalog_name: str
    schema_name: str
    name: str
    columns: list[dict[str, Any]]
    properties: dict[str, str]
    comment: str | None
    created_at: int

    @property
    def full_name(self) -> str:
        return f"{self.catalog_name}.{self.schema_name}.{self.name}"


class MetaStore:
    """UC-side records; safe to share between threads (one SQLite connection per thread)."""

    def __init__(self, db_path: str | Path) -> None:
        self._store = CatalogStore(db_path)
        with self._store.write() as tx:
            for statement in _SCHEMA:
                tx.conn.execute(statement)

    def close(self) -> None:
        self._store.close()

    # --------------------------------------------------------- namespaces

    def create_catalog(self, name: str, comment: str | None, props: dict[str, str], root: str | None) -> bool:
        """False when the name is taken."""
        with self._store.write() as tx:
            if tx.conn.execute("SELECT 1 FROM uc_catalogs WHERE name = ?", (name,)).fetchone():
                return False
            tx.conn.execute(
                "INSERT INTO uc_catalogs VALUES (?, ?, ?, ?, ?, ?)",
                (name, str(uuid.uuid4()), comment, json.dumps(props), root, now_ms()),
            )
        return True

    def catalogs(self, name: str | None = None) -> list[Namespace]:
        sql = "SELECT name, id, comment, properties, storage_root, created_at FROM uc_catalogs"
        args: tuple[str, ...] = ()
        if name is not None:
            sql, args = sql + " WHERE name = ?", (name,)
        with self._store.read() as tx:
            rows = tx.conn.execute(sql + " ORDER BY name", args).fetchall()
        return [Namespace(n, None, i, c, json.loads(p), r, t) for n, i, c, p, r, t in rows]

    def create_schema(
        self, catalog: str, name: str, comment: str | None, props: dict[str, str], root: str | None
    ) -> bool:
        with self._store.write() as tx:
            taken = tx.conn.execute(
                "SELECT 1 FROM uc_schemas WHERE catalog_name = ? AND name = ?", (catalog, name)
            ).fetchone()
            if taken:
                return False
            tx.conn.execute(
                "INSERT INTO uc_schemas VALUES (?, ?, ?, ?, ?, ?, ?)",
                (catalog, name, str(uuid.uuid4()), comment, json.dumps(props), root, now_ms()),
            )
        return True

    def schemas(self, catalog: str, name: str | None = None) -> list[Namespace]:
        sql = (
            "SELECT catalog_name, name, id, comment, properties, storage_root, created_at FROM uc_schemas"
            " WHERE catalog_name = ?"
        )
        args: tuple[str, ...] = (catalog,)
        if name is not None:
            sql, args = sql + " AND name = ?", (catalog, name)
        with self._store.read() as tx:
            rows = tx.conn.execute(sql + " ORDER BY name", args).fetchall()
        return [Namespace(c, n, i, cm, json.loads(p), r, t) for c, n, i, cm, p, r, t in rows]

    def namespace_holds_tables(self, catalog: str, schema: str | None = None) -> bool:
        """Whether a catalog (or one of its schemas) holds a table."""
        where, args = "catalog_name = ?", [catalog]
        if schema is not None:
            where, args = where + " AND schema_name = ?", [catalog, schema]
        with self._store.read() as tx:
            return any(
                tx.conn.execute(f"SELECT 1 FROM {t} WHERE {where} LIMIT 1", args).fetchone() for t in ("uc_tables",)
            )

    def update_namespace(
        self,
        catalog: str,
        schema: str | None,
        *,
        new_name: str | None,
        comment: str | None,
        props: dict[str, str] | None,
    ) -> bool:
        """Change a catalog or a schema (None: unchanged); False when ``new_name`` is taken. A renamed
        catalog's schemas follow it; the caller refuses renames of namespaces that hold tables."""
        with self._store.write() as tx:
            if schema is None:
                table, where, args = "uc_catalogs", "name = ?", [catalog]
                taken_sql, taken_args = "SELECT 1 FROM uc_catalogs WHERE name = ?", [new_name]
            else:
                table, where, args = "uc_schemas", "catalog_name = ? AND name = ?", [catalog, schema]
                taken_sql = "SELECT 1 FROM uc_schemas WHERE catalog_name = ? AND name = ?"
                taken_args = [catalog, new_name]
            if new_name is not None and tx.conn.execute(taken_sql, taken_args).fetchone():
                return False
            if comment is not None:
                tx.conn.execute(f"UPDATE {table} SET comment = ? WHERE {where}", [comment, *args])
            if props is not None:
                tx.conn.execute(f"UPDATE {table} SET properties = ? WHERE {where}", [json.dumps(props), *args])
            if new_name is not None:
                tx.conn.execute(f"UPDATE {table} SET name = ? WHERE {where}", [new_name, *args])
                if schema is None:
                    tx.conn.execute(
                        "UPDATE uc_schemas SET catalog_name = ? WHERE catalog_name = ?", (new_name, catalog)
                    )
        return True

    def delete_namespace(self, catalog: str, schema: str | None = None) -> None:
        """Remove a schema, or a catalog and its schemas (the caller checked they hold no table)."""
        with self._store.write() as tx:
            if schema is not None:
                tx.conn.execute("DELETE FROM uc_schemas WHERE catalog_name = ? AND name = ?", (catalog, schema))
                return
            tx.conn.execute("DELETE FROM uc_schemas WHERE catalog_name = ?", (catalog,))
            tx.conn.execute("DELETE FROM uc_catalogs WHERE name = ?", (catalog,))

    # --------------------------------------------------------- tables

    def add_staging(self, record: StagingRecord) -> None:
        with self._store.write() as tx:
            tx.conn.execute(
                "INSERT INTO uc_staging_tables VALUES (?, ?, ?, ?, ?, ?)",
                (record.table_id, record.catalog_name, record.schema_name, record.name, record.location, now_ms()),
            )

    def staging(self, table_id: str) -> StagingRecord | None:
        with self._store.read() as tx:
            row = tx.conn.execute(
                "SELECT table_id, catalog_name, schema_name, name, location FROM uc_staging_tables WHERE table_id = ?",
                (table_id,),
            ).fetchone()
        return StagingRecord(*row) if row else None

    def add_table(self, record: TableRecord) -> None:
        with self._store.write() as tx:
            self.add_table_in(tx, record)

    @staticmethod
    def add_table_in(tx: Tx, record: TableRecord) -> None:
        """The table's record, in the catalog's registration transaction (``catalog.alongside``). The
        catalog just gave the name to this table, so a record of another table under the name is
        stale (left by a drop before drops and their records were one transaction): it goes."""
        tx.conn.execute(
            "DELETE FROM uc_tables WHERE catalog_name = ? AND schema_name = ? AND name = ? AND table_id <> ?",
            (record.catalog_name, record.schema_name, record.name, record.table_id),
        )
        tx.conn.execute(
            "INSERT INTO uc_tables VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.table_id,
                record.catalog_name,
                record.schema_name,
                record.name,
                json.dumps(record.columns),
                json.dumps(record.properties),
                record.comment,
                record.created_at,
            ),
        )

    def delete_table(self, table_id: str) -> None:
        with self._store.write() as tx:
            self.delete_table_in(tx, table_id)

    @staticmethod
    def delete_table_in(tx: Tx, table_id: str) -> None:
        """Forget a dropped table's UC records (and its staging record: it cannot be created again),
        in the catalog's drop transaction (``catalog.alongside``)."""
        for table in ("uc_tables", "uc_staging_tables", "uc_commit_files"):
            tx.conn.execute(f"DELETE FROM {table} WHERE table_id = ?", (table_id,))

    def update_table(
        self,
        table_id: str,
        *,
        properties: dict[str, str] | None,
        comment: str | None,
        columns: list[dict[str, Any]] | None = None,
    ) -> None:
        with self._store.write() as tx:
            if columns is not None:
                tx.conn.execute("UPDATE uc_tables SET columns = ? WHERE table_id = ?", (json.dumps(columns), table_id))
            if properties is not None:
                tx.conn.execute(
                    "UPDATE uc_tables SET properties = ? WHERE table_id = ?", (json.dumps(properties), table_id)
                )
            if comment is not None:
                tx.conn.execute("UPDATE uc_tables SET comment = ? WHERE table_id = ?", (comment, table_id))

    _TABLE_COLS = "table_id, catalog_name, schema_name, name, columns, properties, comment, created_at"

    def _tables(self, where: str, args: tuple[str, ...]) -> list[TableRecord]:
        with self._store.read() as tx:
            rows = tx.conn.execute(f"SELECT {self._TABLE_COLS} FROM uc_tables WHERE {where}", args).fetchall()
        return [TableRecord(i, c, s, n, json.loads(col), json.loads(p), cm, t) for i, c, s, n, col, p, cm, t in rows]

    def table(self, table_id: str) -> TableRecord | None:
        found = self._tables("table_id = ?", (table_id,))
        return found[0] if found else None

    def table_by_name(self, catalog: str, schema: str, name: str) -> TableRecord | None:
        found = self._tables("catalog_name = ? AND schema_name = ? AND name = ?", (catalog, schema, name))
        return found[0] if found else None

    def tables_in(self, catalog: str, schema: str) -> list[TableRecord]:
        return self._tables("catalog_name = ? AND schema_name = ? ORDER BY name", (catalog, schema))

    # --------------------------------------------------------- commit files

    def record_commit_file(self, table_id: str, file_name: str, size: int, mtime: int) -> None:
        with self._store.write() as tx:
            self.record_commit_file_in(tx, table_id, file_name, size, mtime)

    @staticmethod
    def record_commit_file_in(tx: Tx, table_id: str, file_name: str, size: int, mtime: int) -> None:
        """A ratified commit's file details, in its ratification's transaction (``catalog.alongside``)."""
        tx.conn.execute("INSERT OR IGNORE INTO uc_commit_files VALUES (?, ?, ?, ?)", (table_id, file_name, size, mtime))

    def commit_files(self, table_id: str, file_names: list[str]) -> dict[str, tuple[int, int]]:
        """Size and modification time of each named commit file recorded for the table (one query)."""
        if not file_names:
            return {}
        marks = ", ".join("?" for _ in file_names)
        with self._store.read() as tx:
            rows = tx.conn.execute(
                "SELECT file_name, file_size, modification_time FROM uc_commit_files"
                f" WHERE table_id = ? AND file_name IN ({marks})",
                (table_id, *file_names),
            ).fetchall()
        return {str(name): (int(size), int(mtime)) for name, size, mtime in rows}

    # --------------------------------------------------------- the catalog's true state

    def table_row(self, table_id: str) -> TableRow | None:
        with self._store.read() as tx:
            return tx.table(table_id)

    def stored_commit(self, table_id: str, version: int) -> RatifiedCommit | None:
        with self._store.read() as tx:
            return tx.commit_at(table_id, version)
