"""Allure's trend across runs in one --out root: each `lakecert report` carries the target's
history on, a report regenerated for the same run does not count twice, targets keep apart, and
the categories lakecert writes sort the results in the report Allure 3 draws."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.report.allure_cli import ALLURE_VERSION
from tests.helpers import REPO, lakecert
from tests.tooling.allure_report import embedded, result_cases

TARGET = "faulty:ratify-twice"
HISTORY = "allure-history/faulty_ratify-twice.jsonl"

# One root, runs made once: with xdist the tests stay on one worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("allure-history")]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("reports")
    for name, seed in (("run1", "1"), ("run2", "2")):
        proc = lakecert("run", "--target", TARGET, "--seed", seed, "--out", str(base / name))
        assert proc.returncode == 1, proc.stdout + proc.stderr
    assert lakecert("run", "--profile", "delta-cm-reader", "--out", str(base / "ref")).returncode == 0
    return base


def _report(*args: str) -> str:
    proc = lakecert("report", *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _trend(run: Path) -> list[dict[str, object]]:
    trend: list[dict[str, object]] = embedded(run / "allure-report" / "index.html")["widgets/history-trend.json"]
    return trend


def test_trend_fills_across_runs_of_one_root_and_a_regenerated_report_counts_once(root: Path) -> None:
    first = _report(str(root / "run1"))
    assert "allure trend:  1 report(s)" in first and " s\n" in first  # progress: what, then how long
    assert len(_trend(root / "run1")) == 1
    _report(str(root / "run1"))  # the same run again: replaces its point
    assert len((root / HISTORY).read_text().splitlines()) == 1
    _report(str(root / "run2"))
    trend = _trend(root / "run2")
    assert len(trend) == 2 and all(point["data"]["failed"] >= 1 for point in trend)  # type: ignore[index]
    # Each check's own history shows the earlier run's status.
    failed = [c for c in result_cases(root / "run2" / "allure-report" / "index.html") if c["status"] == "failed"]
    assert failed and all(c["extra"]["history"]["items"] for c in failed)


def test_targets_keep_separate_histories_and_no_history_touches_none(root: Path) -> None:
    _report(str(root / "ref"))
    assert len(_trend(root / "ref")) == 1
    assert (root / "allure-history" / "reference.jsonl").exists()
    before = {p.name: p.read_bytes() for p in (root / "allure-history").iterdir()}
    _report(str(root / "ref"), "--no-history")
    assert {p.name: p.read_bytes() for p in (root / "allure-history").iterdir()} == before
    elsewhere = root / "ci-cache"
    _report(str(root / "ref"), "--history-dir", str(elsewhere))
    assert len((elsewhere / "reference.jsonl").read_text().splitlines()) == 1


def test_categories_sort_failures_by_profile_in_the_drawn_report(root: Path) -> None:
    _report(str(root / "run1"), "--no-history")
    categories = embedded(root / "run1" / "allure-report" / "index.html")["data/categories.json"]
    by_name = {c["name"]: c for c in categories["children"]}
    assert by_name["Product defect: delta-cm-catalog"]["children"]
    assert "Product defects" not in by_name  # Allure's default: nothing fell through lakecert's own
    environment = embedded(root / "run1" / "allure-report" / "index.html")["widgets/environment.json"]
    assert {"name": "Target", "values": [TARGET]} in environment
    assert json.loads((root / "run1" / "allure-report" / "summary.json").read_text())


def test_the_pinned_allure_is_the_one_set_up_installs() -> None:
    makefile = (REPO / "Makefile").read_text()
    assert f"ALLURE_VERSION := {ALLURE_VERSION}\n" in makefile


def test_a_missing_allure_is_a_usage_error_that_changes_no_report(root: Path) -> None:
    _report(str(root / "run1"))
    before = (root / "run1" / "allure-report" / "index.html").read_bytes(), (root / HISTORY).read_bytes()
    proc = lakecert("report", str(root / "run1"), env={"LAKECERT_ALLURE": str(root / "no-such-allure")})
    assert proc.returncode == 2
    assert "make setup" in proc.stderr and "--no-allure" in proc.stderr  # names the fix
    after = (root / "run1" / "allure-report" / "index.html").read_bytes(), (root / HISTORY).read_bytes()
    assert after == before
