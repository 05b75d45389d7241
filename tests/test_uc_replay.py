"""The ``uc`` adapter on what real servers really send (issue 27).

``fixtures/uc-exchanges/*.json`` holds exchanges recorded from real Unity Catalog servers
(``scripts/record_uc.py``: lakecert's uc target, Delta Kernel and UC's Python SDK through a recording
proxy). Every recorded answer is fed through the adapter's call for its endpoint, so the adapter is
tested on what UC sends even where UC cannot run: a success of any shape is a success, and an error
status maps to the contract's error, whatever the body says.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from conformance.adapters.uc.catalog import UCCatalog
from conformance.adapters.uc.target import UCTarget
from conformance.adapters.uc.wire import STAGED_DIR, UCClient, UCServerError
from conformance.contract.delta import CommitConflict, CommitRejected, InvalidRequest, TableNotFound
from tests.helpers import REPO

RECORDINGS = sorted((REPO / "fixtures" / "uc-exchanges").glob("*.json"))
URL = "http://uc.invalid"
# Endpoints the recorded clients called that the adapter never does (Kernel's and the SDK's own,
# lakecert's extension probe): their answers say nothing about the adapter.
NOT_THE_ADAPTERS = {"/metastore_summary", "/lakecert/v1/capabilities", "/tables", "/schemas", "/catalogs"}
ERRORS: dict[int, type[Exception]] = {409: CommitConflict, 404: TableNotFound, 403: CommitRejected, 429: CommitRejected}


def _recorded() -> list[Any]:
    cases = []
    for path in RECORDINGS:
        for i, ex in enumerate(json.loads(path.read_text())["exchanges"]):
            name = f"{path.stem}#{i}:{ex['client'].split()[0]}:{ex['method']}{ex['endpoint']}:{ex['status']}"
            cases.append(pytest.param(ex, id=name))
    return cases


def _raw(body: Any) -> bytes:
    if body is None:
        return b""
    return body.encode() if isinstance(body, str) else json.dumps(body).encode()


def _answering(status: int, media_type: str | None, body: bytes) -> UCClient:
    headers = {"content-type": media_type} if media_type else {}
    transport = httpx.MockTransport(lambda request: httpx.Response(status, headers=headers, content=body))
    return UCClient(URL, transport=transport)


def _catalog(client: UCClient) -> UCCatalog:
    return UCCatalog(client, None, catalog="unity", schema="s", inline_commits=False, maintenance_policies=False)


def _call_for(ex: dict[str, Any], client: UCClient) -> Callable[[], Any] | None:
    """The adapter's call that sends this exchange's request (None: an endpoint it never calls)."""
    cat = _catalog(client)
    req = ex["request"] if isinstance(ex["request"], dict) else {}
    method, endpoint = ex["method"], ex["endpoint"]
    name = ex["path"].partition("?")[0].rsplit("/", 1)[-1].rpartition(".")[2]
    if (method, endpoint) == ("GET", "/catalogs"):
        target = UCTarget(url=URL)
        target._client = client
        return target.preflight
    if (method, endpoint) == ("POST", "/staging-tables"):
        return cat.create_staging_table
    if (method, endpoint) == ("POST", "/tables"):
        table_id = str((req.get("properties") or {}).get("io.unitycatalog.tableId", "t"))
        cat._remember(table_id, str(req.get("storage_location", "file:///t")))
        return lambda: cat.register_table(str(req.get("name", "t")), table_id)
    if (method, endpoint) == ("GET", "/tables/{name}"):
        return lambda: cat.resolve(name)
    if (method, endpoint) == ("DELETE", "/tables/{name}"):
        return lambda: cat.drop_table(name)
    if endpoint == "/delta/preview/commits":
        table_id, location = str(req.get("table_id", "t")), str(req.get("table_uri", "file:///t"))
        cat._remember(table_id, location)
        if method == "GET":
            return lambda: cat.get_commits(table_id, req.get("start_version"), req.get("end_version"))
        info = req.get("commit_info")
        if not isinstance(info, dict):
            return lambda: cat.mark_published(table_id, int(req.get("latest_backfilled_version", 0)))
        staged = f"{location}{STAGED_DIR}{info.get('file_name')}"
        return lambda: cat.commit(
            table_id,
            int(info.get("version", 0)),
            staged_uri=staged,
            in_commit_timestamp=int(info.get("timestamp", 0)),
            latest_published_version=req.get("latest_backfilled_version"),
        )
    return None


def test_recordings_exist_and_say_what_was_recorded() -> None:
    assert RECORDINGS, "no recorded exchanges in fixtures/uc-exchanges"
    for path in RECORDINGS:
        data = json.loads(path.read_text())
        assert data["server"] and data["recorded"] and data["exchanges"], path.name
        # What lakecert needs to see of a real server: an accepted commit, a listing, a refusal.
        seen = {(ex["method"], ex["endpoint"], ex["status"] // 100) for ex in data["exchanges"]}
        assert {("POST", "/delta/preview/commits", 2), ("GET", "/delta/preview/commits", 2)} <= seen, path.name
        assert ("POST", "/delta/preview/commits", 4) in seen, path.name


@pytest.mark.parametrize("ex", _recorded())
def test_every_recorded_answer_goes_through_the_adapter(ex: dict[str, Any]) -> None:
    client = _answering(ex["status"], ex["media_type"], _raw(ex["response"]))
    call = _call_for(ex, client)
    if call is None:
        assert ex["endpoint"] in NOT_THE_ADAPTERS or ex["endpoint"].startswith("/delta/v1"), ex["endpoint"]
        return
    status = ex["status"]
    if 200 <= status < 300:
        call()  # any success is a success: a text/plain "200 OK" as much as JSON
    elif status in ERRORS:
        with pytest.raises(ERRORS[status]):
            call()
    elif 400 <= status < 500:
        with pytest.raises(InvalidRequest):
            call()
    else:
        with pytest.raises(UCServerError):
            call()


@pytest.mark.parametrize("ex", [p for p in _recorded() if p.values[0]["endpoint"] == "/delta/preview/commits"])
def test_recorded_listings_are_read_as_uc_sent_them(ex: dict[str, Any]) -> None:
    if ex["method"] != "GET" or ex["status"] != 200 or not isinstance(ex["response"], dict):
        return
    client = _answering(200, ex["media_type"], _raw(ex["response"]))
    call = _call_for(ex, client)
    assert call is not None
    got = call()
    sent = ex["response"]
    assert got.latest_version == sent["latest_table_version"]
    assert sorted(c.version for c in got.commits) == sorted(c["version"] for c in sent.get("commits") or [])


@pytest.mark.parametrize("status", [200, 201, 202, 204])
@pytest.mark.parametrize("media_type", [None, "text/plain; charset=utf-8", "application/json", "text/html"])
def test_an_accepted_commit_is_accepted_whatever_its_body(status: int, media_type: str | None) -> None:
    body = b"" if status == 204 else (b"{}" if media_type == "application/json" else b"200 OK")
    cat = _catalog(_answering(status, media_type, body))
    cat._remember("t", "file:///w/t")
    cat.commit("t", 1, staged_uri=f"file:///w/t{STAGED_DIR}{1:020d}.u.json", in_commit_timestamp=1)
    cat.mark_published("t", 1)


@pytest.mark.parametrize("body", [b"200 OK", b"", b"[]", b'{"id": 7}'])
def test_a_body_lakecert_needs_in_another_shape_is_the_servers_error(body: bytes) -> None:
    with pytest.raises(UCServerError):
        _catalog(_answering(200, "text/plain", body)).create_staging_table()


def test_an_answer_of_another_shape_is_noted_as_an_observation() -> None:
    from conformance.observe.http_transcript import HttpLog, capture

    cat = _catalog(_answering(200, "text/plain; charset=utf-8", b"200 OK"))
    cat._remember("t", "file:///w/t")
    with capture(HttpLog()) as log:
        cat.commit("t", 1, staged_uri=f"file:///w/t{STAGED_DIR}{1:020d}.u.json", in_commit_timestamp=1)
    assert log.notes() == ["POST /delta/preview/commits answered 200 text/plain b'200 OK', not JSON"]
