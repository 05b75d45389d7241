"""The CLI as a user meets it: exit codes, outputs, reproducers."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tests.helpers import lakecert, results


def test_reference_catalog_profile_is_certified(out: Path) -> None:
    # A new interpreter, as a user starts it (most tests fork their runs from a warmed process).
    proc = lakecert("run", "--profile", "delta-cm-catalog", "--out", str(out), fresh=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = results(out)
    assert res["verdict"] == "CERTIFIED"
    assert set(res) >= {"run_info", "results", "requirements", "verdict"}
    assert res["run_info"]["target"] == "reference"
    assert all(r["status"] == "PASS" for r in res["results"])
    assert (out / "allure-results").is_dir() and any((out / "allure-results").glob("*-result.json"))


def test_unknown_target_is_a_usage_error(out: Path) -> None:
    proc = lakecert("run", "--target", "no-such-target", "--out", str(out))
    assert proc.returncode == 2
    assert "no-such-target" in proc.stderr
    assert not (out / "results.json").exists()


def test_unknown_profile_is_a_usage_error(out: Path) -> None:
    assert lakecert("run", "--profile", "delta-cm-nothing", "--out", str(out)).returncode == 2


def test_profile_without_a_matching_side_is_a_usage_error(out: Path) -> None:
    proc = lakecert("run", "--target", "faulty:accept-gap", "--profile", "delta-cm-writer", "--out", str(out))
    assert proc.returncode == 2


def test_malformed_config_is_a_usage_error(tmp_path: Path, out: Path) -> None:
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("seed: [not, a, number]\n")
    assert lakecert("run", "--config", str(cfg), "--out", str(out)).returncode == 2
    cfg.write_text("surprise: 1\n")
    assert lakecert("run", "--config", str(cfg), "--out", str(out)).returncode == 2


def test_targets_json_lists_kinds() -> None:
    proc = lakecert("targets", "--json")
    rows = json.loads(proc.stdout)
    kinds = {r["name"]: r["kind"] for r in rows}
    assert kinds["reference"] == "reference"
    assert kinds["faulty:ratify-twice"] == "faulty"
    assert sum(k == "faulty" for k in kinds.values()) >= 16


def test_failure_has_a_reproducer_that_reruns_only_that_check(out: Path, tmp_path: Path) -> None:
    proc = lakecert("run", "--target", "faulty:accept-gap", "--out", str(out))
    assert proc.returncode == 1
    res = results(out)
    failed = [r for r in res["results"] if r["status"] == "FAIL"]
    gap = next(r for r in failed if r["test"].endswith("test_gap_is_refused"))
    repro = json.loads((out / gap["reproducer"]).read_text())
    assert repro["requirements"] == ["CAT-RATIFY-SEQUENTIAL"]
    assert repro["seed"] == res["run_info"]["seed"]
    assert any(e["op"] == "commit" for e in repro["transcript"]["events"])
    rerun = shlex.split(repro["rerun"])
    assert rerun[:2] == ["lakecert", "run"]
    again = tmp_path / "again"
    proc = lakecert(*rerun[1:], "--out", str(again))
    assert proc.returncode == 1
    rerun_res = results(again)
    assert [r["test"] for r in rerun_res["results"]] == [gap["test"]]
    assert rerun_res["results"][0]["status"] == "FAIL"
    assert rerun_res["run_info"]["partial"] is True


def test_broken_should_warns_without_blocking(out: Path) -> None:
    proc = lakecert("run", "--target", "faulty:conflict-stale-latest", "--out", str(out))
    res = results(out)
    assert proc.returncode == 0
    assert res["requirements"]["CAT-CONFLICT-LATEST"]["status"] == "WARN"
    assert res["verdict"] == "CERTIFIED"
