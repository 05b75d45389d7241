"""UC's /delta/v1 table API on the served catalog: config, load table, update with add-commit
and set-latest-backfilled-version, and its error shape."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.tooling.server import Driver, Table, served

V1 = "/api/2.1/unity-catalog/delta/v1"


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Driver]:
    db = tmp_path_factory.mktemp("v1") / "catalog.sqlite"
    with served("--db", str(db), "--max-unpublished", "3") as (url, _), httpx.Client(base_url=url) as http:
        yield Driver(http)


def path(t: Table) -> str:
    catalog, schema, name = t.full_name.split(".")
    return f"{V1}/catalogs/{catalog}/schemas/{schema}/tables/{name}"


def add_commit(d: Driver, t: Table, version: int, uuid: str | None = None, **extra: Any) -> httpx.Response:
    commit = {
        "version": version,
        "timestamp": 1000 + version,
        "file-name": d.stage(t, version),
        "file-size": 10,
        "file-modification-timestamp": 1000 + version,
    }
    updates: list[dict[str, Any]] = [{"action": "add-commit", "commit": commit}]
    if extra:
        updates.append({"action": "set-latest-backfilled-version", **extra})
    body = {"requirements": [{"type": "assert-table-uuid", "uuid": uuid or t.table_id}], "updates": updates}
    return d.http.post(path(t), json=body)


def assert_v1_error(resp: httpx.Response, status: int) -> None:
    assert resp.status_code == status, resp.text
    error = resp.json()["error"]
    assert error["code"] == status and isinstance(error["type"], str) and isinstance(error["message"], str)


def test_config_negotiates_version_1(driver: Driver) -> None:
    resp = driver.http.get(f"{V1}/config", params={"catalog": "unity", "protocol-versions": "1.3,2.0"})
    assert resp.status_code == 200 and resp.json()["protocol-version"] == "1.0"
    assert_v1_error(driver.http.get(f"{V1}/config", params={"catalog": "unity", "protocol-versions": "2.0"}), 400)
    assert_v1_error(driver.http.get(f"{V1}/config", params={"catalog": "nope", "protocol-versions": "1.0"}), 404)


def test_add_commit_load_and_backfill(driver: Driver) -> None:
    t = driver.create_table()
    loaded = driver.http.get(path(t)).json()
    assert loaded["latest-table-version"] == 0 and loaded["metadata"]["table-uuid"] == t.table_id
    for version in (1, 2):
        assert add_commit(driver, t, version).status_code == 200
    loaded = driver.http.get(path(t)).json()
    assert [c["version"] for c in loaded["commits"]] == [2, 1]  # delta.yaml: newest first
    assert loaded["latest-table-version"] == 2
    assert_v1_error(add_commit(driver, t, 2), 409)  # another file for a ratified version
    assert_v1_error(add_commit(driver, t, 3, uuid="00000000-0000-4000-8000-000000000001"), 409)
    assert add_commit(driver, t, 3).status_code == 200
    assert_v1_error(add_commit(driver, t, 4), 429)  # three unpublished is the limit here
    assert driver.publish(t, 2).status_code == 200
    resp = add_commit(driver, t, 4, None, **{"latest-published-version": 3})
    assert resp.status_code == 200 and [c["version"] for c in resp.json()["commits"]] == [4]


@pytest.mark.parametrize(
    "body",
    [
        {"requirements": [], "updates": [{"action": "set-latest-backfilled-version", "latest-published-version": 0}]},
        {"requirements": [{"type": "assert-etag", "etag": "x"}], "updates": []},
        {"requirements": [{"type": "assert-table-uuid", "uuid": "x"}], "updates": [{"action": "set-protocol"}]},
        {"requirements": [{"type": "assert-table-uuid", "uuid": "x"}], "updates": [{"action": "add-commit"}]},
    ],
)
def test_malformed_updates_are_400_and_change_nothing(driver: Driver, body: dict[str, Any]) -> None:
    t = driver.create_table()
    before = driver.state(t)
    assert_v1_error(driver.http.post(path(t), json=body), 400)
    assert driver.state(t) == before


def test_unknown_table_is_404(driver: Driver) -> None:
    assert_v1_error(driver.http.get(f"{V1}/catalogs/unity/schemas/default/tables/none"), 404)
