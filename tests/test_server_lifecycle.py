"""`lakecert serve` starts and stops cleanly: SIGTERM and SIGINT exit 0 with the SQLite WAL
checkpointed (no -wal/-shm left); a database it cannot use is found at start-up, reported in one
line, exit 2, nothing half-started."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reference_impl.catalog.store import CatalogStore
from reference_impl.server.cli import serve_main
from reference_impl.server.runner import ServerProcess
from reference_impl.storage.local import path_to_uri
from tests.pg import Postgres
from tests.tooling.server import API, Driver, serve_args


def _exercise(url: str) -> None:
    """Some writes, so the WAL has content to checkpoint."""
    with httpx.Client(base_url=url, timeout=60) as http:
        d = Driver(http)
        t = d.create_table()
        for version in (1, 2):
            assert d.commit(t, version).status_code == 200


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_with_exit_0_and_checkpointed_wal(tmp_path: Path, sig: int) -> None:
    db = tmp_path / "catalog.sqlite"
    with ServerProcess(str(db)) as server:
        _exercise(server.url)
        assert Path(f"{db}-wal").exists(), "the test should leave a WAL to checkpoint"
        code = server.signal_and_wait(sig)
        output = "".join(server.output)
    assert code == 0, output
    assert "Traceback" not in output
    assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()
    with sqlite3.connect(db) as conn:  # everything acknowledged is in the main file
        assert conn.execute("SELECT latest_version FROM tables WHERE name IS NOT NULL").fetchall() == [(2,)]


def test_sigterm_on_postgres_exits_0(postgres: Postgres, tmp_path: Path) -> None:
    with ServerProcess(postgres.new_schema(), path_to_uri(tmp_path / "warehouse")) as server:
        _exercise(server.url)
        assert server.signal_and_wait(signal.SIGTERM) == 0, "".join(server.output)


def _refused_at_start(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = serve_main(serve_args(*argv, "--port", "0"))
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_database_path_that_is_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "db").mkdir()
    _refused_at_start(capsys, "--db", str(tmp_path / "db"))


def test_database_below_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    _refused_at_start(capsys, "--db", str(tmp_path / "file" / "catalog.sqlite"))


def test_file_that_is_not_a_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "catalog.sqlite").write_bytes(b"not a database" * 100)
    _refused_at_start(capsys, "--db", str(tmp_path / "catalog.sqlite"))


@pytest.fixture
def immutable_db(tmp_path: Path) -> Iterator[Path]:
    """An existing catalog database nobody, not even root, may write (`chattr +i`)."""
    db = tmp_path / "catalog.sqlite"
    CatalogStore(db).close()
    for leftover in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        leftover.unlink(missing_ok=True)
    made = subprocess.run(["chattr", "+i", str(db)], capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip("chattr +i is not available here: cannot make a file read-only for every user")
    try:
        yield db
    finally:
        subprocess.run(["chattr", "-i", str(db)], capture_output=True, check=False)


def test_read_only_sqlite_database(immutable_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = immutable_db.read_bytes()
    _refused_at_start(capsys, "--db", str(immutable_db))
    assert immutable_db.read_bytes() == before


def test_read_only_postgres_database(postgres: Postgres, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = postgres.new_schema()  # ...?options=-csearch_path%3D<schema>: add a second setting
    read_only = url.replace("options=", "options=-cdefault_transaction_read_only%3Don%20", 1)
    assert read_only != url
    _refused_at_start(capsys, "--db", read_only, "--warehouse", path_to_uri(tmp_path / "w"))


def test_started_server_answers(tmp_path: Path) -> None:
    """The start-up probe leaves a usable database behind (and a second start reuses it)."""
    db = tmp_path / "catalog.sqlite"
    for _ in range(2):
        with ServerProcess(str(db)) as server, httpx.Client(base_url=server.url, timeout=60) as http:
            assert http.get(f"{API}/catalogs").status_code == 200
