"""The SQLite backend of ``CatalogStore``: the embedded default, one file.

* WAL journal + ``synchronous=FULL``: a committed transaction is on disk before
  the catalog acknowledges it (``durable=False``: ``synchronous=NORMAL``, for a run's scratch
  catalog: a process that crashes loses no commit, a machine that loses power may lose the last);
* ``BEGIN IMMEDIATE`` for every write: the write lock is taken *before* the
  latest version is read, so check-and-insert cannot interleave (a deferred
  transaction could read a stale snapshot and then fail to upgrade);
* one connection per thread (and per process after a fork), closed with the thread.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from reference_impl.catalog.transaction import Tx


class _Connection(sqlite3.Connection):
    """A connection that can be weakly referenced (the base class cannot)."""


class SqliteBackend:
    def __init__(self, path: Path, *, busy_timeout_s: float = 60.0, durable: bool = True) -> None:
        self.path = path
        self._timeout = busy_timeout_s
        self._synchronous = "FULL" if durable else "NORMAL"
        self._local = threading.local()
        # Weak: a thread's connection closes when the thread ends (its local dies).
        self._all: weakref.WeakSet[_Connection] = weakref.WeakSet()
        self._all_lock = threading.Lock()

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
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
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
            if not done and conn.in_transaction:
                conn.execute("ROLLBACK")

    def transaction(self, *, write: bool) -> AbstractContextManager[Tx]:
        """Writes hold the database's write lock from their first statement; reads see one snapshot."""
        return self._transaction("BEGIN IMMEDIATE" if write else "BEGIN")

    def close(self) -> None:
        """Close every connection, the WAL checkpointed first: SQLite removes the ``-wal`` and ``-shm``
        files when the last connection of the last process closes."""
        with self._all_lock:
            conns = list(self._all)
            for conn in conns[:1]:
                # Busy (another process) or broken: closing is all that is left.
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            for conn in conns:
                conn.close()
            self._all.clear()
        self._local = threading.local()
