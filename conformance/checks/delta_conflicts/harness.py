"""Runs held-commit schedules on the Delta engine under test, records the history, judges it with
the history checker against the order the table's isolation level promises.

As for Iceberg (conformance/checks/iceberg/harness.py), the harness never states an expected
outcome: it records who committed at which version and what every version holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import allure

from conformance.checks.delta_conflicts.scenarios import Scenario, serial_order
from conformance.engines.delta_contract import DeltaEngine, DeltaSetup, HeldCommit, NotSupported
from conformance.history import Anomaly, History, OpRecord, ReadRecord, ScheduleStep, check
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import Violation, not_applicable
from conformance.schedules.enumerate import HeldSchedule


@dataclass(frozen=True)
class Finding:
    anomaly: Anomaly
    setup: DeltaSetup
    schedule: HeldSchedule
    history: History


def run_held(engine: DeltaEngine, table: str, setup: DeltaSetup, schedule: HeldSchedule) -> History:
    """Create ``table``, run ``schedule`` on it, then read every version since the set-up."""
    initial = engine.create_table(table, setup)
    steps = [ScheduleStep(f"set-up: {setup.describe()}; v{initial.version} holds {list(initial.rows)}")]
    held: dict[int, HeldCommit] = {}
    records: dict[int, OpRecord] = {}
    for (what, i), text in zip(schedule.events, schedule.describe(), strict=True):
        writer, op = schedule.ops[i]
        if what == "begin":
            held[i] = engine.begin(table, writer, op)
            steps.append(ScheduleStep(f"{text} (snapshot v{held[i].start_version})", f"T{i}"))
            continue
        result = held[i].release()
        version = result.version if result.committed else None
        records[i] = OpRecord(f"T{i}", op.kind, op.id, op.values, held[i].start_version, version, writer)
        outcome = f"COMMITTED v{version}" if result.committed else f"ABORTED ({result.reason or 'conflict'})"
        steps.append(ScheduleStep(f"{text}: {outcome}", f"T{i}"))
    latest = engine.read(table).version
    reads = tuple(ReadRecord(v, engine.read(table, v).rows) for v in range(initial.version, latest + 1))
    steps.append(ScheduleStep(f"read v{initial.version}..v{latest}"))
    with allure.step(f"schedule on {table} ({setup.describe()})"):
        for step in steps:
            with allure.step(step.text):
                pass
    return History(initial.version, initial.rows, tuple(records[i] for i in sorted(records)), reads, tuple(steps))


def findings(engine: DeltaEngine, table: str, setup: DeltaSetup, scenario: Scenario) -> Iterator[Finding]:
    for n, schedule in enumerate(scenario.schedules):
        history = run_held(engine, f"{table}_{n}", setup, schedule)
        for anomaly in check(history, serial_order(setup)):
            if anomaly.kind in scenario.kinds:
                yield Finding(anomaly, setup, schedule, history)


def first_finding(engine: DeltaEngine, table: str, setup: DeltaSetup, scenario: Scenario) -> Finding | None:
    return next(findings(engine, table, setup, scenario), None)


def record(transcript: Transcript, finding: Finding) -> None:
    """What a reproducer needs: the table, the schedule, every operation and version read."""
    transcript.notes["schedule"] = {
        "table": finding.setup.describe(),
        "steps": list(finding.anomaly.schedule),
        "anomaly": finding.anomaly.kind.value,
        "operations": [
            {
                "tx": o.name,
                "op": o.kind.value,
                "id": o.id,
                "values": list(o.values),
                "start": o.start_version,
                "commit": o.commit_version,
            }
            for o in finding.history.ops
        ],
        "versions": {str(r.version): [list(row) for row in r.rows] for r in finding.history.reads},
    }


def run_check(engine: DeltaEngine, table: str, setup: DeltaSetup, scenario: Scenario, transcript: Transcript) -> None:
    """NOT_APPLICABLE when the engine refuses the table configuration; a ``Violation`` of the
    scenario's requirement when the checker finds one of its anomalies."""
    try:
        finding = first_finding(engine, table, setup, scenario)
    except NotSupported as e:
        not_applicable(f"the engine does not write tables with {setup.describe()}: {e}")
    if finding is not None:
        record(transcript, finding)
        raise Violation(scenario.requirement, finding.anomaly.report())
