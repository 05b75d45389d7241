"""Bearer tokens and roles: 401 without a valid token, 403 for a role or table scope that does
not allow the request (a writer cannot change protocol or metadata), and no state change."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reference_impl.server.cli import ServeError, build, serve_main
from tests.tooling.server import API, COMMITS, Driver, Table, serve_args, served

TOKENS = """
tokens:
  admin-token: admin
  writer-token: {role: writer}
  reader-token: {role: reader}
  scoped-token: {role: writer, tables: ["unity.default.mine*"]}
"""


CLIENTS: list[httpx.Client] = []


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    work = tmp_path_factory.mktemp("auth")
    (work / "tokens.yaml").write_text(TOKENS)
    with served("--db", str(work / "c.sqlite"), "--tokens", str(work / "tokens.yaml")) as (url, _):
        yield url
        while CLIENTS:
            CLIENTS.pop().close()


def as_(server: str, token: str | None) -> Driver:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    CLIENTS.append(httpx.Client(base_url=server, headers=headers))
    return Driver(CLIENTS[-1])


@pytest.fixture
def admin(server: str) -> Driver:
    return as_(server, "admin-token")


@pytest.fixture
def table(admin: Driver) -> Table:
    t = admin.create_table()
    assert admin.commit(t, 1).status_code == 200
    return t


@pytest.mark.parametrize("header", [None, "Bearer nope", "Basic YWRtaW46eA==", "Bearer", "admin-token"])
def test_no_valid_token_is_401(server: str, admin: Driver, table: Table, header: str | None) -> None:
    http = as_(server, None).http
    if header:
        http.headers["Authorization"] = header
    before = admin.state(table)
    assert http.get(f"{API}/catalogs").status_code == 401
    assert http.get(f"{API}/tables/{table.full_name}").status_code == 401
    resp = http.post(COMMITS, json=admin.commit_body(table, 2, admin.stage(table, 2)))
    assert resp.status_code == 401 and resp.json()["error_code"] == "UNAUTHENTICATED"
    assert admin.state(table) == before


def test_reader_reads_but_cannot_write(server: str, admin: Driver, table: Table) -> None:
    reader = as_(server, "reader-token")
    assert reader.http.get(f"{API}/tables/{table.full_name}").status_code == 200
    assert reader.listing(table)["latest_table_version"] == 1
    before = admin.state(table)
    assert reader.commit(table, 2).status_code == 403
    backfill = {"table_id": table.table_id, "table_uri": table.location, "latest_backfilled_version": 1}
    assert reader.http.post(COMMITS, json=backfill).status_code == 403
    names = {"name": "r", "catalog_name": "unity", "schema_name": "default"}
    assert reader.http.post(f"{API}/staging-tables", json=names).status_code == 403
    assert admin.state(table) == before


def test_writer_commits_data_but_not_protocol_or_metadata(server: str, admin: Driver, table: Table) -> None:
    writer = as_(server, "writer-token")
    assert writer.commit(table, 2).status_code == 200
    before = admin.state(table)
    assert writer.commit(table, 3, writer.protocol_commit(3)).status_code == 403
    assert writer.commit(table, 3, writer.metadata_commit(table.table_id, 3)).status_code == 403
    assert writer.commit(table, 3, metadata={"description": "new comment"}).status_code == 403
    inline = base64.b64encode(writer.protocol_commit(3)).decode()
    info = {"version": 3, "timestamp": 5, "inline_content": inline}
    body = {"table_id": table.table_id, "table_uri": table.location, "commit_info": info}
    assert writer.http.post(COMMITS, json=body).status_code == 403
    assert admin.state(table) == before
    assert admin.commit(table, 3, admin.protocol_commit(3)).status_code == 200  # the admin may
    assert admin.commit(table, 4, admin.metadata_commit(table.table_id, 4)).status_code == 200


def test_writer_cannot_create_namespaces(server: str) -> None:
    writer = as_(server, "writer-token")
    assert writer.http.post(f"{API}/catalogs", json={"name": "w"}).status_code == 403
    assert writer.http.post(f"{API}/schemas", json={"name": "w", "catalog_name": "unity"}).status_code == 403
    assert writer.http.get(f"{API}/catalogs/w").status_code == 404
    writer.create_table()  # a writer creates tables


def test_scoped_token_touches_only_its_tables(server: str, admin: Driver, table: Table) -> None:
    scoped = as_(server, "scoped-token")
    mine = scoped.create_table("mine_1")
    assert scoped.commit(mine, 1).status_code == 200
    before = admin.state(table, mine)
    assert scoped.commit(table, 2).status_code == 403
    assert scoped.http.get(f"{API}/tables/{table.full_name}").status_code == 403
    body = {"table_id": table.table_id, "table_uri": table.location, "start_version": 0}
    assert scoped.http.request("GET", COMMITS, json=body).status_code == 403
    names = {"name": "theirs", "catalog_name": "unity", "schema_name": "default"}
    assert scoped.http.post(f"{API}/staging-tables", json=names).status_code == 403
    listed = scoped.http.get(f"{API}/tables", params={"catalog_name": "unity", "schema_name": "default"})
    assert [t["name"] for t in listed.json()["tables"]] == ["mine_1"]
    assert admin.state(table, mine) == before


def test_without_tokens_the_server_is_open(tmp_path: Path) -> None:
    with served("--db", str(tmp_path / "c.sqlite")) as (url, _), httpx.Client(base_url=url) as http:
        d = Driver(http)
        t = d.create_table()
        assert d.commit(t, 1, d.protocol_commit(1)).status_code == 200
        assert http.post(f"{API}/catalogs", json={"name": "other"}).status_code == 200


@pytest.mark.parametrize(
    "content",
    ["tokens: []", "tokens: {t: superuser}", "tokens: {t: {role: reader, tables: x}}", "tokens: {'a b': reader}", "[]"],
)
def test_malformed_tokens_file_is_bad_usage(tmp_path: Path, content: str) -> None:
    (tmp_path / "tokens.yaml").write_text(content)
    args = serve_args("--db", str(tmp_path / "c.sqlite"), "--tokens", str(tmp_path / "tokens.yaml"))
    with pytest.raises(ServeError):
        build(args)
    assert serve_main(args) == 2


def test_unknown_or_client_fault_is_bad_usage(tmp_path: Path) -> None:
    for fault in ("no-such-fault", "checkpoint-unpublished"):
        assert serve_main(serve_args("--db", str(tmp_path / "c.sqlite"), "--fault", fault)) == 2
