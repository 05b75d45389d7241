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
from conformance.schedules.held_run import UnsupportedSetup, run_held, schedule_notes

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


def findings(
    engine: DeltaEngine, table: str, setup: DeltaSetup, scenario: Scenario, skipped: list[str] | None = None
) -> Iterator[Finding]:
    """The scenario's anomalies, schedule by schedule. A schedule the engine cannot run (its table
    configuration or one of its operations is ``NotSupported``) is skipped, its reason appended to
    ``skipped``; when it skipped every schedule, ``NotSupported`` is raised with the first reason."""
    reasons = skipped if skipped is not None else []
    first: NotSupported | None = None
    ran = 0
    for n, schedule in enumerate(schedules_for(setup, scenario.schedules)):
        try:
            history = run_held(engine, f"{table}_{n}", setup, schedule)
        except UnsupportedSetup:
            raise  # the table configuration: the same for every schedule
        except NotSupported as e:
            first = first or e
            reasons.append(f"{' / '.join(op.describe() for _, op in schedule.ops)}: {e}")
            continue
        ran += 1
        for anomaly in check(history, serial_order(setup)):
            if anomaly.kind in scenario.kinds:
                yield Finding(anomaly, setup, schedule, history)
    if ran == 0 and first is not None:
        raise NotSupported(str(first))


def first_finding(
    engine: DeltaEngine, table: str, setup: DeltaSetup, scenario: Scenario, skipped: list[str] | None = None
) -> Finding | None:
    return next(findings(engine, table, setup, scenario, skipped), None)


def record(transcript: Transcript, finding: Finding) -> None:
    """What a reproducer needs to see the failure again."""
    transcript.notes["schedule"] = schedule_notes(finding.anomaly, finding.setup, finding.history)


def run_check(engine: DeltaEngine, table: str, setup: DeltaSetup, scenario: Scenario, transcript: Transcript) -> None:
    """NOT_APPLICABLE when the engine can run none of the scenario's schedules (the table
    configuration, or an operation it has no API for); a ``Violation`` of the scenario's requirement
    when the checker finds one of its anomalies. Schedules it skipped are listed in the transcript."""
    skipped: list[str] = []
    try:
        finding = first_finding(engine, table, setup, scenario, skipped)
    except NotSupported as e:
        not_applicable(f"the engine runs none of this check's schedules on tables with {setup.describe()}: {e}")
    finally:
        if skipped:
            transcript.notes["skipped_schedules"] = skipped
    if finding is not None:
        record(transcript, finding)
        raise Violation(scenario.requirement, finding.anomaly.report())
