"""The golden tables (fixtures/golden/): valid against their schemas, consistent, reproducible,
and read correctly by the reference reader through the golden check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.requirements import load_all
from tests.helpers import lakecert, results, tree_bytes

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "fixtures" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "test_case_info.json").is_file())
EXPECTED_CASES = {
    "rfc-worked-example",
    "unpublished-commits",
    "inline-commits",
    "rejected-and-partial-staged",
    "published-beyond-latest",
    "stale-published-file",
    "time-travel-ict",
    "mid-cleanup",
    "engine-maintenance-shapes",
}


def _load(path: Path) -> Any:
    return json.loads(path.read_text())


def _validator(name: str) -> Any:
    schema = _load(GOLDEN / "schema" / f"{name}.schema.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_every_case_is_present() -> None:
    assert set(CASES) == EXPECTED_CASES


@pytest.mark.parametrize("case", CASES)
def test_case_validates_against_its_schemas(case: str) -> None:
    root = GOLDEN / case
    info = _load(root / "test_case_info.json")
    _validator("test_case_info").validate(info)
    state = _load(root / "catalog.json")
    _validator("catalog").validate(state)
    expected = root / "expected"
    for vdir in sorted(p for p in expected.iterdir() if p.is_dir()):
        _validator("table_version_metadata").validate(_load(vdir / "table_version_metadata.json"))
        _validator("rows").validate(_load(vdir / "rows.json"))
    if (expected / "timestamps.json").exists():
        _validator("timestamps").validate(_load(expected / "timestamps.json"))


@pytest.mark.parametrize("case", CASES)
def test_case_is_consistent(case: str) -> None:
    root = GOLDEN / case
    info, state = _load(root / "test_case_info.json"), _load(root / "catalog.json")
    assert info["name"] == case
    known = load_all()
    assert not [r for r in info["requirements"] if r not in known], "unknown requirement IDs"
    assert "RDR-GOLDEN-TABLES" in info["requirements"]
    # One directory per readable version, plus latest = a copy of the latest version.
    versions = info["versions"]
    assert versions == sorted(versions) and versions[-1] == info["latest_version"] == state["latest_version"]
    expected = root / "expected"
    assert {p.name for p in expected.iterdir() if p.is_dir()} == {f"v{v}" for v in versions} | {"latest"}
    assert tree_bytes(expected / "latest") == tree_bytes(expected / f"v{versions[-1]}")
    for v in versions:
        meta, rows = _load(expected / f"v{v}" / "table_version_metadata.json"), _load(expected / f"v{v}" / "rows.json")
        assert meta["version"] == v
        ids = [r["id"] for r in rows]
        assert ids == sorted(set(ids)), f"v{v}: rows not sorted by unique id"
        assert all((root / "table" / f).is_file() for f in meta["files"])
    # The catalog's commits: contiguous up to latest, above the published mark, staged files present.
    commit_versions = [c["version"] for c in state["commits"]]
    latest, published = state["latest_version"], state["latest_published_version"]
    assert commit_versions == list(range(latest - len(commit_versions) + 1, latest + 1))
    assert published >= (commit_versions[0] - 1 if commit_versions else latest) or published == -1
    staged = root / "table" / "_delta_log" / "_staged_commits"
    for c in state["commits"]:
        if "staged" in c:
            assert (staged / c["staged"]).is_file(), c["staged"]
            assert int(c["staged"].split(".")[0]) == c["version"]
    if (expected / "timestamps.json").exists():
        assert all(e["version"] in versions for e in _load(expected / "timestamps.json")["timestamps"])


def test_rfc_case_is_the_rfc_fixture_table() -> None:
    """The golden RFC case and fixtures/rfc-worked-example hold the same table and catalog state."""
    rfc = ROOT / "fixtures" / "rfc-worked-example"
    assert tree_bytes(GOLDEN / "rfc-worked-example" / "table") == tree_bytes(rfc / "table")
    assert _load(GOLDEN / "rfc-worked-example" / "catalog.json") == _load(rfc / "catalog.json")
    assert (
        _load(GOLDEN / "rfc-worked-example" / "expected" / "v9" / "rows.json")
        == _load(rfc / "expected" / "v9.json")["rows"]
    )


def test_regenerating_gives_identical_bytes(tmp_path: Path) -> None:
    out = tmp_path / "golden"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_golden.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    generated = {p.name for p in out.iterdir()}
    assert generated == set(CASES)
    for case in CASES:
        want, got = tree_bytes(GOLDEN / case), tree_bytes(out / case)
        assert sorted(got) == sorted(want), f"{case}: files differ"
        changed = [name for name in want if want[name] != got[name]]
        assert not changed, f"{case}: regenerated bytes differ (a pyarrow upgrade changes Parquet footers): {changed}"


def test_reference_reader_passes_every_case(tmp_path: Path) -> None:
    out = tmp_path / "run"
    lakecert("run", "--profile", "delta-cm-reader", "--select", "checks/delta/reader/test_golden.py", "--out", str(out))
    rows = results(out)["results"]
    by_case = {r["test"].split("[", 1)[1].rstrip("]"): r["status"] for r in rows}
    assert by_case == {case: "PASS" for case in CASES}, by_case
