"""The PostgreSQL backend of ``CatalogStore``: several server processes, one database.

Same semantics as the SQLite backend, with finer locks:

* a write transaction runs at READ COMMITTED and **locks what it reads**: ``tx.table``
  is ``SELECT ... FOR UPDATE`` on the table's row, so two proposals for one table
  serialize on that row while other tables commit in parallel; the second one reads
  the first one's committed latest version once it gets the lock (PostgreSQL re-reads a
  row it waited for) and is refused. The primary key of ``commits`` is a second guard;
* ``tx.table_by_name`` first takes a transaction advisory lock on the name, so a
  name's check-then-register cannot interleave (there is no row to lock yet);
* extra SQL through ``tx.conn`` (the server's records, faulty variants), written for
  SQLite's one-writer-at-a-time model, takes a store-wide advisory lock before its
  first statement that reads or defines anything (blind INSERT/UPDATE/DELETE need no
  more than PostgreSQL's row locks), and is translated: ``?`` parameters, ``INSERT OR
  IGNORE``, ``INTEGER`` as ``BIGINT`` (versions and milliseconds are int64), ``BLOB``
  as ``BYTEA``;
* a read transaction is REPEATABLE READ: one snapshot for all its queries;
* a commit is durable when PostgreSQL says so (``synchronous_commit`` as the server
  is configured; PostgreSQL's default is on: flushed to its WAL before the answer).

Transaction advisory locks are released at commit or rollback, so a killed client
leaves no lock behind. One connection per thread (and per process after a fork).
"""

from __future__ import annotations

import functools
import os
import re
import threading
import weakref
import zlib
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from reference_impl.catalog.transaction import TABLE_COLUMNS, Cursor, StoreError, TableRow, Tx

try:
    import psycopg
    from psycopg.pq import TransactionStatus
except ImportError:  # the `postgres` extra is not installed
    psycopg = None  # type: ignore[assignment]

# Advisory locks use the two-int4 key space: (class, key).
_LOCK_CLASS_STORE = 0x6C6B6300  # ("lkc", 0): extra SQL's check-then-act and DDL
_LOCK_CLASS_NAME = 0x6C6B6301  # ("lkc", crc32(name)): a table name's check-then-register
_READS = re.compile(r"\bSELECT\b", re.IGNORECASE)
_BLIND_WRITES = ("INSERT", "UPDATE", "DELETE")
_Open = tuple[threading.Thread, int, "psycopg.Connection[Any]"]  # a connection, its thread and process


def _int4(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


@functools.lru_cache(maxsize=512)
def translate(sql: str) -> str:
    """SQLite-dialect SQL with ``?`` parameters as PostgreSQL SQL with ``%s`` parameters."""
    head = sql.lstrip().upper()
    if head.startswith(("PRAGMA", "INSERT OR REPLACE")):
        raise StoreError(f"no PostgreSQL translation for: {sql.strip()[:60]}")
    if head.startswith("CREATE"):
        sql = re.sub(r"\bINTEGER\b", "BIGINT", sql, flags=re.IGNORECASE)
        sql = re.sub(r"\bBLOB\b", "BYTEA", sql, flags=re.IGNORECASE)
    if head.startswith("INSERT OR IGNORE"):
        sql = re.sub(r"^\s*INSERT\s+OR\s+IGNORE\b", "INSERT", sql, flags=re.IGNORECASE) + " ON CONFLICT DO NOTHING"
    out: list[str] = []
    quoted = comment = False
    for ch in sql:
        if comment:
            comment = ch != "\n"
        elif ch == "'":
            quoted = not quoted
        elif ch == "-" and not quoted and out and out[-1] == "-":
            comment = True
        if ch == "%":
            out.append("%%")
        elif ch == "?" and not quoted and not comment:
            out.append("%s")
        else:
            out.append(ch)
    return "".join(out)


class _CompatConnection:
    """``tx.conn`` on PostgreSQL: SQLite-dialect SQL, serialized with other such check-then-acts."""

    def __init__(self, pg: psycopg.Connection[Any], write: bool) -> None:
        self._pg = pg
        self._write = write
        self._locked = False

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor:
        head = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
        blind = head in _BLIND_WRITES and not _READS.search(sql)
        if self._write and not self._locked and not blind:
            self._pg.execute("SELECT pg_advisory_xact_lock(%s, 0)", (_LOCK_CLASS_STORE,))
            self._locked = True
        return self._pg.execute(translate(sql), tuple(parameters))


class PgTx(Tx):
    def __init__(self, pg: psycopg.Connection[Any], write: bool) -> None:
        super().__init__(_CompatConnection(pg, write))
        self._pg = pg
        self._write = write

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        return self._pg.execute(translate(sql), tuple(params))

    def table(self, table_id: str) -> TableRow | None:
        if not self._write:
            return super().table(table_id)
        sql = f"SELECT {TABLE_COLUMNS} FROM tables WHERE table_id = ? FOR UPDATE"
        row = self._execute(sql, (table_id,)).fetchone()
        return TableRow(*row) if row else None

    def table_by_name(self, name: str) -> TableRow | None:
        if not self._write:
            return super().table_by_name(name)
        key = _int4(zlib.crc32(name.encode("utf-8")))
        self._pg.execute("SELECT pg_advisory_xact_lock(%s, %s)", (_LOCK_CLASS_NAME, key))
        row = self._execute(f"SELECT {TABLE_COLUMNS} FROM tables WHERE name = ? FOR UPDATE", (name,)).fetchone()
        return TableRow(*row) if row else None


class PostgresBackend:
    def __init__(self, url: str, *, lock_timeout_s: float = 60.0) -> None:
        if psycopg is None:
            raise StoreError("a PostgreSQL --db needs the `postgres` extra: pip install 'lakecert[postgres]'")
        self._url = url
        self._lock_timeout_ms = int(lock_timeout_s * 1000)
        self._local = threading.local()
        # (thread, pid, connection): closed when the thread is gone, at close(), or when the backend is collected.
        self._open: list[_Open] = []
        self._open_lock = threading.Lock()
        weakref.finalize(self, _close_own, self._open)
        self._conn()  # fail now, not at the first request

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            conn = psycopg.connect(self._url, autocommit=True, connect_timeout=10, application_name="lakecert")
        except psycopg.Error as e:
            raise StoreError(f"cannot connect to PostgreSQL: {e}") from e
        conn.execute("SELECT set_config('lock_timeout', %s, false)", (f"{self._lock_timeout_ms}ms",))
        return conn

    def _conn(self) -> psycopg.Connection[Any]:
        pid, conn = getattr(self._local, "entry", (None, None))
        if conn is not None and pid == os.getpid() and not conn.closed:
            return conn  # type: ignore[no-any-return]
        conn = self._connect()
        self._local.entry = (os.getpid(), conn)
        with self._open_lock:
            keep = []
            for thread, owner, other in self._open:
                if owner == os.getpid() and not thread.is_alive():
                    other.close()
                else:
                    keep.append((thread, owner, other))
            self._open[:] = [*keep, (threading.current_thread(), os.getpid(), conn)]
        return conn

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Tx]:
        begin = "BEGIN ISOLATION LEVEL " + ("READ COMMITTED" if write else "REPEATABLE READ")
        conn = self._conn()
        try:
            conn.execute(begin)
        except psycopg.OperationalError:  # a connection that died while idle (PostgreSQL restarted)
            conn.close()
            conn = self._conn()
            conn.execute(begin)
        done = False
        try:
            yield PgTx(conn, write)
            status = conn.execute("COMMIT").statusmessage
            if status != "COMMIT":  # PostgreSQL answers ROLLBACK to COMMIT of a failed transaction
                raise StoreError(f"the transaction was rolled back ({status})")
            done = True
        finally:
            if not done:
                try:
                    if conn.info.transaction_status != TransactionStatus.IDLE:
                        conn.execute("ROLLBACK")
                except psycopg.Error:
                    conn.close()  # broken: the thread's next transaction reconnects

    def transaction(self, *, write: bool) -> AbstractContextManager[Tx]:
        return self._transaction(write)

    def close(self) -> None:
        with self._open_lock:
            _close_own(self._open)
        self._local = threading.local()


def _close_own(opened: list[_Open]) -> None:
    """Close this process's connections; never a parent's in a forked child (that would end the
    parent's session)."""
    for _, owner, conn in opened:
        if owner == os.getpid():
            conn.close()
    opened.clear()
