"""A broken premise (issue 18 item 5, issue 27): an ERROR charged to no rule, never a FAIL, still
blocking certification."""

from __future__ import annotations

from unittest.mock import MagicMock

import pytest
from hypothesis.errors import Flaky
from hypothesis.stateful import RuleBasedStateMachine, rule

from conformance.checks.delta.builders import CatalogDriver, premise
from conformance.config import ModelBudget
from conformance.contract.delta import CommitConflict, StagingTable
from conformance.plugin.outcomes import blames_product
from conformance.report.outcomes import Outcome, PremiseBroken
from conformance.report.results import CheckResult, RunSummary
from conformance.requirements import profiles
from conformance.schedules.generated import run_machine

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
    broken = CheckResult("t::race", ["CAT-RATIFY-RACE"], Outcome.ERROR, "premise broken: ...", premise_broken=True)
    summary = _summary([*_all_pass("CAT-RATIFY-RACE"), broken])
    assert summary.statuses["CAT-RATIFY-RACE"] is Outcome.NOT_RUN  # not judged, not blamed
    assert summary.profile_verdict(CATALOG) == "NOT_CERTIFIED"
    assert broken.to_json()["premise_broken"] is True


def test_a_broken_premise_beside_a_passing_check_still_blocks_certification() -> None:
    results = [*_all_pass("-"), CheckResult("t::x", ["CAT-LIST-RANGE"], Outcome.ERROR, premise_broken=True)]
    summary = _summary(results)
    assert summary.statuses["CAT-LIST-RANGE"] is Outcome.PASS
    assert summary.profile_verdict(CATALOG) == "NOT_CERTIFIED"
    assert _summary(_all_pass("-")).profile_verdict(CATALOG) == "CERTIFIED"


def test_a_location_given_to_two_tables_breaks_the_premise_before_any_write() -> None:
    storage = MagicMock()
    catalog = MagicMock()  # every staging table at one place
    catalog.create_staging_table.side_effect = [StagingTable(f"t{i}", "file:///nowhere/shared") for i in range(2)]
    locations: dict[str, str] = {}
    first = CatalogDriver(catalog, storage, locations=locations)
    first.new_table("a")
    writes = storage.put.call_count
    second = CatalogDriver(first.catalog, storage, locations=locations)  # another check of the run
    with pytest.raises(PremiseBroken, match="distinct tables have distinct locations") as raised:
        second.new_table("b")
    assert raised.value.__cause__ is None  # no target exception: the premise itself is the finding
    assert storage.put.call_count == writes  # the other table's version 0 is not overwritten


def _machine_whose_premise_breaks_once() -> type[RuleBasedStateMachine]:
    calls = iter(range(1000))

    class Machine(RuleBasedStateMachine):
        @rule()
        def step(self) -> None:
            if next(calls) == 3:  # the fourth step only: the replay of that sequence passes
                raise PremiseBroken("a table shares a location")

    return Machine


def test_a_premise_broken_once_is_charged_to_the_premise_not_called_flaky() -> None:
    with pytest.raises(PremiseBroken, match="shares a location"):
        run_machine(_machine_whose_premise_breaks_once(), 1, ModelBudget(examples=5, steps=5, shrink=False))


def test_a_flaky_machine_without_a_broken_premise_stays_flaky() -> None:
    calls = iter(range(1000))

    class Machine(RuleBasedStateMachine):
        @rule()
        def step(self) -> None:
            assert next(calls) != 3

    with pytest.raises(Flaky):
        run_machine(Machine, 1, ModelBudget(examples=5, steps=5, shrink=False))
