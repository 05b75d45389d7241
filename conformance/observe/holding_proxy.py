"""An object-store proxy that records every request in order and can hold a commit.

An HTTP reverse proxy on 127.0.0.1 in front of an S3 endpoint (moto in the tests). Each request is
forwarded unchanged and recorded (method, key, status, the client's access key id). A client is
told apart by the access key id of its signature, so each writer of a schedule uses its own.
``arm(client)`` makes the client's next PUT of a Delta commit file (``_delta_log/<version>.json``)
wait inside the proxy until ``release(client)``: the engine is held at the commit boundary
exactly as a slow store would hold it, and decides on its own what to do with the answer.
"""

from __future__ import annotations

import contextlib
import http.client
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

COMMIT_FILE = re.compile(r"/_delta_log/(\d{20})\.json$")
CREDENTIAL = re.compile(r"Credential=([^/,\s]+)/")
# Headers that describe one hop, not the request (RFC 9110 section 7.6.1).
HOP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "upgrade"})


@dataclass(frozen=True)
class Request:
    """One forwarded request, in arrival order; ``status`` is the store's answer."""

    seq: int
    client: str
    method: str
    key: str
    status: int
    conditional: bool  # it carried If-None-Match or If-Match

    @property
    def commit_version(self) -> int | None:
        """The version of the Delta commit file it wrote, when it is such a PUT."""
        m = COMMIT_FILE.search(self.key)
        return int(m.group(1)) if m and self.method == "PUT" else None


class _Gate:
    def __init__(self) -> None:
        self.reached = threading.Event()  # the held request arrived
        self.opened = threading.Event()
        self.key = ""


class HoldingProxy:
    """Start with ``start()`` (or as a context manager); ``url`` is the endpoint clients use."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"upstream must be an http:// endpoint, not {upstream!r}")
        self._upstream = (parts.hostname, parts.port or 80)
        self._lock = threading.Lock()
        self._gates: dict[str, _Gate] = {}
        self.requests: list[Request] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="holding-proxy", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> HoldingProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._lock:
            gates = list(self._gates.values())
            self._gates.clear()
        for gate in gates:  # never leave a client hanging
            gate.opened.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=30)

    def __enter__(self) -> HoldingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ holding

    def arm(self, client: str) -> None:
        """Hold ``client``'s next PUT of a commit file until ``release(client)``."""
        with self._lock:
            self._gates[client] = _Gate()

    def wait_held(self, client: str, timeout: float) -> bool:
        """True once the armed PUT of ``client`` is waiting in the proxy."""
        with self._lock:
            gate = self._gates.get(client)
        return gate is not None and gate.reached.wait(timeout)

    def held_key(self, client: str) -> str:
        with self._lock:
            gate = self._gates.get(client)
        return gate.key if gate else ""

    def release(self, client: str) -> None:
        """Let the held PUT through (a no-op when nothing was held); later PUTs pass freely."""
        with self._lock:
            gate = self._gates.pop(client, None)
        if gate is not None:
            gate.opened.set()

    def log(self, client: str | None = None) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if client is None or r.client == client]

    def _gate_for(self, client: str, method: str, key: str) -> _Gate | None:
        if method != "PUT" or not COMMIT_FILE.search(key):
            return None
        with self._lock:
            gate = self._gates.get(client)
            if gate is None or gate.reached.is_set():
                return None
            gate.key = key
            gate.reached.set()
            return gate

    def _record(self, client: str, method: str, key: str, status: int, conditional: bool) -> None:
        with self._lock:
            self.requests.append(Request(len(self.requests), client, method, key, status, conditional))

    # ------------------------------------------------------------------ forwarding

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
                return None  # the proxy's own record replaces the access log

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                match = CREDENTIAL.search(self.headers.get("Authorization", ""))
                client = match.group(1) if match else "anonymous"
                key = unquote(urlsplit(self.path).path)
                gate = proxy._gate_for(client, self.command, key)
                if gate is not None:
                    gate.opened.wait()  # held until the schedule releases it (stop() opens every gate)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
                conn = http.client.HTTPConnection(*proxy._upstream, timeout=120)
                try:
                    conn.request(self.command, self.path, body=body, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                    conditional = "If-None-Match" in self.headers or "If-Match" in self.headers
                    proxy._record(client, self.command, key, resp.status, conditional)
                    self.send_response(resp.status, resp.reason)
                    head = self.command == "HEAD"  # its Content-Length is the object's, not this body's
                    for k, v in resp.getheaders():
                        if k.lower() not in HOP and (head or k.lower() != "content-length"):
                            self.send_header(k, v)
                    if not head:
                        self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data)
                except OSError:  # the store or the client went away: record it, answer if anyone listens
                    proxy._record(client, self.command, key, 502, False)
                    with contextlib.suppress(OSError):
                        self.send_error(502, "upstream unreachable")
                finally:
                    conn.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward  # noqa: N815 - http.server's names

            def __getattr__(self, name: str) -> Any:
                # Any other method: 405, recorded, never forwarded (http.server would answer 501).
                if not name.startswith("do_"):
                    raise AttributeError(name)
                return self._refuse

            def _refuse(self) -> None:
                proxy._record("anonymous", self.command, urlsplit(self.path).path, 405, False)
                self.send_error(405, "method not allowed")

        return Handler
