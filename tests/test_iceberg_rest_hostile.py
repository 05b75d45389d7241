"""Hostile input to the reference Iceberg REST catalog (issue 12, items 8-10): every probe gets a 4xx
with the ``IcebergErrorResponse`` shape and changes nothing, inside the warehouse or outside it."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from reference_impl.iceberg_rest import IcebergRestServer

PREFIX = "lakecert"
MAX_BODY = 512 * 1024  # above the 100k-deep probes, far below the default cap
SCHEMA_JSON: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}],
}
_names = itertools.count()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Holds the warehouse, an extra allowed root and a directory no table may reach."""
    base = tmp_path_factory.mktemp("hostile")
    for name in ("wh", "extra", "outside"):
        (base / name).mkdir()
    return base


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[IcebergRestServer]:
    allowed = [(root / "extra").as_uri()]
    with IcebergRestServer(
        (root / "wh").as_uri(), prefix=PREFIX, allowed_locations=allowed, max_body_bytes=MAX_BODY
    ) as srv:
        yield srv


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


@pytest.fixture
def namespace(server: IcebergRestServer, http: requests.Session) -> str:
    """A fresh namespace holding table ``t``."""
    name = f"ns{next(_names)}"
    assert http.post(url(server, "namespaces"), json={"namespace": [name]}, timeout=60).status_code == 200
    created = http.post(url(server, f"namespaces/{name}/tables"), json={"name": "t", "schema": SCHEMA_JSON}, timeout=60)
    assert created.status_code == 200
    return name


def url(server: IcebergRestServer, path: str) -> str:
    return f"{server.url}/v1/{PREFIX}/{path}"


def state(server: IcebergRestServer, root: Path) -> tuple[Any, ...]:
    """Namespaces with properties, table pointers, and every file under the root (not only the warehouse)."""
    store = server.store
    namespaces = [(ns, store.namespace_properties(ns)) for ns in store.child_namespaces(())]
    pointers = [(ns, t, store.metadata_location(ns, t)) for ns, _ in namespaces for t in store.table_names(ns)]
    return namespaces, pointers, sorted(str(p) for p in root.rglob("*")), sorted(str(p) for p in root.parent.iterdir())


def assert_refused(response: requests.Response, status: int) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert isinstance(error["message"], str) and isinstance(error["type"], str) and error["type"]
    assert error["code"] == status


def post_raw(http: requests.Session, target: str, raw: bytes, content_type: str = "application/json") -> Any:
    return http.post(target, data=raw, headers={"Content-Type": content_type}, timeout=30)


def set_properties(updates: dict[str, str]) -> dict[str, Any]:
    return {"requirements": [], "updates": [{"action": "set-properties", "updates": updates}]}


# Request targets with a JSON body, by path template ({ns}: a namespace holding table t).
BODY_ROUTES = {
    "create-namespace": "namespaces",
    "namespace-properties": "namespaces/{ns}/properties",
    "create-table": "namespaces/{ns}/tables",
    "commit": "namespaces/{ns}/tables/t",
    "rename": "tables/rename",
}


@pytest.mark.parametrize("path", BODY_ROUTES.values(), ids=BODY_ROUTES.keys())
def test_deeply_nested_json_is_400(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str, path: str
) -> None:
    before = state(server, root)
    depth = 100_000
    raw = b"[" * depth + b"]" * depth
    assert_refused(post_raw(http, url(server, path.format(ns=namespace)), raw), 400)
    nested_object = b'{"a":' * (depth // 2) + b"1" + b"}" * (depth // 2)
    assert_refused(post_raw(http, url(server, path.format(ns=namespace)), nested_object), 400)
    assert state(server, root) == before


NUL_NAMES: dict[str, tuple[str, Any]] = {
    "namespace-level": ("namespaces", {"namespace": ["a\x00b"]}),
    "nested-namespace-level": ("namespaces", {"namespace": ["{ns}", "\x00"]}),
    "table-name": ("namespaces/{ns}/tables", {"name": "t\x00x", "schema": SCHEMA_JSON}),
    "rename-target": (
        "tables/rename",
        {"source": {"namespace": ["{ns}"], "name": "t"}, "destination": {"namespace": ["{ns}"], "name": "u\x00"}},
    ),
    "control-character": ("namespaces", {"namespace": ["a\x1bb"]}),
}


@pytest.mark.parametrize("case", NUL_NAMES.values(), ids=NUL_NAMES.keys())
def test_names_with_nul_are_400(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str, case: tuple[str, Any]
) -> None:
    path, body = case
    body = json.loads(json.dumps(body).replace("{ns}", namespace))
    before = state(server, root)
    assert_refused(http.post(url(server, path.format(ns=namespace)), json=body, timeout=60), 400)
    assert state(server, root) == before


def test_nul_in_path_segments_is_400(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    before = state(server, root)
    create = {"requirements": [{"type": "assert-create"}], "updates": []}
    assert_refused(http.post(url(server, f"namespaces/{namespace}/tables/u%00"), json=create, timeout=60), 400)
    assert_refused(http.get(url(server, "namespaces/a%00b"), timeout=60), 400)
    assert state(server, root) == before


# A lone surrogate has no UTF-8 form; written with \u escapes it is valid JSON text all the same.
SURROGATE = b'"\\ud800"'
SURROGATE_BODIES = {
    "set-properties-value": ("namespaces/{ns}/tables/t", b'{"requirements": [], "updates": '
                             b'[{"action": "set-properties", "updates": {"k": ' + SURROGATE + b"}}]}"),
    "set-properties-key": ("namespaces/{ns}/tables/t", b'{"requirements": [], "updates": '
                           b'[{"action": "set-properties", "updates": {' + SURROGATE + b': "v"}}]}'),
    "namespace-property": ("namespaces", b'{"namespace": ["s"], "properties": {"k": ' + SURROGATE + b"}}"),
    "table-property": ("namespaces/{ns}/tables", b'{"name": "u", "schema": ' + json.dumps(SCHEMA_JSON).encode()
                       + b', "properties": {"k": ' + SURROGATE + b"}}"),
}  # fmt: skip


@pytest.mark.parametrize("case", SURROGATE_BODIES.values(), ids=SURROGATE_BODIES.keys())
def test_lone_surrogate_is_400_and_leaves_no_file(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str, case: tuple[str, bytes]
) -> None:
    path, raw = case
    before = state(server, root)
    assert_refused(post_raw(http, url(server, path.format(ns=namespace)), raw), 400)
    assert state(server, root) == before


def _location_cases(root: Path) -> dict[str, tuple[str, Any]]:
    outside = (root / "outside").as_uri()
    escape = f"{(root / 'wh').as_uri()}/../outside"
    return {
        "namespace-dotdot": ("namespaces", {"namespace": [".."]}),
        "namespace-dot": ("namespaces", {"namespace": ["{ns}", "."]}),
        "table-dotdot": ("namespaces/{ns}/tables", {"name": "..", "schema": SCHEMA_JSON}),
        "namespace-location": ("namespaces", {"namespace": ["x"], "properties": {"location": outside}}),
        "namespace-location-update": ("namespaces/{ns}/properties", {"updates": {"location": outside}}),
        "namespace-location-escape": ("namespaces/{ns}/properties", {"updates": {"location": escape}}),
        "table-location": ("namespaces/{ns}/tables", {"name": "u", "schema": SCHEMA_JSON, "location": outside}),
        "table-location-escape": ("namespaces/{ns}/tables", {"name": "u", "schema": SCHEMA_JSON, "location": escape}),
        "table-location-plain-path": (
            "namespaces/{ns}/tables",
            {"name": "u", "schema": SCHEMA_JSON, "location": str(root / "outside")},
        ),
        "table-location-other-host": (
            "namespaces/{ns}/tables",
            {"name": "u", "schema": SCHEMA_JSON, "location": "file://elsewhere" + str(root / "wh")},
        ),
        "table-metadata-path": (
            "namespaces/{ns}/tables",
            {"name": "u", "schema": SCHEMA_JSON, "properties": {"write.metadata.path": outside}},
        ),
        "stage-create-location": (
            "namespaces/{ns}/tables",
            {"name": "u", "schema": SCHEMA_JSON, "location": outside, "stage-create": True},
        ),
        "commit-metadata-path": ("namespaces/{ns}/tables/t", set_properties({"write.metadata.path": outside})),
        "commit-data-path": ("namespaces/{ns}/tables/t", set_properties({"write.data.path": outside})),
        "commit-set-location": (
            "namespaces/{ns}/tables/t",
            {"requirements": [], "updates": [{"action": "set-location", "location": outside}]},
        ),
        "create-commit-location": (
            "namespaces/{ns}/tables/u",
            {
                "requirements": [{"type": "assert-create"}],
                "updates": [
                    {"action": "assign-uuid", "uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1"},
                    {"action": "upgrade-format-version", "format-version": 2},
                    {"action": "add-schema", "schema": SCHEMA_JSON},
                    {"action": "set-current-schema", "schema-id": -1},
                    {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
                    {"action": "set-default-spec", "spec-id": -1},
                    {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
                    {"action": "set-default-sort-order", "sort-order-id": -1},
                    {"action": "set-location", "location": outside},
                ],
            },
        ),
    }


LOCATION_CASES = list(_location_cases(Path("/r")))


@pytest.mark.parametrize("case", LOCATION_CASES)
def test_locations_outside_the_warehouse_are_refused(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str, case: str
) -> None:
    path, body = _location_cases(root)[case]
    body = json.loads(json.dumps(body).replace("{ns}", namespace))
    before = state(server, root)
    assert_refused(http.post(url(server, path.format(ns=namespace)), json=body, timeout=60), 400)
    assert state(server, root) == before
    assert not any((root / "outside").iterdir())


def test_locations_inside_allowed_roots_are_accepted(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    """The bound refuses only what is outside: a table in the warehouse or an allowed root is created there."""
    for location in (f"{(root / 'wh').as_uri()}/custom/{namespace}", f"{(root / 'extra').as_uri()}/{namespace}"):
        name = f"at_{location.rsplit('/', 2)[-2]}"
        body: dict[str, Any] = {"name": name, "schema": SCHEMA_JSON, "location": location}
        response = http.post(url(server, f"namespaces/{namespace}/tables"), json=body, timeout=60)
        assert response.status_code == 200, response.text
        assert response.json()["metadata-location"].startswith(location + "/metadata/")
    updates = {"location": f"{(root / 'extra').as_uri()}/{namespace}-ns"}
    response = http.post(url(server, f"namespaces/{namespace}/properties"), json={"updates": updates}, timeout=60)
    assert response.status_code == 200


@pytest.mark.parametrize("path", BODY_ROUTES.values(), ids=BODY_ROUTES.keys())
def test_oversized_body_is_413(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str, path: str
) -> None:
    """Declared by Content-Length or only found while streaming a chunked body."""
    raw = json.dumps({"namespace": ["big"], "properties": {"k": "x" * (MAX_BODY + 1)}}).encode()
    target = url(server, path.format(ns=namespace))
    before = state(server, root)
    assert_refused(post_raw(http, target, raw), 413)
    chunked = http.post(target, data=iter([raw[:1000], raw[1000:]]), headers={"Content-Type": "application/json"})
    assert_refused(chunked, 413)
    assert state(server, root) == before


NOT_JSON = ["text/plain", "application/x-www-form-urlencoded", "application/xml", "application/json; charset=utf-16"]


@pytest.mark.parametrize("content_type", NOT_JSON)
def test_body_that_is_not_json_is_415(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str, content_type: str
) -> None:
    before = state(server, root)
    for path in BODY_ROUTES.values():
        raw = json.dumps({"namespace": ["other"]}).encode()
        assert_refused(post_raw(http, url(server, path.format(ns=namespace)), raw, content_type), 415)
    assert state(server, root) == before


def test_utf16_body_is_400(server: IcebergRestServer, http: requests.Session, root: Path) -> None:
    """JSON text exchanged between systems is UTF-8 (RFC 8259 section 8.1); other encodings are not guessed."""
    before = state(server, root)
    raw = json.dumps({"namespace": ["utf16"]}).encode("utf-16")
    assert_refused(post_raw(http, url(server, "namespaces"), raw), 400)
    assert state(server, root) == before


def test_admin_holds_are_bounded_too(server: IcebergRestServer, http: requests.Session, root: Path) -> None:
    before = state(server, root)
    target = f"{server.url}/lakecert/holds"
    assert_refused(post_raw(http, target, b"[" * 100_000 + b"]" * 100_000), 400)
    assert_refused(post_raw(http, target, b'{"namespace": ["a"], "table": "t"}', "text/plain"), 415)
    assert_refused(post_raw(http, target, b" " * (MAX_BODY + 1)), 413)
    assert state(server, root) == before
    assert server.controller.holds() == []


def test_create_commit_without_partition_spec_is_400(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    """A create transaction whose updates leave the table without its default spec (pyiceberg raised StopIteration)."""
    body = _location_cases(root)["create-commit-location"][1]
    body["updates"] = [u for u in body["updates"] if u["action"] not in ("add-spec", "set-location")]
    before = state(server, root)
    assert_refused(http.post(url(server, f"namespaces/{namespace}/tables/u"), json=body, timeout=60), 400)
    assert state(server, root) == before


def test_update_missing_a_field_pyiceberg_reads_is_400(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    """Found by the fuzzing: pyiceberg's set-statistics validator raised KeyError on a missing field."""
    body: dict[str, Any] = {"requirements": [], "updates": [{"action": "set-statistics", "snapshot-id": 1}]}
    before = state(server, root)
    assert_refused(http.post(url(server, f"namespaces/{namespace}/tables/t"), json=body, timeout=60), 400)
    assert state(server, root) == before


def view_body(name: str, **extra: Any) -> dict[str, Any]:
    version = {
        "version-id": 1,
        "schema-id": 0,
        "timestamp-ms": 1_700_000_000_000,
        "summary": {"operation": "create"},
        "representations": [{"type": "sql", "sql": "select 1", "dialect": "spark"}],
        "default-namespace": [],
    }
    return {"name": name, "schema": SCHEMA_JSON, "view-version": version, **extra}


def test_views_are_bounded_like_tables(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    """View names and locations follow the table rules; a view cannot take a table's name."""
    outside = (root / "outside").as_uri()
    views = url(server, f"namespaces/{namespace}/views")
    before = state(server, root)
    for body in (
        view_body(".."),
        view_body("v\x00"),
        view_body("v", location=outside),
        view_body("v", properties={"write.metadata.path": outside}),
        view_body("v", properties={"k": "\ud800"}),
    ):
        raw = json.dumps(body).encode()
        assert_refused(post_raw(http, views, raw), 400)
    assert_refused(http.post(views, json=view_body("t"), timeout=60), 409)  # table t exists
    assert state(server, root) == before

    created = http.post(views, json=view_body("v"), timeout=60)
    assert created.status_code == 200, created.text
    moved = {"requirements": [], "updates": [{"action": "set-location", "location": outside}]}
    before = state(server, root)
    assert_refused(http.post(f"{views}/v", json=moved, timeout=60), 400)
    assert state(server, root) == before


def test_stale_view_version_is_409_and_changes_nothing(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    views = url(server, f"namespaces/{namespace}/views")
    assert http.post(views, json=view_body("w"), timeout=60).status_code == 200

    def replace(sql: str) -> requests.Response:
        version = {**view_body("w")["view-version"], "version-id": 2, "schema-id": -1}
        version["representations"] = [{"type": "sql", "sql": sql, "dialect": "spark"}]
        updates: list[dict[str, Any]] = [
            {"action": "add-schema", "schema": SCHEMA_JSON},
            {"action": "add-view-version", "view-version": version},
            {"action": "set-current-view-version", "view-version-id": -1},
        ]
        return http.post(f"{views}/w", json={"requirements": [], "updates": updates}, timeout=60)

    first = replace("select 2")
    assert first.status_code == 200, first.text
    assert first.json()["metadata"]["current-version-id"] == 2
    before = state(server, root)
    assert_refused(replace("select 3"), 409)  # built on version 1 as well: version 2 is taken
    assert state(server, root) == before
