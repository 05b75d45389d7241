"""Hang guards: every check has a whole-check deadline (``deadlines.check_s``) over its set-up, body
and teardown; calls into the target have their own (``deadlines.call_s``, in the recorders). On
expiry the phase raises ``DeadlineExceeded`` with the stuck stack, and the check is an ERROR."""

from __future__ import annotations

import time
from collections.abc import Generator

import pytest

from conformance.observe.deadline import deadline
from conformance.run_context import RunContext

EXPIRY_KEY = pytest.StashKey[float]()


def _guarded(item: pytest.Item, phase: str) -> Generator[None, None, None]:
    remaining = item.stash[EXPIRY_KEY] - time.monotonic() if EXPIRY_KEY in item.stash else None
    with deadline(max(remaining, 0.001) if remaining is not None else None, f"check {item.nodeid} ({phase})"):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    item.stash[EXPIRY_KEY] = time.monotonic() + RunContext.of(item.config).config.settings.deadlines.check_s
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    yield from _guarded(item, "set-up")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    yield from _guarded(item, "body")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    yield from _guarded(item, "teardown")
