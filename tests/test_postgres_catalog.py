"""The reference catalog on PostgreSQL: every test of tests/test_reference_catalog.py (threads
and processes racing on one table included) runs here again with ``db`` a PostgreSQL URL, and
the reference and every faulty catalog variant behave on PostgreSQL as they do on SQLite."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import (
    CatalogError,
    GetCommitsResponse,
    InvalidRequest,
    MaintenancePolicy,
    NotSupported,
)
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.faults.registry import all_faults
from reference_impl.storage.local import LocalStorage, path_to_uri
from tests import test_reference_catalog as sqlite_suite
from tests.pg import Postgres

# The SQLite suite's tests, collected here too with this module's fixtures (``db`` below).
globals().update({name: test for name, test in vars(sqlite_suite).items() if name.startswith("test_")})

CATALOG_CLASSES: dict[str, type[ReferenceCatalog]] = {"reference": ReferenceCatalog}
for _fault in all_faults().values():
    if _fault.side == "catalog":
        assert isinstance(_fault.cls, type) and issubclass(_fault.cls, ReferenceCatalog)
        CATALOG_CLASSES[_fault.name] = _fault.cls


@pytest.fixture
def db(postgres: Postgres) -> str:
    return postgres.new_schema()


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    return path_to_uri(tmp_path / "warehouse")


@pytest.fixture
def catalog(db: str, warehouse: str) -> Iterator[ReferenceCatalog]:
    cat = ReferenceCatalog(db, warehouse, LocalStorage())
    try:
        yield cat
    finally:
        cat.close()


def script(catalog: ReferenceCatalog) -> list[Any]:
    """A sequence of operations touching every hook a variant overrides; what a client observes."""
    seen: list[Any] = []

    def do(op: Callable[[], Any]) -> None:
        try:
            seen.append(op())
        except (CatalogError, NotSupported) as e:
            seen.append(type(e).__name__)

    staged = catalog.create_staging_table()
    LocalStorage().put(f"{staged.location}/_delta_log/{0:020d}.json", b'{"commitInfo":{}}\n')
    table = catalog.register_table("t", staged.table_id)
    tid = table.table_id

    def uri(v: int) -> str:
        return f"{table.location}/_delta_log/_staged_commits/{v:020d}.{uuid.UUID(int=v)}.json"

    do(lambda: catalog.register_table("t", catalog.create_staging_table().table_id))
    for v in (1, 2, 3, 4):
        do(partial(catalog.commit, tid, v, staged_uri=uri(v), in_commit_timestamp=v))
    do(lambda: catalog.commit(tid, 2, inline_content=b"again\n"))
    do(lambda: catalog.commit(tid, 9, inline_content=b"gap\n"))
    do(lambda: catalog.commit(tid, 5, inline_content=b"inline\n", latest_published_version=2))
    do(lambda: catalog.get_commits(tid))
    do(lambda: catalog.get_commits(tid, 4, 5))
    do(lambda: catalog.mark_published(tid, 4))
    do(lambda: catalog.get_commits(tid))
    do(lambda: catalog.set_maintenance_policy(tid, MaintenancePolicy(frozenset({"checkpoint"}))))
    do(lambda: catalog.maintenance_policy(tid))
    return seen


@pytest.mark.parametrize("variant", sorted(CATALOG_CLASSES))
def test_variant_behaves_as_on_sqlite(variant: str, db: str, tmp_path: Path) -> None:
    cls = CATALOG_CLASSES[variant]
    on_sqlite = cls(tmp_path / "catalog.sqlite", path_to_uri(tmp_path / "warehouse"), LocalStorage())
    on_postgres = cls(db, path_to_uri(tmp_path / "warehouse"), LocalStorage())
    try:
        expected, got = script(on_sqlite), script(on_postgres)
    finally:
        on_sqlite.close()
        on_postgres.close()
    assert [observable(x) for x in got] == [observable(x) for x in expected]


def observable(outcome: Any) -> Any:
    """An outcome without what differs between two catalogs (table ids, hence locations)."""
    if isinstance(outcome, GetCommitsResponse):
        commits = [
            (c.version, c.staged_uri and c.staged_uri.rsplit("/", 1)[-1], c.inline_content, c.in_commit_timestamp)
            for c in outcome.commits
        ]
        return commits, outcome.latest_version
    return "table info" if hasattr(outcome, "table_id") else outcome


def test_racing_registrations_of_one_name_one_winner(db: str, warehouse: str) -> None:
    """No row to lock yet: the name's advisory lock makes the check-then-register atomic, so
    every loser gets the catalog's refusal, not a database error."""
    catalogs = [ReferenceCatalog(db, warehouse, LocalStorage()) for _ in range(2)]
    try:
        staged = [catalogs[0].create_staging_table() for _ in range(8)]
        for table in staged:
            LocalStorage().put(f"{table.location}/_delta_log/{0:020d}.json", b'{"commitInfo":{}}\n')
        barrier = threading.Barrier(len(staged))
        outcomes: list[str] = []

        def register(i: int) -> None:
            barrier.wait(timeout=30)
            try:
                catalogs[i % 2].register_table("same", staged[i].table_id)
                outcomes.append("won")
            except InvalidRequest:
                outcomes.append("refused")

        threads = [threading.Thread(target=register, args=(i,)) for i in range(len(staged))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert sorted(outcomes) == ["refused"] * (len(staged) - 1) + ["won"]
    finally:
        for catalog in catalogs:
            catalog.close()
