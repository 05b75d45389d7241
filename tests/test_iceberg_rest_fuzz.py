"""Property-based fuzzing of the reference Iceberg REST catalog from its OpenAPI document (schemathesis):
no 5xx, every error in the ``IcebergErrorResponse`` shape, and a refused request changes nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from reference_impl.iceberg_rest import IcebergRestServer
from reference_impl.iceberg_rest.app import build_app
from reference_impl.iceberg_rest.catalog import RestCatalogService
from reference_impl.iceberg_rest.controller import ScheduleController
from reference_impl.iceberg_rest.openapi import document
from reference_impl.iceberg_rest.store import PointerStore

PREFIX = "lakecert"
# Bounded by examples, not time (a slow shared machine must not change the verdict): ~20 operations.
EXAMPLES = 20


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[IcebergRestServer]:
    (root / "wh").mkdir()
    with IcebergRestServer((root / "wh").as_uri(), prefix=PREFIX) as srv:
        # Something for generated requests to find: namespace "ns" with table "t".
        session = requests.Session()
        assert session.post(f"{srv.url}/v1/{PREFIX}/namespaces", json={"namespace": ["ns"]}).status_code == 200
        table: dict[str, Any] = {"name": "t", "schema": {"type": "struct", "fields": [], "schema-id": 0}}
        assert session.post(f"{srv.url}/v1/{PREFIX}/namespaces/ns/tables", json=table).status_code == 200
        yield srv


def _api_schema() -> Any:
    """Loaded at collection, from the routes of an app that never serves (the document needs no server)."""
    app = build_app(RestCatalogService(PointerStore(":memory:"), "file:///unused"), ScheduleController(), PREFIX)
    doc = document(app, f"/v1/{PREFIX}")
    for operation in (op for ops in doc["paths"].values() for op in ops.values()):
        for parameter in operation.get("parameters", []):
            # Explicit examples steer some requests at what exists; generation still covers any string.
            if parameter["name"] in ("namespace", "table"):
                parameter["schema"]["examples"] = ["ns" if parameter["name"] == "namespace" else "t"]
    return schemathesis.openapi.from_dict(doc)


def state(server: IcebergRestServer, root: Path) -> tuple[Any, ...]:
    store = server.store
    namespaces = [(ns, store.namespace_properties(ns)) for ns in store.child_namespaces(())]
    pointers = [(ns, t, store.metadata_location(ns, t)) for ns, _ in namespaces for t in store.table_names(ns)]
    return namespaces, pointers, sorted(str(p) for p in root.rglob("*"))


# One test per operation; schemathesis's decorator carries no type hints.
per_operation = cast(Callable[[Callable[..., None]], Callable[..., None]], _api_schema().parametrize())


@pytest.mark.slow
@per_operation
@settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
def test_generated_requests_get_no_5xx_and_refusals_change_nothing(
    case: Any, server: IcebergRestServer, root: Path
) -> None:
    before = state(server, root)
    response = case.call(base_url=server.url, timeout=30)
    case.validate_response(response, checks=[not_a_server_error])
    if response.status_code >= 400 and case.method != "HEAD":  # a HEAD answer has no body
        error = response.json()["error"]
        assert isinstance(error["message"], str) and isinstance(error["type"], str)
        assert error["code"] == response.status_code
    if response.status_code >= 400:
        assert state(server, root) == before, (case.method, case.path, response.status_code)
