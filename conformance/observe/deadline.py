"""Hang guards: a deadline on a block of code, nestable, enforced with the process's real-time timer.

When the earliest open deadline passes, the code running in the main thread is interrupted with
``DeadlineExceeded``, which carries the stack of the stuck call, so the check ends in ERROR instead
of hanging the run. A blocking socket read, a lock wait or a sleep are all interrupted (POSIX
signals). Outside the main thread, or where SIGALRM does not exist, a deadline only applies to the
code that checks it itself (socket timeouts), so nothing here is armed.
"""

from __future__ import annotations

import itertools
import signal
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class DeadlineExceeded(BaseException):
    """``what`` took longer than ``seconds``; ``stack`` is where it was stuck.

    A ``BaseException``, like ``KeyboardInterrupt``: code that catches ``Exception`` (hypothesis
    treating it as a failing example and shrinking on, a retry loop, an adapter's error mapping)
    must not swallow it and go on waiting."""

    def __init__(self, what: str, seconds: float, stack: str) -> None:
        super().__init__(f"no answer within {seconds:g} s from {what}")
        self.what = what
        self.seconds = seconds
        self.stack = stack


_open: dict[int, tuple[float, str, float]] = {}  # id -> (expiry on the monotonic clock, what, seconds)
_ids = itertools.count()


def _usable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _arm() -> None:
    if not _open:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return
    expiry = min(e for e, _, _ in _open.values())
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(expiry - time.monotonic(), 0.001))


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    if not _open:
        return
    expiry, what, seconds = min(_open.values())
    if expiry > time.monotonic() + 0.005:  # woken early (a deadline was re-armed): wait on
        _arm()
        return
    for key, value in list(_open.items()):
        if value[0] <= expiry:
            del _open[key]  # fires once; the outer deadlines stay armed below
    stack = "".join(traceback.format_stack(frame)) if frame is not None else ""
    _arm()
    raise DeadlineExceeded(what, seconds, stack)


@contextmanager
def deadline(seconds: float | None, what: str) -> Iterator[None]:
    """Run the block with at most ``seconds`` of wall-clock time (``None``: no limit)."""
    if seconds is None or not _usable():
        yield
        return
    key = next(_ids)
    _open[key] = (time.monotonic() + seconds, what, seconds)
    _arm()
    try:
        yield
    finally:
        _open.pop(key, None)
        _arm()
