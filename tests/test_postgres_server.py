"""`lakecert serve --db postgresql://...`: certified through the `uc` target like the SQLite
server, servers started together on one fresh database agree, bad usage exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from reference_impl.server.cli import serve_main
from reference_impl.server.runner import ServerProcess, serving
from reference_impl.storage.local import path_to_uri
from tests.pg import Postgres, free_port
from tests.test_server_certify import certify_uc
from tests.tooling.server import API, serve_args


@pytest.mark.slow
def test_served_reference_on_postgres_is_certified(postgres: Postgres, tmp_path: Path) -> None:
    with ServerProcess(postgres.new_schema(), path_to_uri(tmp_path / "warehouse"), timeout_s=30) as server:
        code, res = certify_uc(tmp_path, server.url)
    assert res["verdict"] == "CERTIFIED", [r for r in res["results"] if r["status"] != "PASS"]
    assert code == 0


def test_servers_starting_together_share_one_namespace(postgres: Postgres, tmp_path: Path) -> None:
    """Each server creates its schema and `unity.default` at start-up: on one empty database at
    once, all start, and all list the same single catalog and schema."""
    db, warehouse = postgres.new_schema(), path_to_uri(tmp_path / "warehouse")
    with serving(4, db, warehouse) as servers:
        seen = []
        for server in servers:
            with httpx.Client(base_url=server.url, timeout=30) as http:
                catalogs = http.get(f"{API}/catalogs").json()["catalogs"]
                schemas = http.get(f"{API}/schemas", params={"catalog_name": "unity"}).json()["schemas"]
                seen.append(json.dumps([catalogs, schemas], sort_keys=True))
    assert len(set(seen)) == 1
    assert [c["name"] for c in json.loads(seen[0])[0]] == ["unity"]
    assert [s["name"] for s in json.loads(seen[0])[1]] == ["default"]


def test_postgres_without_warehouse_is_bad_usage() -> None:
    assert serve_main(serve_args("--db", "postgresql://postgres@127.0.0.1:1/none")) == 2


def test_unreachable_postgres_is_bad_usage(tmp_path: Path) -> None:
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/none?connect_timeout=5"
    assert serve_main(serve_args("--db", url, "--warehouse", path_to_uri(tmp_path / "w"))) == 2
