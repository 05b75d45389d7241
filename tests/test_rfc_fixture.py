"""The RFC worked-example golden table: the reference reader gets it right, and it is reproducible."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.rfc_fixture import BASE_TS, catalog_commits
from reference_impl.delta.snapshot import LogReader, MissingVersionError
from reference_impl.faults.client_faults import CatalogOnlyReader, FilesystemReader, TrustStagedFiles
from reference_impl.storage.local import LocalStorage, path_to_uri
from tests.helpers import tree_bytes

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "rfc-worked-example"
EXPECTED: dict[str, Any] = json.loads((FIXTURE / "expected" / "v9.json").read_text())


@pytest.fixture
def catalog(tmp_path: Path) -> ReferenceCatalog:
    """The catalog state of the example, over the fixture's table (read in place, never written)."""
    cat = ReferenceCatalog(tmp_path / "catalog.db", path_to_uri(tmp_path / "warehouse"))
    location = path_to_uri(FIXTURE / "table")
    latest, published, commits = catalog_commits(FIXTURE, location)
    cat.import_table("rfc", location, latest, commits, published)
    return cat


def test_reference_reader_builds_version_9(catalog: ReferenceCatalog) -> None:
    result = ReferenceClient(catalog, LocalStorage()).read("rfc")
    assert result.version == EXPECTED["version"]
    assert result.rows == EXPECTED["rows"]


def test_reference_snapshot_matches_expected_state(catalog: ReferenceCatalog) -> None:
    table = catalog.resolve("rfc")
    snap = LogReader(catalog, LocalStorage()).snapshot(table.table_id, table.location)
    assert snap.protocol == EXPECTED["protocol"]
    assert {k: snap.metadata[k] for k in EXPECTED["metadata"]} == EXPECTED["metadata"]
    assert sorted(snap.files) == EXPECTED["files"]
    assert snap.in_commit_timestamp == EXPECTED["in_commit_timestamp"]
    assert snap.checkpoint_version == 2


def test_time_travel_into_the_catalog_commits(catalog: ReferenceCatalog) -> None:
    client = ReferenceClient(catalog, LocalStorage())
    assert client.read("rfc", timestamp_ms=BASE_TS + 8 * 60_000 + 1).version == 8
    assert client.read("rfc", version=7).rows == [r for r in EXPECTED["rows"] if r["id"] <= 7]


def test_reader_trusting_staged_files_sees_unratified_rows(catalog: ReferenceCatalog) -> None:
    result = TrustStagedFiles(catalog, LocalStorage()).read("rfc")
    assert result.rows != EXPECTED["rows"]


def test_reader_ignoring_the_catalog_misses_versions_8_and_9(catalog: ReferenceCatalog) -> None:
    result = FilesystemReader(catalog, LocalStorage()).read("rfc")
    assert result.version == 7


def test_reader_not_listing_the_log_cannot_build_the_snapshot(catalog: ReferenceCatalog) -> None:
    with pytest.raises(MissingVersionError):
        CatalogOnlyReader(catalog, LocalStorage()).read("rfc")


def test_fixture_is_reproducible(tmp_path: Path) -> None:
    out = tmp_path / "regenerated"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_rfc_fixture.py"), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    assert tree_bytes(out) == tree_bytes(FIXTURE)
