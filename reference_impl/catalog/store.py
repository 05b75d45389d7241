"""SQLite persistence of the reference catalog.

Ratification must be atomic and durable (RFC "Commit Protocol": "atomically
recording (in persistent storage of some kind)"), also when several threads and
processes share one database file. Hence:

* WAL journal + ``synchronous=FULL``: a committed transaction is on disk before
  the catalog acknowledges it;
* ``BEGIN IMMEDIATE`` for every write: the write lock is taken *before* the
  latest version is read, so check-and-insert cannot interleave (a deferred
  transaction could read a stale snapshot and then fail to upgrade);
* one connection per thread (and per process after a fork), closed with the thread.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from conformance.targets.contract import RatifiedCommit

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS tables (
    table_id TEXT PRIMARY KEY,
    name TEXT UNIQUE,                 -- NULL while the table is only staged
    location TEXT NOT NULL,
    latest_version INTEGER NOT NULL,  -- -1 until registered
    latest_published_version INTEGER NOT NULL,
    policy_json TEXT                  -- NULL: the default (everything allowed)
)""",
    """
CREATE TABLE IF NOT EXISTS commits (
    table_id TEXT NOT NULL REFERENCES tables(table_id),
    version INTEGER NOT NULL,
    staged_uri TEXT,
    inline_content BLOB,
    in_commit_timestamp INTEGER,
    PRIMARY KEY (table_id, version)
)""",
)


@dataclass(frozen=True)
class TableRow:
    table_id: str
    name: str | None
    location: str
    latest_version: int
    latest_published_version: int
    policy_json: str | None


_TABLE_COLUMNS = "table_id, name, location, latest_version, latest_published_version, policy_json"


class Tx:
    """Typed queries inside one open transaction (``conn`` is there for extra SQL)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def table(self, table_id: str) -> TableRow | None:
        row = self.conn.execute(f"SELECT {_TABLE_COLUMNS} FROM tables WHERE table_id = ?", (table_id,)).fetchone()
        return TableRow(*row) if row else None

    def table_by_name(self, name: str) -> TableRow | None:
        row = self.conn.execute(f"SELECT {_TABLE_COLUMNS} FROM tables WHERE name = ?", (name,)).fetchone()
        return TableRow(*row) if row else None

    def insert_table(
        self, table_id: str, location: str, *, name: str | None = None, latest: int = -1, published: int = -1
    ) -> None:
        self.conn.execute(
            "INSERT INTO tables (table_id, name, location, latest_version, latest_published_version)"
            " VALUES (?, ?, ?, ?, ?)",
            (table_id, name, location, latest, published),
        )

    def register(self, table_id: str, name: str, *, latest: int, published: int) -> None:
        self.conn.execute(
            "UPDATE tables SET name = ?, latest_version = ?, latest_published_version = ? WHERE table_id = ?",
            (name, latest, published, table_id),
        )

    def raise_latest(self, table_id: str, version: int) -> None:
        self.conn.execute(
            "UPDATE tables SET latest_version = MAX(latest_version, ?) WHERE table_id = ?",
            (version, table_id),
        )

    def raise_published(self, table_id: str, version: int) -> None:
        self.conn.execute(
            "UPDATE tables SET latest_published_version = MAX(latest_published_version, ?) WHERE table_id = ?",
            (version, table_id),
        )

    def set_policy(self, table_id: str, policy_json: str | None) -> None:
        self.conn.execute("UPDATE tables SET policy_json = ? WHERE table_id = ?", (policy_json, table_id))

    def commits(self, table_id: str) -> list[RatifiedCommit]:
        """Every stored commit of the table, ascending."""
        rows = self.conn.execute(
            "SELECT version, staged_uri, inline_content, in_commit_timestamp FROM commits"
            " WHERE table_id = ? ORDER BY version",
            (table_id,),
        ).fetchall()
        return [RatifiedCommit(v, uri, None if blob is None else bytes(blob), ict) for v, uri, blob, ict in rows]

    def insert_commit(self, table_id: str, commit: RatifiedCommit, *, replace: bool = False) -> None:
        verb = "INSERT OR REPLACE" if replace else "INSERT"
        self.conn.execute(
            f"{verb} INTO commits (table_id, version, staged_uri, inline_content, in_commit_timestamp)"
            " VALUES (?, ?, ?, ?, ?)",
            (table_id, commit.version, commit.staged_uri, commit.inline_content, commit.in_commit_timestamp),
        )

    def delete_commits(self, table_id: str, up_to: int) -> None:
        """Drop stored commits with version <= ``up_to``."""
        self.conn.execute("DELETE FROM commits WHERE table_id = ? AND version <= ?", (table_id, up_to))


class _Connection(sqlite3.Connection):
    """A connection that can be weakly referenced (the base class cannot)."""


class CatalogStore:
    """The catalog's database file; safe to share between threads and processes."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 60.0) -> None:
        self.path = Path(path)
        self._timeout = busy_timeout_s
        self._local = threading.local()
        # Weak: a thread's connection closes when the thread ends (its local dies).
        self._all: weakref.WeakSet[_Connection] = weakref.WeakSet()
        self._all_lock = threading.Lock()
        with self.write() as tx:
            for statement in _SCHEMA:
                tx.conn.execute(statement)

    def _conn(self) -> sqlite3.Connection:
        pid, conn = getattr(self._local, "entry", (None, None))
        if conn is None or pid != os.getpid():
            # isolation_level=None: we issue BEGIN/COMMIT ourselves.
            conn = sqlite3.connect(
                self.path,
                timeout=self._timeout,
                isolation_level=None,
                check_same_thread=False,
                factory=_Connection,
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.entry = (os.getpid(), conn)
            with self._all_lock:
                self._all.add(conn)
        return conn

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[Tx]:
        conn = self._conn()
        conn.execute(begin)
        done = False
        try:
            yield Tx(conn)
            conn.execute("COMMIT")
            done = True
        finally:
            # Whatever failed (a refused proposal included) leaves no trace.
            if not done and conn.in_transaction:
                conn.execute("ROLLBACK")

    def write(self) -> AbstractContextManager[Tx]:
        """A write transaction holding the database's write lock from its first statement."""
        return self._transaction("BEGIN IMMEDIATE")

    def read(self) -> AbstractContextManager[Tx]:
        """A read transaction: one consistent snapshot for all its queries."""
        return self._transaction("BEGIN")

    def close(self) -> None:
        with self._all_lock:
            for conn in list(self._all):
                conn.close()
            self._all.clear()
        self._local = threading.local()
