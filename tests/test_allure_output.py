"""Allure results carry the lakecert outcome, requirement labels, severity and spec links."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers import lakecert


def _allure(out: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in (out / "allure-results").glob("*-result.json"):
        data = json.loads(path.read_text())
        found[data["name"]] = data
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
    assert warned["status"] == "unknown" and _labels(warned, "lakecert_status") == ["WARN"]
    assert passed["status"] == "passed"
    assert _labels(failed, "requirement") == ["CAT-RATIFY-ONCE"]
    assert _labels(failed, "severity") == ["critical"]
    assert any("commit-protocol" in link["url"] for link in failed["links"])
    assert any(
        a["name"] == "reproducer" for step in [failed, *failed.get("steps", [])] for a in step.get("attachments", [])
    ) or any((out / "allure-results").glob("*-attachment.json"))
