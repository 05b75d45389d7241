"""Where the Iceberg checks' held schedules run: on the engine under test, once per class, ahead.

Without a model plan (a target that names no preset: the reference, the faulty variants, a second
writer the model does not describe) every check runs each of its schedules itself, on a table of
its own, in its own thread: as simple as it reads.

With a plan (``plan.py``), the runner starts the engine runs ahead of the checks, in the planned
order, ``parallel`` at a time on separate tables of the one engine, one run per class of
equivalent (configuration, schedule) pairs; a check waits for the runs it needs and is judged on
their histories. The Allure steps of a run are written by the check that reads it (Allure follows
the check's thread).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from conformance.checks.iceberg.plan import ModelPlan
from conformance.checks.iceberg.scenarios import Scenario, in_budget
from conformance.contract.iceberg import IcebergEngine, TableSetup
from conformance.history import History
from conformance.schedules.enumerate import HeldSchedule
from conformance.schedules.held_run import report_steps, run_held


@dataclass(frozen=True)
class Ran:
    """A schedule's history as the engine produced it, and on which configuration and table it ran
    (another member of the class than the one asked for, when the model proved them equivalent)."""

    history: History
    setup: TableSetup
    table: str


class ScheduleRunner:
    def __init__(
        self, engine: IcebergEngine, plan: ModelPlan | None = None, parallel: int = 1, core: bool = False
    ) -> None:
        self.engine = engine
        self.plan = plan
        self.core = core  # the core budget: each scenario's leading ``core`` schedules only
        self._pool = ThreadPoolExecutor(max(parallel, 1), thread_name_prefix="held-schedule") if plan else None
        self._runs: dict[Hashable, Future[Ran]] = {}
        self._lock = threading.Lock()
        self.asked = 0  # schedules the checks asked for (more than ``started`` when runs were shared)

    def schedules(self, setup: TableSetup, scenario: Scenario) -> tuple[HeldSchedule, ...]:
        """The scenario's schedules in the budget, in the order a check should run them."""
        scenario = in_budget(scenario, self.core)
        return scenario.schedules if self.plan is None else self.plan.ordered(setup, scenario)

    def prefetch(self, work: Iterable[tuple[TableSetup, HeldSchedule]]) -> None:
        """Start the engine runs of ``work`` in this order (one per class; the pool runs them)."""
        for setup, schedule in work:
            self._submit(setup, schedule)

    def run(self, table: str, setup: TableSetup, schedule: HeldSchedule) -> Ran:
        """The engine's history of ``schedule`` on ``setup`` (on ``table``, when nothing is planned)."""
        self.asked += 1
        if self.plan is None:
            return Ran(run_held(self.engine, table, setup, schedule), setup, table)
        ran = self._submit(setup, schedule).result()
        report_steps(ran.table, ran.history)
        return ran

    def _submit(self, setup: TableSetup, schedule: HeldSchedule) -> Future[Ran]:
        assert self.plan is not None and self._pool is not None
        key = self.plan.class_of(setup, schedule)
        with self._lock:
            if key in self._runs:
                return self._runs[key]
            table = f"run_{len(self._runs):05d}"  # the same name for the same class in every run
            future = self._pool.submit(self._run_held, table, setup, schedule)
            self._runs[key] = future
            return future

    def _run_held(self, table: str, setup: TableSetup, schedule: HeldSchedule) -> Ran:
        return Ran(run_held(self.engine, table, setup, schedule, report=False), setup, table)

    @property
    def started(self) -> int:
        """Engine runs started (classes)."""
        return len(self._runs)

    def close(self) -> None:
        """Drop the runs no check waits for any more (a stopped run), finish those under way:
        each releases its own held commits, so they end in a schedule's time, where closing the
        engine under them would leave commits parked at the catalog until their hold timeout."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
