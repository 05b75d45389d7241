"""The Delta checks' harness: the explorer's (``conformance/checks/explorer/harness.py``, shared with
the Iceberg checks): run the held schedules (``schedules.held_run``), judge each history with the
history checker against the order the table's isolation level promises, never an expected
outcome. A Delta check covers one requirement its scenario names (a ``Violation`` of it)."""

from __future__ import annotations

from conformance.checks.delta_conflicts.scenarios import Scenario, schedules_for
from conformance.checks.explorer import harness
from conformance.checks.explorer.harness import Finding, findings, first_finding, record
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.contract.delta_engine import DeltaSetup
from conformance.observe.transcript import Transcript
from conformance.schedules.held_run import run_held

__all__ = ["Finding", "findings", "first_finding", "record", "run_check", "run_held", "schedules_for"]


def run_check(
    runner: ScheduleRunner, table: str, setup: DeltaSetup, scenario: Scenario, transcript: Transcript
) -> None:
    """NOT_APPLICABLE when the engine refuses the table configuration; a ``Violation`` of the
    scenario's requirement when the checker finds one of its anomalies."""
    harness.run_check(runner, table, setup, scenario, transcript, scenario.requirement)
