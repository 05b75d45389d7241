"""Progress for long checks: pytest's dots say nothing while one check runs for minutes (generated
schedules, races, Spark). A check still running after ``FIRST_S`` seconds is named on stderr, then
again every ``EVERY_S`` seconds, so a slow run is told apart from a stuck one.

One watcher thread serves the whole run: starting and joining a thread per check cost more than
many checks themselves on a loaded machine (docs/benchmarks.md, the default run)."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

import pytest

FIRST_S = 15.0
EVERY_S = 60.0


class Ticker:
    """Names the check it watches at growing intervals until it ends (``end``, or ``begin`` of the
    next one); a daemon thread, stopped by ``stop``."""

    def __init__(self, nodeid: str | None, stream: TextIO, first_s: float = FIRST_S, every_s: float = EVERY_S) -> None:
        self._stream = stream
        self._first_s, self._every_s = first_s, every_s
        self._changed = threading.Condition()
        self._current: tuple[str, float] | None = None  # the check, and when it began
        self._due = 0.0  # when to name it next
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="lakecert-progress", daemon=True)
        self._thread.start()
        if nodeid is not None:
            self.begin(nodeid)

    def begin(self, nodeid: str) -> None:
        with self._changed:
            now = time.monotonic()
            self._current, self._due = (nodeid, now), now + self._first_s
            self._changed.notify()

    def end(self) -> None:
        with self._changed:
            self._current = None
            self._changed.notify()

    def _run(self) -> None:
        with self._changed:
            while not self._closed:
                if self._current is None:
                    self._changed.wait()
                    continue
                now = time.monotonic()
                if now < self._due:
                    self._changed.wait(self._due - now)
                    continue
                nodeid, began = self._current
                print(f"\nlakecert: still running {nodeid} ({now - began:.0f} s)", file=self._stream, flush=True)
                self._due = now + self._every_s

    def stop(self) -> None:
        with self._changed:
            self._closed, self._current = True, None
            self._changed.notify()
        self._thread.join(timeout=5)


_ticker: Ticker | None = None


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    global _ticker
    if _ticker is None:
        _ticker = Ticker(None, sys.stderr)
    _ticker.begin(nodeid)


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    if _ticker is not None:
        _ticker.end()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    global _ticker
    if _ticker is not None:
        _ticker.stop()
        _ticker = None
