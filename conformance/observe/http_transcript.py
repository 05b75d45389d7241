"""An HTTP-level transcript: every request a network target was sent and its answer, in order.

The call-level ``Transcript`` says what lakecert asked of the catalog; this one says what went over
the wire for it (method, path and query, status, the SHA-256 and size of both bodies), so that a
reproducer of a network target can be replayed by hand with curl (``replay.write_replay``).

Whoever speaks HTTP to a target (the UC wire client's event hooks, the recording proxy in front of
the catalog Delta Kernel talks to) hands each exchange to ``record``; it lands in every log opened
with ``capture`` at that moment. The plugin opens one log per check, so the exchanges a check caused
are the ones in its log (checks run one at a time per process; their threads share the log).
Request bodies are kept so that the replay can send them again; answers only as digests. Secret
headers are never kept: their value is replaced by ``REDACTED``.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

REDACTED = "<redacted>"
# Headers that carry credentials, and those the transport sets on its own (not worth replaying).
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"})
TRANSPORT_HEADERS = frozenset(
    {"host", "content-length", "connection", "keep-alive", "accept-encoding", "user-agent", "transfer-encoding"}
)


@dataclass(frozen=True)
class HttpExchange:
    """One request and its answer. ``status`` None: no answer (the connection failed)."""

    base_url: str  # scheme://host:port the request went to
    method: str
    target: str  # path and query string, as sent
    status: int | None
    request_headers: tuple[tuple[str, str], ...]  # secrets redacted, transport headers left out
    request_body: bytes
    response_sha256: str
    response_size: int
    error: str | None = None  # the transport error's class when there was no answer
    media_type: str | None = None  # the answer's Content-Type, without parameters
    note: str | None = None  # an answer of an unexpected shape that lakecert accepted (an observation)
    at: float = field(default_factory=time.time)

    @property
    def request_sha256(self) -> str:
        return hashlib.sha256(self.request_body).hexdigest()

    @property
    def request_size(self) -> int:
        return len(self.request_body)

    @property
    def authenticated(self) -> bool:
        """It carried credentials (redacted here; a replay supplies its own)."""
        return any(k == "authorization" for k, _ in self.request_headers)

    def to_json(self, seq: int) -> dict[str, Any]:
        return {
            "seq": seq,
            "method": self.method,
            "target": self.target,
            "status": self.status,
            "error": self.error,
            "media_type": self.media_type,
            "note": self.note,
            "request_headers": dict(self.request_headers),
            "request_sha256": self.request_sha256,
            "request_size": self.request_size,
            "response_sha256": self.response_sha256,
            "response_size": self.response_size,
            "base_url": self.base_url,
            "at": self.at,
        }


def kept_headers(headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The headers worth keeping for a reader and a replay, lower-cased, with secrets redacted."""
    kept: list[tuple[str, str]] = []
    for name, value in headers:
        key = name.lower()
        if key in TRANSPORT_HEADERS:
            continue
        kept.append((key, REDACTED if key in SECRET_HEADERS else value))
    return tuple(kept)


def exchange(
    base_url: str,
    method: str,
    target: str,
    status: int | None,
    headers: Iterable[tuple[str, str]],
    request_body: bytes,
    response_body: bytes,
    error: str | None = None,
    media_type: str | None = None,
    note: str | None = None,
) -> HttpExchange:
    return HttpExchange(
        base_url.rstrip("/"),
        method.upper(),
        target,
        status,
        kept_headers(headers),
        request_body,
        hashlib.sha256(response_body).hexdigest(),
        len(response_body),
        error,
        media_type,
        note,
    )


class HttpLog:
    """The exchanges recorded while it was open, in the order their answers came."""

    def __init__(self, limit: int = 5000) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._exchanges: list[HttpExchange] = []
        self.dropped = 0

    def add(self, ex: HttpExchange) -> None:
        with self._lock:
            if len(self._exchanges) >= self._limit:
                self.dropped += 1  # the first ones are kept: a replay needs the table's creation
                return
            self._exchanges.append(ex)

    def exchanges(self) -> list[HttpExchange]:
        with self._lock:
            return list(self._exchanges)

    def notes(self) -> list[str]:
        """The distinct observations of the exchanges, in the order first seen."""
        return list(dict.fromkeys(ex.note for ex in self.exchanges() if ex.note))

    def __len__(self) -> int:
        with self._lock:
            return len(self._exchanges)


_open: list[HttpLog] = []
_open_lock = threading.Lock()


def record(ex: HttpExchange) -> None:
    """Into every open log (none open: the exchange is not kept)."""
    with _open_lock:
        logs = list(_open)
    for log in logs:
        log.add(ex)


@contextmanager
def capture(log: HttpLog) -> Iterator[HttpLog]:
    """Record into ``log`` until the block ends."""
    with _open_lock:
        _open.append(log)
    try:
        yield log
    finally:
        with _open_lock:
            _open.remove(log)
