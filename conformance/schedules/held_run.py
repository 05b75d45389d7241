"""Run one held schedule on an engine of either format and record what it did as a ``History``.

The Iceberg and Delta harnesses share it: create the table, begin and release the operations in the
schedule's order, read every version since the set-up, and put each step (with the writer's
outcome) into the Allure report. It never states an expected outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

import allure

from conformance.contract.iceberg import DeleteFileAudit, HeldCommit, NotSupported, Operation, TableRead
from conformance.history import Anomaly, History, OpRecord, ReadRecord, ScheduleStep
from conformance.schedules.enumerate import HeldSchedule


class HeldEngine(Protocol):
    """What both engine contracts (Iceberg's and Delta's) offer the harness."""

    def create_table(self, name: str, setup: Any) -> TableRead: ...

    def begin(self, table: str, writer: int, op: Operation) -> HeldCommit: ...

    def read(self, table: str, version: int | None = None) -> TableRead: ...


@runtime_checkable
class PublishesCommit(Protocol):
    """Optional for a held commit on a catalog-managed table: publish its ratified commit (and
    every earlier one) into ``_delta_log``; the versions it published, none when aborted."""

    def publish(self) -> list[int]: ...


@runtime_checkable
class ReadsVersions(Protocol):
    """Optional for an engine: the latest version without reading it, and several versions read
    at once (for Spark, one query instead of one per version)."""

    def current_version(self, table: str) -> int: ...

    def read_versions(self, table: str, versions: Sequence[int]) -> list[TableRead]: ...


@runtime_checkable
class RefusesOperations(Protocol):
    """Optional for an engine: why it cannot run ``op`` at all (None: it can), asked before the
    table is created, so a schedule it cannot run costs nothing."""

    def refuses(self, op: Operation) -> str | None: ...


@dataclass(frozen=True)
class Abilities:
    """Which optional protocols an engine implements, asked once per engine: a runtime protocol
    check costs ~10 µs on Python 3.11, and three per schedule were ~4 % of a default run's CPU."""

    refuses: bool
    reads_versions: bool
    audits_deletes: bool

    @classmethod
    def of(cls, engine: object) -> Abilities:
        return cls(
            isinstance(engine, RefusesOperations),
            isinstance(engine, ReadsVersions),
            isinstance(engine, DeleteFileAudit),
        )


class UnsupportedSetup(NotSupported):
    """The engine cannot create the schedule's table: no schedule on that configuration can run."""


class Setup(Protocol):
    def describe(self) -> str: ...


def run_held(
    engine: HeldEngine,
    table: str,
    setup: Setup,
    schedule: HeldSchedule,
    *,
    report: bool = True,
    abilities: Abilities | None = None,
) -> History:
    """Create ``table``, run ``schedule`` on it, then read every version since the set-up.

    ``report=False`` leaves the Allure steps to the caller (``report_steps``): a run in another
    thread than the check's, or the model's prediction, which is no step of any check.
    ``abilities``: the engine's, when the caller runs many schedules on it (else asked here).

    ``NotSupported`` (from ``refuses``, ``create_table`` or ``begin``) means the engine cannot run
    this schedule: commits already held are released first, so nothing stays parked."""
    can = abilities or Abilities.of(engine)
    if can.refuses:
        for _, op in schedule.ops:
            if (reason := cast(RefusesOperations, engine).refuses(op)) is not None:
                raise NotSupported(reason)
    try:
        initial = engine.create_table(table, setup)
    except UnsupportedSetup:
        raise
    except NotSupported as e:
        raise UnsupportedSetup(str(e)) from e
    steps = [ScheduleStep(f"set-up: {setup.describe()}; v{initial.version} holds {list(initial.rows)}")]
    held: dict[int, HeldCommit] = {}
    records: dict[int, OpRecord] = {}
    for (what, i), text in zip(schedule.events, schedule.describe(), strict=True):
        writer, op = schedule.ops[i]
        if what == "begin":
            try:
                held[i] = engine.begin(table, writer, op)
            except NotSupported:
                for j in held.keys() - records.keys():
                    held[j].release()  # the table is dropped with the schedule; no writer stays parked
                raise
            steps.append(ScheduleStep(f"{text} (starting snapshot v{held[i].start_version})", f"T{i}"))
            continue
        if what == "publish":
            steps.append(ScheduleStep(f"{text}: {_published(held[i])}", f"T{i}"))
            continue
        result = held[i].release()
        version = result.version if result.committed else None
        records[i] = OpRecord(f"T{i}", op.kind, op.id, op.values, held[i].start_version, version, writer, op.where)
        outcome = f"COMMITTED v{version}" if result.committed else f"ABORTED ({result.reason or 'conflict'})"
        steps.append(ScheduleStep(f"{text}: {outcome}", f"T{i}"))
    if can.reads_versions:
        versions = cast(ReadsVersions, engine)
        latest = versions.current_version(table)
        got = versions.read_versions(table, range(initial.version, latest + 1))
    else:
        latest = engine.read(table).version
        got = [engine.read(table, v) for v in range(initial.version, latest + 1)]
    audit = cast(DeleteFileAudit, engine).dangling_deletes if can.audits_deletes else None
    reads = tuple(ReadRecord(r.version, r.rows, audit(table, r.version) if audit else ()) for r in got)
    steps.append(ScheduleStep(f"read v{initial.version}..v{latest}"))
    ops = tuple(records[i] for i in sorted(records))
    history = History(initial.version, initial.rows, ops, reads, tuple(steps))
    if report:
        report_steps(table, history)
    return history


def _published(commit: HeldCommit) -> str:
    if not isinstance(commit, PublishesCommit):
        return "the engine publishes as it commits"
    done = commit.publish()
    if not done:
        return "nothing to publish"
    return f"published v{done[0]}" + (f"..v{done[-1]}" if len(done) > 1 else "")


class ScheduleLog:
    """The schedules the running check ran, as the text of one Allure attachment at its end (the
    plugin opens the log before a check's body and attaches what it holds after; outside a check
    nothing is kept). A check runs hundreds of schedules: one Allure step per schedule and per step
    of each was about a fifth of a default run's CPU (docs/benchmarks.md)."""

    def __init__(self) -> None:
        self._runs: list[str] | None = None

    def open(self) -> None:
        self._runs = []

    def add(self, table: str, history: History) -> None:
        if self._runs is not None:
            self._runs.append("\n".join([f"schedule on {table}", *(f"  {step.text}" for step in history.schedule)]))

    def close(self) -> list[str]:
        """The texts of the schedules run since ``open``, in order; the log is closed."""
        runs, self._runs = self._runs or [], None
        return runs


SCHEDULES = ScheduleLog()


def report_steps(table: str, history: History) -> None:
    """In the report for every check, passing ones too: what each writer did (e.g. why one aborted)."""
    SCHEDULES.add(table, history)


def report_finding_steps(table: str, history: History) -> None:
    """The schedule of a failure as Allure steps of its check, one per step (the others are in the log)."""
    with allure.step(f"schedule on {table}"):
        for step in history.schedule:
            with allure.step(step.text):
                pass


def schedule_notes(anomaly: Anomaly, setup: Setup, history: History) -> dict[str, object]:
    """What a reproducer needs to see the failure again: the table, the steps, every operation with
    its start and commit version (and the non-key predicate of one that has it), every version's
    rows and the delete files that dangle in it."""
    dangling = {str(r.version): list(r.dangling) for r in history.reads if r.dangling}
    notes: dict[str, object] = {
        "table": setup.describe(),
        "steps": list(anomaly.schedule),
        "anomaly": anomaly.kind.value,
        "operations": [
            {
                "tx": o.name,
                "op": o.kind.value,
                "id": o.id,
                **({"where": o.predicate} if o.where is not None else {}),
                "values": list(o.values),
                "start": o.start_version,
                "commit": o.commit_version,
            }
            for o in history.ops
        ],
        "versions": {str(r.version): [list(row) for row in r.rows] for r in history.reads},
    }
    if dangling:
        notes["dangling"] = dangling
    return notes
