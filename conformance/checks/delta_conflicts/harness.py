"""Runs held-commit schedules on the Delta engine under test (``schedules.held_run``, shared with
the Iceberg harness), and judges each history with the history checker against the order the
table's isolation level promises. It never states an expected outcome.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from conformance.checks.delta_conflicts.scenarios import Scenario, serial_order
from conformance.contract.delta_engine import DeltaEngine, DeltaSetup, NotSupported
from conformance.history import Anomaly, History, check
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import Violation, not_applicable
from conformance.schedules.enumerate import HeldSchedule, publication_variants
from conformance.schedules.held_run import run_held, schedule_notes

__all__ = ["Finding", "findings", "first_finding", "record", "run_check", "run_held"]


@dataclass(frozen=True)
class Finding:
    anomaly: Anomaly
    setup: DeltaSetup
    schedule: HeldSchedule
    history: History


def schedules_for(setup: DeltaSetup, schedules: tuple[HeldSchedule, ...]) -> Iterator[HeldSchedule]:
    """On a catalog-managed table each schedule runs with both publication lags, unless it says
    itself when commits are published."""
    for schedule in schedules:
        if setup.catalog_managed and not schedule.publishes():
            yield from publication_variants(schedule)
        else:
            yield schedule


def findings(engine: DeltaEngine, table: str, setup: DeltaSetup, scenario: Scenario) -> Iterator[Finding]:
    for n, schedule in enumerate(schedules_for(setup, scenario.schedules)):
        history = run_held(engine, f"{table}_{n}", setup, schedule)
        for anomaly in check(history, serial_order(setup)):
            if anomaly.kind in scenario.kinds:
                yield Finding(anomaly, setup, schedule, history)


def first_finding(engine: DeltaEngine, table: str, setup: DeltaSetup, scenario: Scenario) -> Finding | None:
    return next(findings(engine, table, setup, scenario), None)


def record(transcript: Transcript, finding: Finding) -> None:
    """What a reproducer needs to see the failure again."""
    transcript.notes["schedule"] = schedule_notes(finding.anomaly, finding.setup, finding.history)


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
