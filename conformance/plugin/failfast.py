"""Fail-fast (``--fail-fast``, or ``fail_fast: true``): the run stops after the first check that
FAILs, with that check's reproducer written as usual. The run is then partial: results.json says
where it stopped (``run_info.stopped_at_first_fail``), no certificate is written, and the exit code
is 1 (a FAIL), not 2 (an unfinished run). A run in which nothing fails runs to its end."""

from __future__ import annotations

from collections.abc import Generator

import pytest

from conformance.plugin.outcomes import state_of
from conformance.report.outcomes import Outcome
from conformance.run_context import RunContext


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    yield
    ctx = RunContext.of(item.config)
    if ctx.config.settings.fail_fast and ctx.stopped_at is None and state_of(item).status is Outcome.FAIL:
        ctx.stopped_at = item.nodeid
        # shouldfail, not shouldstop: pytest ends the session as "tests failed", not "interrupted".
        item.session.shouldfail = f"fail-fast: stopped after {item.nodeid}"
