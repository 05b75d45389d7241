"""UC's Java client (`io.unitycatalog:unitycatalog-client` 0.6.0, the jar `make setup` fetches for Delta
Kernel) as a client of `lakecert serve`: every call of its API classes that the server offers works,
and its models parse what the server answers (listings with inline commits included).

The calls are made by a small Java program (tests/uc_java, compiled by `make setup`), one JVM for
the module, one request per line: the test prepares files in storage itself and asserts on statuses,
exception classes and contents, never on message text."""

from __future__ import annotations

import base64
import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reference_impl.delta import log_paths as P
from reference_impl.storage.local import LocalStorage
from tests.tooling.server import COMMITS, Driver, Table, served

ROOT = Path(__file__).resolve().parents[1]
JARS = ROOT / ".cache" / "jars" / "kernel"
CLASSES = ROOT / ".cache" / "uc-java-probe"
API_EXCEPTION = "io.unitycatalog.client.ApiException"

pytestmark = pytest.mark.xdist_group("uc-java-client")  # one server and one JVM for the module


class Probe:
    """The Java program: one request per line in, one answer per line out."""

    def __init__(self, url: str) -> None:
        if not (CLASSES / "lakecert" / "ucjava" / "Probe.class").is_file():
            pytest.fail(f"UC's Java client probe is not compiled in {CLASSES}: run `make setup`")
        classpath = ":".join([str(CLASSES), *map(str, sorted(JARS.glob("*.jar")))])
        command = ["java", "-Xmx256m", "-cp", classpath, "lakecert.ucjava.Probe", url]
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        assert json.loads(self._line()) == {"ready": True}

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"the Java probe exited ({self.proc.poll()})"
        return line

    def __call__(self, call: str, **args: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"call": call, "args": args}) + "\n")
        self.proc.stdin.flush()
        answer: dict[str, Any] = json.loads(self._line())
        return answer

    def ok(self, call: str, **args: Any) -> Any:
        answer = self(call, **args)
        assert answer["ok"] and answer["status"] == 200, answer
        return answer["value"]

    def refused(self, call: str, **args: Any) -> int:
        """The HTTP status of a call the client raised ApiException for."""
        answer = self(call, **args)
        assert not answer["ok"] and answer["exception"] == API_EXCEPTION, answer
        code: int = answer["code"]
        return code

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=120)  # a hang guard only


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("ucjava") / "catalog.sqlite"
    with served("--db", str(db)) as (url, _):
        yield url


@pytest.fixture(scope="module")
def probe(server: str) -> Iterator[Probe]:
    p = Probe(server)
    yield p
    p.close()


@pytest.fixture
def driver(server: str) -> Iterator[Driver]:
    with httpx.Client(base_url=server, timeout=60) as http:
        yield Driver(http, LocalStorage())


def _names(listing: dict[str, Any], key: str) -> list[str]:
    return [item["name"] for item in listing.get(key) or []]


def test_catalogs_and_schemas_round_trip(probe: Probe) -> None:
    catalog, schema = f"c_{uuid.uuid4().hex[:8]}", "s1"
    created = probe.ok("createCatalog", body={"name": catalog, "comment": "one", "properties": {"k": "v"}})
    assert (created["name"], created["comment"], created["properties"]) == (catalog, "one", {"k": "v"})
    assert probe.ok("getCatalog", name=catalog)["id"] == created["id"]
    # Paging one by one through the client's page token reaches every catalog.
    seen, token = [], None
    for _ in range(100):
        page = probe.ok("listCatalogs", max_results=1, page_token=token)
        seen += _names(page, "catalogs")
        token = page.get("next_page_token")
        if not token:
            break
    assert catalog in seen and "unity" in seen
    assert probe.ok("updateCatalog", name=catalog, body={"comment": "two"})["comment"] == "two"

    made = probe.ok("createSchema", body={"name": schema, "catalog_name": catalog, "comment": "x"})
    assert (made["full_name"], made["catalog_name"]) == (f"{catalog}.{schema}", catalog)
    assert probe.ok("getSchema", full_name=f"{catalog}.{schema}")["schema_id"] == made["schema_id"]
    assert _names(probe.ok("listSchemas", catalog_name=catalog), "schemas") == [schema]
    assert probe.ok("updateSchema", full_name=f"{catalog}.{schema}", body={"comment": "y"})["comment"] == "y"
    # A catalog holding a schema is not deleted without force; once empty it is.
    assert 400 <= probe.refused("deleteCatalog", name=catalog, force=False) < 500
    probe.ok("deleteSchema", full_name=f"{catalog}.{schema}", force=False)
    assert probe.refused("getSchema", full_name=f"{catalog}.{schema}") == 404
    probe.ok("deleteCatalog", name=catalog, force=False)
    assert probe.refused("getCatalog", name=catalog) == 404
    assert probe.ok("summary")["metastore_id"]


def _create_table(probe: Probe, driver: Driver, name: str) -> Table:
    """Staging table, version 0 written by the test, then UC's create table: through the Java client."""
    staged = probe.ok("createStagingTable", body={"name": name, "catalog_name": "unity", "schema_name": "default"})
    table_id, location = staged["id"], staged["staging_location"]
    driver.storage.put(P.delta_uri(location, 0), driver.version0(table_id))
    columns = [
        {"name": "id", "type_text": "bigint", "type_json": '{"type":"long"}', "type_name": "LONG", "position": 0},
        {
            "name": "value",
            "type_text": "string",
            "type_json": '{"type":"string"}',
            "type_name": "STRING",
            "position": 1,
        },
    ]
    body = {
        "name": name,
        "catalog_name": "unity",
        "schema_name": "default",
        "table_type": "MANAGED",
        "data_source_format": "DELTA",
        "columns": columns,
        "storage_location": location,
        "properties": {"io.unitycatalog.tableId": table_id, "delta.feature.catalogManaged": "supported"},
    }
    info = probe.ok("createTable", body=body)
    assert (info["table_id"], info["storage_location"].rstrip("/")) == (table_id, location.rstrip("/"))
    assert [c["name"] for c in info["columns"]] == ["id", "value"]
    return Table(table_id, location, f"unity.default.{name}")


def test_tables_commits_and_publication(probe: Probe, driver: Driver) -> None:
    name = f"t_{uuid.uuid4().hex[:8]}"
    table = _create_table(probe, driver, name)
    assert probe.ok("getTable", full_name=table.full_name)["table_id"] == table.table_id
    assert name in _names(probe.ok("listTables", catalog_name="unity", schema_name="default"), "tables")
    assert probe.refused("getTable", full_name=f"unity.default.{name}_missing") == 404

    for version in (1, 2):
        body = driver.commit_body(table, version, driver.stage(table, version))
        probe.ok("commit", body=body)  # 200, an empty object
    assert probe.refused("commit", body=driver.commit_body(table, 2, driver.stage(table, 2))) == 409
    assert 400 <= probe.refused("commit", body=driver.commit_body(table, 4, driver.stage(table, 4))) < 500

    where = {"table_id": table.table_id, "table_uri": table.location}
    listing = probe.ok("getCommits", body={**where, "start_version": 0})
    assert listing["latest_table_version"] == 2
    assert sorted(c["version"] for c in listing["commits"]) == [1, 2]
    assert all(c["file_name"].startswith(f"{c['version']:020d}.") for c in listing["commits"])
    ranged = probe.ok("getCommits", body={**where, "start_version": 2, "end_version": 2})
    assert [c["version"] for c in ranged["commits"]] == [2]

    # Publication: the files copied to _delta_log by the test, then the report through the client.
    for c in listing["commits"]:
        staged = f"{table.location}/_delta_log/_staged_commits/{c['file_name']}"
        driver.storage.put(P.delta_uri(table.location, c["version"]), driver.storage.get(staged))
    probe.ok("commit", body={**where, "latest_backfilled_version": 2})
    after = probe.ok("getCommits", body={**where, "start_version": 0})
    assert (after["latest_table_version"], after.get("commits") or []) == (2, [])

    probe.ok("deleteTable", full_name=table.full_name)
    assert probe.refused("getTable", full_name=table.full_name) == 404
    assert name not in _names(probe.ok("listTables", catalog_name="unity", schema_name="default"), "tables")


def test_listing_with_an_inline_commit_parses(probe: Probe, driver: Driver) -> None:
    """An inline commit (lakecert's extension, posted over HTTP by the test) is listed in a form the
    Java client's DeltaCommitInfo model reads: the version and the file fields UC requires."""
    table = _create_table(probe, driver, f"t_{uuid.uuid4().hex[:8]}")
    inline = base64.b64encode(driver.data_commit(1)).decode("ascii")
    info = {"version": 1, "timestamp": 1001, "inline_content": inline}
    posted = driver.http.post(
        COMMITS, json={"table_id": table.table_id, "table_uri": table.location, "commit_info": info}
    )
    assert posted.status_code == 200, posted.status_code
    driver.commit(table, 2).raise_for_status()
    listing = probe.ok("getCommits", body={"table_id": table.table_id, "table_uri": table.location, "start_version": 0})
    assert listing["latest_table_version"] == 2
    by_version = {c["version"]: c for c in listing["commits"]}
    assert sorted(by_version) == [1, 2]
    assert by_version[1]["timestamp"] == 1001 and by_version[1]["file_size"] > 0
