"""Hardening, round three (issue 31), the reference Iceberg REST catalog: every path a client names is
read bounded, non-blocking, without following a link and inside the warehouse (rows 1-5), no file
content in any error, numbers within Java's long (row 6), ambiguous framing closes the connection
(row 7), slow bodies time out (row 12), and SIGTERM stops the standalone server cleanly (row 14).
Every refusal is a 4xx in the ``IcebergErrorResponse`` shape and changes nothing."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from reference_impl.iceberg_rest import IcebergRestServer
from tests.test_iceberg_rest_hostile import SCHEMA_JSON, assert_refused, state, url

PREFIX = "lakecert"
HANG_GUARD_S = 120.0  # generous: only there so a regression fails instead of hanging the suite
SECRET = "TOP-SECRET-0f9c2e"
MAX_METADATA = 1024 * 1024


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("hardening")
    for name in ("wh", "outside"):
        (base / name).mkdir()
    (base / "outside" / "secrets.txt").write_text(f"password={SECRET}\n")
    return base


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[IcebergRestServer]:
    with IcebergRestServer(
        (root / "wh").as_uri(), prefix=PREFIX, max_metadata_bytes=MAX_METADATA, body_timeout_s=3.0
    ) as srv:
        yield srv


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


_count = iter(range(10**6))


@pytest.fixture
def namespace(server: IcebergRestServer, http: requests.Session) -> str:
    name = f"h{next(_count)}"
    assert http.post(url(server, "namespaces"), json={"namespace": [name]}, timeout=HANG_GUARD_S).status_code == 200
    created = http.post(
        url(server, f"namespaces/{name}/tables"), json={"name": "t", "schema": SCHEMA_JSON}, timeout=HANG_GUARD_S
    )
    assert created.status_code == 200, created.text
    return name


def register(server: IcebergRestServer, http: requests.Session, namespace: str, location: str) -> requests.Response:
    body = {"name": "r", "metadata-location": location}
    return http.post(url(server, f"namespaces/{namespace}/register"), json=body, timeout=HANG_GUARD_S)


def current_metadata(root: Path, server: IcebergRestServer, namespace: str) -> Path:
    location = server.store.metadata_location((namespace,), "t")
    assert location is not None
    return Path(location.removeprefix("file://"))


# ---------------------------------------------------------------- rows 1-4: register a path that is not a file


def test_register_fifos_never_blocks_a_worker(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    """Row 1: 60 FIFOs registered at once (more than the 40 worker threads): each a 400 at once."""
    fifos = []
    for i in range(60):
        path = root / "wh" / namespace / f"fifo{i}.metadata.json"
        os.mkfifo(path)
        fifos.append(path)
    before = state(server, root)
    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(lambda p: register(server, requests, namespace, p.as_uri()), fifos))  # type: ignore[arg-type]
    for answer in answers:
        assert_refused(answer, 400)
    assert state(server, root) == before
    assert http.get(url(server, f"namespaces/{namespace}/tables/t"), timeout=HANG_GUARD_S).status_code == 200


def test_register_through_a_link_out_of_the_warehouse_shows_no_content(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    """Row 2: a link to a file outside (a secrets file, /etc/passwd) or a directory link: 400, no content."""
    base = root / "wh" / namespace
    os.symlink(root / "outside" / "secrets.txt", base / "secret.metadata.json")
    os.symlink("/etc/passwd", base / "passwd.metadata.json")
    os.symlink(root / "outside", base / "outdir")
    before = state(server, root)
    for target in (base / "secret.metadata.json", base / "passwd.metadata.json", base / "outdir" / "secrets.txt"):
        answer = register(server, http, namespace, target.as_uri())
        assert_refused(answer, 400)
        assert SECRET not in answer.text and "root:" not in answer.text
    assert state(server, root) == before


def test_register_a_file_with_secret_content_inside_shows_no_content(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    """A readable file in the warehouse that is not metadata: the parser's message (which quotes it) is not shown."""
    path = root / "wh" / namespace / "notes.metadata.json"
    path.write_text(json.dumps({"format-version": 2, "note": SECRET}))
    before = state(server, root)
    answer = register(server, http, namespace, path.as_uri())
    assert_refused(answer, 400)
    assert SECRET not in answer.text
    assert state(server, root) == before


def test_register_a_huge_sparse_file_is_refused_unread(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    """Row 3: a 512 MiB sparse file is refused from its size, before a byte is read."""
    path = root / "wh" / namespace / "huge.metadata.json"
    with path.open("wb") as f:
        f.truncate(512 * 1024 * 1024)
    before = state(server, root)
    assert_refused(register(server, http, namespace, path.as_uri()), 400)
    assert state(server, root) == before


def test_register_a_directory_or_nothing(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    """Row 4: a directory is a 400 (it was a 500); a missing file stays a 404."""
    directory = root / "wh" / namespace / "dir.metadata.json"
    directory.mkdir()
    before = state(server, root)
    assert_refused(register(server, http, namespace, directory.as_uri()), 400)
    assert_refused(register(server, http, namespace, (root / "wh" / namespace / "none.json").as_uri()), 404)
    assert state(server, root) == before


def test_register_a_copy_of_real_metadata_still_works(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    answer = register(server, http, namespace, current_metadata(root, server, namespace).as_uri())
    assert answer.status_code == 200, answer.text


# ---------------------------------------------------------------- row 5: locations under a planted link


def test_table_and_namespace_locations_under_a_planted_link_write_nothing_outside(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    """Row 5: a link a client planted in the warehouse, used as (part of) a table or namespace location."""
    planted = root / "wh" / f"{namespace}-planted"
    os.symlink(root / "outside", planted)
    before = state(server, root)
    outside_before = sorted(p.name for p in (root / "outside").rglob("*"))
    create: dict[str, Any] = {"name": "u", "schema": SCHEMA_JSON, "location": (planted / "u").as_uri()}
    assert_refused(http.post(url(server, f"namespaces/{namespace}/tables"), json=create, timeout=HANG_GUARD_S), 400)
    ns = f"{namespace}x"
    body: dict[str, Any] = {"namespace": [ns], "properties": {"location": planted.as_uri()}}
    assert http.post(url(server, "namespaces"), json=body, timeout=HANG_GUARD_S).status_code == 200
    in_ns: dict[str, Any] = {"name": "v", "schema": SCHEMA_JSON}
    assert_refused(http.post(url(server, f"namespaces/{ns}/tables"), json=in_ns, timeout=HANG_GUARD_S), 400)
    commit = {"requirements": [], "updates": [{"action": "set-location", "location": (planted / "w").as_uri()}]}
    target = url(server, f"namespaces/{namespace}/tables/t")
    assert_refused(http.post(target, json=commit, timeout=HANG_GUARD_S), 400)
    assert sorted(p.name for p in (root / "outside").rglob("*")) == outside_before
    after = state(server, root)
    assert after[1] == before[1]  # no table pointer changed (the namespace above is the only new thing)


# ---------------------------------------------------------------- row 6: numbers and duplicate keys


def _snapshot(snapshot_id: int, sequence: int = 1) -> dict[str, Any]:
    return {
        "snapshot-id": snapshot_id,
        "sequence-number": sequence,
        "timestamp-ms": 1_700_000_000_000,
        "manifest-list": "file:///nowhere/snap.avro",
        "summary": {"operation": "append"},
        "schema-id": 0,
    }


def _add_and_make_current(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {
        "requirements": [],
        "updates": [
            {"action": "add-snapshot", "snapshot": snapshot},
            {
                "action": "set-snapshot-ref",
                "ref-name": "main",
                "type": "branch",
                "snapshot-id": snapshot["snapshot-id"],
            },
        ],
    }


BAD_NUMBERS = {
    "snapshot-id-2^63": _add_and_make_current(_snapshot(2**63)),
    "sequence-number-2^63": _add_and_make_current(_snapshot(7, 2**63)),
    "snapshot-id-minus-1": _add_and_make_current(_snapshot(-1)),
    "snapshot-id-below-long": _add_and_make_current(_snapshot(-(2**63) - 1)),
}


@pytest.mark.parametrize("body", BAD_NUMBERS.values(), ids=BAD_NUMBERS.keys())
def test_ids_outside_the_format_are_400(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str, body: dict[str, Any]
) -> None:
    before = state(server, root)
    target = url(server, f"namespaces/{namespace}/tables/t")
    assert_refused(http.post(target, json=body, timeout=HANG_GUARD_S), 400)
    assert state(server, root) == before


def test_a_valid_snapshot_still_commits(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    target = url(server, f"namespaces/{namespace}/tables/t")
    answer = http.post(target, json=_add_and_make_current(_snapshot(2**63 - 1)), timeout=HANG_GUARD_S)
    assert answer.status_code == 200, answer.text
    assert answer.json()["metadata"]["current-snapshot-id"] == 2**63 - 1


def test_duplicate_key_in_a_commit_is_400(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    raw = (
        b'{"requirements": [], "updates": [{"action": "set-properties", '
        b'"updates": {"owner": "alice", "owner": "mallory"}}]}'
    )
    before = state(server, root)
    target = url(server, f"namespaces/{namespace}/tables/t")
    answer = http.post(target, data=raw, headers={"Content-Type": "application/json"}, timeout=HANG_GUARD_S)
    assert_refused(answer, 400)
    assert state(server, root) == before


def test_registered_metadata_with_an_id_past_long_is_400(
    server: IcebergRestServer, http: requests.Session, root: Path, namespace: str
) -> None:
    good = json.loads(current_metadata(root, server, namespace).read_text())
    good["last-sequence-number"] = 2**63
    path = root / "wh" / namespace / "big.metadata.json"
    path.write_text(json.dumps(good))
    before = state(server, root)
    assert_refused(register(server, http, namespace, path.as_uri()), 400)
    assert state(server, root) == before


# ---------------------------------------------------------------- rows 7 and 12: the connection


def _raw_exchange(server: IcebergRestServer, request: bytes) -> bytes:
    """Send ``request`` on a fresh connection; everything the server sends until it closes."""
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=HANG_GUARD_S) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


def test_content_length_and_transfer_encoding_close_the_connection(server: IcebergRestServer) -> None:
    """Row 7: the request is read by its Transfer-Encoding and answered, the connection then closed:
    the request hidden after the chunked body is never answered."""
    hidden = f"GET /v1/{PREFIX}/namespaces HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    body = b"0\r\n\r\n" + hidden
    request = (
        f"POST /v1/{PREFIX}/namespaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode() + body
    received = _raw_exchange(server, request)  # returns only because the server closed the connection
    assert received.count(b"HTTP/1.1 ") == 1, received
    assert b"connection: close" in received.lower()


def test_a_body_that_never_arrives_is_408(server: IcebergRestServer, root: Path) -> None:
    """Row 12: a Content-Length larger than what is sent: 408 with Connection: close (body timeout
    3 s here: a loaded machine still sends a whole body well within it)."""
    before = state(server, root)
    request = (
        f"POST /v1/{PREFIX}/namespaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        'Content-Length: 100\r\n\r\n{"namespace"'
    ).encode()
    received = _raw_exchange(server, request)
    assert received.startswith(b"HTTP/1.1 408 "), received
    assert b"connection: close" in received.lower()
    assert state(server, root) == before


# ---------------------------------------------------------------- row 14: SIGTERM


def test_sigterm_stops_the_standalone_server_cleanly(tmp_path: Path) -> None:
    database = tmp_path / "catalog.sqlite"
    command = [sys.executable, "-m", "reference_impl.iceberg_rest", "--warehouse", (tmp_path / "wh").as_uri()]
    command += ["--database", str(database), "--port", "0"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "Iceberg REST catalog at " in line, line
        base = line.split(" at ", 1)[1].split()[0]
        deadline = time.monotonic() + HANG_GUARD_S
        while True:  # the line is printed just before uvicorn starts: wait for its first answer
            try:
                answer = requests.post(
                    f"{base}/v1/{PREFIX}/namespaces", json={"namespace": ["n"]}, timeout=HANG_GUARD_S
                )
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, "the server never answered"
                time.sleep(0.05)
        assert answer.status_code == 200, answer.text
        assert database.with_name(database.name + "-wal").exists()  # written in WAL mode
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=HANG_GUARD_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not database.with_name(database.name + "-wal").exists()
    assert not database.with_name(database.name + "-shm").exists()


def test_a_warehouse_that_does_not_exist_yet_is_made_at_the_first_table(tmp_path: Path) -> None:
    with IcebergRestServer((tmp_path / "new" / "wh").as_uri(), prefix=PREFIX) as srv, requests.Session() as http:
        assert http.post(url(srv, "namespaces"), json={"namespace": ["n"]}, timeout=HANG_GUARD_S).status_code == 200
        body: dict[str, Any] = {"name": "t", "schema": SCHEMA_JSON}
        answer = http.post(url(srv, "namespaces/n/tables"), json=body, timeout=HANG_GUARD_S)
        assert answer.status_code == 200, answer.text
