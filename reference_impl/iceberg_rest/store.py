"""The catalog's durable state in SQLite: namespaces with their properties, and per table the
location of its current metadata file (the pointer a commit swaps).

Table metadata itself lives in metadata files next to the data; the store keeps only pointers, so
a restarted server on the same database and warehouse sees the same tables. Every write is a single
statement or an ``IMMEDIATE`` transaction, so two servers sharing the file stay consistent; within one
process a lock serialises use of the one connection.
"""

from __future__ import annotations

import enum
import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from reference_impl.iceberg_rest.names import Namespace

_SCHEMA = """
CREATE TABLE IF NOT EXISTS namespaces (
    name TEXT PRIMARY KEY,          -- JSON array of the namespace's levels
    parent TEXT NOT NULL,           -- JSON array of the levels above it
    properties TEXT NOT NULL        -- JSON object, string to string
);
CREATE TABLE IF NOT EXISTS tables (
    namespace TEXT NOT NULL REFERENCES namespaces(name),
    name TEXT NOT NULL,
    metadata_location TEXT NOT NULL,
    PRIMARY KEY (namespace, name)
);
CREATE TABLE IF NOT EXISTS views (
    namespace TEXT NOT NULL REFERENCES namespaces(name),
    name TEXT NOT NULL,
    metadata_location TEXT NOT NULL,
    PRIMARY KEY (namespace, name)
);
"""


class Rename(enum.Enum):
    DONE = "done"
    NO_SUCH_TABLE = "no-such-table"  # the source (a table or a view, as renamed) does not exist
    NO_SUCH_NAMESPACE = "no-such-namespace"
    TARGET_EXISTS = "target-exists"  # a table of the target's name
    TARGET_IS_VIEW = "target-is-view"  # a view of the target's name


class Kind(enum.Enum):
    """A table or a view: they share one name space per namespace (a name is one or the other)."""

    TABLE = "tables"
    VIEW = "views"

    @property
    def other(self) -> Kind:
        return Kind.VIEW if self is Kind.TABLE else Kind.TABLE


def _key(namespace: Namespace) -> str:
    return json.dumps(list(namespace), ensure_ascii=False, separators=(",", ":"))


class PointerStore:
    """Namespaces and table pointers; ``path`` is a file, or ``":memory:"`` for a throwaway store."""

    def __init__(self, path: str | Path) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA busy_timeout = 5000")
        if str(path) != ":memory:":
            self._db.execute("PRAGMA journal_mode = WAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _one(self, sql: str, *args: str) -> tuple[str, ...] | None:
        with self._lock:
            row: tuple[str, ...] | None = self._db.execute(sql, args).fetchone()
        return row

    def _changed(self, sql: str, *args: str) -> bool:
        """Run one statement; whether it changed a row (False also when a constraint refused it)."""
        with self._lock:
            try:
                return self._db.execute(sql, args).rowcount == 1
            except sqlite3.IntegrityError:
                return False

    # namespaces

    def create_namespace(self, namespace: Namespace, properties: Mapping[str, str]) -> bool:
        """False when it already exists."""
        return self._changed(
            "INSERT INTO namespaces (name, parent, properties) VALUES (?, ?, ?)",
            _key(namespace),
            _key(namespace[:-1]),
            json.dumps(dict(properties)),
        )

    def namespace_properties(self, namespace: Namespace) -> dict[str, str] | None:
        row = self._one("SELECT properties FROM namespaces WHERE name = ?", _key(namespace))
        return None if row is None else dict(json.loads(row[0]))

    def child_namespaces(self, parent: Namespace) -> list[Namespace]:
        with self._lock:
            rows = self._db.execute("SELECT name FROM namespaces WHERE parent = ? ORDER BY name", (_key(parent),))
            return [tuple(json.loads(r[0])) for r in rows.fetchall()]

    def drop_namespace(self, namespace: Namespace) -> bool:
        """False when it does not exist or still holds tables, views or namespaces."""
        key = _key(namespace)
        return self._changed(
            "DELETE FROM namespaces WHERE name = ? AND NOT EXISTS (SELECT 1 FROM tables WHERE namespace = ?)"
            " AND NOT EXISTS (SELECT 1 FROM views WHERE namespace = ?)"
            " AND NOT EXISTS (SELECT 1 FROM namespaces WHERE parent = ?)",
            key,
            key,
            key,
            key,
        )

    def update_namespace_properties(
        self, namespace: Namespace, removals: set[str], updates: Mapping[str, str]
    ) -> tuple[list[str], list[str], list[str]] | None:
        """(updated, removed, missing) keys, or None when the namespace does not exist."""
        with self._tx() as db:
            row = db.execute("SELECT properties FROM namespaces WHERE name = ?", (_key(namespace),)).fetchone()
            if row is None:
                return None
            properties: dict[str, str] = json.loads(row[0])
            removed = sorted(k for k in removals if k in properties)
            missing = sorted(k for k in removals if k not in properties)
            for k in removed:
                del properties[k]
            properties.update(updates)
            db.execute("UPDATE namespaces SET properties = ? WHERE name = ?", (json.dumps(properties), _key(namespace)))
        return sorted(updates), removed, missing

    # tables

    # tables and views (``kind``; the table names are constants, never input)

    def metadata_location(self, namespace: Namespace, table: str, kind: Kind = Kind.TABLE) -> str | None:
        sql = f"SELECT metadata_location FROM {kind.value} WHERE namespace = ? AND name = ?"
        row = self._one(sql, _key(namespace), table)
        return None if row is None else row[0]

    def table_names(self, namespace: Namespace, kind: Kind = Kind.TABLE) -> list[str]:
        with self._lock:
            sql = f"SELECT name FROM {kind.value} WHERE namespace = ? ORDER BY name"
            return [r[0] for r in self._db.execute(sql, (_key(namespace),)).fetchall()]

    def create_table(self, namespace: Namespace, table: str, metadata_location: str, kind: Kind = Kind.TABLE) -> bool:
        """False when the name is taken (by a table or a view) or the namespace does not exist
        (the caller checks which)."""
        key = _key(namespace)
        return self._changed(
            f"INSERT INTO {kind.value} (namespace, name, metadata_location)"
            " SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM namespaces WHERE name = ?)"
            f" AND NOT EXISTS (SELECT 1 FROM {kind.other.value} WHERE namespace = ? AND name = ?)",
            key,
            table,
            metadata_location,
            key,
            key,
            table,
        )

    def swap(self, namespace: Namespace, table: str, expected: str, new: str, kind: Kind = Kind.TABLE) -> bool:
        """Point the table at ``new`` if it still points at ``expected`` (compare-and-swap)."""
        return self._changed(
            f"UPDATE {kind.value} SET metadata_location = ? WHERE namespace = ? AND name = ? AND metadata_location = ?",
            new,
            _key(namespace),
            table,
            expected,
        )

    def drop_table(self, namespace: Namespace, table: str, kind: Kind = Kind.TABLE) -> bool:
        return self._changed(f"DELETE FROM {kind.value} WHERE namespace = ? AND name = ?", _key(namespace), table)

    def rename_table(
        self, source: tuple[Namespace, str], target: tuple[Namespace, str], kind: Kind = Kind.TABLE
    ) -> Rename:
        (src_ns, src), (dst_ns, dst) = source, target
        exists_sql = "SELECT 1 FROM {} WHERE namespace = ? AND name = ?"
        with self._tx() as db:
            if db.execute(exists_sql.format(kind.value), (_key(src_ns), src)).fetchone() is None:
                return Rename.NO_SUCH_TABLE
            if db.execute("SELECT 1 FROM namespaces WHERE name = ?", (_key(dst_ns),)).fetchone() is None:
                return Rename.NO_SUCH_NAMESPACE
            if db.execute(exists_sql.format(Kind.TABLE.value), (_key(dst_ns), dst)).fetchone() is not None:
                return Rename.TARGET_EXISTS
            if db.execute(exists_sql.format(Kind.VIEW.value), (_key(dst_ns), dst)).fetchone() is not None:
                return Rename.TARGET_IS_VIEW
            db.execute(
                f"UPDATE {kind.value} SET namespace = ?, name = ? WHERE namespace = ? AND name = ?",
                (_key(dst_ns), dst, _key(src_ns), src),
            )
        return Rename.DONE
