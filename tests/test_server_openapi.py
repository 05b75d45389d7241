"""The published OpenAPI document is what the server serves, and its paths are UC's."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from reference_impl.server.openapi import DEFAULT_PATH, render
from tests.tooling.server import served

# Paths of unitycatalog/unitycatalog api/all.yaml and api/delta.yaml that lakecert serves
# (under the servers URL /api/2.1/unity-catalog), plus lakecert's own extensions.
UC_PATHS = {
    "/catalogs",
    "/catalogs/{name}",
    "/schemas",
    "/schemas/{full_name}",
    "/staging-tables",
    "/tables",
    "/tables/{full_name}",
    "/delta/preview/commits",
    "/delta/v1/config",
    "/delta/v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
    "/delta/v1/catalogs/{catalog}/schemas/{schema}/staging-tables",
    "/delta/v1/catalogs/{catalog}/schemas/{schema}/tables",
    "/metastore_summary",
}
EXTENSIONS = {"/lakecert/v1/capabilities", "/lakecert/v1/tables/{table_id}/maintenance-policy"}


def test_docs_openapi_is_current() -> None:
    assert json.loads(DEFAULT_PATH.read_text()) == json.loads(render()), (
        "regenerate: python -m reference_impl.server.openapi"
    )


def test_served_openapi_matches_and_names_only_uc_paths(tmp_path: Path) -> None:
    with served("--db", str(tmp_path / "c.sqlite")) as (url, _):
        served_doc = httpx.get(f"{url}/openapi.json").json()
    assert served_doc == json.loads(DEFAULT_PATH.read_text())
    paths = {p.removeprefix("/api/2.1/unity-catalog") for p in served_doc["paths"]}
    assert paths == UC_PATHS | EXTENSIONS
