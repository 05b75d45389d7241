"""Generated schedules: run a hypothesis state machine with the run's seed and budget."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Flaky
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from conformance.config import ModelBudget
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import Violation, premises_seen


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


# ------------------------------------------------------------------ directed histories (issue 28)

# How long the directed histories are, per budget ("default": a vendor's CI; "deep": minutes).
# The default crosses v99 -> v100 with a two-digit mark held below it (HOLD_* of the catalog check)
# and goes a few dozen versions further; more is the deep budget's.
HISTORY_VERSIONS = {"quick": 108, "default": 140, "deep": 2400}
HISTORY_ROUNDS = {"quick": 1, "default": 1, "deep": 4}  # histories per check, each from its own seed


@dataclass
class HistoryLog:
    """The schedule of a directed history, step by step, for the reproducer and the why.

    A finding is raised as ``Violation(rule, ...)`` whose message says, in this order, what was
    observed, what the model allowed, the last steps that led there and the seed to rerun it. The
    whole schedule goes into the reproducer (``transcript.notes["schedule"]``)."""

    transcript: Transcript
    seed: int
    run_seed: int
    steps: list[str] = field(default_factory=list)
    tail: int = 6  # steps quoted in the message

    def step(self, text: str) -> None:
        self.steps.append(f"{len(self.steps) + 1}. {text}")
        self.transcript.notes["schedule"] = self.steps[-400:]

    def violation(self, rule: str, observed: str, allowed: str, *, at_end: bool = False) -> Violation:
        # One line: a violation's message is its first line (the why), so the last steps go in it.
        recent = " | ".join(self.steps[-self.tail :])
        return Violation(
            rule,
            f"{observed}; the model allowed {allowed}. Last steps of {len(self.steps)}: {recent}."
            f" Rerun with --seed {self.run_seed} (check seed {self.seed}); the whole schedule is in the"
            " reproducer's notes.",
            at_end=at_end,
        )


# Versions of the longest table of a client history (each append costs a client commit, so shorter):
# past every boundary the client histories place (unratified files every 25 versions, cleanup every
# 50, a publication lag of 20 from v60, every policy combination at v70), no further by default:
# a real client (a JVM behind a pipe) pays tens of milliseconds per step.
# "quick": just past the publication lag (20 commits waiting from v60) and the first maintenance round
# at v70, short of v100.
CLIENT_HISTORY_VERSIONS = {"quick": 82, "default": 120, "deep": 1500}
DEEP_FACTOR = 5  # the deep budget: this many times the state machines' sequences, each this much longer


def for_budget(model: ModelBudget, budget: str) -> ModelBudget:
    """The state machines' budget under ``settings.delta.budget``: as configured by default; on the
    deep budget more sequences, each longer (thousands of steps in all)."""
    if budget != "deep":
        return model
    return model.model_copy(update={"examples": model.examples * DEEP_FACTOR, "steps": model.steps * DEEP_FACTOR})
