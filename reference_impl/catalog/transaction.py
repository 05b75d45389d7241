"""The store's transaction interface: typed queries (``Tx``), rows, the schema, and what a database
backend provides. The backends (``sqlite_store``, ``postgres_store``) build on this module and
``store`` builds on them, so nothing imports in a circle."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from conformance.contract.delta import RatifiedCommit

SCHEMA = (
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
    # The bytes of a staged commit as the catalog judged them when it ratified it: what it serves
    # as that version, whatever happens to the staged file afterwards (docs/server.md).
    """
CREATE TABLE IF NOT EXISTS ratified_content (
    table_id TEXT NOT NULL REFERENCES tables(table_id),
    version INTEGER NOT NULL,
    content BLOB NOT NULL,
    PRIMARY KEY (table_id, version)
)""",
    # Written and cleared at start-up: a database the store cannot write is found then, not at
    # the first commit.
    """
CREATE TABLE IF NOT EXISTS store_probe (
    probe TEXT PRIMARY KEY
)""",
)

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(location: str | Path) -> bool:
    """Whether a ``--db`` value names a PostgreSQL database rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(POSTGRES_SCHEMES)


class StoreError(RuntimeError):
    """The database cannot be opened (unreachable server, missing driver)."""


class Cursor(Protocol):
    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    """What ``tx.conn`` offers: SQLite-dialect SQL with ``?`` parameters."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...


@dataclass(frozen=True)
class TableRow:
    table_id: str
    name: str | None
    location: str
    latest_version: int
    latest_published_version: int
    policy_json: str | None


TABLE_COLUMNS = "table_id, name, location, latest_version, latest_published_version, policy_json"


_SELECT_COMMITS = "SELECT version, staged_uri, inline_content, in_commit_timestamp FROM commits"


def _ratified(version: int, staged_uri: str | None, blob: bytes | None, ict: int | None) -> RatifiedCommit:
    return RatifiedCommit(version, staged_uri, None if blob is None else bytes(blob), ict)


class Tx:
    """Typed queries inside one open transaction (``conn`` is there for extra SQL).

    The SQL is portable between SQLite and PostgreSQL; a backend whose writes lock
    what they read overrides ``table`` and ``table_by_name``.
    """

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        return self.conn.execute(sql, params)

    def table(self, table_id: str) -> TableRow | None:
        row = self._execute(f"SELECT {TABLE_COLUMNS} FROM tables WHERE table_id = ?", (table_id,)).fetchone()
        return TableRow(*row) if row else None

    def table_by_name(self, name: str) -> TableRow | None:
        row = self._execute(f"SELECT {TABLE_COLUMNS} FROM tables WHERE name = ?", (name,)).fetchone()
        return TableRow(*row) if row else None

    def insert_table(
        self, table_id: str, location: str, *, name: str | None = None, latest: int = -1, published: int = -1
    ) -> None:
        self._execute(
            "INSERT INTO tables (table_id, name, location, latest_version, latest_published_version)"
            " VALUES (?, ?, ?, ?, ?)",
            (table_id, name, location, latest, published),
        )

    def register(self, table_id: str, name: str, *, latest: int, published: int) -> None:
        self._execute(
            "UPDATE tables SET name = ?, latest_version = ?, latest_published_version = ? WHERE table_id = ?",
            (name, latest, published, table_id),
        )

    def unregister(self, table_id: str) -> None:
        """Remove a table's name (a soft drop); its versions stay, so it is never staged again."""
        self._execute("UPDATE tables SET name = NULL WHERE table_id = ?", (table_id,))

    def raise_latest(self, table_id: str, version: int) -> None:
        """Raise the latest version to ``version``; never lower it."""
        self._execute(
            "UPDATE tables SET latest_version = ? WHERE table_id = ? AND latest_version < ?",
            (version, table_id, version),
        )

    def raise_published(self, table_id: str, version: int) -> None:
        """Raise the published mark to ``version``; never lower it."""
        self._execute(
            "UPDATE tables SET latest_published_version = ? WHERE table_id = ? AND latest_published_version < ?",
            (version, table_id, version),
        )

    def set_policy(self, table_id: str, policy_json: str | None) -> None:
        self._execute("UPDATE tables SET policy_json = ? WHERE table_id = ?", (policy_json, table_id))

    def commits(self, table_id: str) -> list[RatifiedCommit]:
        """Every stored commit of the table, ascending."""
        rows = self._execute(f"{_SELECT_COMMITS} WHERE table_id = ? ORDER BY version", (table_id,)).fetchall()
        return [_ratified(*row) for row in rows]

    def commit_at(self, table_id: str, version: int) -> RatifiedCommit | None:
        """The stored commit of ``version``, if the catalog still holds it (one row, by primary key)."""
        row = self._execute(f"{_SELECT_COMMITS} WHERE table_id = ? AND version = ?", (table_id, version)).fetchone()
        return None if row is None else _ratified(*row)

    def insert_commit(self, table_id: str, commit: RatifiedCommit, *, replace: bool = False) -> None:
        """A plain INSERT (the primary key refuses a second commit for a version), or with
        ``replace`` an overwrite (faulty variants only)."""
        overwrite = (
            " ON CONFLICT (table_id, version) DO UPDATE SET staged_uri = excluded.staged_uri,"
            " inline_content = excluded.inline_content, in_commit_timestamp = excluded.in_commit_timestamp"
        )
        self._execute(
            "INSERT INTO commits (table_id, version, staged_uri, inline_content, in_commit_timestamp)"
            " VALUES (?, ?, ?, ?, ?)" + (overwrite if replace else ""),
            (table_id, commit.version, commit.staged_uri, commit.inline_content, commit.in_commit_timestamp),
        )

    def delete_commits(self, table_id: str, up_to: int) -> None:
        """Drop stored commits with version <= ``up_to``."""
        self._execute("DELETE FROM commits WHERE table_id = ? AND version <= ?", (table_id, up_to))
        self._execute("DELETE FROM ratified_content WHERE table_id = ? AND version <= ?", (table_id, up_to))

    def bind_content(self, table_id: str, version: int, content: bytes) -> None:
        """Keep the judged bytes of a ratified staged commit (an overwrite only for faulty variants,
        whose second ratification of a version must not fail here)."""
        self._execute(
            "INSERT INTO ratified_content (table_id, version, content) VALUES (?, ?, ?)"
            " ON CONFLICT (table_id, version) DO UPDATE SET content = excluded.content",
            (table_id, version, content),
        )

    def bound_contents(self, table_id: str) -> dict[int, bytes]:
        """Version -> the kept bytes of each stored staged commit of the table."""
        rows = self._execute("SELECT version, content FROM ratified_content WHERE table_id = ?", (table_id,))
        return {int(version): bytes(content) for version, content in rows.fetchall()}


class Backend(Protocol):
    def transaction(self, *, write: bool) -> AbstractContextManager[Tx]: ...

    def close(self) -> None: ...
