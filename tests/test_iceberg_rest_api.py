"""The reference Iceberg REST server over raw HTTP: config, status codes and error shapes, and that a
refused request changes nothing."""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import requests
from pyiceberg.catalog import load_catalog

from reference_impl.iceberg_rest import IcebergRestServer
from reference_impl.iceberg_rest.app import ENDPOINTS

PREFIX = "lakecert"
SCHEMA_JSON: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}],
}
_names = itertools.count()
# The fields Java's TableMetadataParser cannot do without in a v2 table (spec: only the first two).
JAVA_V2_REQUIRED = (
    "format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms", "last-column-id", "schemas",
    "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id", "sort-orders",
    "default-sort-order-id",
)  # fmt: skip
# The catalog calls Java's RESTSessionCatalog makes for Spark's SQL on tables and namespaces
# (views: declared too, see REGISTER_AND_VIEWS).
SPARK_CALLS = {
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
}


# Declared beyond Spark's table SQL: register, and the view routes (Java's client then manages views).
REGISTER_AND_VIEWS = {
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "GET /v1/{prefix}/namespaces/{namespace}/views",
    "POST /v1/{prefix}/namespaces/{namespace}/views",
    "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/views/rename",
    "POST /v1/{prefix}/namespaces/{namespace}/register-view",
}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("warehouse")


@pytest.fixture(scope="module")
def server(warehouse: Path) -> Iterator[IcebergRestServer]:
    with IcebergRestServer(warehouse.as_uri(), prefix=PREFIX) as srv:
        yield srv


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


def url(server: IcebergRestServer, path: str) -> str:
    return f"{server.url}/v1/{PREFIX}/{path}"


@pytest.fixture
def table(server: IcebergRestServer) -> tuple[str, str]:
    """A fresh namespace with one table ``t`` holding one snapshot."""
    namespace = f"ns{next(_names)}"
    catalog = load_catalog("setup", **server.client_properties())
    catalog.create_namespace(namespace)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    catalog.create_table(f"{namespace}.t", schema=schema).append(pa.table({"id": [1]}, schema=schema))
    return namespace, "t"


def state(server: IcebergRestServer, warehouse: Path) -> tuple[Any, ...]:
    """Everything a request could change: namespaces with properties, table pointers, warehouse files."""
    store = server.store
    namespaces = [(ns, store.namespace_properties(ns)) for ns in store.child_namespaces(())]
    pointers = [(ns, t, store.metadata_location(ns, t)) for ns, _ in namespaces for t in store.table_names(ns)]
    return namespaces, pointers, sorted(str(p) for p in warehouse.rglob("*"))


def assert_error(response: requests.Response, status: int, error_type: str | None = None) -> None:
    assert response.status_code == status
    error = response.json()["error"]
    assert set(error) >= {"message", "type", "code"}
    assert isinstance(error["message"], str) and error["code"] == status
    if error_type is not None:
        assert error["type"] == error_type


def test_config_announces_prefix_and_every_endpoint_spark_calls(server: IcebergRestServer) -> None:
    config = requests.get(f"{server.url}/v1/config", params={"warehouse": "any"}, timeout=5).json()
    assert config["defaults"] == {} and config["overrides"] == {"prefix": PREFIX}
    assert set(config["endpoints"]) == SPARK_CALLS | REGISTER_AND_VIEWS


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_every_declared_endpoint_is_routed(
    server: IcebergRestServer, http: requests.Session, table: tuple[str, str], endpoint: str
) -> None:
    """HEAD on a table that exists answers 204 (on a missing view 404); anything else reaches its
    handler (no route-level 404 or 405)."""
    verb, path = endpoint.split(" ")
    table_head = verb == "HEAD" and "{view}" not in path
    namespace, name = table if table_head else ("missing", "missing")
    path = path.format(prefix=PREFIX, namespace=namespace, table=name, view=name)
    response = http.request(verb, server.url + path, json={} if verb == "POST" else None, timeout=5)
    if verb == "HEAD":
        assert response.status_code == (204 if table_head else 404)
    else:
        assert response.status_code in (200, 204, 400, 404)
        if response.status_code == 404:
            missing = ("NoSuchNamespaceException", "NoSuchTableException", "NoSuchViewException")
            assert response.json()["error"]["type"] in missing


def test_load_table_result_has_what_java_needs(
    server: IcebergRestServer, http: requests.Session, table: tuple[str, str]
) -> None:
    namespace, name = table
    result = http.get(url(server, f"namespaces/{namespace}/tables/{name}"), timeout=5).json()
    assert result["metadata-location"].endswith(".metadata.json")
    assert isinstance(result["config"], dict)
    metadata = result["metadata"]
    assert set(JAVA_V2_REQUIRED) <= set(metadata)
    assert metadata["current-snapshot-id"] == metadata["refs"]["main"]["snapshot-id"]


def test_snapshots_refs_returns_only_referenced(
    server: IcebergRestServer, http: requests.Session, table: tuple[str, str]
) -> None:
    namespace, name = table
    path = url(server, f"namespaces/{namespace}/tables/{name}")
    assert len(http.get(path, params={"snapshots": "refs"}, timeout=5).json()["metadata"]["snapshots"]) == 1
    assert_error(http.get(path, params={"snapshots": "some"}, timeout=5), 400, "BadRequestException")


BAD_COMMITS: dict[str, bytes | Any] = {
    "malformed-json": b'{"requirements": [',
    "empty-body": b"",
    "not-an-object": [],
    "missing-updates": {"requirements": []},
    "missing-requirements": {"updates": []},
    "unknown-update": {"requirements": [], "updates": [{"action": "frobnicate"}]},
    "unknown-requirement": {"requirements": [{"type": "assert-mood", "mood": "good"}], "updates": []},
    "update-missing-field": {"requirements": [], "updates": [{"action": "set-properties"}]},
    "requirement-missing-field": {"requirements": [{"type": "assert-current-schema-id"}], "updates": []},
    "wrong-field-type": {"requirements": [], "updates": [{"action": "set-current-schema", "schema-id": "latest"}]},
    "ref-to-unknown-snapshot": {
        "requirements": [],
        "updates": [{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 424242}],
    },
    "format-downgrade": {"requirements": [], "updates": [{"action": "upgrade-format-version", "format-version": 1}]},
    "not-modelled-by-pyiceberg": {
        "requirements": [],
        "updates": [{"action": "add-encryption-key", "encryption-key": {"key-id": "k", "encrypted-key-metadata": ""}}],
    },
    "identifier-of-another-table": {
        "identifier": {"namespace": ["elsewhere"], "name": "t"},
        "requirements": [],
        "updates": [{"action": "set-properties", "updates": {"k": "v"}}],
    },
}


@pytest.mark.parametrize("body", BAD_COMMITS.values(), ids=BAD_COMMITS.keys())
def test_bad_commit_is_400_and_changes_nothing(
    server: IcebergRestServer, http: requests.Session, warehouse: Path, table: tuple[str, str], body: Any
) -> None:
    namespace, name = table
    before = state(server, warehouse)
    path = url(server, f"namespaces/{namespace}/tables/{name}")
    response = (
        http.post(path, data=body, timeout=5) if isinstance(body, bytes) else http.post(path, json=body, timeout=5)
    )
    assert_error(response, 400, "BadRequestException")
    assert state(server, warehouse) == before


FAILED_REQUIREMENTS = {
    "table-uuid": {"type": "assert-table-uuid", "uuid": str(uuid.uuid4())},
    "ref-snapshot-id": {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 1},
    "ref-must-not-exist": {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None},
    "create": {"type": "assert-create"},
    "current-schema-id": {"type": "assert-current-schema-id", "current-schema-id": 5},
    "last-assigned-field-id": {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 99},
    "default-spec-id": {"type": "assert-default-spec-id", "default-spec-id": 3},
}


@pytest.mark.parametrize("requirement", FAILED_REQUIREMENTS.values(), ids=FAILED_REQUIREMENTS.keys())
def test_failed_requirement_is_409_and_changes_nothing(
    server: IcebergRestServer, http: requests.Session, warehouse: Path, table: tuple[str, str], requirement: Any
) -> None:
    namespace, name = table
    before = state(server, warehouse)
    body = {"requirements": [requirement], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}
    response = http.post(url(server, f"namespaces/{namespace}/tables/{name}"), json=body, timeout=5)
    assert_error(response, 409, "CommitFailedException")
    assert state(server, warehouse) == before


def test_commit_without_changes_keeps_the_pointer(
    server: IcebergRestServer, http: requests.Session, warehouse: Path, table: tuple[str, str]
) -> None:
    namespace, name = table
    before = state(server, warehouse)
    response = http.post(url(server, f"namespaces/{namespace}/tables/{name}"), json={"requirements": [], "updates": []})
    assert response.status_code == 200
    assert state(server, warehouse) == before


BAD_CREATES: dict[str, tuple[str, Any]] = {
    "namespace-missing": ("namespaces", {"properties": {}}),
    "namespace-not-a-list": ("namespaces", {"namespace": "db"}),
    "namespace-empty": ("namespaces", {"namespace": []}),
    "namespace-empty-level": ("namespaces", {"namespace": ["a", ""]}),
    "namespace-property-not-a-string": ("namespaces", {"namespace": ["x"], "properties": {"n": 1}}),
    "table-without-schema": ("namespaces/{ns}/tables", {"name": "u"}),
    "table-without-name": ("namespaces/{ns}/tables", {"schema": SCHEMA_JSON}),
    "table-schema-not-struct": ("namespaces/{ns}/tables", {"name": "u", "schema": {"type": "long"}}),
    "table-properties-not-a-map": ("namespaces/{ns}/tables", {"name": "u", "schema": SCHEMA_JSON, "properties": []}),
    "table-spec-on-unknown-field": (
        "namespaces/{ns}/tables",
        {
            "name": "u",
            "schema": SCHEMA_JSON,
            "partition-spec": {
                "spec-id": 0,
                "fields": [{"source-id": 9, "field-id": 1000, "name": "p", "transform": "identity"}],
            },
        },
    ),
    "properties-removals-not-a-list": ("namespaces/{ns}/properties", {"removals": "k"}),
    "rename-without-destination": ("tables/rename", {"source": {"namespace": ["{ns}"], "name": "t"}}),
}


@pytest.mark.parametrize("case", BAD_CREATES.values(), ids=BAD_CREATES.keys())
def test_bad_request_is_400_and_changes_nothing(
    server: IcebergRestServer, http: requests.Session, warehouse: Path, table: tuple[str, str], case: Any
) -> None:
    path, body = case
    before = state(server, warehouse)
    assert_error(http.post(url(server, path.format(ns=table[0])), json=body, timeout=5), 400, "BadRequestException")
    assert state(server, warehouse) == before


def test_properties_both_updated_and_removed_is_422(
    server: IcebergRestServer, http: requests.Session, warehouse: Path, table: tuple[str, str]
) -> None:
    before = state(server, warehouse)
    body: dict[str, Any] = {"removals": ["k"], "updates": {"k": "v"}}
    assert_error(http.post(url(server, f"namespaces/{table[0]}/properties"), json=body, timeout=5), 422)
    assert state(server, warehouse) == before


MISSING: dict[str, tuple[str, str, Any, str]] = {
    "load-table": ("GET", "namespaces/{ns}/tables/nope", None, "NoSuchTableException"),
    "commit-table": (
        "POST",
        "namespaces/{ns}/tables/nope",
        {"requirements": [], "updates": []},
        "NoSuchTableException",
    ),
    "drop-table": ("DELETE", "namespaces/{ns}/tables/nope", None, "NoSuchTableException"),
    "metrics": ("POST", "namespaces/{ns}/tables/nope/metrics", {}, "NoSuchTableException"),
    "rename-missing-table": (
        "POST",
        "tables/rename",
        {"source": {"namespace": ["{ns}"], "name": "nope"}, "destination": {"namespace": ["{ns}"], "name": "n"}},
        "NoSuchTableException",
    ),
    "rename-to-missing-namespace": (
        "POST",
        "tables/rename",
        {"source": {"namespace": ["{ns}"], "name": "t"}, "destination": {"namespace": ["nope"], "name": "t"}},
        "NoSuchNamespaceException",
    ),
    "load-namespace": ("GET", "namespaces/nope", None, "NoSuchNamespaceException"),
    "drop-namespace": ("DELETE", "namespaces/nope", None, "NoSuchNamespaceException"),
    "list-tables": ("GET", "namespaces/nope/tables", None, "NoSuchNamespaceException"),
    "create-table": (
        "POST",
        "namespaces/nope/tables",
        {"name": "u", "schema": SCHEMA_JSON},
        "NoSuchNamespaceException",
    ),
    "stage-create-table": (
        "POST",
        "namespaces/nope/tables",
        {"name": "u", "schema": SCHEMA_JSON, "stage-create": True},
        "NoSuchNamespaceException",
    ),
    "update-properties": ("POST", "namespaces/nope/properties", {"updates": {"k": "v"}}, "NoSuchNamespaceException"),
    "list-under-parent": ("GET", "namespaces?parent=nope", None, "NoSuchNamespaceException"),
    "create-via-commit": (
        "POST",
        "namespaces/nope/tables/u",
        {"requirements": [{"type": "assert-create"}], "updates": []},
        "NoSuchNamespaceException",
    ),
}


def _fill(value: Any, namespace: str) -> Any:
    if isinstance(value, str):
        return value.replace("{ns}", namespace)
    if isinstance(value, dict):
        return {k: _fill(v, namespace) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_fill(v, namespace) for v in value)
    return value


@pytest.mark.parametrize("case", MISSING.values(), ids=MISSING.keys())
def test_missing_table_or_namespace_is_404(
    server: IcebergRestServer, http: requests.Session, warehouse: Path, table: tuple[str, str], case: Any
) -> None:
    verb, path, body, error_type = _fill(case, table[0])
    before = state(server, warehouse)
    assert_error(http.request(verb, url(server, path), json=body, timeout=5), 404, error_type)
    assert state(server, warehouse) == before


def test_head_answers_404_for_missing(
    server: IcebergRestServer, http: requests.Session, table: tuple[str, str]
) -> None:
    assert http.head(url(server, f"namespaces/{table[0]}/tables/nope"), timeout=5).status_code == 404
    assert http.head(url(server, "namespaces/nope"), timeout=5).status_code == 404


CONFLICTS: dict[str, tuple[str, str, Any, str]] = {
    "namespace-exists": ("POST", "namespaces", {"namespace": ["{ns}"]}, "AlreadyExistsException"),
    "table-exists": ("POST", "namespaces/{ns}/tables", {"name": "t", "schema": SCHEMA_JSON}, "AlreadyExistsException"),
    "namespace-not-empty": ("DELETE", "namespaces/{ns}", None, "NamespaceNotEmptyException"),
    "rename-onto-existing": (
        "POST",
        "tables/rename",
        {"source": {"namespace": ["{ns}"], "name": "t"}, "destination": {"namespace": ["{ns}"], "name": "t"}},
        "AlreadyExistsException",
    ),
}


@pytest.mark.parametrize("case", CONFLICTS.values(), ids=CONFLICTS.keys())
def test_conflict_is_409_and_changes_nothing(
    server: IcebergRestServer, http: requests.Session, warehouse: Path, table: tuple[str, str], case: Any
) -> None:
    verb, path, body, error_type = _fill(case, table[0])
    before = state(server, warehouse)
    assert_error(http.request(verb, url(server, path), json=body, timeout=5), 409, error_type)
    assert state(server, warehouse) == before


def test_unknown_route_and_prefix_answer_json_errors(server: IcebergRestServer, http: requests.Session) -> None:
    assert_error(http.get(f"{server.url}/v1/other-prefix/namespaces", timeout=5), 404)
    assert_error(http.put(url(server, "namespaces"), json={}, timeout=5), 405)


def test_create_table_with_only_name_and_schema(
    server: IcebergRestServer, http: requests.Session, table: tuple[str, str]
) -> None:
    """Java's client leaves out location, partition-spec and write-order when they are unset."""
    response = http.post(url(server, f"namespaces/{table[0]}/tables"), json={"name": "bare", "schema": SCHEMA_JSON})
    assert response.status_code == 200
    result = response.json()
    assert result["metadata-location"].endswith(".metadata.json")
    assert result["metadata"]["location"].endswith(f"/{table[0]}/bare")


def test_stage_create_stores_nothing(
    server: IcebergRestServer, http: requests.Session, warehouse: Path, table: tuple[str, str]
) -> None:
    before = state(server, warehouse)
    body: dict[str, Any] = {"name": "staged", "schema": SCHEMA_JSON, "stage-create": True}
    result = http.post(url(server, f"namespaces/{table[0]}/tables"), json=body, timeout=5).json()
    assert "metadata-location" not in result or result["metadata-location"] is None
    assert result["metadata"]["location"].endswith(f"/{table[0]}/staged")
    assert state(server, warehouse) == before


def test_unexpected_error_is_json_500(
    server: IcebergRestServer, http: requests.Session, table: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(server.service, "load_table", broken)
    assert_error(http.get(url(server, f"namespaces/{table[0]}/tables/t"), timeout=5), 500, "InternalServerError")


def add_snapshot(snapshot_id: int, first_row_id: int | None, added_rows: int) -> dict[str, Any]:
    """A commit appending a snapshot of ``added_rows`` rows; the catalog never opens its manifest list."""
    snapshot: dict[str, Any] = {
        "snapshot-id": snapshot_id,
        "sequence-number": snapshot_id,
        "timestamp-ms": 1_700_000_000_000 + snapshot_id,
        "manifest-list": f"file:///nowhere/snap-{snapshot_id}.avro",
        "summary": {"operation": "append"},
        "schema-id": 0,
        "added-rows": added_rows,
    }
    if first_row_id is not None:
        snapshot["first-row-id"] = first_row_id
    return {
        "requirements": [],
        "updates": [
            {"action": "add-snapshot", "snapshot": snapshot},
            {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id},
        ],
    }


def test_format_v3_keeps_row_lineage(
    server: IcebergRestServer, http: requests.Session, warehouse: Path, table: tuple[str, str]
) -> None:
    """v3 metadata is stored with next-row-id (pyiceberg alone will not write v3), advanced by every
    snapshot's rows; a snapshot without row ids, or reusing assigned ones, is refused and changes nothing."""
    body: dict[str, Any] = {"name": "v3", "schema": SCHEMA_JSON, "properties": {"format-version": "3"}}
    created = http.post(url(server, f"namespaces/{table[0]}/tables"), json=body, timeout=5).json()
    assert (created["metadata"]["format-version"], created["metadata"]["next-row-id"]) == (3, 0)
    path = url(server, f"namespaces/{table[0]}/tables/v3")
    assert http.post(path, json=add_snapshot(1, 0, 2), timeout=5).status_code == 200

    before = state(server, warehouse)
    assert_error(http.post(path, json=add_snapshot(2, None, 1), timeout=5), 400, "BadRequestException")
    assert_error(http.post(path, json=add_snapshot(2, 1, 1), timeout=5), 400, "BadRequestException")
    assert state(server, warehouse) == before

    assert http.post(path, json=add_snapshot(2, 2, 1), timeout=5).status_code == 200
    location = http.get(path, timeout=5).json()["metadata-location"]
    stored = json.loads(Path(location.removeprefix("file://")).read_text())
    assert (stored["format-version"], stored["next-row-id"]) == (3, 3)
    assert [s["first-row-id"] for s in stored["snapshots"]] == [0, 2]
