"""A recording HTTP proxy in front of an S3 endpoint (moto's server in the tests).

Clients that do their own I/O (a JVM, Rust, any language) are pointed at the proxy instead of the
object store. Every request is forwarded as it came and recorded, in the order the store answered
them: method, path, query, status and the SHA-256 of the request body. That order is the storage
evidence of the ordering checks (staged before proposed, publication order, ...), exact whatever
the client's language. ``hold`` keeps chosen requests waiting before they reach the store until the
test releases them, to interleave a client's writes with other events.

``curl(event)`` renders a recorded request as a curl command line (without its body and
signature) for reproducers: what was asked of the store, replayable by hand against a store.
"""

from __future__ import annotations

import hashlib
import http.client
import shlex
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import urlsplit

# Hop-by-hop headers (RFC 9110 section 7.6.1) and those the proxy recomputes.
_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
_MAX_BODY = 256 * 1024 * 1024


@dataclass(frozen=True)
class ProxyEvent:
    seq: int
    method: str
    path: str  # without the query string, as the client sent it (``/bucket/key``)
    query: str
    status: int
    body_sha256: str
    body_size: int

    @property
    def uri(self) -> str:
        """``s3://bucket/key`` for path-style requests (what the suite's storage URIs look like)."""
        return "s3://" + self.path.lstrip("/")


Observer = Callable[[ProxyEvent], None]
Headers = list[tuple[str, str]]


class Gate:
    """Requests matching a hold wait here until ``release()``; ``arrived`` is set by the first."""

    def __init__(self, match: Callable[[str, str], bool]) -> None:
        self.match = match
        self.arrived = threading.Event()
        self._open = threading.Event()

    def release(self) -> None:
        self._open.set()

    def wait(self, timeout_s: float) -> bool:
        self.arrived.set()
        return self._open.wait(timeout_s)


class RecordingProxy:
    """``RecordingProxy(upstream_url)``: serves on 127.0.0.1 (any free port) in a daemon thread."""

    def __init__(self, upstream: str, *, hold_timeout_s: float = 300.0) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"the proxy forwards to an http:// endpoint, not {upstream!r}")
        self._upstream = (parts.hostname, parts.port or 80)
        self._hold_timeout_s = hold_timeout_s
        self._lock = threading.Lock()
        self._events: list[ProxyEvent] = []
        self._gates: list[Gate] = []
        self.observers: list[Observer] = []
        self._local = threading.local()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> RecordingProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        for gate in list(self._gates):
            gate.release()  # never leave a client hanging
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def events(self) -> list[ProxyEvent]:
        with self._lock:
            return list(self._events)

    def hold(self, match: Callable[[str, str], bool]) -> Gate:
        """Hold every request whose ``(method, path)`` matches until the gate is released."""
        gate = Gate(match)
        with self._lock:
            self._gates.append(gate)
        return gate

    def _gate_for(self, method: str, path: str) -> Gate | None:
        with self._lock:
            return next((g for g in self._gates if not g._open.is_set() and g.match(method, path)), None)

    def _record(self, method: str, target: str, status: int, body: bytes) -> None:
        path, _, query = target.partition("?")
        with self._lock:
            event = ProxyEvent(
                len(self._events), method, path, query, status, hashlib.sha256(body).hexdigest(), len(body)
            )
            self._events.append(event)
            # Observers run under the lock: their record is in the store's order of answers.
            for observer in list(self.observers):
                observer(event)

    def _forward(self, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, Headers, bytes]:
        # One keep-alive connection to the store per client connection's thread. A reused one the
        # store has closed meanwhile fails before the request is read: only then is it sent again.
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        reused = conn is not None
        while True:
            if conn is None:
                conn = self._local.conn = http.client.HTTPConnection(*self._upstream, timeout=120)
            try:
                payload = body if body or method in ("PUT", "POST") else None
                conn.request(method, target, body=payload, headers=headers)
                resp = conn.getresponse()
                return resp.status, resp.getheaders(), resp.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                conn.close()
                conn = self._local.conn = None
                if not reused:
                    raise
                reused = False
            except (http.client.HTTPException, OSError):
                conn.close()
                self._local.conn = None
                raise

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Without it an answer written in parts waits for the client's delayed ACK (40 ms).
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002  (quiet)
                return

            def _body(self) -> bytes:
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    chunks: list[bytes] = []
                    total = 0
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline().strip():  # trailers
                                pass
                            return b"".join(chunks)
                        total += size
                        if total > _MAX_BODY:
                            raise ValueError("body too large")
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                length = int(self.headers.get("Content-Length") or 0)
                if length < 0 or length > _MAX_BODY:
                    raise ValueError("bad Content-Length")
                return self.rfile.read(length) if length else b""

            def _handle(self) -> None:
                method, target = self.command, self.path
                try:
                    body = self._body()
                except ValueError:
                    self._answer(400, [], b"bad request body", close=True)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                if body or method in ("PUT", "POST"):
                    headers["Content-Length"] = str(len(body))
                gate = proxy._gate_for(method, target.partition("?")[0])
                if gate is not None and not gate.wait(proxy._hold_timeout_s):
                    self._answer(503, [], b"held too long", close=False)
                    return
                try:
                    status, resp_headers, data = proxy._forward(method, target, headers, body)
                except OSError:
                    self._answer(502, [], b"the object store did not answer", close=True)
                    return
                proxy._record(method, target, status, body)
                self._answer(status, resp_headers, data, close=False, head=method == "HEAD")

            def _answer(self, status: int, headers: Headers, data: bytes, *, close: bool, head: bool = False) -> None:
                self.send_response(status)
                for name, value in headers:
                    if name.lower() not in _HOP and name.lower() != "content-length":
                        self.send_header(name, value)
                length = next((v for n, v in headers if n.lower() == "content-length"), None) if head else None
                self.send_header("Content-Length", str(length if length is not None else len(data)))
                if close:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if not head:
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

        return Handler


def curl(proxy_or_store_url: str, event: ProxyEvent) -> str:
    """A curl command line for one recorded request (no body, no signature: for a reader)."""
    target = event.path + (f"?{event.query}" if event.query else "")
    return f"curl -X {event.method} {shlex.quote(proxy_or_store_url.rstrip('/') + target)}"
