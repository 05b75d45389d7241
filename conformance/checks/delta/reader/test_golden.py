"""Golden tables (fixtures/golden/, layout in its README.md): every expected version, the latest
and, where given, reads by timestamp reproduce the case's expected rows (RFC "Reading
Catalog-managed Tables")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.checks.delta.builders import LogBuilder
from conformance.checks.delta.reader.inline_commits import REASON, has_inline
from conformance.contract.delta import NotSupported
from conformance.fixtures_dir import fixtures_dir
from conformance.observe.recording import PASS_THROUGH, RecordingClient, TargetRaised
from conformance.report.outcomes import not_applicable
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.golden_case import catalog_state, copy_table


def _golden_root() -> Path | None:
    try:
        root = fixtures_dir() / "golden"
    except FileNotFoundError:
        return None
    return root if root.is_dir() else None


def _case_names() -> list[str]:
    root = _golden_root()
    if root is None:
        return []
    return sorted(p.name for p in root.iterdir() if (p / "test_case_info.json").is_file())


def _load(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.mark.req("RDR-GOLDEN-TABLES")
@pytest.mark.parametrize("case_name", _case_names())
def test_reader_reproduces_golden_table(
    case_name: str, client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    root = _golden_root()
    assert root is not None, "lakecert's golden tables were not found (the check's cases came from them)"
    case = root / case_name
    copy_table(case, seeded.storage, seeded.location)
    state, commits = catalog_state(case, seeded.location)
    ref_admin.import_table(
        table_name, seeded.location, state["latest_version"], commits, state["latest_published_version"]
    )
    expected = case / "expected"
    wrong: list[str] = []
    declined: list[str] = []  # reads refused with NotSupported on a table with inline commits
    asked: list[str] = []

    def compare(what: str, want_version: int, want_rows: list[dict[str, object]], **how: int) -> None:
        asked.append(what)
        try:
            got = client.read(table_name, **how)
        except NotSupported as err:
            if not has_inline(commits):
                wrong.append(f"{case_name}: {what}: refused a table without inline commits: {err}")
            declined.append(what)
            return
        except (TargetRaised, *PASS_THROUGH) as err:  # any error of a read is the reader's
            wrong.append(f"{case_name}: {what}: expected version {want_version}, got {type(err).__name__}: {err}")
            return
        if got.version != want_version or got.rows != want_rows:
            wrong.append(
                f"{case_name}: {what}: expected version {want_version} rows {want_rows}, "
                f"got version {got.version} rows {got.rows}"
            )

    for version in _load(case / "test_case_info.json")["versions"]:
        rows = _load(expected / f"v{version}" / "rows.json")
        compare(f"version {version}", version, rows, version=version)
    latest = _load(expected / "latest" / "table_version_metadata.json")["version"]
    compare("latest", latest, _load(expected / "latest" / "rows.json"))
    if (expected / "timestamps.json").is_file():
        for entry in _load(expected / "timestamps.json")["timestamps"]:
            ts, version = entry["timestamp_ms"], entry["version"]
            rows = _load(expected / f"v{version}" / "rows.json")
            compare(f"timestamp {ts} (version {version})", version, rows, timestamp_ms=ts)
    if declined and declined != asked:
        wrong.append(f"{case_name}: refused only some reads of one table: {declined}")
    if wrong:
        raise AssertionError("\n".join(wrong))
    if declined:
        not_applicable(f"{case_name}: {REASON}")
