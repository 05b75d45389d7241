"""Fixtures shared by lakecert's own tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reference_impl.storage.s3 import S3Settings
from tests.moto_s3 import moto_s3
from tests.pg import Postgres, shared_cluster

UNGROUPED: pytest.StashKey[set[str]] = pytest.StashKey()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup`` (``make test``) a module marked ``xdist_group`` runs in one worker,
    so its expensive module fixture (a JVM, a SparkSession, a run of every variant) is built once.
    pytest-xdist groups by appending ``@group`` to each item's id in the worker; with pytest 9.2.0
    that no longer takes effect (pytest-xdist issue #1386): the groups were silently spread over the
    workers, each fixture built in each, and the suite ran 5 to 9 minutes longer. Such tests now
    fail at once, saying why (an error raised here would end the worker without its message)."""
    # Longest first: under xdist each worker takes the next test when it is free, so a test of minutes
    # collected late (test_s3_certify, test_selftest sort after most files) ends the run alone on one
    # worker while the others idle. Tests marked ``slow`` start first, the longest (``seconds=``, as
    # measured in docs/benchmarks.md) before the others; the rest keep their order.
    items.sort(key=_expected_seconds, reverse=True)
    if getattr(config.option, "loadgroup", False):
        grouped = [i.nodeid for i in items if i.get_closest_marker("xdist_group")]
        config.stash[UNGROUPED] = {nodeid for nodeid in grouped if "@" not in nodeid}


def _expected_seconds(item: pytest.Item) -> int:
    return max((int(m.kwargs.get("seconds", 30)) for m in item.iter_markers("slow")), default=0)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.nodeid in item.config.stash.get(UNGROUPED, set()):
        pytest.fail(
            f"--dist loadgroup did not keep this module's xdist_group in one worker (pytest {pytest.__version__}): "
            "install the versions pyproject.toml pins (make setup)",
            pytrace=False,
        )


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
