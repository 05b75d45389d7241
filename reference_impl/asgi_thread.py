"""Serve an ASGI app with uvicorn on a listening socket: in a daemon thread (tests, embedding; ``stop()``
ends it) or in the foreground. Shared by the UC server (``reference_impl.server``) and the Iceberg REST
catalog (``reference_impl.iceberg_rest``)."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

import uvicorn
from starlette.types import ASGIApp

DEFAULT_BACKLOG = 2048  # uvicorn's own default


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


class ServerThread:
    """uvicorn serving ``app`` on ``host:port`` (port 0: any free port): ``start()`` runs it in a daemon
    thread, ``serve_forever()`` in the calling thread; ``stop()`` ends it and closes the socket."""

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning") -> None:
        self._sock = bind_socket(host, port)
        self.host, self.port = host, int(self._sock.getsockname()[1])
        config = uvicorn.Config(app, log_level=log_level, lifespan="off", timeout_graceful_shutdown=5)
        self._server = uvicorn.Server(config)
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
        """Serve in the calling thread until interrupted (instead of ``start()``)."""
        self._server.run(sockets=[self._sock])

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
