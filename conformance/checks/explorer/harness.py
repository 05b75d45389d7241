"""Runs a check's held schedules (through the runner, or directly on an engine), records the
histories, judges them with the history checker.

The harness never states an expected outcome: it records what the engine did (who committed at
which version, what every version holds) and asks the history checker whether that is allowed,
against the serial order the scenario names for the table's configuration.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from conformance.checks.explorer.plan import Explored
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.contract.iceberg import NotSupported
from conformance.history import Anomaly, History, check
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import Violation, not_applicable
from conformance.schedules.enumerate import HeldSchedule
from conformance.schedules.held_run import HeldEngine, UnsupportedSetup, report_finding_steps, schedule_notes


@dataclass(frozen=True)
class Finding:
    """An anomaly the checker found, with what produced it: ``ran_as`` is the configuration the
    engine ran (the model proved it equivalent to ``setup`` for this schedule), when it differs."""

    anomaly: Anomaly
    setup: Any
    schedule: HeldSchedule
    history: History
    table: str  # where the engine ran it
    ran_as: Any | None = None


def findings(
    where: ScheduleRunner | HeldEngine,
    table: str,
    setup: Any,
    scenario: Explored,
    skipped: list[str] | None = None,
) -> Iterator[Finding]:
    """Run every schedule of ``scenario`` (each on a fresh table) on the runner, or directly on an
    engine; yield the anomalies it counts. A schedule with an operation the engine cannot run
    (``NotSupported`` from ``refuses`` or ``begin``) is skipped, its reason appended to ``skipped``;
    when every schedule was skipped, ``NotSupported`` is raised with the first reason. A refused
    table configuration (``UnsupportedSetup``) is the same for every schedule and ends the check."""
    runner = where if isinstance(where, ScheduleRunner) else ScheduleRunner(where)
    order = scenario.order_for(setup)
    reasons = skipped if skipped is not None else []
    first: NotSupported | None = None
    runs = 0
    for n, schedule in enumerate(runner.schedules(setup, scenario)):
        try:
            ran = runner.run(f"{table}_{n}", setup, schedule)
        except UnsupportedSetup:
            raise
        except NotSupported as e:
            first = first or e
            reasons.append(f"{' / '.join(op.describe() for _, op in schedule.ops)}: {e}")
            continue
        runs += 1
        for anomaly in check(ran.history, order):
            if anomaly.kind in scenario.kinds:
                yield Finding(
                    anomaly, setup, schedule, ran.history, ran.table, ran.setup if ran.setup != setup else None
                )
    if runs == 0 and first is not None:
        raise NotSupported(str(first))


def first_finding(
    where: ScheduleRunner | HeldEngine,
    table: str,
    setup: Any,
    scenario: Explored,
    skipped: list[str] | None = None,
) -> Finding | None:
    """The first anomaly the scenario counts; its other schedules then need no run."""
    runner = where if isinstance(where, ScheduleRunner) else ScheduleRunner(where)
    found = next(findings(runner, table, setup, scenario, skipped), None)
    if found is not None:
        runner.skip(setup, scenario)
    return found


def record(transcript: Transcript, finding: Finding) -> None:
    """What the reproducer needs to see the failure again, and the failing schedule's steps in the
    check's report."""
    report_finding_steps(finding.table, finding.history)
    notes = schedule_notes(finding.anomaly, finding.ran_as or finding.setup, finding.history)
    if finding.ran_as is not None:
        notes["judged_for"] = finding.setup.describe()
        notes["why_another_table"] = "the model gives this schedule the same history on both configurations"
    transcript.notes["schedule"] = notes


def run_check(
    runner: ScheduleRunner,
    table: str,
    setup: Any,
    scenario: Explored,
    transcript: Transcript,
    requirement: str | None = None,
) -> None:
    """The body of a check: NOT_APPLICABLE when the engine runs none of the scenario's schedules
    (it refuses the table configuration, or an operation in each), a failure when the checker finds
    one of the scenario's anomalies: of ``requirement`` when the check covers several (a
    ``Violation``), else of the rule its ``req`` mark names. Skipped schedules are listed in the
    transcript."""
    skipped: list[str] = []
    try:
        finding = first_finding(runner, table, setup, scenario, skipped)
    except UnsupportedSetup as e:
        # create_table refuses before writing anything: there is no table state to verify
        not_applicable(f"the engine does not write tables with {setup.describe()}: {e}")
    except NotSupported as e:
        not_applicable(f"the engine runs none of this check's schedules on tables with {setup.describe()}: {e}")
    finally:
        if skipped:
            transcript.notes["skipped_schedules"] = skipped
    if finding is None:
        return
    record(transcript, finding)
    if requirement is None:
        raise AssertionError(finding.anomaly.report())
    raise Violation(requirement, finding.anomaly.report())
