"""Fixtures shared by lakecert's own tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reference_impl.storage.s3 import S3Settings
from tests.moto_s3 import moto_s3
from tests.pg import Postgres, shared_cluster


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """Where a test's lakecert run writes."""
    return tmp_path / "run"


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """A real PostgreSQL of the operating system's packages, one per test process."""
    yield from shared_cluster()


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A catalog database on each store: a SQLite file, or a fresh schema of the shared PostgreSQL."""
    if request.param == "sqlite":
        return str(tmp_path / "catalog.sqlite")
    cluster: Postgres = request.getfixturevalue("postgres")
    return cluster.new_schema()


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Settings]:
    """moto's S3 server with the bucket ``tests.moto_s3.BUCKET``, one per test module."""
    with moto_s3() as settings:
        yield settings
