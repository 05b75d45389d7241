"""Runs held-commit schedules on the engine under test, records the history, judges it.

The harness never states an expected outcome: it records what the engine did (who committed at
which version, what every version holds) and asks the history checker whether that is allowed.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from dataclasses import dataclass

from conformance.checks.iceberg.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import Scenario
from conformance.contract.iceberg import DeleteFileAudit, IcebergEngine, NotSupported, TableSetup
from conformance.history import Anomaly, History, check
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import not_applicable
from conformance.schedules.enumerate import HeldSchedule
from conformance.schedules.held_run import run_held, schedule_notes

__all__ = ["Finding", "findings", "first_finding", "record", "run_check", "run_held"]


@dataclass(frozen=True)
class Finding:
    """An anomaly the checker found, with what produced it: ``ran_as`` is the configuration the
    engine ran (the model proved it equivalent to ``setup`` for this schedule), when it differs."""

    anomaly: Anomaly
    setup: TableSetup
    schedule: HeldSchedule
    history: History
    ran_as: TableSetup | None = None


def findings(
    where: ScheduleRunner | IcebergEngine, table: str, setup: TableSetup, scenario: Scenario
) -> Iterator[Finding]:
    """Run every schedule of ``scenario`` (each on a fresh table) on the runner, or directly on an
    engine; yield the anomalies it counts."""
    runner = where if isinstance(where, ScheduleRunner) else ScheduleRunner(where)
    for n, schedule in enumerate(runner.schedules(setup, scenario)):
        ran = runner.run(f"{table}_{n}", setup, schedule)
        for anomaly in check(ran.history, scenario.order):
            if anomaly.kind in scenario.kinds:
                yield Finding(anomaly, setup, schedule, ran.history, ran.setup if ran.setup != setup else None)


def first_finding(
    where: ScheduleRunner | IcebergEngine, table: str, setup: TableSetup, scenario: Scenario
) -> Finding | None:
    return next(findings(where, table, setup, scenario), None)


def record(transcript: Transcript, finding: Finding) -> None:
    """What the reproducer needs to see the failure again."""
    notes = schedule_notes(finding.anomaly, finding.ran_as or finding.setup, finding.history)
    if finding.ran_as is not None:
        notes["judged_for"] = finding.setup.describe()
        notes["why_another_table"] = "the model gives this schedule the same history on both configurations"
    transcript.notes["schedule"] = notes


def run_check(
    runner: ScheduleRunner, table: str, setup: TableSetup, scenario: Scenario, transcript: Transcript
) -> None:
    """The body of a check: NOT_APPLICABLE when the engine refuses the table configuration,
    a failure of the check's requirement when the checker finds one of the scenario's anomalies."""
    if scenario.audits_files and not isinstance(runner.engine, DeleteFileAudit):
        not_applicable("the engine cannot list its delete files' targets (DeleteFileAudit)")
    try:
        finding = first_finding(runner, table, setup, scenario)
    except NotSupported as e:
        # create_table refuses before writing anything: there is no table state to verify
        not_applicable(f"the engine does not write tables with {setup.describe()}: {e}")
    if finding is not None:
        record(transcript, finding)
        raise AssertionError(finding.anomaly.report())


def scenarios_by_requirement() -> list[tuple[str, Scenario]]:
    """Every scenario the Iceberg checks run, with the requirement its check module is marked with.

    For lakecert's own tests (each fault caught by what it breaks) without writing the IDs again."""
    import conformance.checks.iceberg as package

    found: list[tuple[str, Scenario]] = []
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("test_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        marks = list(getattr(module, "pytestmark", [])) + [
            m for fn in vars(module).values() if callable(fn) for m in getattr(fn, "pytestmark", [])
        ]
        (rid,) = {a for m in marks if m.name == "req" for a in m.args}  # one rule per Iceberg check module
        found += [(rid, v) for v in vars(module).values() if isinstance(v, Scenario)]
    return found
