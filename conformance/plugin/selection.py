"""Which checks a run collects: those whose ``req`` marks name a requirement of a selected profile."""

from __future__ import annotations

import pytest

from conformance.report.outcomes import req_ids
from conformance.requirements import load_all
from conformance.run_context import RunContext


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "req(*ids): requirement IDs a check covers")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    ctx = RunContext.of(config)
    known = load_all()
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        ids = req_ids(item)
        unknown = [i for i in ids if i not in known]
        if not ids or unknown:
            raise pytest.UsageError(f"{item.nodeid}: every check needs known @req marks (unknown: {unknown})")
        wanted = any(known[i].profile in ctx.profiles for i in ids)
        if ctx.requirements is not None:  # --requirement: a check of another rule of the profile is not run
            wanted = wanted and not ctx.requirements.isdisjoint(ids)
        (keep if wanted else drop).append(item)
        # Shown by Allure as the check's description.
        text = "\n\n".join(f"{rid} ({known[rid].level}, {known[rid].section}): {known[rid].statement}" for rid in ids)
        item.add_marker(pytest.mark.allure_description(text))
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    # After every conftest narrowed the selection: the number of checks a complete run reports.
    RunContext.of(session.config).collected = len(session.items)
