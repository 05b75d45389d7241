"""Persistence of the reference catalog: one small interface, two databases.

Ratification must be atomic and durable (RFC "Commit Protocol": "atomically
recording (in persistent storage of some kind)"), also when several threads and
processes share one database. The catalog sees only this interface:

* ``CatalogStore(location)``: a SQLite file (any path: the embedded default,
  ``sqlite_store.py``) or a PostgreSQL database (a ``postgresql://`` or
  ``postgres://`` URL: ``postgres_store.py``, needs the ``postgres`` extra);
* ``store.write()``: a transaction whose check-then-act cannot interleave with
  another writer's on the same table (SQLite: the database's write lock from the
  first statement; PostgreSQL: the rows it reads are locked as they are read);
* ``store.read()``: one consistent snapshot for all its queries;
* ``Tx``: typed queries inside either, and ``tx.conn.execute(sql, params)`` for
  extra SQL written in SQLite's dialect with ``?`` parameters (the server's own
  records and some faulty variants keep their tables in the same database).

Whatever fails inside a transaction (a refused proposal included) rolls it back.
"""

from __future__ import annotations

import uuid
from contextlib import AbstractContextManager
from pathlib import Path

from reference_impl.catalog.sqlite_store import SqliteBackend
from reference_impl.catalog.transaction import (
    SCHEMA,
    TABLE_COLUMNS,
    Backend,
    Cursor,
    StoreError,
    TableRow,
    Tx,
    is_postgres_url,
)

__all__ = ["TABLE_COLUMNS", "CatalogStore", "Cursor", "StoreError", "TableRow", "Tx", "is_postgres_url", "open_backend"]


def open_backend(location: str | Path, busy_timeout_s: float, *, durable: bool = True) -> Backend:
    if is_postgres_url(location):
        assert isinstance(location, str)
        # Imported only for a PostgreSQL store: psycopg cost a tenth of a second of every SQLite run.
        from reference_impl.catalog.postgres_store import PostgresBackend

        return PostgresBackend(location, lock_timeout_s=busy_timeout_s)
    return SqliteBackend(Path(location), busy_timeout_s=busy_timeout_s, durable=durable)


class CatalogStore:
    """The catalog's database; safe to share between threads and processes.

    ``location``: a SQLite file path, or a ``postgresql://`` URL. ``StoreError`` when it
    cannot be opened. ``durable=False``: SQLite does not flush a commit to disk before it is
    acknowledged (a scratch database; PostgreSQL's durability is the server's setting).
    """

    def __init__(self, location: str | Path, *, busy_timeout_s: float = 60.0, durable: bool = True) -> None:
        self.location = location
        self._backend = open_backend(location, busy_timeout_s, durable=durable)
        try:
            with self.write() as tx:
                for statement in SCHEMA:
                    tx.conn.execute(statement)
                tx.conn.execute("INSERT INTO store_probe (probe) VALUES (?)", (str(uuid.uuid4()),))
                tx.conn.execute("DELETE FROM store_probe")
        except StoreError:
            self._backend.close()
            raise
        except Exception as e:  # the driver's errors (read-only, not a database, no permission)
            self._backend.close()
            detail = " ".join(str(e).split())  # one line; never the location (a URL may hold a password)
            raise StoreError(f"cannot use the catalog database: {type(e).__name__}: {detail}") from e

    def write(self) -> AbstractContextManager[Tx]:
        """A write transaction: what it reads cannot change under it before it commits."""
        return self._backend.transaction(write=True)

    def read(self) -> AbstractContextManager[Tx]:
        """A read transaction: one consistent snapshot for all its queries."""
        return self._backend.transaction(write=False)

    def close(self) -> None:
        self._backend.close()
