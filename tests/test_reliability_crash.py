"""Crash: `lakecert serve` is killed with SIGKILL in the middle of a commit storm and restarted
on the same store (SQLite file, PostgreSQL database). Every commit acknowledged before the kill
is there unchanged, nothing is half-written (listings contiguous; a commit nobody was told
about is one whose answer the kill swallowed), and the restarted server commits again."""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformance.contract.target import TargetEnv
from reference_impl.catalog.store import CatalogStore
from reference_impl.server.runner import ServerProcess
from reference_impl.storage.local import LocalStorage, path_to_uri
from reference_impl.target import make_reference_catalog
from tests.pg import Postgres
from tests.tooling.loadgen import Storm, history_problems, listings, make_tables
from tests.tooling.server import Driver

TABLES, WRITERS = 3, 6  # two writers per table
ACKED_BEFORE_KILL = 60
SERVE = ("--max-unpublished", "0")


def wait_for(condition: Any, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


@pytest.mark.slow
def test_kill_mid_storm_loses_no_acknowledged_commit(db: str, tmp_path: Path) -> None:
    warehouse = path_to_uri(tmp_path / "warehouse")
    with ServerProcess(db, warehouse, *SERVE) as server:
        tables = make_tables(server.url, TABLES)
        storm = Storm([server.url], tables, WRITERS, commits=1_000_000).start()  # runs until the kill
        wait_for(lambda: storm.acked >= ACKED_BEFORE_KILL, timeout_s=60)
        server.kill()
        storm.join(timeout_s=60)
    # Each writer ran until the kill broke its connection: one proposal each without an answer.
    assert sum(1 for p in storm.proposals if p.status is None) == WRITERS
    with ServerProcess(db, warehouse, *SERVE) as restarted:
        listed = listings(restarted.url, tables)
        assert history_problems(storm.proposals, listed, lost_answers=True) == []
        by_version = [{c["version"]: c for c in li["commits"]} for li in listed]
        for p in storm.proposals:
            if p.status == 200:  # as it was sent: Driver.commit_body
                assert by_version[p.table][p.version] == {
                    "version": p.version,
                    "timestamp": 1000 + p.version,
                    "file_name": p.file_name,
                    "file_size": 100,
                    "file_modification_timestamp": 1000 + p.version,
                }
        lost = Counter(p.table for p in storm.proposals if p.status is None)
        for t, li in enumerate(listed):
            max_acked = max((p.version for p in storm.proposals if p.table == t and p.status == 200), default=0)
            assert max_acked <= li["latest_table_version"] <= max_acked + lost[t]
        # The restarted server serves: one more commit per table.
        with httpx.Client(base_url=restarted.url, timeout=30) as http:
            driver = Driver(http)
            for table, li in zip(tables, listed, strict=True):
                assert driver.commit(table, li["latest_table_version"] + 1).status_code == 200
                assert driver.listing(table)["latest_table_version"] == li["latest_table_version"] + 1


def test_sqlite_store_is_wal_with_synchronous_full(tmp_path: Path) -> None:
    """The SQLite store's durability settings, as the database reports them."""
    store = CatalogStore(tmp_path / "catalog.sqlite")
    try:
        for transaction in (store.read, store.write):
            with transaction() as tx:
                assert tx.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
                assert tx.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    finally:
        store.close()
    # WAL is a property of the file: any other connection sees it.
    other = sqlite3.connect(tmp_path / "catalog.sqlite")
    try:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        other.close()


def test_a_runs_own_catalog_is_scratch_and_does_not_wait_for_the_disk(tmp_path: Path) -> None:
    """The catalog a run builds in its work folder: WAL still, but commits are not flushed (NORMAL)."""
    env = TargetEnv(tmp_path, path_to_uri(tmp_path / "warehouse"), LocalStorage())
    catalog = make_reference_catalog(env)
    try:
        with catalog._store.write() as tx:
            assert tx.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert tx.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    finally:
        catalog.close()


def test_server_survives_a_postgres_restart(postgres: Postgres, tmp_path: Path) -> None:
    """PostgreSQL restarts under a running server: every pooled connection is cut; the next
    requests reconnect, and nothing acknowledged is lost."""
    with ServerProcess(postgres.new_schema(), path_to_uri(tmp_path / "warehouse"), *SERVE) as server:
        (table,) = make_tables(server.url, 1)
        with httpx.Client(base_url=server.url, timeout=30) as http:
            driver = Driver(http)
            assert [driver.commit(table, v).status_code for v in (1, 2)] == [200, 200]
            postgres.restart()
            assert [driver.commit(table, v).status_code for v in (3, 4)] == [200, 200]
            assert [c["version"] for c in driver.listing(table)["commits"]] == [1, 2, 3, 4]
