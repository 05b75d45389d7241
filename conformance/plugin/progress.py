"""Progress for long checks: pytest's dots say nothing while one check runs for minutes (generated
schedules, races, Spark). A check still running after ``FIRST_S`` seconds is named on stderr, then
again every ``EVERY_S`` seconds, so a slow run is told apart from a stuck one.

The line goes to a duplicate of file descriptor 2 taken while pytest does not capture it, never to
``sys.stderr``: a check runs with pytest's output capture on, which points descriptor 2 at a file
that becomes the check's "Captured stderr" section (shown by no lakecert output), so until issue 30
every announcement was swallowed, on a terminal and in a CI log alike.

One watcher thread serves the whole run: starting and joining a thread per check cost more than
many checks themselves on a loaded machine (docs/benchmarks.md, the default run)."""

from __future__ import annotations

import contextlib
import os
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

    def __init__(
        self, nodeid: str | None, stream: TextIO, first_s: float | None = None, every_s: float | None = None
    ) -> None:
        self._stream = stream
        # Read when the ticker starts, not when the module is imported, so that lakecert's tests can
        # lower the module's thresholds for a run.
        self._first_s = FIRST_S if first_s is None else first_s
        self._every_s = EVERY_S if every_s is None else every_s
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
                with contextlib.suppress(OSError, ValueError):  # a closed or full stderr stops no check
                    print(f"\nlakecert: still running {nodeid} ({now - began:.0f} s)", file=self._stream, flush=True)
                self._due = now + self._every_s

    def stop(self) -> None:
        with self._changed:
            self._closed, self._current = True, None
            self._changed.notify()
        self._thread.join(timeout=5)


_ticker: Ticker | None = None
_stream: TextIO | None = None  # the run's own handle on stderr, closed at the session's end


def _uncaptured_stderr() -> TextIO:
    """A stream on what descriptor 2 is now. Called between checks, when pytest's capture is
    suspended, so the duplicate keeps the real stderr (terminal, pipe or file) while a check runs."""
    global _stream
    try:
        fd = os.dup(2)
    except OSError:  # no descriptor 2 at all: nowhere better to write
        return sys.stderr
    _stream = os.fdopen(fd, "w", encoding=getattr(sys.stderr, "encoding", None) or "utf-8", errors="replace")
    return _stream


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    global _ticker
    if _ticker is None:
        _ticker = Ticker(None, _uncaptured_stderr())
    _ticker.begin(nodeid)


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    if _ticker is not None:
        _ticker.end()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    global _ticker, _stream
    if _ticker is not None:
        _ticker.stop()
        _ticker = None
    if _stream is not None:
        with contextlib.suppress(OSError):
            _stream.close()
        _stream = None
