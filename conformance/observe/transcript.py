"""A per-check record of every call lakecert and the target made, in order.

It is the evidence checks judge (who ratified what, when a file appeared) and
the transcript attached to a failure's reproducer.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from conformance.observe.http_transcript import HttpLog


@dataclass(frozen=True)
class Event:
    seq: int
    actor: str  # "catalog", "storage", "client", "suite"
    op: str
    args: dict[str, Any]
    ok: bool
    result: Any = None
    error: str | None = None  # exception class name when not ok
    thread: str = field(default_factory=lambda: threading.current_thread().name)
    at: float = field(default_factory=time.time)


class Transcript:
    def __init__(self) -> None:
        self._events: list[Event] = []
        self._lock = threading.Lock()
        self._seq = itertools.count()
        self.notes: dict[str, Any] = {}  # schedule, seed and other context for the reproducer
        # Called with every event once it is recorded, in the recording thread (outside the lock):
        # how a schedule reacts to what a client does out of reach (a JVM's announced file writes).
        self.listeners: list[Callable[[Event], None]] = []

        self.http = HttpLog()  # what went over the wire to a network target (open while the check runs)

    def add(
        self, actor: str, op: str, args: dict[str, Any], ok: bool, result: Any = None, error: str | None = None
    ) -> Event:
        with self._lock:
            ev = Event(next(self._seq), actor, op, args, ok, result, error)
            self._events.append(ev)
        for listener in list(self.listeners):
            listener(ev)
        return ev

    def events(self, actor: str | None = None, op: str | None = None, ok: bool | None = None) -> list[Event]:
        with self._lock:
            return [
                e
                for e in self._events
                if (actor is None or e.actor == actor) and (op is None or e.op == op) and (ok is None or e.ok == ok)
            ]

    def to_json(self, limit: int = 2000) -> dict[str, Any]:
        with self._lock:
            events = self._events[-limit:]
        return {
            "notes": self.notes,
            "dropped": max(0, len(self._events) - limit),
            "events": [_jsonable(asdict(e)) for e in events],
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        text = value.decode("utf-8", "replace")
        return text if len(text) <= 400 else text[:400] + f"...({len(value)} bytes)"
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "__dataclass_fields__"):
        return _jsonable(asdict(value))
    return repr(value)
