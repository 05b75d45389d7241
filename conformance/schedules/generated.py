"""Generated schedules: run a hypothesis state machine with the run's seed and budget."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Flaky
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from conformance.config import ModelBudget
from conformance.report.outcomes import premises_seen


def run_settings(examples: int, *, shrink: bool = True, **extra: Any) -> settings:
    """How every generated schedule runs: no deadline or example database, no health checks, one
    bug per check (so one check yields one verdict). Without ``shrink`` a failure is reported as
    found (same verdict, longer reproducer): what the self-test wants, which only asks *which* rule
    broke."""
    phases = tuple(p for p in Phase if shrink or p not in (Phase.shrink, Phase.explain))
    return settings(
        max_examples=examples,
        phases=phases,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
        **extra,
    )


def run_machine(machine: type[RuleBasedStateMachine], seed: int, budget: ModelBudget) -> None:
    """Explore ``budget.examples`` sequences of up to ``budget.steps`` steps, seeded.

    A failure is shrunk to a short schedule; only the first distinct bug is
    reported, so one check yields one verdict. When a sequence broke a premise (a table the
    machine creates shares another's location, say) and its replay did not, hypothesis calls the
    product flaky; the failure is then charged to the premise, not to the check's rules
    (issue 18 item 5: tables created within one second by a catalog that names locations by the
    second).
    """
    with premises_seen() as seen:
        try:
            run_state_machine_as_test(
                hypothesis_seed(seed)(machine),
                settings=run_settings(budget.examples, shrink=budget.shrink, stateful_step_count=budget.steps),
            )
        except Flaky:
            if not seen:
                raise
            raise seen[0]  # noqa: B904 - keeps its own cause, which says who is wrong
