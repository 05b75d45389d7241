"""UC's /delta/v1 table creation on the served catalog: staging table, then create table
(api/delta.yaml createStagingTable, createTable), as delta-spark's UC connector calls them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from reference_impl.delta import log_paths as P
from tests.tooling.server import Driver, served

SCHEMA = "/api/2.1/unity-catalog/delta/v1/catalogs/unity/schemas/default"
PROTOCOL = {
    "min-reader-version": 3,
    "min-writer-version": 7,
    "reader-features": ["catalogManaged", "vacuumProtocolCheck"],
    "writer-features": ["catalogManaged", "inCommitTimestamp", "vacuumProtocolCheck"],
}
COLUMNS = {
    "type": "struct",
    "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "amount", "type": "decimal(10,2)", "nullable": False, "metadata": {}},
    ],
}


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Driver]:
    db = tmp_path_factory.mktemp("v1tables") / "catalog.sqlite"
    with served("--db", str(db)) as (url, _), httpx.Client(base_url=url) as http:
        yield Driver(http)


def stage(d: Driver, name: str) -> dict[str, Any]:
    resp = d.http.post(f"{SCHEMA}/staging-tables", json={"name": name})
    assert resp.status_code == 200, resp.text
    staged: dict[str, Any] = resp.json()
    d.storage.put(P.delta_uri(staged["location"], 0), Driver.version0(staged["table-id"]))
    return staged


def create_body(name: str, staged: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {
        "name": name,
        "location": staged["location"],
        "table-type": "MANAGED",
        "columns": COLUMNS,
        "protocol": PROTOCOL,
        "properties": dict(staged["required-properties"]),
        "last-commit-timestamp-ms": 1,
        **changes,
    }


def test_staging_answer_says_what_a_catalog_managed_table_needs(driver: Driver) -> None:
    staged = stage(driver, "v1_staged")
    assert staged["table-type"] == "MANAGED" and staged["storage-credentials"] == []
    assert "catalogManaged" in staged["required-protocol"]["reader-features"]
    assert {"catalogManaged", "inCommitTimestamp"} <= set(staged["required-protocol"]["writer-features"])
    assert staged["required-properties"]["io.unitycatalog.tableId"] == staged["table-id"]


def test_create_then_load_and_commit(driver: Driver) -> None:
    staged = stage(driver, "v1_created")
    created = driver.http.post(f"{SCHEMA}/tables", json=create_body("v1_created", staged))
    assert created.status_code == 200, created.text
    table = created.json()
    assert table["metadata"]["table-uuid"] == staged["table-id"]
    assert table["latest-table-version"] == 0 and table["commits"] == []
    uc_table = driver.http.get("/api/2.1/unity-catalog/tables/unity.default.v1_created").json()
    assert [(c["name"], c["type_name"], c["nullable"]) for c in uc_table["columns"]] == [
        ("id", "LONG", True),
        ("amount", "DECIMAL", False),
    ]
    again = driver.http.post(f"{SCHEMA}/tables", json=create_body("v1_created", staged))
    assert again.status_code in (400, 404, 409)


@pytest.mark.parametrize(
    "changes",
    [
        {"protocol": {"min-reader-version": 1, "min-writer-version": 2}},  # not catalog-managed
        {"table-type": "EXTERNAL"},
        {"columns": {"type": "struct", "fields": [{"name": "x", "type": "no-such-type"}]}},
        {"properties": {}},  # no UC table id
        {"location": "file:///elsewhere"},  # not the staging location
    ],
)
def test_bad_create_is_refused_and_changes_nothing(driver: Driver, changes: dict[str, Any]) -> None:
    staged = stage(driver, "v1_refused")
    resp = driver.http.post(f"{SCHEMA}/tables", json=create_body("v1_refused", staged, **changes))
    assert 400 <= resp.status_code < 500, resp.text
    assert resp.json()["error"]["code"] == resp.status_code
    assert driver.http.get("/api/2.1/unity-catalog/tables/unity.default.v1_refused").status_code == 404
