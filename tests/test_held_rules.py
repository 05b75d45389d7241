"""A check that holds a broken SHOULD back until it has judged everything else (``Violation(...,
at_end=True)``) WARNs for the SHOULD and still shows its MUSTs hold: they are listed under ``held``
and count as PASS. A check that stops midway leaves its other rules unjudged, as before."""

from __future__ import annotations

from pathlib import Path

from conformance.report.outcomes import Outcome
from conformance.report.results import CheckResult, RunSummary
from conformance.requirements import profiles
from tests.helpers import lakecert, results

WRITER = "delta-cm-writer"
CHECK = "checks/delta/writer/test_publishing.py::test_published_files_equal_the_ratified_commits"


def _statuses(rows: list[CheckResult]) -> dict[str, Outcome]:
    reqs = {r.id: r for r in profiles()[WRITER]}
    return RunSummary({}, rows, reqs, [WRITER]).statuses


def test_held_rules_pass_and_a_premise_broken_row_holds_none() -> None:
    rules = ["WRT-PUBLISH-IDENTICAL", "WRT-PUBLISH-BYTES"]
    warn = CheckResult("t::p", rules, Outcome.WARN, violated=["WRT-PUBLISH-BYTES"], held=["WRT-PUBLISH-IDENTICAL"])
    assert _statuses([warn])["WRT-PUBLISH-IDENTICAL"] is Outcome.PASS
    assert _statuses([warn])["WRT-PUBLISH-BYTES"] is Outcome.WARN
    stopped = CheckResult("t::p", rules, Outcome.WARN, violated=["WRT-PUBLISH-BYTES"])
    assert _statuses([stopped])["WRT-PUBLISH-IDENTICAL"] is Outcome.NOT_RUN
    assert CheckResult.from_json(warn.to_json()) == warn


def _run(target: str, out: Path) -> dict[str, str]:
    proc = lakecert("run", "--target", target, "--profile", WRITER, "--select", CHECK, "--out", str(out))
    assert proc.returncode in (0, 1), proc.stderr
    res = results(out)
    (row,) = res["results"]
    return {"held": ",".join(row["held"])} | {r: res["requirements"][r]["status"] for r in row["requirements"]}


def test_a_re_encoding_warns_for_the_should_and_the_must_is_shown_to_hold(tmp_path: Path) -> None:
    # publish-rewrites publishes the same actions in other bytes: the MUST held, the SHOULD broke.
    got = _run("faulty:publish-rewrites", tmp_path / "rewrites")
    assert got == {"held": "WRT-PUBLISH-IDENTICAL", "WRT-PUBLISH-IDENTICAL": "PASS", "WRT-PUBLISH-BYTES": "WARN"}
    # (publish-drops-commit-info, which changes the actions, FAILs the MUST at once: the self-test.)
