"""Hostile clients against `lakecert serve`, on both stores (SQLite and PostgreSQL): staged "files" that
are FIFOs, directories, devices, links or huge; names too long; bodies in other encodings, with
duplicate keys, NUL or lone surrogates, or shorter than announced; a staged file rewritten after
ratification. Every probe gets a 4xx in UC's error shape and changes nothing (state compared
before and after), the server stays responsive, and a ratified commit keeps its content."""

from __future__ import annotations

import base64
import json
import os
import socket
import stat
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from reference_impl.delta import log_paths as P
from reference_impl.server.cli import Built
from reference_impl.storage.local import path_to_uri, uri_to_path
from tests.tooling.server import API, COMMITS, Driver, Table, served

TOKENS = "tokens:\n  admin-token: admin\n  writer-token: writer\n"
MAX_COMMIT_BYTES = 64 * 1024
HANG_GUARD_S = 120.0  # generous: only there so a regression fails instead of hanging the suite


@dataclass
class World:
    url: str
    built: Built
    admin: Driver
    writer: Driver
    table: Table  # versions 1 and 2 ratified, nothing published
    other: Table

    def state(self) -> list[Any]:
        """Catalogs, schemas, the tables of unity.default and both tables' listings."""
        catalogs = self.admin.http.get(f"{API}/catalogs").json()
        schemas = self.admin.http.get(f"{API}/schemas", params={"catalog_name": "unity"}).json()
        return [catalogs, schemas, *self.admin.state(self.table, self.other)]


def _client(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=HANG_GUARD_S)


@dataclass
class Served:
    url: str
    built: Built
    admin: Driver
    writer: Driver


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server per store for the module (like the `db` fixture, but started once: tests make
    their own tables)."""
    work = tmp_path_factory.mktemp("hostile")
    on_pg = request.param == "postgres"
    db = request.getfixturevalue("postgres").new_schema() if on_pg else str(work / "catalog.sqlite")
    (work / "tokens.yaml").write_text(TOKENS)
    argv = ["--db", db, "--warehouse", path_to_uri(work / "warehouse"), "--tokens", str(work / "tokens.yaml")]
    argv += ["--max-commit-bytes", str(MAX_COMMIT_BYTES), "--commit-read-timeout", "30", "--body-timeout", "1"]
    with served(*argv) as (url, built), _client(url, "admin-token") as a, _client(url, "writer-token") as w:
        yield Served(url, built, Driver(a), Driver(w))


@pytest.fixture
def world(server: Served) -> World:
    table, other = server.admin.create_table(), server.admin.create_table()
    for version in (1, 2):
        assert server.admin.commit(table, version).status_code == 200
    return World(server.url, server.built, server.admin, server.writer, table, other)


def assert_uc_error(resp: httpx.Response, status: int | None = None) -> None:
    """A refusal: 4xx (exactly ``status`` when given) with UC's error body."""
    assert 400 <= resp.status_code < 500 and (status is None or resp.status_code == status), resp.text
    body = resp.json()
    assert isinstance(body["error_code"], str) and isinstance(body["message"], str)
    assert body["details"][0]["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"


def staged_path(table: Table, version: int = 3) -> Path:
    return uri_to_path(P.staged_uri(table.location, version, str(uuid.uuid4())))


def propose(d: Driver, table: Table, path: Path, version: int = 3) -> httpx.Response:
    return d.http.post(COMMITS, json=d.commit_body(table, version, path.name))


# ---------------------------------------------------------------- staged "files"

Maker = Callable[[Path, World], None]


def _fifo(p: Path, w: World) -> None:
    os.mkfifo(p)


def _directory(p: Path, w: World) -> None:
    p.mkdir()


def _self_loop(p: Path, w: World) -> None:
    os.symlink(p.name, p)


def _link_out(p: Path, w: World) -> None:
    os.symlink("/etc/hostname", p)


def _link_nowhere(p: Path, w: World) -> None:
    os.symlink("/nonexistent/lakecert", p)


def _link_to_other_table(p: Path, w: World) -> None:
    """A link to a well-formed commit of another table: the content would pass every judgement."""
    target = staged_path(w.other)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(Driver.data_commit(3))
    os.symlink(target, p)


def _device(p: Path, w: World) -> None:
    try:
        os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero: endless bytes
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")


def _sparse_huge(p: Path, w: World) -> None:
    with open(p, "wb") as f:
        f.truncate(300 * 1024 * 1024)  # 300 MB that take no disk


def _over_cap(p: Path, w: World) -> None:
    p.write_bytes(Driver.data_commit(3) + b" " * MAX_COMMIT_BYTES)


STAGED: dict[str, Maker] = {
    "FIFO": _fifo,
    "directory": _directory,
    "symlink loop": _self_loop,
    "symlink out of the table": _link_out,
    "dangling symlink": _link_nowhere,
    "symlink to another table's commit": _link_to_other_table,
    "character device": _device,
    "sparse 300 MB file": _sparse_huge,
    "regular file over the cap": _over_cap,
}


@pytest.mark.parametrize("role", ["writer", "admin"])
@pytest.mark.parametrize("kind", list(STAGED))
def test_hostile_staged_file_is_refused(world: World, kind: str, role: str) -> None:
    d = world.writer if role == "writer" else world.admin
    path = staged_path(world.table)
    path.parent.mkdir(parents=True, exist_ok=True)
    STAGED[kind](path, world)
    before = world.state()
    assert_uc_error(propose(d, world.table, path), 400)
    assert world.state() == before
    assert world.admin.commit(world.table, 3).status_code == 200  # the version is still free


def test_staged_directory_that_is_a_link_out_of_the_table(world: World) -> None:
    """`_staged_commits` itself replaced by a link to another table's: no link below the table root."""
    mine = uri_to_path(P.staged_uri(world.table.location, 3, str(uuid.uuid4()))).parent
    theirs = staged_path(world.other)
    theirs.parent.mkdir(parents=True, exist_ok=True)
    theirs.write_bytes(Driver.data_commit(3))
    if mine.exists():
        for f in mine.iterdir():
            f.unlink()
        mine.rmdir()
    os.symlink(theirs.parent, mine)
    before = world.state()
    assert_uc_error(propose(world.writer, world.table, mine / theirs.name), 400)
    assert world.state() == before


def test_link_probing_learns_nothing(world: World) -> None:
    """A link to an existing path and one to nowhere are answered alike, like an absent file."""
    answers = []
    for target in ("/etc/hostname", "/nonexistent/lakecert", None):
        path = staged_path(world.table)
        path.parent.mkdir(parents=True, exist_ok=True)
        if target is not None:
            os.symlink(target, path)
        resp = propose(world.writer, world.table, path)
        assert_uc_error(resp)
        answers.append((resp.status_code, resp.json()["error_code"]))
    assert len(set(answers)) == 1, answers


def test_fifos_cannot_freeze_the_server(world: World) -> None:
    """Many FIFO proposals at once: each is refused, and an admin request is answered meanwhile."""
    paths = []
    for _ in range(48):
        path = staged_path(world.table)
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
        paths.append(path)
    before = world.state()
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda p: propose(world.writer, world.table, p), paths))
    for resp in answers:
        assert_uc_error(resp, 400)
    assert world.admin.http.get(f"{API}/catalogs").status_code == 200
    assert world.state() == before


def test_file_name_too_long(world: World) -> None:
    before = world.state()
    for d in (world.writer, world.admin):
        body = d.commit_body(world.table, 3, "é" * 200)
        assert_uc_error(d.http.post(COMMITS, json=body), 400)
    assert world.state() == before


def test_replay_against_a_published_file_that_is_a_directory(world: World) -> None:
    """An admin's replay of a published, dropped commit is compared with `_delta_log/<v>.json`: a
    directory there is a conflict like any other content, not a 500."""
    t, admin = world.table, world.admin
    body = admin.commit_body(t, 3, admin.stage(t, 3))
    assert admin.http.post(COMMITS, json=body).status_code == 200
    report = {"table_id": t.table_id, "table_uri": t.location, "latest_backfilled_version": 3}
    assert admin.http.post(COMMITS, json=report).status_code == 200  # published (claimed): dropped
    uri_to_path(P.delta_uri(t.location, 3)).mkdir(parents=True)
    before = world.state()
    assert_uc_error(admin.http.post(COMMITS, json=body), 409)
    assert world.state() == before


# ---------------------------------------------------------------- ratified content


def _listed(world: World, version: int) -> dict[str, Any]:
    commits: list[dict[str, Any]] = world.admin.listing(world.table)["commits"]
    (commit,) = [c for c in commits if c["version"] == version]
    return commit


def _served_content(world: World, commit: dict[str, Any]) -> bytes:
    if "inline_content" in commit:
        return base64.b64decode(commit["inline_content"])
    staged = f"{world.table.location}/_delta_log/_staged_commits/{commit['file_name']}"
    return world.admin.storage.get(staged)


@pytest.mark.parametrize("swap", ["metadata", "fifo", "deleted"])
def test_rewritten_staged_file_is_never_served_as_ratified(world: World, swap: str) -> None:
    t, writer = world.table, world.writer
    judged = Driver.data_commit(3)
    name = writer.stage(t, 3, judged)
    assert writer.http.post(COMMITS, json=writer.commit_body(t, 3, name)).status_code == 200
    assert _served_content(world, _listed(world, 3)) == judged
    path = uri_to_path(f"{t.location}/_delta_log/_staged_commits/{name}")
    path.unlink()
    if swap == "metadata":  # what the writer's role may not commit
        path.write_bytes(Driver.metadata_commit(t.table_id, 3))
    elif swap == "fifo":
        os.mkfifo(path)
    assert _served_content(world, _listed(world, 3)) == judged
    assert world.admin.listing(t)["latest_table_version"] == 3


# ---------------------------------------------------------------- bodies and names


def _commit_json(world: World) -> str:
    d = world.writer
    return json.dumps(d.commit_body(world.table, 3, d.stage(world.table, 3)))


def _raw(world: World, data: bytes, path: str = COMMITS) -> httpx.Response:
    return world.writer.http.post(path, content=data, headers={"content-type": "application/json"})


BODIES: dict[str, Callable[[World], bytes]] = {
    # A valid proposal in UTF-16: json.loads(bytes) would take it.
    "UTF-16": lambda w: _commit_json(w).encode("utf-16"),
    "UTF-32": lambda w: _commit_json(w).encode("utf-32"),
    "UTF-8 with BOM": lambda w: b"\xef\xbb\xbf" + _commit_json(w).encode(),
    # A valid proposal with one key twice (same value): which one wins is up to the parser.
    "duplicate key": lambda w: (
        _commit_json(w).replace('"table_uri"', f'"table_id": "{w.table.table_id}", "table_uri"', 1).encode()
    ),
    "duplicate nested key": lambda w: _commit_json(w).replace('"version": 3', '"version": 3, "version": 3', 1).encode(),
    "NUL in a field": lambda w: _commit_json(w).replace('"table_uri": "', '"table_uri": "\\u0000', 1).encode(),
    "lone surrogate": lambda w: _commit_json(w).replace('"table_uri": "', '"table_uri": "\\ud800', 1).encode(),
}


@pytest.mark.parametrize("kind", list(BODIES))
def test_body_in_another_encoding_or_ambiguous_is_refused(world: World, kind: str) -> None:
    data = BODIES[kind](world)
    before = world.state()
    assert_uc_error(_raw(world, data), 400)
    assert world.state() == before


NUL = "a\u0000b"
CREATES: dict[str, tuple[str, dict[str, Any]]] = {
    "catalog comment": ("/catalogs", {"name": "c_nul", "comment": NUL}),
    "catalog property": ("/catalogs", {"name": "c_nul", "properties": {"k": NUL}}),
    "catalog name": ("/catalogs", {"name": NUL}),
    "catalog name surrogate": ("/catalogs", {"name": "c\ud800"}),
    "schema comment": ("/schemas", {"name": "s_nul", "catalog_name": "unity", "comment": NUL}),
    "schema property key": ("/schemas", {"name": "s_nul", "catalog_name": "unity", "properties": {NUL: "v"}}),
    "schema name": ("/schemas", {"name": NUL, "catalog_name": "unity"}),
    "staging name": ("/staging-tables", {"name": NUL, "catalog_name": "unity", "schema_name": "default"}),
}


def _send_json(d: Driver, path: str, body: dict[str, Any]) -> httpx.Response:
    data = json.dumps(body).encode()  # ensure_ascii: NUL and surrogates travel as \\u escapes
    return d.http.post(f"{API}{path}", content=data, headers={"content-type": "application/json"})


@pytest.mark.parametrize("kind", list(CREATES))
def test_nul_or_surrogate_in_names_and_comments_is_refused(world: World, kind: str) -> None:
    path, body = CREATES[kind]
    before = world.state()
    assert_uc_error(_send_json(world.admin, path, body), 400)
    assert world.state() == before


@pytest.mark.parametrize("field", ["comment", "property", "column"])
def test_table_creation_with_nul_leaves_no_partial_table(world: World, field: str) -> None:
    """Refused at the last step (after the staging table): nothing registered; the same staging
    table can then be created properly."""
    d = world.admin
    name = f"t_{uuid.uuid4().hex[:12]}"
    names = {"name": name, "catalog_name": "unity", "schema_name": "default"}
    staged = d.http.post(f"{API}/staging-tables", json=names).json()
    table_id, location = staged["id"], staged["staging_location"]
    d.storage.put(P.delta_uri(location, 0), d.version0(table_id))
    body: dict[str, Any] = {
        **names,
        "table_type": "MANAGED",
        "data_source_format": "DELTA",
        "columns": [],
        "storage_location": location,
        "properties": {"io.unitycatalog.tableId": table_id},
    }
    bad = json.loads(json.dumps(body))
    if field == "comment":
        bad["comment"] = NUL
    elif field == "property":
        bad["properties"]["note"] = NUL
    else:
        bad["columns"] = [{"name": NUL, "type_name": "LONG", "type_text": "bigint", "type_json": "{}", "position": 0}]
    before = world.state()
    assert_uc_error(_send_json(d, "/tables", bad), 400)
    assert world.state() == before
    assert d.http.get(f"{API}/tables/unity.default.{name}").status_code == 404
    assert _send_json(d, "/tables", body).status_code == 200


@pytest.mark.parametrize(
    "path", ["/catalogs/a%00b", "/schemas/unity.a%00b", "/tables/unity.default.a%00b", "/schemas?catalog_name=a%00b"]
)
def test_nul_in_path_or_query_is_refused(world: World, path: str) -> None:
    before = world.state()
    assert_uc_error(world.admin.http.get(f"{API}{path}"))
    assert world.state() == before


def test_body_shorter_than_content_length_times_out(world: World) -> None:
    """Content-Length says 1000, 10 bytes come: a 408 once the body deadline (1 s here) passes,
    with `Connection: close`, instead of a request thread waiting for ever."""
    host, port = world.url.removeprefix("http://").split(":")
    before = world.state()
    with socket.create_connection((host, int(port)), timeout=HANG_GUARD_S) as sock:
        head = f"POST {COMMITS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
        sock.sendall(head.encode() + b'{"table_i')
        received = b""
        while b"\r\n\r\n" not in received or not received.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    status_line, _, rest = received.partition(b"\r\n")
    assert status_line.split()[1] == b"408", received
    headers, _, body = rest.partition(b"\r\n\r\n")
    assert b"connection: close" in headers.lower()
    assert json.loads(body)["error_code"] == "REQUEST_TIMEOUT"
    assert world.state() == before


def test_unexpected_error_closes_the_connection(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 500 says `Connection: close`, so the client's next request (a commit) goes on a new
    connection and gets its answer instead of a reset."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("injected")

    monkeypatch.setattr(world.built.service, "list_catalogs", broken)
    http = world.admin.http
    resp = http.get(f"{API}/catalogs")
    assert resp.status_code == 500
    assert resp.headers.get("connection", "").lower() == "close"
    assert resp.json()["error_code"] == "INTERNAL"
    assert world.admin.commit(world.table, 3).status_code == 200  # same client, next request
