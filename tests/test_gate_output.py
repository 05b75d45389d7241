"""What `lakecert gate` prints into a CI log (issue 30): every line of a check's block indented under
the check, the reproducer, the HTTP replay script and the rerun command of each new failure, the
known failures listed with their reasons, and refusals that say what differs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from conformance.report.gate import compare, render, unfit_for_gate, updated_baseline
from tests.helpers import lakecert

GAP = "checks/delta/catalog/test_ratification.py::test_gap_is_refused"
ONCE = "checks/delta/catalog/test_ratification.py::test_second_proposal_for_a_version_conflicts"
LATEST = "checks/delta/catalog/test_ratification.py::test_conflict_reports_latest_version"
RERUN = f"lakecert run --target uc --seed 7 --profile delta-cm-catalog --select {GAP}"
# A message as a history check or a failed assert leaves it: several lines, one starting "assert".
MESSAGE = "the catalog accepted v4 while v3 was missing\nschedule:\n  1. stage v4\nassert 4 not in [1, 2, 4]"


def _row(test: str, status: str, message: str = "", reproducer: str | None = None) -> dict[str, Any]:
    return {
        "test": test,
        "requirements": ["CAT-RATIFY-SEQUENTIAL"],
        "violated": ["CAT-RATIFY-SEQUENTIAL"] if status in ("FAIL", "WARN") else [],
        "status": status,
        "message": message,
        "duration_s": 0.1,
        "reproducer": reproducer,
        "premise_broken": False,
        "observations": [],
    }


def _results(rows: list[dict[str, Any]], profiles: list[str] | None = None, partial: bool = False) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "run_info": {
            "target": "uc",
            "profiles": profiles or ["delta-cm-catalog"],
            "target_versions": {},
            "target_options": {},
            "partial": partial,
            "interrupted": False,
            "complete": True,
        },
        "results": rows,
        "requirements": {"CAT-RATIFY-SEQUENTIAL": {"level": "MUST", "status": "FAIL"}},
        "profiles": {"delta-cm-catalog": {"verdict": "NOT_CERTIFIED"}},
        "counts": {},
        "verdict": "NOT_CERTIFIED",
    }


def _run_folder(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A run folder with one new FAIL whose reproducer has a rerun command and an HTTP replay
    script, and one known WARN."""
    out = tmp_path / "run"
    rel = "reproducers/gap.json"
    (out / "reproducers" / "gap.http").mkdir(parents=True)
    (out / "reproducers" / "gap.http" / "replay.sh").write_text("#!/bin/sh\n")
    repro = {"rerun": RERUN, "rerun_secrets": ["UC_TOKEN"], "http": {"replay": "gap.http/replay.sh"}}
    (out / rel).write_text(json.dumps(repro))
    results = _results(
        [_row(GAP, "FAIL", MESSAGE, rel), _row(LATEST, "WARN", "the conflict stated v2; v3 is the latest")]
    )
    (out / "results.json").write_text(json.dumps(results))
    return out, results


def test_a_new_failure_is_one_indented_block_with_its_reproducer_replay_and_rerun(tmp_path: Path) -> None:
    out, results = _run_folder(tmp_path)
    text = render(compare(results, {"known": []}), out)
    lines = text.splitlines()
    # Only the section headings start at column 0: no message line spills there.
    headings = re.compile(
        r"^(NEW failures \(blocking\)|new warnings|known failures still failing|fixed \(.*\)|known but not run|gate): "
    )
    assert all(line.startswith(" ") or headings.match(line) for line in lines), text
    assert not [line for line in lines if line.startswith("assert")]
    block = lines[lines.index(f"  FAIL  {GAP}") :]
    assert block[1].split() == ["rules:", "CAT-RATIFY-SEQUENTIAL"]
    assert block[2].strip() == "why:        the catalog accepted v4 while v3 was missing"
    assert "            assert 4 not in [1, 2, 4]" in text  # the rest of the message, indented
    assert f"reproducer: {out / 'reproducers/gap.json'}" in text
    assert f"http:       bash {out / 'reproducers' / 'gap.http' / 'replay.sh'}" in text
    assert f"rerun (set $UC_TOKEN first): {RERUN}" in text


def test_known_failures_are_listed_with_their_reason_and_link(tmp_path: Path) -> None:
    out, results = _run_folder(tmp_path)
    known = [{"test": LATEST, "status": "WARN", "reason": "fixed in 2.4", "link": "https://tracker.example/1"}]
    text = render(compare(results, {"known": known}), out)
    assert "known failures still failing: 1" in text
    assert f"  WARN  {LATEST}" in text
    assert "reason:     fixed in 2.4" in text and "link:       https://tracker.example/1" in text
    assert "why now:    the conflict stated v2; v3 is the latest" in text


def test_refusals_say_what_differs() -> None:
    run = _results([_row(GAP, "FAIL", "x")], profiles=["delta-cm-catalog", "delta-cm-writer"])
    baseline = {"profiles": ["delta-cm-catalog", "delta-cm-reader"], "known": []}
    refusal = unfit_for_gate(run, baseline, allow_partial=False) or ""
    assert "only in the run: delta-cm-writer" in refusal and "only in the baseline: delta-cm-reader" in refusal
    # A --requirement run is a selection as much as a --select run; the refusal names both options.
    selected = unfit_for_gate(_results([_row(GAP, "FAIL", "x")], partial=True), None, allow_partial=False) or ""
    assert "--requirement" in selected and "--select" in selected and "1 ran" in selected


def test_a_first_run_writes_its_baseline_and_then_passes_the_gate(tmp_path: Path) -> None:
    out, _ = _run_folder(tmp_path)
    baseline = tmp_path / "ci" / "lakecert-baseline.yaml"
    baseline.parent.mkdir()
    missing = lakecert("gate", str(out), "--baseline", str(baseline))
    assert missing.returncode == 2 and f"--baseline {baseline} --update" in missing.stderr
    assert lakecert("gate", str(out), "--baseline", str(baseline), "--update").returncode == 0
    gated = lakecert("gate", str(out), "--baseline", str(baseline))
    assert gated.returncode == 0, gated.stdout + gated.stderr
    assert f"  FAIL  {GAP}" in gated.stdout and "gate: OPEN" in gated.stdout


def test_the_client_workflow_example_writes_its_first_baseline() -> None:
    workflow = yaml.safe_load((Path(__file__).parents[1] / "docs/examples/ci-client-project.yml").read_text())
    steps = workflow["jobs"]["conformance"]["steps"]
    runs = [str(s.get("run", "")) for s in steps]
    first = next(i for i, r in enumerate(runs) if "--update" in r)
    gate = next(i for i, r in enumerate(runs) if "lakecert gate" in r and "--update" not in r)
    assert first < gate and "hashFiles" in str(steps[first].get("if", ""))
    assert updated_baseline(_results([_row(GAP, "FAIL", "x")]), None)["known"]  # what that step writes
