"""The PostgreSQL store's translation of SQLite-dialect SQL, and how ``--db`` picks a store."""

from __future__ import annotations

from pathlib import Path

import pytest

from reference_impl.catalog.postgres_store import translate
from reference_impl.catalog.store import StoreError, is_postgres_url


@pytest.mark.parametrize(
    ("sqlite", "postgres"),
    [
        ("SELECT a FROM t WHERE b = ? AND c = ?", "SELECT a FROM t WHERE b = %s AND c = %s"),
        ("SELECT '?', x FROM t WHERE y LIKE 'a%' AND z = ?", "SELECT '?', x FROM t WHERE y LIKE 'a%%' AND z = %s"),
        ("SELECT x -- why?\nFROM t WHERE y = ?", "SELECT x -- why?\nFROM t WHERE y = %s"),
        ("INSERT OR IGNORE INTO t VALUES (?, ?)", "INSERT INTO t VALUES (%s, %s) ON CONFLICT DO NOTHING"),
        ("CREATE TABLE t (v INTEGER NOT NULL, b BLOB)", "CREATE TABLE t (v BIGINT NOT NULL, b BYTEA)"),
        ("UPDATE t SET integer_count = ? WHERE blob_id = ?", "UPDATE t SET integer_count = %s WHERE blob_id = %s"),
    ],
)
def test_translate(sqlite: str, postgres: str) -> None:
    assert translate(sqlite) == postgres


@pytest.mark.parametrize("sql", ["PRAGMA journal_mode", "INSERT OR REPLACE INTO t VALUES (?)"])
def test_untranslatable_sql_is_refused(sql: str) -> None:
    with pytest.raises(StoreError):
        translate(sql)


def test_db_urls_pick_postgres() -> None:
    assert is_postgres_url("postgresql://u@127.0.0.1:5432/db")
    assert is_postgres_url("postgres://u@127.0.0.1/db?sslmode=disable")
    assert not is_postgres_url("catalog.sqlite")
    assert not is_postgres_url("/var/lib/postgresql/catalog.sqlite")
    assert not is_postgres_url(Path("postgresql:/x"))
