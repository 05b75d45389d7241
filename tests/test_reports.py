"""Certificates, the regression gate and JUnit output, driven through the CLI."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tests.helpers import lakecert, results


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("faulty") / "run"
    assert lakecert("run", "--target", "faulty:ratify-twice", "--out", str(out)).returncode == 1
    return out


def test_certificate_matches_its_results(faulty_run: Path) -> None:
    cert = json.loads((faulty_run / "certificate.json").read_text())
    assert cert["verdict"] == "NOT_CERTIFIED"
    assert cert["target"]["name"] == "faulty:ratify-twice"
    # The variant's catalog is judged alone and, since it breaks an INT- rule too, paired with the
    # reference client (delta-cm-interop).
    assert cert["profiles"] == {"delta-cm-catalog": "NOT_CERTIFIED", "delta-cm-interop": "NOT_CERTIFIED"}
    assert cert["requirement_counts"]["delta-cm-catalog"]["FAIL"] >= 1
    assert lakecert("verify-certificate", str(faulty_run / "certificate.json")).returncode == 0


def test_tampered_results_invalidate_the_certificate(faulty_run: Path, tmp_path: Path) -> None:
    res = results(faulty_run)
    res["verdict"] = "CERTIFIED"
    forged = tmp_path / "results.json"
    forged.write_text(json.dumps(res))
    proc = lakecert("verify-certificate", str(faulty_run / "certificate.json"), "--results", str(forged))
    assert proc.returncode == 1


def test_gate_blocks_new_failures_and_accepts_known_ones(faulty_run: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.yaml"
    assert lakecert("gate", str(faulty_run), "--baseline", str(baseline)).returncode == 2  # no baseline yet
    assert lakecert("gate", str(faulty_run), "--baseline", str(baseline), "--update").returncode == 0
    data = yaml.safe_load(baseline.read_text())
    assert {k["status"] for k in data["known"]} <= {"FAIL", "WARN", "ERROR"} and data["known"]
    assert lakecert("gate", str(faulty_run), "--baseline", str(baseline)).returncode == 0
    data["known"] = data["known"][1:]  # forget one known failure: it becomes new
    baseline.write_text(yaml.safe_dump(data))
    assert lakecert("gate", str(faulty_run), "--baseline", str(baseline)).returncode == 1


def test_gate_reports_fixed_failures(faulty_run: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.yaml"
    known = [
        {"test": r["test"], "status": "FAIL", "reason": "bug 1", "link": "https://example.invalid/1"}
        for r in results(faulty_run)["results"]
        if r["status"] == "PASS"
    ][:1]
    baseline.write_text(yaml.safe_dump({"target": "faulty:ratify-twice", "known": known}))
    proc = lakecert("gate", str(faulty_run), "--baseline", str(baseline), "--update")
    assert proc.returncode == 0
    assert known[0]["test"] not in baseline.read_text(), "a fixed failure stays in the updated baseline"


def test_malformed_baseline_is_a_usage_error(faulty_run: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text("known: [{test: x, status: PASS}]\n")
    assert lakecert("gate", str(faulty_run), "--baseline", str(baseline)).returncode == 2


def test_junit_marks_fail_and_warn_apart(faulty_run: Path) -> None:
    suite = ET.parse(faulty_run / "junit.xml").getroot()
    res = results(faulty_run)
    assert int(suite.get("failures", "0")) == sum(r["status"] == "FAIL" for r in res["results"])
    warned = [c for c in suite.iter("testcase") if c.find("properties/property[@value='WARN']") is not None]
    assert warned and all(c.find("failure") is None for c in warned)
