"""The model's plan for a real engine: which held schedules run first, and which run once for many.

A target that names the preset of its engine (``model_preset``: Iceberg's validations,
``conformance/model/iceberg/presets.py``; Delta's conflict checks, ``conformance/model/delta/presets.py``)
lets the format's model run each check's schedules first, in microseconds each, with that preset.
From the model's histories the plan takes:

- an order: checks whose schedules the model predicts to break their rule run first, and those
  schedules first within a check, so a real engine's first counterexample comes early;
- classes: (configuration, schedule) pairs whose model histories are equal - the same operations,
  the same starting and commit versions (every validation or conflict check decided alike) and the
  same rows in every version - form one class. The engine runs one member of each class, and every
  check that needs a member is judged, by its own rule, on that run's history. A pair needed by
  several checks (the same race appears in several scenarios) is one class too.

The plan is a claim of the model about the engine: docs/benchmarks.md shows, for Spark with Iceberg
and for delta-rs, that the reduced budget finds the same FAILs as the full one. Nothing here knows
the format: a ``Model`` makes a fresh model engine, a scenario says which anomalies break its rule
and which serial order it judges a configuration against.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from conformance.contract.iceberg import NotSupported
from conformance.history import AnomalyKind, History, SerialOrder, check
from conformance.schedules.enumerate import HeldSchedule
from conformance.schedules.held_run import HeldEngine, run_held

# A fresh model engine with the engine's preset (its tables live in memory; thousands are asked about).
Model = Callable[[], HeldEngine]


class Explored(Protocol):
    """What the explorer needs of a format's scenario (Iceberg's and Delta's ``Scenario``)."""

    @property
    def schedules(self) -> tuple[HeldSchedule, ...]: ...

    @property
    def kinds(self) -> frozenset[AnomalyKind]: ...

    def order_for(self, setup: Any) -> SerialOrder:
        """The serial order the reads on ``setup`` are judged against."""
        ...

    def schedules_on(self, setup: Any) -> tuple[HeldSchedule, ...]:
        """The schedules a check runs on ``setup`` (a format may vary them by configuration)."""
        ...


@dataclass(frozen=True)
class Planned:
    """One check's part of the plan: its table configuration and scenario."""

    setup: Any
    scenario: Explored


class ModelPlan:
    """The model's history of every (configuration, schedule) pair asked about, computed once."""

    def __init__(self, model: Model, name: str) -> None:
        self.model = model
        self.name = name  # the preset's, for messages
        self._histories: dict[tuple[Hashable, HeldSchedule], History | None] = {}

    def history(self, setup: Any, schedule: HeldSchedule) -> History | None:
        """What the model does with ``schedule`` on ``setup`` (without the steps' wording, which
        names the table); None when the preset refuses the configuration (as the engine it
        describes does: e.g. catalog-managed tables for path-based engines)."""
        key = (setup, schedule)
        if key not in self._histories:
            try:
                history = run_held(self.model(), "plan", setup, schedule, report=False)
            except NotSupported:
                self._histories[key] = None
            else:
                self._histories[key] = replace(history, schedule=())
        return self._histories[key]

    def breaks(self, setup: Any, scenario: Explored, schedule: HeldSchedule) -> bool:
        """Whether the model finds one of the scenario's anomalies in this schedule's history."""
        history = self.history(setup, schedule)
        if history is None:
            return False
        return any(a.kind in scenario.kinds for a in check(history, scenario.order_for(setup)))

    def predicts_failure(self, planned: Planned) -> bool:
        scenario = planned.scenario
        return any(self.breaks(planned.setup, scenario, s) for s in scenario.schedules_on(planned.setup))

    def ordered(self, setup: Any, scenario: Explored) -> tuple[HeldSchedule, ...]:
        """The scenario's schedules, those the model predicts to break the rule first (else as listed)."""
        return tuple(sorted(scenario.schedules_on(setup), key=lambda s: not self.breaks(setup, scenario, s)))

    def class_of(self, setup: Any, schedule: HeldSchedule) -> Hashable:
        """The model's history; a pair the model refuses is a class of its own (nothing is known of it)."""
        history = self.history(setup, schedule)
        return history if history is not None else ("refused by the model", setup, schedule)

    def work(self, planned: Iterable[Planned]) -> list[tuple[Any, HeldSchedule]]:
        """Every (configuration, schedule) the planned checks need, in the order they need them."""
        return [(p.setup, s) for p in planned for s in self.ordered(p.setup, p.scenario)]


def classes(plan: ModelPlan, work: Iterable[tuple[Any, HeldSchedule]]) -> int:
    """How many engine runs the work needs with one run per class."""
    return len({plan.class_of(setup, schedule) for setup, schedule in work})
