"""The reference catalog: ratification, listing, publishing, durability, races."""

from __future__ import annotations

import multiprocessing
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import (
    Catalog,
    CommitConflict,
    CommitRejected,
    GetCommitsResponse,
    InvalidRequest,
    MaintenancePolicy,
    RatifiedCommit,
    TableInfo,
    TableNotFound,
)
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.storage.local import LocalStorage, path_to_uri


def staged(location: str, version: int) -> str:
    """A staged commit written for ``version`` (the catalog reads what it ratifies)."""
    uri = f"{location}/_delta_log/_staged_commits/{version:020d}.{uuid.uuid4()}.json"
    if uri.startswith("file:///"):
        LocalStorage().put(uri, b'{"commitInfo":{}}\n')
    return uri


def new_table(catalog: ReferenceCatalog, name: str) -> TableInfo:
    """Staging, version 0 written, registered (RFC "Creating and Dropping")."""
    table = catalog.create_staging_table()
    LocalStorage().put(f"{table.location}/_delta_log/{0:020d}.json", b'{"commitInfo":{}}\n')
    return catalog.register_table(name, table.table_id)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "catalog.db"


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    return path_to_uri(tmp_path / "warehouse")


@pytest.fixture
def catalog(db: Path, warehouse: str) -> ReferenceCatalog:
    return ReferenceCatalog(db, warehouse, LocalStorage())


def test_is_a_catalog(catalog: ReferenceCatalog) -> None:
    assert isinstance(catalog, Catalog)


def test_staging_locations_are_unique(catalog: ReferenceCatalog, warehouse: str) -> None:
    staged_tables = [catalog.create_staging_table() for _ in range(5)]
    assert len({t.location for t in staged_tables}) == 5
    assert len({t.table_id for t in staged_tables}) == 5
    assert all(t.location == f"{warehouse}/tables/{t.table_id}" for t in staged_tables)


def test_register_and_resolve(catalog: ReferenceCatalog) -> None:
    table = catalog.create_staging_table()
    with pytest.raises(InvalidRequest):  # version 0 not written yet
        catalog.register_table("t", table.table_id)
    LocalStorage().put(f"{table.location}/_delta_log/{0:020d}.json", b"{}\n")
    info = catalog.register_table("t", table.table_id)
    assert info == TableInfo(table.table_id, "t", table.location, catalog_managed=True)
    assert catalog.resolve("t") == info
    assert catalog.get_commits(table.table_id) == GetCommitsResponse([], 0)
    with pytest.raises(TableNotFound):
        catalog.resolve("other")


def test_register_refusals(catalog: ReferenceCatalog) -> None:
    first = new_table(catalog, "taken")
    other = catalog.create_staging_table()
    LocalStorage().put(f"{other.location}/_delta_log/{0:020d}.json", b"{}\n")
    for name, table_id in [
        ("taken", other.table_id),  # name in use
        ("fresh", first.table_id),  # already registered
        ("fresh", "no-such-id"),
        ("", other.table_id),
        ("bad/name", other.table_id),
        ("bad name", other.table_id),
    ]:
        with pytest.raises(InvalidRequest):
            catalog.register_table(name, table_id)
    assert catalog.resolve("taken") == first
    with pytest.raises(TableNotFound):
        catalog.resolve("fresh")


def test_sequential_commits_and_listing(catalog: ReferenceCatalog) -> None:
    table = new_table(catalog, "t")
    uris = {v: staged(table.location, v) for v in (1, 2, 4)}
    catalog.commit(table.table_id, 1, staged_uri=uris[1], in_commit_timestamp=1000)
    catalog.commit(table.table_id, 2, staged_uri=uris[2], in_commit_timestamp=2000)
    catalog.commit(table.table_id, 3, inline_content=b'{"commitInfo":{}}\n', in_commit_timestamp=3000)
    catalog.commit(table.table_id, 4, staged_uri=uris[4])
    expected = [
        RatifiedCommit(1, uris[1], None, 1000),
        RatifiedCommit(2, uris[2], None, 2000),
        RatifiedCommit(3, None, b'{"commitInfo":{}}\n', 3000),
        RatifiedCommit(4, uris[4], None, None),
    ]
    assert catalog.get_commits(table.table_id) == GetCommitsResponse(expected, 4)
    assert catalog.get_commits(table.table_id, 2, 3) == GetCommitsResponse(expected[1:3], 4)
    assert catalog.get_commits(table.table_id, start_version=3) == GetCommitsResponse(expected[2:], 4)
    assert catalog.get_commits(table.table_id, end_version=1) == GetCommitsResponse(expected[:1], 4)
    assert catalog.get_commits(table.table_id, 9, 12) == GetCommitsResponse([], 4)


def test_conflict_and_gap_leave_no_trace(catalog: ReferenceCatalog) -> None:
    table = new_table(catalog, "t")
    catalog.commit(table.table_id, 1, staged_uri=staged(table.location, 1))
    before = catalog.get_commits(table.table_id)
    with pytest.raises(CommitConflict) as conflict:
        catalog.commit(table.table_id, 1, staged_uri=staged(table.location, 1))
    assert conflict.value.latest_version == 1
    with pytest.raises(CommitRejected):
        catalog.commit(table.table_id, 3, staged_uri=staged(table.location, 3))
    with pytest.raises(CommitConflict):
        catalog.commit(table.table_id, 1, inline_content=b"x\n")
    assert catalog.get_commits(table.table_id) == before
    assert catalog.get_commits(table.table_id, 0, 10) == before


@pytest.mark.parametrize(
    "case",
    [
        "version-zero",
        "version-negative",
        "version-bool",
        "version-str",
        "both-contents",
        "no-content",
        "wrong-version-in-name",
        "other-table",
        "dot-dot",
        "sub-directory",
        "not-staging-dir",
        "bad-uuid",
        "empty-inline",
        "str-inline",
        "bad-timestamp",
        "published-not-below-version",
    ],
)
def test_invalid_commit_requests(catalog: ReferenceCatalog, case: str) -> None:
    table = new_table(catalog, "t")
    other = new_table(catalog, "other")
    catalog.commit(table.table_id, 1, staged_uri=staged(table.location, 1))
    before = catalog.get_commits(table.table_id)
    good = staged(table.location, 2)
    name = good.rsplit("/", 1)[1]
    requests: dict[str, dict[str, Any]] = {
        "version-zero": {"version": 0, "staged_uri": staged(table.location, 0)},
        "version-negative": {"version": -1, "inline_content": b"x\n"},
        "version-bool": {"version": True, "inline_content": b"x\n"},
        "version-str": {"version": "2", "staged_uri": good},
        "both-contents": {"staged_uri": good, "inline_content": b"x\n"},
        "no-content": {},
        "wrong-version-in-name": {"staged_uri": staged(table.location, 3)},
        "other-table": {"staged_uri": staged(other.location, 2)},
        "dot-dot": {"staged_uri": f"{table.location}/_delta_log/_staged_commits/../{name}"},
        "sub-directory": {"staged_uri": f"{table.location}/_delta_log/_staged_commits/x/{name}"},
        "not-staging-dir": {"staged_uri": f"{table.location}/_delta_log/{name}"},
        "bad-uuid": {"staged_uri": f"{table.location}/_delta_log/_staged_commits/{2:020d}.nope.json"},
        "empty-inline": {"inline_content": b""},
        "str-inline": {"inline_content": "x\n"},
        "bad-timestamp": {"inline_content": b"x\n", "in_commit_timestamp": "now"},
        "published-not-below-version": {"staged_uri": good, "latest_published_version": 2},
    }
    request = {"version": 2, **requests[case]}
    version = request.pop("version")
    with pytest.raises(InvalidRequest):
        catalog.commit(table.table_id, version, **request)
    assert catalog.get_commits(table.table_id) == before
    assert catalog.get_commits(other.table_id) == GetCommitsResponse([], 0)


def test_unknown_table(catalog: ReferenceCatalog) -> None:
    with pytest.raises(TableNotFound):
        catalog.commit("no-such-id", 1, inline_content=b"x\n")
    with pytest.raises(TableNotFound):
        catalog.get_commits("no-such-id")
    with pytest.raises(TableNotFound):
        catalog.mark_published("no-such-id", 0)
    with pytest.raises(TableNotFound):
        catalog.maintenance_policy("no-such-id")


def test_unregistered_table_takes_no_commits(catalog: ReferenceCatalog) -> None:
    table = catalog.create_staging_table()
    with pytest.raises(InvalidRequest):
        catalog.commit(table.table_id, 1, staged_uri=staged(table.location, 1))
    with pytest.raises(InvalidRequest):
        catalog.get_commits(table.table_id)


@pytest.mark.parametrize("bounds", [(-1, None), (None, -1), (3, 2), ("1", None), (None, 1.5), (True, None)])
def test_invalid_listing_ranges(catalog: ReferenceCatalog, bounds: tuple[Any, Any]) -> None:
    table = new_table(catalog, "t")
    with pytest.raises(InvalidRequest):
        catalog.get_commits(table.table_id, *bounds)


def test_mark_published_drops_only_published(catalog: ReferenceCatalog) -> None:
    table = new_table(catalog, "t")
    for v in range(1, 6):
        catalog.commit(table.table_id, v, staged_uri=staged(table.location, v))
    everything = catalog.get_commits(table.table_id).commits
    catalog.mark_published(table.table_id, 3)
    assert catalog.get_commits(table.table_id) == GetCommitsResponse(everything[3:], 5)
    catalog.mark_published(table.table_id, 1)  # the mark never goes back
    assert catalog.get_commits(table.table_id) == GetCommitsResponse(everything[3:], 5)
    for bad in (6, -1, "4"):
        with pytest.raises(InvalidRequest):
            catalog.mark_published(table.table_id, bad)  # type: ignore[arg-type]
    assert catalog.get_commits(table.table_id) == GetCommitsResponse(everything[3:], 5)
    catalog.mark_published(table.table_id, 5)
    assert catalog.get_commits(table.table_id) == GetCommitsResponse([], 5)


def test_commit_carries_published_mark(catalog: ReferenceCatalog) -> None:
    table = new_table(catalog, "t")
    for v in range(1, 4):
        catalog.commit(table.table_id, v, staged_uri=staged(table.location, v))
    uri = staged(table.location, 4)
    catalog.commit(table.table_id, 4, staged_uri=uri, latest_published_version=2)
    listed = catalog.get_commits(table.table_id)
    assert [c.version for c in listed.commits] == [3, 4]
    assert listed.latest_version == 4
    assert listed.commits[1].staged_uri == uri


def test_durable_across_reopen(db: Path, warehouse: str) -> None:
    first = ReferenceCatalog(db, warehouse, LocalStorage())
    table = new_table(first, "t")
    uri = staged(table.location, 1)
    first.commit(table.table_id, 1, staged_uri=uri, in_commit_timestamp=7)
    first.commit(table.table_id, 2, inline_content=b"inline\n")
    first.mark_published(table.table_id, 1)
    first.set_maintenance_policy(table.table_id, MaintenancePolicy(frozenset({"checksum"})))
    first.close()
    second = ReferenceCatalog(db, warehouse)
    assert second.resolve("t") == table
    assert second.get_commits(table.table_id) == GetCommitsResponse([RatifiedCommit(2, None, b"inline\n", None)], 2)
    assert second.maintenance_policy(table.table_id) == MaintenancePolicy(frozenset({"checksum"}))
    with pytest.raises(CommitConflict):
        second.commit(table.table_id, 2, inline_content=b"again\n")
    second.close()


def test_two_instances_race_one_winner_per_version(db: Path, warehouse: str) -> None:
    catalogs = [ReferenceCatalog(db, warehouse, LocalStorage()) for _ in range(2)]
    table = new_table(catalogs[0], "t")
    threads_per_version = 8
    outcomes: dict[int, list[str]] = {v: [] for v in range(1, 6)}
    lock = threading.Lock()
    for version in outcomes:
        barrier = threading.Barrier(threads_per_version)

        def propose(i: int, version: int = version, barrier: threading.Barrier = barrier) -> None:
            uri = staged(table.location, version)
            barrier.wait()
            try:
                catalogs[i % 2].commit(table.table_id, version, staged_uri=uri)
                outcome = f"won {uri}"
            except CommitConflict as err:
                outcome = f"conflict {err.latest_version}"
            with lock:
                outcomes[version].append(outcome)

        threads = [threading.Thread(target=propose, args=(i,)) for i in range(threads_per_version)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    listed = catalogs[1].get_commits(table.table_id)
    assert listed.latest_version == 5
    assert [c.version for c in listed.commits] == [1, 2, 3, 4, 5]
    for commit in listed.commits:
        assert sorted(outcomes[commit.version]) == [f"conflict {commit.version}"] * 7 + [f"won {commit.staged_uri}"]


def _propose_from_process(db: str, warehouse: str, table_id: str, location: str) -> list[int]:
    """Propose versions 1..10 in order, moving on after a conflict; the versions won."""
    catalog = ReferenceCatalog(db, warehouse)
    won = []
    for version in range(1, 11):
        try:
            catalog.commit(table_id, version, staged_uri=staged(location, version))
        except CommitConflict:
            continue
        won.append(version)
    return won


def test_processes_race_one_winner_per_version(db: Path, warehouse: str, catalog: ReferenceCatalog) -> None:
    table = new_table(catalog, "t")
    args = [(str(db), warehouse, table.table_id, table.location)] * 4
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        won = pool.starmap(_propose_from_process, args)
    assert sorted(v for versions in won for v in versions) == list(range(1, 11))
    assert [c.version for c in catalog.get_commits(table.table_id).commits] == list(range(1, 11))


def test_maintenance_policy(catalog: ReferenceCatalog) -> None:
    table = new_table(catalog, "t")
    assert catalog.maintenance_policy(table.table_id) == MaintenancePolicy()
    catalog.set_maintenance_policy(table.table_id, MaintenancePolicy(frozenset({"checkpoint", "vacuum"})))
    assert catalog.maintenance_policy(table.table_id).allowed == {"checkpoint", "vacuum"}
    with pytest.raises(InvalidRequest):
        catalog.set_maintenance_policy(table.table_id, MaintenancePolicy(frozenset({"optimize"})))
    assert catalog.maintenance_policy(table.table_id).allowed == {"checkpoint", "vacuum"}


def test_import_table(catalog: ReferenceCatalog, warehouse: str) -> None:
    location = f"{warehouse}/imported"
    commits = [
        RatifiedCommit(7, staged(location, 7), None, 700),
        RatifiedCommit(8, staged(location, 8), None, 800),
        RatifiedCommit(9, None, b'{"commitInfo":{}}\n', 900),
    ]
    info = catalog.import_table("rfc", location, 9, commits, latest_published_version=6)
    assert info == TableInfo(info.table_id, "rfc", location, catalog_managed=True)
    assert catalog.resolve("rfc") == info
    assert catalog.get_commits(info.table_id) == GetCommitsResponse(commits, 9)
    catalog.commit(info.table_id, 10, inline_content=b"x\n")
    assert catalog.get_commits(info.table_id).latest_version == 10
    empty = catalog.import_table("published", f"{warehouse}/p", 3, [], latest_published_version=3)
    assert catalog.get_commits(empty.table_id) == GetCommitsResponse([], 3)


@pytest.mark.parametrize(
    "case",
    ["gap", "not-ending-at-latest", "unpublished-missing", "published-above-latest", "bad-uri", "name"],
)
def test_import_table_refusals(catalog: ReferenceCatalog, warehouse: str, case: str) -> None:
    new_table(catalog, "taken")
    location = f"{warehouse}/imported"

    def c(v: int) -> RatifiedCommit:
        return RatifiedCommit(v, staged(location, v))

    name, latest, commits, published = {
        "gap": ("x", 4, [c(2), c(4)], 1),
        "not-ending-at-latest": ("x", 4, [c(2), c(3)], 1),
        "unpublished-missing": ("x", 4, [c(4)], 2),
        "published-above-latest": ("x", 4, [c(4)], 5),
        "bad-uri": ("x", 1, [RatifiedCommit(1, f"{warehouse}/elsewhere/{1:020d}.{uuid.uuid4()}.json")], 0),
        "name": ("taken", 1, [c(1)], 0),
    }[case]
    with pytest.raises(InvalidRequest):
        catalog.import_table(name, location, latest, commits, published)
    with pytest.raises(TableNotFound):
        catalog.resolve("x")
