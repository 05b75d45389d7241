"""What Iceberg's REST Compatibility Kit needed from the reference catalog, checked over raw HTTP
without a JVM (tests/test_iceberg_rck.py runs the kit itself): register, v3 create transactions,
sort-order ids assigned as Java does, column defaults kept, a missing metadata file as 404."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from reference_impl.iceberg_rest import IcebergRestServer

PREFIX = "lakecert"
SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}],
}
_names = itertools.count()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IcebergRestServer]:
    with IcebergRestServer(tmp_path_factory.mktemp("kit").as_uri(), prefix=PREFIX) as srv:
        yield srv


@pytest.fixture
def ns(server: IcebergRestServer) -> str:
    name = f"kit{next(_names)}"
    assert requests.post(url(server, "namespaces"), json={"namespace": [name]}, timeout=60).status_code == 200
    return name


def url(server: IcebergRestServer, path: str) -> str:
    return f"{server.url}/v1/{PREFIX}/{path}"


def create(server: IcebergRestServer, ns: str, name: str, **extra: Any) -> dict[str, Any]:
    response = requests.post(url(server, f"namespaces/{ns}/tables"), json={"name": name, **extra}, timeout=60)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_register_adopts_a_metadata_file_and_refuses_an_existing_table(server: IcebergRestServer, ns: str) -> None:
    location = create(server, ns, "t", schema=SCHEMA)["metadata-location"]
    assert requests.delete(url(server, f"namespaces/{ns}/tables/t"), timeout=60).status_code == 204
    body = {"name": "t", "metadata-location": location}
    registered = requests.post(url(server, f"namespaces/{ns}/register"), json=body, timeout=60)
    assert registered.status_code == 200 and registered.json()["metadata-location"] == location
    again = requests.post(url(server, f"namespaces/{ns}/register"), json=body, timeout=60)
    assert (again.status_code, again.json()["error"]["type"]) == (409, "AlreadyExistsException")


def test_v3_create_transaction(server: IcebergRestServer, ns: str) -> None:
    staged = create(server, ns, "v3", schema=SCHEMA, **{"stage-create": True})["metadata"]
    updates = [
        {"action": "assign-uuid", "uuid": staged["table-uuid"]},
        {"action": "upgrade-format-version", "format-version": 3},
        {"action": "add-schema", "schema": SCHEMA},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-location", "location": staged["location"]},
    ]
    body = {"requirements": [{"type": "assert-create"}], "updates": updates}
    committed = requests.post(url(server, f"namespaces/{ns}/tables/v3"), json=body, timeout=60)
    assert committed.status_code == 200, committed.text
    metadata = requests.get(url(server, f"namespaces/{ns}/tables/v3"), timeout=60).json()["metadata"]
    assert (metadata["format-version"], metadata["next-row-id"]) == (3, 0)


def test_sort_orders_added_under_one_id_both_commit(server: IcebergRestServer, ns: str) -> None:
    """Two replace transactions built on the same table each propose order id 1; Java's builder
    assigns the second a new id, so both commit in turn."""
    create(server, ns, "s", schema=SCHEMA)
    orders = [
        {"order-id": 1, "fields": [{"source-id": 1, "transform": t, "direction": "asc", "null-order": "nulls-first"}]}
        for t in ("identity", "bucket[16]")
    ]
    for order in orders:
        updates: list[dict[str, Any]] = [
            {"action": "add-sort-order", "sort-order": order},
            {"action": "set-default-sort-order", "sort-order-id": -1},
        ]
        response = requests.post(
            url(server, f"namespaces/{ns}/tables/s"), json={"requirements": [], "updates": updates}
        )
        assert response.status_code == 200, response.text
    metadata = requests.get(url(server, f"namespaces/{ns}/tables/s"), timeout=60).json()["metadata"]
    assert sorted(o["order-id"] for o in metadata["sort-orders"]) == [0, 1, 2]
    assert metadata["default-sort-order-id"] == 2


def test_column_defaults_survive_create(server: IcebergRestServer, ns: str) -> None:
    field = {"id": 1, "name": "c", "required": True, "type": "int", "initial-default": 12, "write-default": 10}
    schema = {"type": "struct", "schema-id": 0, "fields": [field]}
    create(server, ns, "d", schema=schema, properties={"format-version": "3"})
    loaded = requests.get(url(server, f"namespaces/{ns}/tables/d"), timeout=60).json()["metadata"]
    served = loaded["schemas"][0]["fields"][0]
    assert (served["initial-default"], served["write-default"]) == (12, 10)


def test_missing_metadata_file_is_404(server: IcebergRestServer, ns: str) -> None:
    location = create(server, ns, "m", schema=SCHEMA)["metadata-location"]
    path = Path(location.removeprefix("file:").removeprefix("//"))
    path.rename(path.with_suffix(".moved"))
    try:
        response = requests.get(url(server, f"namespaces/{ns}/tables/m"), timeout=60)
        assert (response.status_code, response.json()["error"]["type"]) == (404, "NotFoundException")
    finally:
        path.with_suffix(".moved").rename(path)
    assert requests.get(url(server, f"namespaces/{ns}/tables/m"), timeout=60).status_code == 200
