"""Hardening, round three (issue 31), `lakecert serve` on SQLite and PostgreSQL: a ratification and its
file details are one transaction (row 8), a commit racing a drop is refused once the drop committed
(row 9), creating and dropping one name from many threads never sticks it (row 10), connections are
bounded (row 11: header timeout, a cap, one log line per condition), ambiguous framing closes the
connection (row 7), two Authorization headers are refused (row 15), and a full database is a 503
that says so (row 16)."""

from __future__ import annotations

import logging
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from reference_impl.asgi_thread import ConnectionLimits, ServerThread
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.server.cli import Built, build
from reference_impl.server.meta import MetaStore
from reference_impl.storage.local import path_to_uri
from tests.test_server_hostile import assert_uc_error
from tests.tooling.server import API, COMMITS, Driver, serve_args

TOKENS = "tokens:\n  admin-token: admin\n  reader-token: reader\n"
HANG_GUARD_S = 120.0  # generous: only there so a regression fails instead of hanging the suite
HEADER_TIMEOUT_S = 3.0  # well above what a loaded machine takes to send a well-behaved request's headers
MAX_CONNECTIONS = 40


@dataclass
class Served:
    url: str
    built: Built
    admin: Driver
    thread: ServerThread


@pytest.fixture
def server(db: str, tmp_path: Path) -> Iterator[Served]:
    (tmp_path / "tokens.yaml").write_text(TOKENS)
    argv = ["--db", db, "--warehouse", path_to_uri(tmp_path / "warehouse"), "--tokens", str(tmp_path / "tokens.yaml")]
    argv += ["--max-unpublished", "0"]
    built = build(serve_args(*argv))
    limits = ConnectionLimits(max_connections=MAX_CONNECTIONS, header_timeout_s=HEADER_TIMEOUT_S)
    try:
        with (
            ServerThread(built.app, limits=limits) as thread,
            httpx.Client(
                base_url=thread.url, headers={"Authorization": "Bearer admin-token"}, timeout=HANG_GUARD_S
            ) as http,
        ):
            yield Served(thread.url, built, Driver(http), thread)
    finally:
        built.close()


# ---------------------------------------------------------------- row 8: ratification and details, atomically


def test_a_commit_is_listed_with_the_details_it_was_sent_with(server: Served) -> None:
    table = server.admin.create_table()
    assert server.admin.commit(table, 1).status_code == 200
    (listed,) = server.admin.listing(table)["commits"]
    assert (listed["file_size"], listed["file_modification_timestamp"]) == (100, 1001)


def test_details_that_cannot_be_stored_leave_the_commit_unratified(
    server: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The details fail inside the ratification's transaction (a kill or a full disk there): nothing
    is ratified, so the client's retry ratifies the commit with its details, never a 200 without them."""
    table = server.admin.create_table()
    name = server.admin.stage(table, 1)
    body = server.admin.commit_body(table, 1, name)
    original = MetaStore.record_commit_file_in

    def failing(*args: Any) -> None:
        raise RuntimeError("simulated crash between ratification and details")

    monkeypatch.setattr(MetaStore, "record_commit_file_in", staticmethod(failing))
    answer = server.admin.http.post(COMMITS, json=body)
    assert answer.status_code == 500
    assert server.admin.listing(table)["latest_table_version"] == 0  # not ratified
    monkeypatch.setattr(MetaStore, "record_commit_file_in", staticmethod(original))
    assert server.admin.http.post(COMMITS, json=body).status_code == 200  # the retry
    (listed,) = server.admin.listing(table)["commits"]
    assert (listed["version"], listed["file_size"], listed["file_modification_timestamp"]) == (1, 100, 1001)


# ---------------------------------------------------------------- row 16: a full database


def test_a_full_database_is_a_503_that_names_the_cause(
    server: Served, db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL: its disk_full error raised where the commit's details are written (inside the
    ratification's transaction); SQLite: a real SQLITE_FULL, the file capped at its current size."""
    table = server.admin.create_table()
    before = server.admin.state(table)
    if db.startswith(("postgresql://", "postgres://")):
        import psycopg.errors

        def full(*args: Any) -> None:
            raise psycopg.errors.DiskFull()

        monkeypatch.setattr(MetaStore, "record_commit_file_in", staticmethod(full))
        answer = server.admin.commit(table, 1)
    else:
        backend: Any = type(server.built.catalog._store._backend)
        original_conn = backend._conn

        def capped(self: Any) -> sqlite3.Connection:
            conn: sqlite3.Connection = original_conn(self)
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {pages}")
            return conn

        monkeypatch.setattr(backend, "_conn", capped)
        names = {"catalog_name": "unity", "schema_name": "default"}
        for i in range(500):  # staging tables until a page more is needed
            answer = server.admin.http.post(f"{API}/staging-tables", json={**names, "name": f"s{i}_{'y' * 200}"})
            if answer.status_code != 200:
                break
    assert answer.status_code == 503, answer.text
    body = answer.json()
    assert body["error_code"] == "UNAVAILABLE" and "out of space" in body["message"]
    assert answer.headers.get("retry-after")
    monkeypatch.undo()
    assert server.admin.state(table) == before


# ---------------------------------------------------------------- row 9: a commit racing a drop


def test_a_commit_after_the_drop_committed_is_404(server: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic: the commit is held just before its ratification while the table is dropped."""
    table = server.admin.create_table()
    reached, release = threading.Event(), threading.Event()
    original = ReferenceCatalog._ratify

    def held(self: ReferenceCatalog, *args: Any, **kwargs: Any) -> None:
        reached.set()
        assert release.wait(HANG_GUARD_S)
        original(self, *args, **kwargs)

    monkeypatch.setattr(ReferenceCatalog, "_ratify", held)
    with ThreadPoolExecutor(1) as pool:
        commit = pool.submit(server.admin.commit, table, 1)
        assert reached.wait(HANG_GUARD_S)
        dropped = server.admin.http.delete(f"{API}/tables/{table.full_name}")
        assert dropped.status_code == 200, dropped.text
        release.set()
        answer = commit.result(timeout=HANG_GUARD_S)
    assert_uc_error(answer, 404)
    assert answer.json()["error_code"] == "TABLE_NOT_FOUND"


def test_commits_racing_drops_answer_200_or_404(server: Served) -> None:
    """Many rounds of a commit and a drop at once: never a 400 or a 500; a 200 only for a commit that
    was ratified before the drop (its version is the table's latest when the drop took the name)."""
    for _ in range(15):
        table = server.admin.create_table()
        with ThreadPoolExecutor(2) as pool:
            commit = pool.submit(server.admin.commit, table, 1)
            drop = pool.submit(server.admin.http.delete, f"{API}/tables/{table.full_name}")
            answer, dropped = commit.result(timeout=HANG_GUARD_S), drop.result(timeout=HANG_GUARD_S)
        assert dropped.status_code == 200, dropped.text
        assert answer.status_code in (200, 404), answer.text
        row = server.built.meta.table_row(table.table_id)
        assert row is not None and row.name is None
        assert row.latest_version == (1 if answer.status_code == 200 else 0)


# ---------------------------------------------------------------- row 10: creating and dropping one name


def _create_or_drop(driver: Driver, name: str, i: int) -> list[int]:
    statuses = []
    for j in range(6):
        if (i + j) % 2:
            statuses.append(driver.http.delete(f"{API}/tables/unity.default.{name}").status_code)
        else:
            try:
                driver.create_table(name)
                statuses.append(200)
            except httpx.HTTPStatusError as e:
                statuses.append(e.response.status_code)
    return statuses


def test_eight_threads_creating_and_dropping_one_name_never_stick_it(server: Served) -> None:
    name = "contested"
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: _create_or_drop(server.admin, name, i), range(8)))
    statuses = {s for r in results for s in r}
    assert statuses <= {200, 400, 404}, statuses  # never a 500
    full = f"unity.default.{name}"
    if server.admin.http.get(f"{API}/tables/{full}").status_code == 200:
        assert server.admin.http.delete(f"{API}/tables/{full}").status_code == 200
    assert server.admin.http.get(f"{API}/tables/{full}").status_code == 404
    table = server.admin.create_table(name)  # the name is free: not stuck
    assert server.admin.http.get(f"{API}/tables/{full}").json()["table_id"] == table.table_id
    assert server.admin.http.delete(f"{API}/tables/{full}").status_code == 200


# ---------------------------------------------------------------- row 15: two Authorization headers


@pytest.mark.parametrize("order", [("admin-token", "reader-token"), ("reader-token", "admin-token")])
def test_two_authorization_headers_are_400(server: Served, order: tuple[str, str]) -> None:
    before = server.admin.state()
    headers = [("Authorization", f"Bearer {token}") for token in order]
    body = {"name": "two_tokens", "comment": "x"}
    with httpx.Client(base_url=server.url, timeout=HANG_GUARD_S) as bare:
        answer = bare.post(f"{API}/catalogs", json=body, headers=headers)
    assert_uc_error(answer, 400)
    assert server.admin.state() == before


# ---------------------------------------------------------------- rows 7 and 11: the connection


def _address(server: Served) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _until_closed(sock: socket.socket) -> bytes:
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def test_content_length_and_transfer_encoding_close_the_connection(server: Served) -> None:
    hidden = f"GET {API}/catalogs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin-token\r\n\r\n".encode()
    body = b"0\r\n\r\n" + hidden
    request = (
        f"GET {API}/catalogs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin-token\r\n"
        f"Content-Length: {len(body)}\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode() + body
    with socket.create_connection(_address(server), timeout=HANG_GUARD_S) as sock:
        sock.sendall(request)
        received = _until_closed(sock)  # returns only because the server closed the connection
    assert received.count(b"HTTP/1.1 ") == 1, received
    assert b"connection: close" in received.lower()


def test_connections_without_headers_are_closed(server: Served, caplog: pytest.LogCaptureFixture) -> None:
    """Row 11: idle connections (nothing sent, or half a request line) are closed after the header
    timeout, with one log line for all of them; a well-behaved client is then served."""
    caplog.set_level(logging.WARNING, logger="lakecert.connections")
    socks = [socket.create_connection(_address(server), timeout=HANG_GUARD_S) for _ in range(10)]
    try:
        socks[0].sendall(b"GET /api/2.1/unity-catalog/cata")
        for sock in socks:
            assert _until_closed(sock) == b""  # closed by the server, no answer
    finally:
        for sock in socks:
            sock.close()
    lines = [r for r in caplog.records if r.name == "lakecert.connections" and "headers" in r.getMessage()]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert server.admin.http.get(f"{API}/catalogs").status_code == 200


def test_connections_above_the_cap_are_closed_at_once(server: Served, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="lakecert.connections")
    socks = [socket.create_connection(_address(server), timeout=HANG_GUARD_S) for _ in range(MAX_CONNECTIONS + 20)]
    try:
        closed = 0
        for sock in socks:
            assert _until_closed(sock) == b""  # every one: the extra ones at once, the rest by the timeout
            closed += 1
    finally:
        for sock in socks:
            sock.close()
    assert closed == len(socks)
    capped = [
        r for r in caplog.records if r.name == "lakecert.connections" and "connections are open" in r.getMessage()
    ]
    assert len(capped) == 1, capped
    deadline = time.monotonic() + HANG_GUARD_S
    while server.admin.http.get(f"{API}/catalogs").status_code != 200:  # served again once they are gone
        assert time.monotonic() < deadline
