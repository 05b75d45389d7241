"""UC's Python SDK (`unitycatalog-client` 0.7.0, PyPI) as a client of `lakecert serve`: every call it
makes for catalog-managed tables works, and its models parse what the server answers.

The SDK runs in a venv of its own (`.cache/venvs/uc-sdk`, made by `make setup` from
`tests/uc_sdk/requirements.txt`; its pins must not cap lakecert's venv), behind
`tests/uc_sdk/bridge.py`: one SDK call per JSON line, answered with the result's class and
`to_dict()`, or the exception's class and HTTP status. The tests write the table files themselves
(what a connector does beside the SDK) and assert on statuses, classes and contents."""

from __future__ import annotations

import base64
import json
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from reference_impl.delta import log_paths as P
from reference_impl.server.deps import PREFIX
from reference_impl.storage.local import LocalStorage
from tests.helpers import REPO
from tests.tooling.server import COMMITS, Driver, served

SDK_PYTHON = REPO / ".cache" / "venvs" / "uc-sdk" / "bin" / "python"
BRIDGE = REPO / "tests" / "uc_sdk" / "bridge.py"


@dataclass(frozen=True)
class Answer:
    ok: bool
    type: str | None = None  # the result's class
    value: Any = None  # the result's to_dict()
    exception: str | None = None  # the exception's class (the SDK's: ApiException or a subclass)
    api_exception: bool = False  # it is the SDK's ApiException (or a subclass of it)
    status: int | None = None  # its HTTP status


class SDK:
    """The bridge process: ``call("TablesApi.get_table", "unity.default.t")``; ``model(...)`` builds
    an argument the bridge turns into the SDK's model."""

    def __init__(self, host: str) -> None:
        if not SDK_PYTHON.exists():
            raise RuntimeError(f"{SDK_PYTHON} is missing: `make setup` (or `make uc-sdk`) creates it")
        self.host = host
        self._proc = subprocess.Popen(
            [str(SDK_PYTHON), str(BRIDGE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )

    def _ask(self, request: dict[str, Any]) -> Answer:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps({"host": self.host, **request}) + "\n")
        line = self._proc.stdout.readline()
        assert line, f"the SDK bridge exited ({self._proc.poll()})"
        return Answer(**json.loads(line))

    def call(self, name: str, *args: Any, **kwargs: Any) -> Answer:
        return self._ask({"call": name, "args": list(args), "kwargs": kwargs})

    def ok(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """The result's ``to_dict()`` of a call that must succeed."""
        answer = self.call(name, *args, **kwargs)
        assert answer.ok, f"{name}: {answer}"
        return answer.value

    def get_commits(self, table_id: str, location: str, start: int = 0) -> Answer:
        """GET /delta/preview/commits through the SDK's transport and models, fields in the query
        string: the SDK's own ``get_commits`` cannot send them (its HTTP layer drops a GET's body)."""
        return self._ask({"get_commits": {"table_id": table_id, "table_uri": location, "start_version": start}})

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(timeout=120)  # a hang guard only


def model(model_name: str, /, **fields: Any) -> dict[str, Any]:
    return {"$model": model_name, "fields": fields}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("sdk") / "catalog.sqlite"
    with served("--db", str(db)) as (url, _):
        yield url


@pytest.fixture(scope="module")
def sdk(server: str) -> Iterator[SDK]:
    bridge = SDK(server + PREFIX)
    yield bridge
    bridge.close()


@dataclass(frozen=True)
class Staged:
    id: str
    staging_location: str


def create_table(sdk: SDK, name: str) -> Staged:
    """Staging table, version 0 written at its location, then the table: all through the SDK."""
    names = {"name": name, "catalog_name": "unity", "schema_name": "default"}
    info = sdk.ok("TablesApi.create_staging_table", model("CreateStagingTable", **names))
    staged = Staged(info["id"], info["staging_location"])
    LocalStorage().put(P.delta_uri(staged.staging_location, 0), Driver.version0(staged.id))
    table = model(
        "CreateTable",
        **names,
        table_type="MANAGED",
        data_source_format="DELTA",
        columns=[],
        storage_location=staged.staging_location,
        properties={"io.unitycatalog.tableId": staged.id, "delta.feature.catalogManaged": "supported"},
    )
    sdk.ok("TablesApi.create_table", table)
    return staged


def commit_info(uri: str, version: int) -> dict[str, Any]:
    return {
        "version": version,
        "timestamp": 1000 + version,
        "file_name": uri.rsplit("/", 1)[1],
        "file_size": 100,
        "file_modification_timestamp": 1000 + version,
    }


def commit(sdk: SDK, staged: Staged, version: int) -> Answer:
    uri = P.staged_uri(staged.staging_location, version, str(uuid.uuid4()))
    LocalStorage().put(uri, Driver.data_commit(version))
    body = model(
        "DeltaCommit", table_id=staged.id, table_uri=staged.staging_location, commit_info=commit_info(uri, version)
    )
    return sdk.call("DeltaCommitsApi.commit", body)


def listing(sdk: SDK, staged: Staged) -> dict[str, Any]:
    answer = sdk.get_commits(staged.id, staged.staging_location)
    assert answer.ok and answer.type == "DeltaGetCommitsResponse", answer
    value: dict[str, Any] = answer.value
    return value


def test_catalogs_schemas_and_metastore_summary(sdk: SDK) -> None:
    created = sdk.ok("CatalogsApi.create_catalog", model("CreateCatalog", name="sdk_cat"))
    sdk.ok("SchemasApi.create_schema", model("CreateSchema", name="s1", catalog_name="sdk_cat"))
    listed = sdk.call("SchemasApi.list_schemas", catalog_name="sdk_cat")
    first = sdk.call("MetastoresApi.summary")
    again = sdk.ok("MetastoresApi.summary")
    assert created["name"] == "sdk_cat"
    assert listed.type == "ListSchemasResponse" and [s["name"] for s in listed.value["schemas"]] == ["s1"]
    assert first.type == "GetMetastoreSummaryResponse"
    assert first.value["metastore_id"] == again["metastore_id"] and uuid.UUID(again["metastore_id"])


def test_tables_and_commits_round_trip(sdk: SDK) -> None:
    staged = create_table(sdk, "sdk_t1")
    assert commit(sdk, staged, 1).ok and commit(sdk, staged, 2).ok
    table = sdk.call("TablesApi.get_table", "unity.default.sdk_t1")
    listed = sdk.ok("TablesApi.list_tables", "unity", "default")
    assert table.type == "TableInfo"
    assert table.value["table_id"] == staged.id and table.value["storage_location"] == staged.staging_location
    assert "sdk_t1" in [t["name"] for t in listed["tables"]]
    commits = listing(sdk, staged)
    assert commits["latest_table_version"] == 2
    assert sorted(c["version"] for c in commits["commits"]) == [1, 2]


def test_a_lost_race_is_a_409_through_the_sdk(sdk: SDK) -> None:
    staged = create_table(sdk, "sdk_t2")
    assert commit(sdk, staged, 1).ok
    lost = commit(sdk, staged, 1)  # another file for a ratified version
    assert (lost.ok, lost.exception, lost.status, lost.api_exception) == (False, "ApiException", 409, True)
    assert listing(sdk, staged)["latest_table_version"] == 1


def test_listing_with_an_inline_commit_parses(server: str, sdk: SDK) -> None:
    staged = create_table(sdk, "sdk_t3")
    content = Driver.data_commit(1)
    inline = {"version": 1, "timestamp": 1001, "inline_content": base64.b64encode(content).decode()}
    body = {"table_id": staged.id, "table_uri": staged.staging_location, "commit_info": inline}
    with httpx.Client(base_url=server) as http:
        assert http.post(COMMITS, json=body).status_code == 200  # lakecert's extension: the SDK has no field
    assert [(c["version"], c["file_size"]) for c in listing(sdk, staged)["commits"]] == [(1, len(content))]


def test_get_commits_fields_from_body_or_query_must_agree(server: str, sdk: SDK, tmp_path: Path) -> None:
    staged = create_table(sdk, "sdk_t4")
    assert commit(sdk, staged, 1).ok
    fields: dict[str, Any] = {"table_id": staged.id, "table_uri": staged.staging_location, "start_version": 0}
    with httpx.Client(base_url=server) as http:
        from_body = http.request("GET", COMMITS, json=fields)
        mixed = http.request("GET", COMMITS, json={"table_id": staged.id}, params={**fields, "table_id": staged.id})
        disagree = http.request("GET", COMMITS, json=fields, params={"start_version": "1"})
        not_int = http.get(COMMITS, params={**fields, "start_version": "one"})
        repeated = http.get(COMMITS + "?start_version=0&start_version=1", params={"table_id": staged.id})
    assert from_body.status_code == mixed.status_code == 200
    assert from_body.json() == mixed.json()
    assert disagree.status_code == not_int.status_code == repeated.status_code == 400


def test_namespace_patch_and_delete(sdk: SDK) -> None:
    sdk.ok("CatalogsApi.create_catalog", model("CreateCatalog", name="sdk_ns"))
    sdk.ok("SchemasApi.create_schema", model("CreateSchema", name="s1", catalog_name="sdk_ns"))
    renamed = sdk.ok("CatalogsApi.update_catalog", "sdk_ns", model("UpdateCatalog", new_name="sdk_ns2", comment="c"))
    schema = sdk.ok("SchemasApi.update_schema", "sdk_ns2.s1", model("UpdateSchema", comment="s", properties={"k": "v"}))
    not_empty = sdk.call("CatalogsApi.delete_catalog", "sdk_ns2")  # holds a schema: needs force
    assert (not_empty.exception, not_empty.status) == ("BadRequestException", 400)
    assert sdk.ok("CatalogsApi.get_catalog", "sdk_ns2")["name"] == "sdk_ns2"
    assert sdk.call("CatalogsApi.delete_catalog", "sdk_ns2", force=True).ok
    gone = sdk.call("CatalogsApi.get_catalog", "sdk_ns2")
    assert (renamed["name"], renamed["comment"]) == ("sdk_ns2", "c")
    assert (schema["full_name"], schema["comment"], schema["properties"]) == ("sdk_ns2.s1", "s", {"k": "v"})
    assert (gone.exception, gone.status) == ("NotFoundException", 404)


def test_namespaces_holding_tables_are_neither_renamed_nor_deleted(sdk: SDK) -> None:
    create_table(sdk, "sdk_t5")
    attempts = [
        sdk.call("CatalogsApi.delete_catalog", "unity", force=True),
        sdk.call("SchemasApi.delete_schema", "unity.default", force=True),
        sdk.call("SchemasApi.update_schema", "unity.default", model("UpdateSchema", new_name="other")),
    ]
    assert [(a.exception, a.status, a.api_exception) for a in attempts] == [("BadRequestException", 400, True)] * 3
    assert sdk.call("TablesApi.get_table", "unity.default.sdk_t5").ok  # still there


def test_dropped_table_is_gone_and_its_name_free(sdk: SDK) -> None:
    first = create_table(sdk, "sdk_drop")
    assert commit(sdk, first, 1).ok
    assert sdk.call("TablesApi.delete_table", "unity.default.sdk_drop").ok
    gone = sdk.call("TablesApi.get_table", "unity.default.sdk_drop")
    again = sdk.call("TablesApi.delete_table", "unity.default.sdk_drop")
    assert (gone.status, again.status) == (404, 404)
    no_commit = commit(sdk, first, 2)  # the dropped table takes no commits
    assert (no_commit.exception, no_commit.status) == ("NotFoundException", 404)
    second = create_table(sdk, "sdk_drop")  # the name is free again, for a new table
    assert second.id != first.id
    assert listing(sdk, second)["latest_table_version"] == 0


def test_metadata_commit_replaces_properties_and_columns_as_uc_does(sdk: SDK) -> None:
    staged = create_table(sdk, "sdk_meta")
    uri = P.staged_uri(staged.staging_location, 1, str(uuid.uuid4()))
    LocalStorage().put(uri, Driver.metadata_commit(staged.id, 1))
    column = {"name": "id", "type_text": "long", "type_name": "LONG", "position": 0, "nullable": True}
    metadata = {
        "description": "new comment",
        "schema": {"columns": [column]},  # the SDK's DeltaMetadata.var_schema
        "properties": {"properties": {"delta.enableInCommitTimestamps": "true"}},
    }
    body = model(
        "DeltaCommit",
        table_id=staged.id,
        table_uri=staged.staging_location,
        commit_info=commit_info(uri, 1),
        metadata=metadata,
    )
    sdk.ok("DeltaCommitsApi.commit", body)
    table = sdk.ok("TablesApi.get_table", "unity.default.sdk_meta")
    assert table["comment"] == "new comment"
    assert [(c["name"], c["type_name"]) for c in table["columns"]] == [("id", "LONG")]
    # Replaced whole, as UC 0.6.0 does; the catalog still says what the table is.
    assert table["properties"] == {
        "delta.enableInCommitTimestamps": "true",
        "delta.feature.catalogManaged": "supported",
        "io.unitycatalog.tableId": staged.id,
    }
