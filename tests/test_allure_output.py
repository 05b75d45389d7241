"""Allure results carry the lakecert outcome, requirement labels, severity and spec links."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from conformance.requirements import load_all
from tests.helpers import lakecert


def _allure(out: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in (out / "allure-results").glob("*-result.json"):
        data = json.loads(path.read_text())
        # Titles are the rules in words; the check is found by the node id lakecert labels it with.
        node = next(lab["value"] for lab in data["labels"] if lab["name"] == "lakecert_nodeid")
        found[node.split("::")[-1]] = data
    return found


def _labels(result: dict[str, Any], name: str) -> list[str]:
    return [lab["value"] for lab in result["labels"] if lab["name"] == name]


def test_fail_warn_and_pass_map_to_allure_statuses(out: Path) -> None:
    lakecert("run", "--target", "faulty:ratify-twice", "--out", str(out))
    results = _allure(out)
    failed = results["test_second_proposal_for_a_version_conflicts"]
    warned = results["test_conflict_reports_latest_version"]
    passed = results["test_staging_locations_are_unique"]
    assert failed["status"] == "failed" and _labels(failed, "lakecert_status") == ["FAIL"]
    # A broken SHOULD is a defect, shown failed (not Allure's "unknown"), tagged and of lower severity.
    assert warned["status"] == "failed" and _labels(warned, "lakecert_status") == ["WARN"]
    assert [t for t in _labels(warned, "tag") if t.startswith("WARN: ")]
    assert _labels(warned, "severity") != ["critical"]
    assert not [t for t in _labels(failed, "tag") if t.startswith("WARN: ")]
    assert passed["status"] == "passed"
    assert _labels(failed, "requirement") == ["CAT-RATIFY-ONCE"]
    assert _labels(failed, "severity") == ["critical"]
    assert any("commit-protocol" in link["url"] for link in failed["links"])
    assert any(
        a["name"] == "reproducer" for step in [failed, *failed.get("steps", [])] for a in step.get("attachments", [])
    ) or any((out / "allure-results").glob("*-attachment.json"))


def _properties(text: str) -> dict[str, str]:
    """Java properties as Allure reads them: the key ends at the first unescaped ``=`` or space."""
    found = {}
    for line in text.splitlines():
        m = re.fullmatch(r"((?:\\.|[^=\\ ])*)=(.*)", line)
        assert m is not None, line
        key, value = (re.sub(r"\\(.)", r"\1", part) for part in m.groups())
        found[key] = value
    return found


def test_results_carry_run_metadata_categories_titles_and_lakecert_messages(out: Path) -> None:
    assert (
        lakecert(
            "run", "--target", "faulty:ratify-twice", "--profile", "delta-cm-catalog", "--out", str(out)
        ).returncode
        == 1
    )
    allure_dir = out / "allure-results"
    env = _properties((allure_dir / "environment.properties").read_text())
    assert env["Target"] == "faulty:ratify-twice" and env["Verdict"] == "NOT_CERTIFIED"
    assert env["Seed"] == "20261122" and env["Profile delta-cm-catalog"] == "NOT_CERTIFIED"
    assert env["Target version"] == "lakecert-reference-0.1"
    assert "ratify-twice" in json.loads((allure_dir / "executor.json").read_text())["reportName"]
    cats = json.loads((allure_dir / "categories.json").read_text())
    defect = next(c for c in cats if c["name"] == "Product defect: delta-cm-catalog")
    results = _allure(out)
    failed = results["test_second_proposal_for_a_version_conflicts"]
    message = failed["statusDetails"]["message"]
    assert message.startswith("CAT-RATIFY-ONCE (delta-cm-catalog): ")
    assert "conformance." not in message  # no exception class paths
    # Allure matches the whole message (Java's matches(); Python's fullmatch is the same).
    assert re.fullmatch(defect["messageRegex"], message)
    other = next(c for c in cats if c["name"] == "Product defect: delta-cm-reader")
    assert not re.fullmatch(other["messageRegex"], message)
    assert failed["name"].startswith(f"CAT-RATIFY-ONCE: {load_all()['CAT-RATIFY-ONCE'].statement}")
