"""Progress for long checks: pytest's dots say nothing while one check runs for minutes (generated
schedules, races, Spark). A check still running after ``FIRST_S`` seconds is named on stderr, then
again every ``EVERY_S`` seconds, so a slow run is told apart from a stuck one."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

import pytest

FIRST_S = 15.0
EVERY_S = 60.0


class Ticker:
    """Names one running check at growing intervals until ``stop``; a daemon thread, never joined
    longer than it takes to notice the stop."""

    def __init__(self, nodeid: str, stream: TextIO, first_s: float = FIRST_S, every_s: float = EVERY_S) -> None:
        self._nodeid, self._stream = nodeid, stream
        self._first_s, self._every_s = first_s, every_s
        self._stopped = threading.Event()
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="lakecert-progress", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        wait = self._first_s
        while not self._stopped.wait(wait):
            elapsed = time.monotonic() - self._started
            print(f"\nlakecert: still running {self._nodeid} ({elapsed:.0f} s)", file=self._stream, flush=True)
            wait = self._every_s

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)


_current: Ticker | None = None


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    global _current
    if _current is not None:
        _current.stop()
    _current = Ticker(nodeid, sys.stderr)


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    global _current
    if _current is not None:
        _current.stop()
        _current = None


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    pytest_runtest_logfinish("", ("", None, ""))
