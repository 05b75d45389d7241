"""The Iceberg checks' harness: the explorer's (``conformance/checks/explorer/harness.py``: run the
held schedules, record the history, judge it; never an expected outcome), the delete-file audit
some Iceberg checks need, and the scenarios of the check modules by requirement."""

from __future__ import annotations

import importlib
import pkgutil

from conformance.checks.explorer import harness
from conformance.checks.explorer.harness import Finding, findings, first_finding, record
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import Scenario
from conformance.contract.iceberg import DeleteFileAudit, TableSetup
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import not_applicable
from conformance.schedules.held_run import run_held

__all__ = ["Finding", "findings", "first_finding", "record", "run_check", "run_held", "scenarios_by_requirement"]


def run_check(
    runner: ScheduleRunner, table: str, setup: TableSetup, scenario: Scenario, transcript: Transcript
) -> None:
    """The body of a check: NOT_APPLICABLE when the engine refuses the table configuration or
    cannot audit its delete files for a check that needs it, a failure of the check's requirement
    when the checker finds one of the scenario's anomalies."""
    if scenario.audits_files and not isinstance(runner.engine, DeleteFileAudit):
        not_applicable("the engine cannot list its delete files' targets (DeleteFileAudit)")
    harness.run_check(runner, table, setup, scenario, transcript)


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
