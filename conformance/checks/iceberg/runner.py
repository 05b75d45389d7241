"""The Iceberg checks' runner is the explorer's (``conformance/checks/explorer/runner.py``)."""

from __future__ import annotations

from conformance.checks.explorer.runner import Ran, ScheduleRunner

__all__ = ["Ran", "ScheduleRunner"]
