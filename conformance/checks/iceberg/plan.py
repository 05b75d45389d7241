"""The model's plan for a real engine: which held schedules run first, and which run once for many.

A target that names the preset of its engine (``model_preset``: which validations the engine runs,
``conformance/model/iceberg/presets.py``) lets the model run each check's schedules first, in
microseconds each, with that preset. From the model's histories the plan takes:

- an order: checks whose schedules the model predicts to break their rule run first, and those
  schedules first within a check, so a real engine's first counterexample comes early;
- classes: (configuration, schedule) pairs whose model histories are equal - the same operations,
  the same starting and commit versions (every validation decided alike) and the same rows in
  every version - form one class. The engine runs one member of each class, and every check that
  needs a member is judged, by its own rule, on that run's history. A pair needed by several
  checks (the same race appears in several scenarios) is one class too.

The plan is a claim of the model about the engine: docs/benchmarks.md shows, for Spark, that the
reduced budget finds the same FAILs as the full one.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, replace

from conformance.checks.iceberg.scenarios import Scenario
from conformance.contract.iceberg import TableSetup
from conformance.history import History, check
from conformance.model.iceberg import CORRECTED, SPARK, Preset
from conformance.schedules.enumerate import HeldSchedule
from conformance.schedules.held_run import run_held
from reference_impl.iceberg.engine import ModelEngine

PRESETS = {p.name: p for p in (SPARK, CORRECTED)}


@dataclass(frozen=True)
class Planned:
    """One check's part of the plan: its table configuration and scenario."""

    setup: TableSetup
    scenario: Scenario


class ModelPlan:
    """The model's history of every (configuration, schedule) pair asked about, computed once."""

    def __init__(self, preset: Preset) -> None:
        self.preset = preset
        self._histories: dict[tuple[TableSetup, HeldSchedule], History] = {}

    def history(self, setup: TableSetup, schedule: HeldSchedule) -> History:
        """What the model does with ``schedule`` on ``setup`` (without the steps' wording, which
        names the table)."""
        key = (setup, schedule)
        if key not in self._histories:
            # A fresh model engine per schedule: its tables live in memory, and thousands are asked about.
            history = run_held(ModelEngine(self.preset), "plan", setup, schedule, report=False)
            self._histories[key] = replace(history, schedule=())
        return self._histories[key]

    def breaks(self, setup: TableSetup, scenario: Scenario, schedule: HeldSchedule) -> bool:
        """Whether the model finds one of the scenario's anomalies in this schedule's history."""
        return any(a.kind in scenario.kinds for a in check(self.history(setup, schedule), scenario.order))

    def predicts_failure(self, planned: Planned) -> bool:
        return any(self.breaks(planned.setup, planned.scenario, s) for s in planned.scenario.schedules)

    def ordered(self, setup: TableSetup, scenario: Scenario) -> tuple[HeldSchedule, ...]:
        """The scenario's schedules, those the model predicts to break the rule first (else as listed)."""
        return tuple(sorted(scenario.schedules, key=lambda s: not self.breaks(setup, scenario, s)))

    def class_of(self, setup: TableSetup, schedule: HeldSchedule) -> Hashable:
        return self.history(setup, schedule)

    def work(self, planned: Iterable[Planned]) -> list[tuple[TableSetup, HeldSchedule]]:
        """Every (configuration, schedule) the planned checks need, in the order they need them."""
        return [(p.setup, s) for p in planned for s in self.ordered(p.setup, p.scenario)]


def classes(plan: ModelPlan, work: Iterable[tuple[TableSetup, HeldSchedule]]) -> int:
    """How many engine runs the work needs with one run per class."""
    return len({plan.class_of(setup, schedule) for setup, schedule in work})
