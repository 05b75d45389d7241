"""Serve an ASGI app with uvicorn on a listening socket: in a daemon thread (tests, embedding; ``stop()``
ends it) or in the foreground. Shared by the UC server (``reference_impl.server``) and the Iceberg REST
catalog (``reference_impl.iceberg_rest``), so both get the same connection limits:

- **headers**: a connection must send a request's headers within ``header_timeout_s`` of opening
  (or of its previous response); otherwise it is closed. uvicorn has no such timeout, so a client
  that opens connections and sends nothing (or a byte a minute) held each one for ever;
- **idle**: a kept-alive connection with no new request is closed after ``idle_timeout_s``
  (uvicorn's ``timeout_keep_alive``);
- **count**: at most ``max_connections`` open connections (clamped below the process's open-file
  limit, whose soft value is raised to the hard one); a connection above it is closed at once,
  so descriptors are never exhausted (which made every ``accept`` fail with a traceback);
- **framing**: a request with both ``Content-Length`` and ``Transfer-Encoding`` is read by the
  latter (h11) and its connection closed after the answer (RFC 9112 6.1), so bytes a client hid
  in the body are never read as a second request;
- **bodies**: each app bounds how long a body may take (408; ``edge.py``, ``iceberg_rest/body.py``);
- **reads first come, first served per connection** (``FairReads``): at most ``read_slots`` requests
  without a body are in the app at once, and a free slot goes to a connection that was answered
  before ahead of a new connection's first request. Answered first in, first out, a burst of a
  thousand new connections made a client already being served wait behind all of it (7-9 s); now it
  waits for the reads in the app only. Requests with a body (commits, which the explorer may hold
  for a long time) are never queued here.

Each condition is logged once when it starts and then at most once a minute with a count, never
a line (or a traceback) per connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import h11
import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_BACKLOG = 2048  # uvicorn's own default
DEFAULT_MAX_CONNECTIONS = 10_000
DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_IDLE_TIMEOUT_S = 5.0  # uvicorn's default keep-alive timeout
# Descriptors kept free for everything but client connections: database files and connections
# (two per worker thread), metadata and commit files being read, the log.
_RESERVED_FDS = 512
_log = logging.getLogger("lakecert.connections")


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S

    def __post_init__(self) -> None:
        if self.max_connections < 1 or self.header_timeout_s <= 0 or self.idle_timeout_s <= 0:
            raise ValueError("connection limits must be positive")


DEFAULT_LIMITS = ConnectionLimits()


def raise_open_file_limit() -> int:
    """Raise the soft open-file limit to the hard one (a process may); the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = 1 << 20 if hard == resource.RLIM_INFINITY else hard
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def effective_max_connections(wanted: int) -> int:
    """``wanted``, but never so many that connections could take the descriptors the server needs."""
    return max(1, min(wanted, raise_open_file_limit() - _RESERVED_FDS))


class ConditionLog:
    """One log line when a condition starts, then at most one per ``interval_s`` with a count."""

    def __init__(self, logger: logging.Logger = _log, interval_s: float = 60.0) -> None:
        self._logger = logger
        self._interval = interval_s
        self._lock = threading.Lock()
        self._state: dict[str, tuple[float, int]] = {}  # condition -> (last line, occurrences since)

    def note(self, condition: str, message: str) -> None:
        now = time.monotonic()
        with self._lock:
            last, count = self._state.get(condition, (float("-inf"), 0))
            count += 1
            if now - last < self._interval:
                self._state[condition] = (last, count)
                return
            self._state[condition] = (now, 0)
        self._logger.warning("%s (%d time%s since the last report)", message, count, "" if count == 1 else "s")


class _GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a header timeout and a cap on open connections."""

    limits: ConnectionLimits = DEFAULT_LIMITS
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    conditions: ConditionLog

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.max_connections:
            self.conditions.note(
                "max-connections", f"closing new connections: {self.max_connections} connections are open"
            )
            transport.abort()  # never added to the server's connections: nothing else to undo
            return
        super().connection_made(transport)
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is None:  # refused in connection_made
            return
        self._disarm_header_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # a request's headers are in: the app times its body
            self._disarm_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_timer()  # the next request's headers are timed too (not only idleness)

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.limits.header_timeout_s, self._header_timeout)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        self.conditions.note(
            "header-timeout",
            f"closing connections that sent no complete headers within {self.limits.header_timeout_s:g} s",
        )
        self._unset_keepalive_if_required()
        self.transport.close()


def close_on_ambiguous_framing(app: ASGIApp) -> ASGIApp:
    """RFC 9112 6.1: a request with both Transfer-Encoding and Content-Length is read by the
    Transfer-Encoding (h11 does), and the server MUST close the connection after answering it: what
    follows on the connection may be a request hidden in the body, as another parser framed it."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        names = {name.lower() for name, _ in scope.get("headers", [])}
        if not (b"transfer-encoding" in names and b"content-length" in names):
            await app(scope, receive, send)
            return

        async def closing_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await app(scope, receive, closing_send)

    return guarded


DEFAULT_READ_SLOTS = 32  # below the thread pool's 40: a read admitted here never waits for a thread
_REMEMBERED = 10_000  # answered connections remembered (by address); the oldest are forgotten first


class FairReads:
    """Admits requests without a body (reads) to ``app`` through ``slots`` slots; a connection that
    was answered before gets the next free slot ahead of connections that were not. A connection is
    known by its client address (host, port): a later connection on a reused port counts as answered,
    which costs nothing but its place in the queue. Everything runs on the server's event loop."""

    def __init__(self, app: ASGIApp, slots: int = DEFAULT_READ_SLOTS) -> None:
        if slots < 1:
            raise ValueError("read slots must be positive")
        self.app = app
        self.free = slots
        self.answered: OrderedDict[tuple[str, int], None] = OrderedDict()
        self.waiting: tuple[deque[asyncio.Future[None]], deque[asyncio.Future[None]]] = (deque(), deque())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _has_body(scope):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        address = (str(client[0]), int(client[1])) if client else None
        await self._admit(address in self.answered)
        try:
            await self.app(scope, receive, send)
        finally:
            self._release()
            if address is not None:
                self.answered[address] = None
                self.answered.move_to_end(address)
                if len(self.answered) > _REMEMBERED:
                    self.answered.popitem(last=False)

    async def _admit(self, answered_before: bool) -> None:
        if self.free > 0 and not any(self.waiting):
            self.free -= 1
            return
        turn = asyncio.get_running_loop().create_future()
        queue = self.waiting[0 if answered_before else 1]
        queue.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._release()  # the slot was handed over as the wait was cancelled: pass it on
            else:
                with contextlib.suppress(ValueError):  # already passed over by ``_release``
                    queue.remove(turn)
            raise

    def _release(self) -> None:
        """Hand the slot to the first waiter (answered connections first), else free it."""
        for queue in self.waiting:
            while queue:
                turn = queue.popleft()
                if not turn.done():
                    turn.set_result(None)
                    return
        self.free += 1


def _has_body(scope: Scope) -> bool:
    for name, value in scope.get("headers", []):
        name = name.lower()
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() not in (b"", b"0")):
            return True
    return False


def bind_socket(host: str, port: int, backlog: int = DEFAULT_BACKLOG) -> socket.socket:
    """A TCP socket bound to ``host:port`` (port 0: any free port) and already listening, so a client
    may connect as soon as this returns: its connection waits in the backlog until uvicorn accepts it
    (uvicorn calls ``listen()`` again on a socket it is given, which is harmless). TCP_NODELAY
    (inherited by accepted connections): without it, a response written in two parts waits for the
    client's delayed ACK, 40 ms per request."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


class QuietServer(uvicorn.Server):
    """uvicorn stopped by SIGTERM or SIGINT without re-raising the signal after its shutdown (uvicorn
    does, which ends the process with 143 before its caller closed the database: a SQLite WAL and
    SHM file were left behind). The caller returns normally from ``run`` and cleans up."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        import signal

        previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def server_config(
    app: ASGIApp,
    *,
    log_level: str = "warning",
    limits: ConnectionLimits = DEFAULT_LIMITS,
    graceful_shutdown_s: float = 5.0,
    lifespan: str = "off",
) -> uvicorn.Config:
    """uvicorn's configuration with the limits above (its own settings where it has them)."""
    protocol = type(
        "GuardedH11",
        (_GuardedH11,),
        {
            "limits": limits,
            "max_connections": effective_max_connections(limits.max_connections),
            "conditions": ConditionLog(),
        },
    )
    return uvicorn.Config(
        close_on_ambiguous_framing(FairReads(app)),
        log_level=log_level,
        lifespan=lifespan,  # type: ignore[arg-type]
        timeout_graceful_shutdown=int(graceful_shutdown_s),
        timeout_keep_alive=int(max(1, limits.idle_timeout_s)),
        http=protocol,
        backlog=DEFAULT_BACKLOG,
    )


class ServerThread:
    """uvicorn serving ``app`` on ``host:port`` (port 0: any free port): ``start()`` runs it in a daemon
    thread, ``serve_forever()`` in the calling thread; ``stop()`` ends it and closes the socket."""

    def __init__(
        self,
        app: ASGIApp,
        host: str = "127.0.0.1",
        port: int = 0,
        log_level: str = "warning",
        limits: ConnectionLimits = DEFAULT_LIMITS,
    ) -> None:
        self._sock = bind_socket(host, port)
        self.host, self.port = host, int(self._sock.getsockname()[1])
        self._server = QuietServer(server_config(app, log_level=log_level, limits=limits))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self, timeout_s: float = 15.0) -> ServerThread:
        """Start serving in the daemon thread; return once uvicorn has started (or raise RuntimeError)."""
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the server on {self.url} did not start")
            time.sleep(0.005)
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until SIGTERM or SIGINT (instead of ``start()``); returns then."""
        try:
            self._server.run(sockets=[self._sock])
        finally:
            self._sock.close()

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=15)
        self._sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
