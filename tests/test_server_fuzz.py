"""Generated request bodies against the served catalog: never a 5xx, and a 4xx changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from tests.tooling.server import API, COMMITS, Driver, Table, served

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
INTS = st.integers(min_value=-3, max_value=6) | st.sampled_from([2**31, 2**63 - 1, 2**63, -(2**63) - 1, 10**30])
FIELDS = ["table_id", "table_uri", "commit_info", "latest_backfilled_version", "metadata", "uniform", "start_version"]
INFO_FIELDS = ["version", "timestamp", "file_name", "file_size", "file_modification_timestamp", "inline_content"]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Driver, Table, Table]]:
    db = tmp_path_factory.mktemp("fuzz") / "catalog.sqlite"
    with served("--db", str(db)) as (url, _), httpx.Client(base_url=url) as http:
        d = Driver(http)
        first, other = d.create_table(), d.create_table()
        for version in (1, 2):
            assert d.commit(first, version).status_code == 200
        yield d, first, other


@st.composite
def near_valid(draw: st.DrawFn, d: Driver, t: Table, other: Table) -> dict[str, Any]:
    """A valid proposal or listing request, then a few random edits."""
    if draw(st.booleans()):
        body: dict[str, Any] = d.commit_body(t, 3, draw(st.sampled_from(NAMES)))
    else:
        body = {"table_id": t.table_id, "table_uri": t.location, "start_version": 0}
    for _ in range(draw(st.integers(1, 3))):
        target = body["commit_info"] if "commit_info" in body and draw(st.booleans()) else body
        key = draw(st.sampled_from(INFO_FIELDS if target is not body else FIELDS) | st.text(max_size=8))
        edit = draw(st.sampled_from(["drop", "int", "json", "other-table", "string"]))
        if edit == "drop":
            target.pop(key, None)
        elif edit == "int":
            target[key] = draw(INTS)
        elif edit == "json":
            target[key] = draw(JSON)
        elif edit == "other-table":
            target[key] = draw(st.sampled_from([other.table_id, other.location, "../" + NAMES[0]]))
        else:
            target[key] = draw(st.text(max_size=30))
    return body


NAMES: list[str] = []  # staged file names of version 3, filled once the world exists


def check(d: Driver, tables: tuple[Table, Table], method: str, path: str, **kwargs: Any) -> None:
    before = d.state(*tables)
    resp = d.http.request(method, path, **kwargs)
    assert resp.status_code < 500, (method, path, kwargs, resp.text)
    if resp.status_code >= 400:
        assert isinstance(resp.json()["error_code"], str)
        assert d.state(*tables) == before, (method, path, kwargs)


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)


@seed(20261122)
@FUZZ
@given(data=st.data())
def test_commits_api_never_fails_and_refusals_change_nothing(world: tuple[Driver, Table, Table], data: Any) -> None:
    d, t, other = world
    if not NAMES:
        NAMES.extend(d.stage(t, 3) for _ in range(2))
    body = data.draw(near_valid(d, t, other))
    method = data.draw(st.sampled_from(["POST", "GET"]))
    check(d, (t, other), method, COMMITS, json=body)  # an edit that stays valid may ratify v3: a 200


@seed(20261122)
@FUZZ
@given(
    body=JSON, path=st.sampled_from(["/delta/preview/commits", "/tables", "/staging-tables", "/catalogs", "/schemas"])
)
def test_any_json_anywhere_is_never_a_server_error(world: tuple[Driver, Table, Table], body: Any, path: str) -> None:
    d, t, other = world
    check(d, (t, other), "POST", API + path, json=body)


@seed(20261122)
@FUZZ
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_any_bytes_are_never_a_server_error(world: tuple[Driver, Table, Table], raw: bytes) -> None:
    d, t, other = world
    check(d, (t, other), "POST", COMMITS, content=raw, headers={"content-type": "application/json"})
    check(d, (t, other), "GET", COMMITS, content=raw, headers={"content-type": "application/json"})
