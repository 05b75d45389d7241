"""Input validation at the HTTP edge: every bad request is a 4xx with UC's error body and
changes nothing; identical replays are accepted once; UC's unpublished-commit limit is a 429."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reference_impl.server.service import changes_protocol_or_metadata
from tests.tooling.server import API, COMMITS, Driver, Table, served


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("served") / "catalog.sqlite"
    with served("--db", str(db), "--max-body-bytes", "65536", "--max-unpublished", "4") as (url, _):
        yield url


@pytest.fixture
def driver(server: str) -> Iterator[Driver]:
    with httpx.Client(base_url=server) as http:
        yield Driver(http)


@pytest.fixture
def tables(driver: Driver) -> tuple[Table, Table]:
    """Two tables; the first has versions 1 and 2 ratified and nothing published."""
    first, other = driver.create_table(), driver.create_table()
    for version in (1, 2):
        assert driver.commit(first, version).status_code == 200
    return first, other


def assert_uc_error(resp: httpx.Response, status: int) -> None:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert isinstance(body["error_code"], str) and isinstance(body["message"], str)
    assert body["details"][0]["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"


Case = Callable[[Driver, Table, Table], tuple[str, str, Any]]  # -> (method, path, body as JSON or bytes)


def commit_with(change: Callable[[dict[str, Any], Driver, Table, Table], Any]) -> Case:
    """A proposal of version 3 for the first table, changed by ``change`` (which may return a new body)."""

    def case(d: Driver, t: Table, other: Table) -> tuple[str, str, Any]:
        body = d.commit_body(t, 3, d.stage(t, 3))
        return "POST", COMMITS, change(body, d, t, other) or body

    return case


def info(key: str, value: Any) -> Callable[[dict[str, Any], Driver, Table, Table], None]:
    return lambda body, *_: body["commit_info"].__setitem__(key, value)


def drop(key: str) -> Callable[[dict[str, Any], Driver, Table, Table], None]:
    return lambda body, *_: body["commit_info"].pop(key)


def listing_with(**fields: Any) -> Case:
    def case(d: Driver, t: Table, other: Table) -> tuple[str, str, Any]:
        body = {"table_id": t.table_id, "table_uri": t.location, "start_version": 0}
        return "GET", COMMITS, {k: v for k, v in {**body, **fields}.items() if v is not ...}

    return case


def raw(data: bytes) -> Case:
    return lambda d, t, other: ("POST", COMMITS, data)


def table_request(path: str, body: dict[str, Any]) -> Case:
    return lambda d, t, other: ("POST", f"{API}{path}", body)


CREATE = {"name": "x", "catalog_name": "unity", "schema_name": "default", "table_type": "MANAGED", "columns": []}

BAD: dict[str, tuple[Case, int]] = {
    "malformed JSON": (raw(b'{"table_id": '), 400),
    "not an object": (raw(b"[1, 2]"), 400),
    "invalid UTF-8": (raw(b'{"table_id": "\xff\xfe"}'), 400),
    "too deep": (raw(b"[" * 5000 + b"]" * 5000), 400),
    "NaN version": (raw(b'{"commit_info": {"version": NaN}}'), 400),
    "empty body": (raw(b""), 400),
    "missing table_id": (commit_with(lambda b, *_: b.pop("table_id")), 400),
    "missing table_uri": (commit_with(lambda b, *_: b.pop("table_uri")), 400),
    "extra field": (commit_with(lambda b, *_: b.__setitem__("force", True)), 400),
    "extra commit_info field": (commit_with(info("checksum", "x")), 400),
    "version as string": (commit_with(info("version", "3")), 400),
    "version as float": (commit_with(info("version", 3.0)), 400),
    "version as bool": (commit_with(info("version", True)), 400),
    "negative version": (commit_with(info("version", -3)), 400),
    "version zero": (commit_with(info("version", 0)), 400),
    "version over int64": (commit_with(info("version", 2**63)), 400),
    "huge version (gap)": (commit_with(info("version", 2**63 - 1)), 400),
    "gap": (commit_with(lambda b, d, t, o: d.commit_body(t, 4, d.stage(t, 4))), 400),
    "timestamp zero": (commit_with(info("timestamp", 0)), 400),
    "missing file_size": (commit_with(drop("file_size")), 400),
    "missing file_name": (commit_with(drop("file_name")), 400),
    "file_size as string": (commit_with(info("file_size", "100")), 400),
    "table_uri of another table": (commit_with(lambda b, d, t, o: b.__setitem__("table_uri", o.location)), 400),
    "table_uri elsewhere": (commit_with(lambda b, *_: b.__setitem__("table_uri", "file:///etc")), 400),
    "table_id not a UUID": (commit_with(lambda b, *_: b.__setitem__("table_id", "../x")), 400),
    "unknown table_id": (
        commit_with(lambda b, *_: b.__setitem__("table_id", "00000000-0000-4000-8000-0000000000aa")),
        404,
    ),
    "table_id of a staging table": (
        commit_with(lambda b, d, *_: b.__setitem__("table_id", staging_id(d))),
        404,
    ),
    "path traversal": (commit_with(lambda b, *_: b["commit_info"].__setitem__("file_name", "../../x.json")), 400),
    "other table's staged file": (
        commit_with(
            lambda b, d, t, o: b["commit_info"].__setitem__(
                "file_name", f"../../../{o.location.rsplit('/', 1)[1]}/_delta_log/_staged_commits/{d.stage(o, 3)}"
            )
        ),
        400,
    ),
    "not a staged-commit name": (commit_with(info("file_name", "00000000000000000003.json")), 400),
    "staged for another version": (commit_with(lambda b, d, t, o: b["commit_info"].__setitem__("version", 2)), 400),
    "name version differs": (
        commit_with(lambda b, d, t, o: b["commit_info"].__setitem__("file_name", d.stage(t, 5))),
        400,
    ),
    "file_name and inline_content": (commit_with(info("inline_content", "e30K")), 400),
    "inline_content not base64": (
        commit_with(lambda b, *_: b.__setitem__("commit_info", {"version": 3, "timestamp": 5, "inline_content": "*"})),
        400,
    ),
    "backfill at the version": (commit_with(lambda b, *_: b.__setitem__("latest_backfilled_version", 3)), 400),
    "negative backfill": (commit_with(lambda b, *_: b.__setitem__("latest_backfilled_version", -1)), 400),
    "backfill above latest": (
        commit_with(lambda b, *_: b.pop("commit_info") and b.__setitem__("latest_backfilled_version", 7)),
        400,
    ),
    "neither commit nor backfill": (commit_with(lambda b, *_: b.pop("commit_info")), 400),
    "metadata in a backfill": (
        commit_with(
            lambda b, *_: b.pop("commit_info") and b.update(latest_backfilled_version=1, metadata={"description": "x"})
        ),
        400,
    ),
    "listing: negative start": (listing_with(start_version=-1), 400),
    "listing: end below start": (listing_with(start_version=2, end_version=1), 400),
    "listing: missing start": (listing_with(start_version=...), 400),
    "listing: wrong table_uri": (listing_with(table_uri="file:///tmp"), 400),
    "listing: extra field": (listing_with(limit=3), 400),
    "listing: start as string": (listing_with(start_version="0"), 400),
    "staging: bad name": (
        table_request("/staging-tables", {**{k: CREATE[k] for k in list(CREATE)[:3]}, "name": "a.b"}),
        400,
    ),
    "staging: unknown schema": (
        table_request("/staging-tables", {"name": "x", "catalog_name": "unity", "schema_name": "nope"}),
        404,
    ),
    "staging: unknown catalog": (
        table_request("/staging-tables", {"name": "x", "catalog_name": "nope", "schema_name": "default"}),
        404,
    ),
    "create: not MANAGED": (table_request("/tables", {**CREATE, "table_type": "EXTERNAL"}), 400),
    "create: unknown table type": (table_request("/tables", {**CREATE, "table_type": "SNAPSHOT"}), 400),
    "create: no table id property": (
        table_request("/tables", {**CREATE, "data_source_format": "DELTA", "storage_location": "file:///tmp/x"}),
        400,
    ),
    "create: no staging table there": (
        lambda d, t, o: (
            "POST",
            f"{API}/tables",
            {
                **CREATE,
                "data_source_format": "DELTA",
                "storage_location": "file:///tmp/x",
                "properties": {"io.unitycatalog.tableId": staging_id(d)},
            },  # fmt: skip
        ),
        404,
    ),
    "create: name taken": (
        lambda d, t, o: (
            "POST",
            f"{API}/tables",
            {
                **CREATE,
                "name": t.full_name.rsplit(".", 1)[1],
                "data_source_format": "DELTA",
                "storage_location": staging(d)[1],
                "properties": {"io.unitycatalog.tableId": staging(d)[0]},
            },  # fmt: skip
        ),
        400,
    ),
    "create: columns not a list": (table_request("/tables", {**CREATE, "columns": {"id": "long"}}), 400),
    "catalog: bad name": (table_request("/catalogs", {"name": "a b"}), 400),
    "catalog: taken": (table_request("/catalogs", {"name": "unity"}), 400),
    "schema: unknown catalog": (table_request("/schemas", {"name": "s", "catalog_name": "nope"}), 404),
}

_STAGING: dict[int, tuple[str, str]] = {}


def staging(d: Driver) -> tuple[str, str]:
    """A staging table (id, location) whose version 0 is written but which is not created."""
    if id(d) not in _STAGING:
        resp = d.http.post(
            f"{API}/staging-tables", json={"name": "s", "catalog_name": "unity", "schema_name": "default"}
        )
        table_id, location = resp.json()["id"], resp.json()["staging_location"]
        d.storage.put(f"{location}/_delta_log/00000000000000000000.json", d.version0(table_id))
        _STAGING[id(d)] = (table_id, location)
    return _STAGING[id(d)]


def staging_id(d: Driver) -> str:
    return staging(d)[0]


def send(d: Driver, method: str, path: str, body: Any) -> httpx.Response:
    if isinstance(body, bytes):
        return d.http.request(method, path, content=body, headers={"content-type": "application/json"})
    return d.http.request(method, path, json=body)


@pytest.mark.parametrize("name", list(BAD))
def test_bad_request_is_refused_and_changes_nothing(driver: Driver, tables: tuple[Table, Table], name: str) -> None:
    case, status = BAD[name]
    method, path, body = case(driver, *tables)
    before = driver.state(*tables)
    assert_uc_error(send(driver, method, path, body), status)
    assert driver.state(*tables) == before


def test_wrong_content_type_is_415(driver: Driver, tables: tuple[Table, Table]) -> None:
    t = tables[0]
    body = json.dumps(driver.commit_body(t, 3, driver.stage(t, 3))).encode()
    before = driver.state(*tables)
    for content_type in ("text/plain", "application/x-www-form-urlencoded", ""):
        resp = driver.http.post(COMMITS, content=body, headers={"content-type": content_type})
        assert_uc_error(resp, 415)
    assert driver.state(*tables) == before


def test_oversized_body_is_413(driver: Driver, tables: tuple[Table, Table]) -> None:
    t = tables[0]
    body = driver.commit_body(t, 3, driver.stage(t, 3), padding="x" * 70000)
    before = driver.state(*tables)
    assert_uc_error(driver.http.post(COMMITS, json=body), 413)

    def chunks() -> Iterator[bytes]:  # no Content-Length: the size is counted as it streams
        data = json.dumps(body).encode()
        for i in range(0, len(data), 8192):
            yield data[i : i + 8192]

    resp = driver.http.post(COMMITS, content=chunks(), headers={"content-type": "application/json"})
    assert_uc_error(resp, 413)
    assert driver.state(*tables) == before


def test_unknown_path_and_method_answer_in_uc_shape(driver: Driver) -> None:
    assert_uc_error(driver.http.get(f"{API}/volumes"), 404)
    assert_uc_error(driver.http.delete(f"{API}/catalogs"), 405)
    assert_uc_error(driver.http.get(f"{API}/tables/unity.default.none"), 404)
    assert_uc_error(driver.http.get(f"{API}/tables/unity.default"), 400)


def test_identical_replay_is_accepted_once(driver: Driver, tables: tuple[Table, Table]) -> None:
    t = tables[0]
    body = driver.commit_body(t, 3, driver.stage(t, 3))
    assert driver.http.post(COMMITS, json=body).status_code == 200
    after_first = driver.listing(t)
    assert driver.http.post(COMMITS, json=body).status_code == 200  # the client lost the answer: resend
    assert driver.listing(t) == after_first
    assert [c["version"] for c in after_first["commits"]].count(3) == 1
    rival = driver.commit(t, 3)
    assert_uc_error(rival, 409)
    assert rival.json()["details"][0]["metadata"]["latest_table_version"] == "3"
    assert driver.listing(t) == after_first
    # Published and dropped by the catalog: the replay is recognized by content, as UC does.
    assert driver.publish(t, 3).status_code == 200
    published = driver.listing(t)
    assert driver.http.post(COMMITS, json=body).status_code == 200
    assert_uc_error(driver.commit(t, 3), 409)
    assert driver.listing(t) == published


def test_unpublished_limit_is_429_until_published(driver: Driver, tables: tuple[Table, Table]) -> None:
    t = tables[0]  # versions 1, 2 unpublished; the server allows 4
    assert driver.commit(t, 3).status_code == 200
    assert driver.commit(t, 4).status_code == 200
    before = driver.state(*tables)
    assert_uc_error(driver.commit(t, 5), 429)
    assert driver.state(*tables) == before
    assert driver.publish(t, 1).status_code == 200
    assert driver.commit(t, 5).status_code == 200
    # A proposal that reports publication in the same request makes its own room.
    driver.publish(t, 1)
    for c in driver.listing(t)["commits"]:
        staged = f"{t.location}/_delta_log/_staged_commits/{c['file_name']}"
        driver.storage.put(f"{t.location}/_delta_log/{c['version']:020d}.json", driver.storage.get(staged))
    assert_uc_error(driver.commit(t, 6), 429)
    assert driver.commit(t, 6, latest_backfilled_version=3).status_code == 200
    assert driver.listing(t)["latest_table_version"] == 6


def test_limit_is_off_with_zero(tmp_path: Path) -> None:
    with (
        served("--db", str(tmp_path / "c.sqlite"), "--max-unpublished", "0") as (url, _),
        httpx.Client(base_url=url) as http,
    ):
        d = Driver(http)
        t = d.create_table()
        assert all(d.commit(t, v).status_code == 200 for v in range(1, 16))


def test_a_commit_with_unicode_line_separators_in_a_string_is_newline_delimited_json() -> None:
    """Only a newline ends a line of a commit: raw U+0085, U+2028 and U+2029 inside a JSON string (RFC
    8259 escapes only what is below U+0020) leave the line whole, so a writer's commit holding them is
    not refused as malformed."""
    info = {"commitInfo": {"userMetadata": "next\u0085line\u2028separator\u2029paragraph"}}
    content = (json.dumps(info, ensure_ascii=False) + "\n" + json.dumps({"add": {"path": "a"}}) + "\n").encode()
    assert changes_protocol_or_metadata(content) is False
    assert changes_protocol_or_metadata(content + json.dumps({"metaData": {}}).encode()) is True
