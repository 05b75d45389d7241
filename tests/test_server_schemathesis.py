"""Property-based API fuzzing of `lakecert serve` from its own OpenAPI document (docs/openapi.json,
schemathesis): every operation, generated paths, queries and bodies, on a live server over HTTP.
No 5xx; every refusal is a JSON error in UC's shape and leaves the catalog's state as it was.
Bounded by example count (per operation and store), not by time, and derandomized: the same run
each time. Both stores: PostgreSQL refuses text SQLite keeps (NUL), so refusals must come first."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig

from reference_impl.storage.local import path_to_uri
from tests.tooling.server import API, Driver, Table, served

DOC = Path(__file__).resolve().parent.parent / "docs" / "openapi.json"
# Explicit configuration (no schemathesis.toml discovered from the working directory): generated
# cases only; the coverage phase enumerates boundary cases per field without a bound on their number.
CONFIG = SchemathesisConfig.from_dict({"phases": {"coverage": {"enabled": False}}})
schema = schemathesis.openapi.from_path(DOC, config=CONFIG)
EXAMPLES = settings(
    max_examples=30, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)


@dataclass
class World:
    url: str
    driver: Driver
    tables: tuple[Table, Table]

    def state(self) -> list[Any]:
        """Catalogs, schemas, the tables of unity.default, and two tables' ratified commits."""
        http = self.driver.http
        catalogs = http.get(f"{API}/catalogs").json()
        schemas = http.get(f"{API}/schemas", params={"catalog_name": "unity"}).json()
        return [catalogs, schemas, *self.driver.state(*self.tables)]


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """A live server per store (PostgreSQL refuses what SQLite keeps: NUL in text)."""
    work = tmp_path_factory.mktemp("schemathesis")
    on_pg = request.param == "postgres"
    db = request.getfixturevalue("postgres").new_schema() if on_pg else str(work / "catalog.sqlite")
    argv = ["--db", db, "--warehouse", path_to_uri(work / "warehouse"), "--body-timeout", "5"]
    with served(*argv) as (url, _), httpx.Client(base_url=url, timeout=60) as http:
        d = Driver(http)
        first, other = d.create_table(), d.create_table()
        for version in (1, 2):
            assert d.commit(first, version).status_code == 200
        yield World(url, d, (first, other))


@schema.parametrize()
@EXAMPLES
def test_generated_requests_never_fail_and_refusals_change_nothing(case: Any, world: World) -> None:
    before = world.state()
    response = case.call(base_url=world.url, timeout=60)
    case.validate_response(response, checks=[not_a_server_error])
    if response.status_code >= 400:
        body = response.json()
        assert isinstance(body, dict), response.text
        if "error" in body:  # the /delta/v1 API's DeltaErrorResponse
            assert isinstance(body["error"]["type"], str) and body["error"]["code"] == response.status_code
        else:
            assert isinstance(body["error_code"], str) and isinstance(body["message"], str), response.text
        assert world.state() == before, (case.method, case.path, response.status_code)
