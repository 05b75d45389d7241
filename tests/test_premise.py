"""A broken premise (issue 18 item 5): FAIL charged to no rule, still blocking certification."""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import premise
from conformance.contract.delta import CommitConflict
from conformance.plugin.outcomes import blames_product
from conformance.report.outcomes import Outcome, PremiseBroken
from conformance.report.results import CheckResult, RunSummary
from conformance.requirements import profiles

CATALOG = "delta-cm-catalog"


def _summary(results: list[CheckResult]) -> RunSummary:
    reqs = {r.id: r for r in profiles()[CATALOG]}
    return RunSummary({}, results, reqs, [CATALOG])


def _all_pass(but: str) -> list[CheckResult]:
    return [CheckResult(f"t::{r.id}", [r.id], Outcome.PASS) for r in profiles()[CATALOG] if r.id != but]


def test_premise_wraps_the_targets_exception_as_its_cause() -> None:
    with pytest.raises(PremiseBroken, match="ratifying v1") as raised, premise("ratifying v1"):
        raise CommitConflict("taken", latest_version=1)
    assert isinstance(raised.value.__cause__, CommitConflict)
    assert blames_product(raised.value.__cause__)


def test_a_broken_premise_blames_no_requirement_but_blocks_certification() -> None:
    broken = CheckResult("t::race", ["CAT-RATIFY-RACE"], Outcome.FAIL, "premise broken: ...", premise_broken=True)
    summary = _summary([*_all_pass("CAT-RATIFY-RACE"), broken])
    assert summary.statuses["CAT-RATIFY-RACE"] is Outcome.NOT_RUN  # not judged, not blamed
    assert summary.profile_verdict(CATALOG) == "NOT_CERTIFIED"
    assert broken.to_json()["premise_broken"] is True


def test_a_broken_premise_beside_a_passing_check_still_blocks_certification() -> None:
    results = [*_all_pass("-"), CheckResult("t::x", ["CAT-LIST-RANGE"], Outcome.FAIL, premise_broken=True)]
    summary = _summary(results)
    assert summary.statuses["CAT-LIST-RANGE"] is Outcome.PASS
    assert summary.profile_verdict(CATALOG) == "NOT_CERTIFIED"
    assert _summary(_all_pass("-")).profile_verdict(CATALOG) == "CERTIFIED"
