"""A recording HTTP proxy in front of an S3 endpoint (moto's server in the tests).

Clients that do their own I/O (a JVM, Rust, any language) are pointed at the proxy instead of the
object store. Every request is forwarded as it came and recorded, in the order the store answered
them: method, path, query, status and the SHA-256 of the request body. That order is the storage
evidence of the ordering checks (staged before proposed, publication order, ...), exact whatever
the client's language. ``hold`` keeps chosen requests waiting before they reach the store until the
test releases them, to interleave a client's writes with other events.

Each event also names its client: the access key id of the request's SigV4 signature, so that each
writer of a schedule, signing with a key of its own, has its own record (``events(client)``); a catalog
client without a signature is named by its bearer token (``client_of``).
``arm(client)`` is a hold of that client's next PUT of a Delta commit file
(``_delta_log/<version>.json``) until ``release(client)``: the engine is held at the commit
boundary exactly as a slow store would hold it, and decides on its own what to do with the answer.

``around(match, wrap)`` hands chosen requests to ``wrap`` together with a way to forward them, so
a caller can decide when (and whether) a request reaches the upstream and read its answer: the
holding proxy in front of an Iceberg REST catalog parks commit requests this way.

``exchange_observers`` see each forwarded request in full (its headers, body and the answer's
body): fronting a catalog, they feed a check's HTTP transcript (``observe.http_transcript``).

``curl(event)`` renders a recorded request as a curl command line (without its body and
signature) for reproducers: what was asked of the store, replayable by hand against a store.
"""

from __future__ import annotations

import hashlib
import http.client
import re
import shlex
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import unquote, urlsplit

# Hop-by-hop headers (RFC 9110 section 7.6.1) and those the proxy recomputes.
_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
_MAX_BODY = 256 * 1024 * 1024
COMMIT_FILE = re.compile(r"/_delta_log/(\d{20})\.json$")
CREDENTIAL = re.compile(r"Credential=([^/,\s]+)/")
ANONYMOUS = "anonymous"  # the client of an unsigned request


@dataclass(frozen=True)
class ProxyEvent:
    seq: int
    method: str
    path: str  # without the query string, as the client sent it (``/bucket/key``)
    query: str
    status: int
    body_sha256: str
    body_size: int
    client: str  # the access key id it was signed with
    conditional: bool  # it carried If-None-Match or If-Match

    @property
    def uri(self) -> str:
        """``s3://bucket/key`` for path-style requests (what the suite's storage URIs look like)."""
        return "s3://" + self.path.lstrip("/")

    @property
    def commit_version(self) -> int | None:
        """The version of the Delta commit file it wrote, when it is such a PUT."""
        m = COMMIT_FILE.search(unquote(self.path))
        return int(m.group(1)) if m and self.method == "PUT" else None


Observer = Callable[[ProxyEvent], None]
# Sees each forwarded request in full: (event, request headers, request body, answer's body).
ExchangeObserver = Callable[[ProxyEvent, list[tuple[str, str]], bytes, bytes], None]
Headers = list[tuple[str, str]]
Answer = tuple[int, Headers, bytes]  # status, headers, body
Forward = Callable[[], Answer]
# wrap(method, target, headers, body, forward): the answer the client gets (usually forward()'s)
Wrapper = Callable[[str, str, dict[str, str], bytes, Forward], Answer]


class Gate:
    """Requests matching a hold wait here until ``release()``; ``arrived`` is set by the first,
    whose path is ``path``. ``client`` limits the hold to that client's requests; ``once`` to the
    first matching request (the later ones pass)."""

    def __init__(self, match: Callable[[str, str], bool], client: str | None = None, once: bool = False) -> None:
        self.match = match
        self.client = client
        self.once = once
        self.arrived = threading.Event()
        self.path = ""
        self._open = threading.Event()

    @property
    def released(self) -> bool:
        return self._open.is_set()

    def release(self) -> None:
        self._open.set()

    def wait(self, timeout_s: float | None) -> bool:
        return self._open.wait(timeout_s)

    def takes(self, client: str, method: str, path: str) -> bool:
        if self.released or (self.once and self.arrived.is_set()):
            return False
        return (self.client is None or self.client == client) and self.match(method, path)


def client_of(authorization: str) -> str:
    """Who sent a request: the access key id of a SigV4 signature (an object store's client), else
    the token of ``Bearer <token>`` (a catalog's client, e.g. an Iceberg REST or UC writer), else
    ``anonymous``. Each writer of a schedule signs or authenticates as itself, so each has its own
    record and its own holds, whichever kind of server the proxy fronts."""
    if match := CREDENTIAL.search(authorization):
        return match.group(1)
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else ANONYMOUS


def _commit_put(method: str, path: str) -> bool:
    return method == "PUT" and COMMIT_FILE.search(unquote(path)) is not None


class RecordingProxy:
    """``RecordingProxy(upstream_url)``: serves on 127.0.0.1 (any free port) in a daemon thread.
    A request held longer than ``hold_timeout_s`` is answered 503 (None: held until released or
    ``stop()``, for a caller that guards its own waits)."""

    def __init__(self, upstream: str, *, hold_timeout_s: float | None = 300.0) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"the proxy forwards to an http:// endpoint, not {upstream!r}")
        self._upstream = (parts.hostname, parts.port or 80)
        self._hold_timeout_s = hold_timeout_s
        self._lock = threading.Lock()
        self._events: list[ProxyEvent] = []
        self._gates: list[Gate] = []
        self._armed: dict[str, Gate] = {}
        self._wrappers: list[tuple[Callable[[str, str], bool], Wrapper]] = []
        self.observers: list[Observer] = []
        self.exchange_observers: list[ExchangeObserver] = []
        self._local = threading.local()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="object-proxy", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> RecordingProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._lock:
            gates = list(self._gates)
            self._armed.clear()
        for gate in gates:
            gate.release()  # never leave a client hanging
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=30)

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def events(self, client: str | None = None) -> list[ProxyEvent]:
        """Every recorded request in the store's order of answers (only ``client``'s, if given)."""
        with self._lock:
            return [e for e in self._events if client is None or e.client == client]

    def hold(self, match: Callable[[str, str], bool], *, client: str | None = None, once: bool = False) -> Gate:
        """Hold every request whose ``(method, path)`` matches until the gate is released."""
        gate = Gate(match, client, once)
        with self._lock:
            self._gates = [g for g in self._gates if not g.released]  # forget released ones
            self._gates.append(gate)
        return gate

    def around(self, match: Callable[[str, str], bool], wrap: Wrapper) -> None:
        """Requests whose ``(method, path)`` match go through ``wrap`` (the first that matches), which
        calls ``forward()`` to reach the upstream. Recorded with the answer ``wrap`` returns."""
        with self._lock:
            self._wrappers.append((match, wrap))

    def _wrapper_for(self, method: str, path: str) -> Wrapper | None:
        with self._lock:
            return next((wrap for match, wrap in self._wrappers if match(method, path)), None)

    # ------------------------------------------------------------------ a client's next commit

    def arm(self, client: str) -> None:
        """Hold ``client``'s next PUT of a commit file until ``release(client)``."""
        gate = self.hold(_commit_put, client=client, once=True)
        with self._lock:
            earlier = self._armed.get(client)
            self._armed[client] = gate
        if earlier is not None and not earlier.arrived.is_set():
            earlier.release()  # withdrawn: it must not take the PUT the new one is armed for

    def wait_held(self, client: str, timeout: float) -> bool:
        """True once the armed PUT of ``client`` is waiting in the proxy."""
        with self._lock:
            gate = self._armed.get(client)
        return gate is not None and gate.arrived.wait(timeout)

    def held_key(self, client: str) -> str:
        """The key (``/bucket/...``, unquoted) of the PUT held for ``client``; "" if none."""
        with self._lock:
            gate = self._armed.get(client)
        return unquote(gate.path) if gate else ""

    def release(self, client: str) -> None:
        """Let the held PUT through (a no-op when nothing was held); later PUTs pass freely."""
        with self._lock:
            gate = self._armed.pop(client, None)
        if gate is not None:
            gate.release()

    # ------------------------------------------------------------------ the core

    def _gate_for(self, client: str, method: str, path: str) -> Gate | None:
        with self._lock:
            gate = next((g for g in self._gates if g.takes(client, method, path)), None)
            if gate is not None and not gate.arrived.is_set():
                gate.path = path
                gate.arrived.set()  # under the lock: a ``once`` gate takes one request only
            return gate

    def _record(
        self,
        client: str,
        method: str,
        target: str,
        status: int,
        body: bytes,
        *,
        conditional: bool = False,
        exchange: tuple[list[tuple[str, str]], bytes] | None = None,
    ) -> None:
        path, _, query = target.partition("?")
        with self._lock:
            event = ProxyEvent(
                len(self._events),
                method,
                path,
                query,
                status,
                hashlib.sha256(body).hexdigest(),
                len(body),
                client=client,
                conditional=conditional,
            )
            self._events.append(event)
            # Observers run under the lock: their record is in the store's order of answers.
            for observer in list(self.observers):
                observer(event)
            if exchange is not None:
                sent, answer = exchange
                for full in list(self.exchange_observers):
                    full(event, sent, body, answer)

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

            def _client(self) -> str:
                return client_of(self.headers.get("Authorization", ""))

            def _handle(self) -> None:
                method, target, client = self.command, self.path, self._client()
                try:
                    body = self._body()
                except ValueError:
                    self._answer(400, [], b"bad request body", close=True)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                if body or method in ("PUT", "POST"):
                    headers["Content-Length"] = str(len(body))
                conditional = "If-None-Match" in self.headers or "If-Match" in self.headers
                gate = proxy._gate_for(client, method, target.partition("?")[0])
                if gate is not None and not gate.wait(proxy._hold_timeout_s):
                    self._answer(503, [], b"held too long", close=False)
                    return
                wrap = proxy._wrapper_for(method, target.partition("?")[0])
                try:
                    if wrap is None:
                        status, resp_headers, data = proxy._forward(method, target, headers, body)
                    else:
                        forward: Forward = lambda: proxy._forward(method, target, headers, body)  # noqa: E731
                        status, resp_headers, data = wrap(method, target, headers, body, forward)
                except OSError:
                    # Recorded too: the client was told 502, and a reader of the record must know.
                    proxy._record(client, method, target, 502, body, conditional=conditional)
                    self._answer(502, [], b"the object store did not answer", close=True)
                    return
                sent = list(self.headers.items())
                proxy._record(client, method, target, status, body, conditional=conditional, exchange=(sent, data))
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

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle  # noqa: N815 - http.server's names

            def __getattr__(self, name: str) -> Any:
                # Any other method: 405, recorded, never forwarded (http.server would answer 501).
                if not name.startswith("do_"):
                    raise AttributeError(name)
                return self._refuse

            def _refuse(self) -> None:
                proxy._record(self._client(), self.command, self.path, 405, b"")
                self._answer(405, [], b"method not allowed", close=True)  # its body is left unread

        return Handler


def curl(proxy_or_store_url: str, event: ProxyEvent) -> str:
    """A curl command line for one recorded request (no body, no signature: for a reader)."""
    target = event.path + (f"?{event.query}" if event.query else "")
    return f"curl -X {event.method} {shlex.quote(proxy_or_store_url.rstrip('/') + target)}"
