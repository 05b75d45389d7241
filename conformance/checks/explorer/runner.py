"""Where the checks' held schedules run: on the engine under test, once per class, ahead.

Without a model plan (a target that names no preset: the reference, the faulty variants, a second
writer the model does not describe) every check runs each of its schedules itself, on a table of
its own, in its own thread: as simple as it reads.

With a plan (``plan.py``), the runner starts the engine runs ahead of the checks, in the planned
order, ``parallel`` at a time on separate tables of the one engine, one run per class of
equivalent (configuration, schedule) pairs; a check waits for the runs it needs and is judged on
their histories. With ``parallel=1`` every call into the engine comes from the runner's one
thread, in order (what the Delta engine contract promises its engines). The Allure steps of a run
are written by the check that reads it (Allure follows the check's thread).

An engine may refuse a configuration (``UnsupportedSetup``, from ``create_table``: delta-spark's
WriteSerializable tables, delta-rs's deletion vectors) or only an operation of a schedule (a plain
``NotSupported``: Kernel's public API writes no DELETE), which says nothing of the configuration.
The model knows nothing of either, so a class could join a refused configuration with an accepted
one. The runner therefore gives every configuration a run of its own first (it learns whether the
engine writes it), answers later asks on a refused configuration with the refusal, and reruns on
the asker's own configuration a class whose member was refused.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from conformance.checks.explorer.plan import Explored, ModelPlan
from conformance.history import History
from conformance.schedules.enumerate import HeldSchedule
from conformance.schedules.held_run import Abilities, HeldEngine, UnsupportedSetup, report_steps, run_held


@dataclass(frozen=True)
class Ran:
    """A schedule's history as the engine produced it, and on which configuration and table it ran
    (another member of the class than the one asked for, when the model proved them equivalent)."""

    history: History
    setup: Any
    table: str


class ScheduleRunner:
    def __init__(
        self,
        engine: HeldEngine,
        plan: ModelPlan | None = None,
        parallel: int = 1,
        budget: Callable[[Explored], Explored] | None = None,
    ) -> None:
        self.engine = engine
        self._abilities = Abilities.of(engine)
        self.plan = plan
        # the scenario as the run's budget runs it (Iceberg's core budget: its leading schedules only)
        self.budget: Callable[[Explored], Explored] = budget or (lambda scenario: scenario)
        self._pool = ThreadPoolExecutor(max(parallel, 1), thread_name_prefix="held-schedule") if plan else None
        self._runs: dict[Hashable, Future[Ran]] = {}
        self._own: dict[Any, Future[Ran]] = {}  # per configuration, its first run, on itself
        self._lock = threading.RLock()
        self._tables = 0
        self.asked = 0  # schedules the checks asked for (more than ``started`` when runs were shared)
        self.ran = 0  # runs that reached the engine (started ones, less the dropped and the refused)

    def schedules(self, setup: Any, scenario: Explored) -> tuple[HeldSchedule, ...]:
        """The scenario's schedules in the order a check should run them."""
        scenario = self.budget(scenario)
        return scenario.schedules_on(setup) if self.plan is None else self.plan.ordered(setup, scenario)

    def prefetch(self, work: Iterable[tuple[Any, HeldSchedule]]) -> None:
        """Start the engine runs of ``work`` in this order (one per class; the pool runs them)."""
        for setup, schedule in work:
            self._submit(setup, schedule)

    def run(self, table: str, setup: Any, schedule: HeldSchedule) -> Ran:
        """The engine's history of ``schedule`` on ``setup`` (on ``table``, when nothing is planned)."""
        self.asked += 1
        if self.plan is None:
            return Ran(run_held(self.engine, table, setup, schedule, abilities=self._abilities), setup, table)
        future = self._submit(setup, schedule)
        refused = self._own[setup].exception()  # waits for the configuration's first run
        if isinstance(refused, UnsupportedSetup):
            raise refused
        try:
            ran = future.result()
        except UnsupportedSetup:
            # The class's member ran on a configuration the engine refuses; this one it accepts.
            ran = self._start(setup, schedule).result()
        report_steps(ran.table, ran.history)
        return ran

    def _submit(self, setup: Any, schedule: HeldSchedule) -> Future[Ran]:
        assert self.plan is not None
        key = self.plan.class_of(setup, schedule)
        with self._lock:
            first = self._own.get(setup)
            if first is None:
                future = self._own[setup] = self._start(setup, schedule)
                self._runs.setdefault(key, future)
                return future
            if first.done() and isinstance(first.exception(), UnsupportedSetup):
                return first
            if key not in self._runs or self._runs[key].cancelled():
                self._runs[key] = self._start(setup, schedule)
            return self._runs[key]

    def skip(self, setup: Any, scenario: Explored) -> None:
        """A check has its verdict: its runs not started yet are dropped (a check asking for one of
        them later starts it again), so that the runs of the checks after it come sooner."""
        if self.plan is None:
            return
        with self._lock:
            firsts = set(self._own.values())
            for schedule in scenario.schedules_on(setup):
                future = self._runs.get(self.plan.class_of(setup, schedule))
                if future is not None and future not in firsts:
                    future.cancel()  # a no-op for a run under way or done

    def _start(self, setup: Any, schedule: HeldSchedule) -> Future[Ran]:
        assert self._pool is not None
        with self._lock:  # reentrant: ``_submit`` holds it already
            table = f"run_{self._tables:05d}"  # the same name for the same run in every run of lakecert
            self._tables += 1
        return self._pool.submit(self._run_held, table, setup, schedule)

    def _run_held(self, table: str, setup: Any, schedule: HeldSchedule) -> Ran:
        first = self._own.get(setup)
        if first is not None and first.done() and not first.cancelled():
            refused = first.exception()
            if isinstance(refused, UnsupportedSetup):
                # The engine refused this configuration in its first run: no need to ask it again.
                raise refused
        with self._lock:
            self.ran += 1
        history = run_held(self.engine, table, setup, schedule, report=False, abilities=self._abilities)
        return Ran(history, setup, table)

    @property
    def started(self) -> int:
        """Engine runs started (classes, and each configuration's own first run)."""
        return self._tables

    def close(self) -> None:
        """Drop the runs no check waits for any more (a stopped run), finish those under way:
        each releases its own held commits, so they end in a schedule's time, where closing the
        engine under them would leave commits parked at the catalog until their hold timeout."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
