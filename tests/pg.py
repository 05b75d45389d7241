"""A real PostgreSQL for the tests, from the operating system's packages.

``Postgres.start()`` creates a cluster in a fresh temporary directory (``initdb``), starts it
on 127.0.0.1 and a free port with its socket in that directory, and ``stop()`` stops it
(``pg_ctl stop -m fast``) and removes the directory. PostgreSQL refuses to run as root: as
root, every command runs as the ``postgres`` system user (Debian's package creates it).

Test modules use it through a session-scoped fixture whose body is ``shared_cluster()``
(one cluster per test process, whichever modules ask for it) and give each test a fresh
schema (``new_schema()``: a DSN whose ``search_path`` is that schema) or database. Without
the binaries the tests are skipped, unless ``CI`` is set: then they fail, so CI cannot pass
by skipping them.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

BIN_GLOB = "/usr/lib/postgresql/*/bin"
SYSTEM_USER = "postgres"


def find_bin_dir() -> Path | None:
    """Where initdb, pg_ctl and postgres are: Debian's newest version, else the PATH."""

    def version(bin_dir: str) -> tuple[int, ...]:
        return tuple(int(x) for x in Path(bin_dir).parent.name.split(".") if x.isdigit())

    for candidate in sorted(glob.glob(BIN_GLOB), key=version, reverse=True):
        if all((Path(candidate) / tool).exists() for tool in ("initdb", "pg_ctl", "postgres")):
            return Path(candidate)
    found = shutil.which("pg_ctl")
    return Path(found).parent if found and shutil.which("initdb") else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Postgres:
    """A throw-away cluster: superuser ``postgres``, trust authentication, loopback only."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.as_root = os.geteuid() == 0
        # Not under pytest's tmp dirs: they are private to root, and the server runs as postgres.
        self.home = Path(tempfile.mkdtemp(prefix="lakecert-pg-"))
        self.data = self.home / "data"
        self.port = 0

    @classmethod
    def start(cls, bin_dir: Path) -> Postgres:
        cluster = cls(bin_dir)
        try:
            cluster._init()
            cluster._start()
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def _run(self, *argv: str, timeout: float = 60) -> None:
        command = [str(self.bin_dir / argv[0]), *argv[1:]]
        if self.as_root:
            command = ["runuser", "-u", SYSTEM_USER, "--", *command]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:2])} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")

    def _init(self) -> None:
        if self.as_root:
            user = pwd.getpwnam(SYSTEM_USER)
            os.chown(self.home, user.pw_uid, user.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-locale", "-E", "UTF8")

    def _start(self) -> None:
        for _ in range(5):  # a free port can be taken between the probe and the bind
            self.port = free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.home} -c max_connections=300"
                " -c shared_buffers=64MB"
            )
            try:
                self._run("pg_ctl", "-D", str(self.data), "-l", str(self.home / "log"), "-o", options, "-w", "start")
                return
            except RuntimeError:
                if self._running():
                    raise
        raise RuntimeError("PostgreSQL did not start:\n" + self.log())

    def restart(self) -> None:
        """A fast restart: every open connection is cut."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.home / "log"), "-m", "fast", "-w", "restart")

    def _running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def log(self) -> str:
        path = self.home / "log"
        return path.read_text(errors="replace") if path.exists() else ""

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; its DSN."""
        return new_database(self.dsn(), "t")

    def new_schema(self) -> str:
        """A fresh, empty schema in the database ``postgres``: a DSN whose connections use only
        it (``search_path``). Much faster than a database (milliseconds, not a fifth of a second)."""
        import psycopg

        name = f"s_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        return f"{self.dsn()}?options=-csearch_path%3D{name}"

    def stop(self) -> None:
        try:
            if self._running():
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.home, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


_cluster: Postgres | None = None
_users = 0


def shared_cluster() -> Iterator[Postgres]:
    """The body of a session-scoped fixture: one cluster per test process, stopped when the
    last fixture using it is finalized. Skips (fails under ``CI``) without PostgreSQL."""
    global _cluster, _users
    if _cluster is None:
        bin_dir = find_bin_dir()
        missing = None
        try:
            import psycopg  # noqa: F401
        except ImportError:
            missing = "psycopg is not installed (pip install -e '.[dev]')"
        if bin_dir is None:
            missing = f"PostgreSQL binaries not found in {BIN_GLOB} nor on PATH (apt-get install postgresql)"
        elif os.geteuid() == 0 and not _has_user(SYSTEM_USER):
            missing = f"running as root and there is no {SYSTEM_USER!r} user to run PostgreSQL as"
        if missing is not None:
            if os.environ.get("CI"):
                pytest.fail(missing)
            pytest.skip(missing)
        assert bin_dir is not None
        _cluster = Postgres.start(bin_dir)
    cluster = _cluster
    _users += 1
    try:
        yield cluster
    finally:
        _users -= 1
        if _users == 0:
            _cluster = None
            cluster.stop()


def new_database(admin_dsn: str, prefix: str) -> str:
    """A fresh, empty database on the server of ``admin_dsn`` (named ``<prefix>_<random>``); its DSN."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin_dsn.rsplit("/", 1)[0] + "/" + name
