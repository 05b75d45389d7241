"""Run the app with uvicorn in a background thread (tests, embedding); ``stop()`` ends it."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

import uvicorn
from starlette.types import ASGIApp


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket. TCP_NODELAY (inherited by accepted connections): without it, a
    response written in two parts waits for the client's delayed ACK, 40 ms per request."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    return sock


class ServerThread:
    """uvicorn on ``host:port`` (port 0: any free port) in a daemon thread."""

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
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=15)
        self._sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class ServerProcess:
    """``python -m reference_impl.server.cli ARGS --port 0`` in its own process; ``stop()`` ends it."""

    def __init__(self, args: list[str], timeout_s: float = 30.0) -> None:
        import subprocess
        import sys

        self._proc = subprocess.Popen(
            [sys.executable, "-m", "reference_impl.server.cli", *args, "--host", "127.0.0.1", "--port", "0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.url = ""
        self.output: list[str] = []
        assert self._proc.stderr is not None
        deadline = time.monotonic() + timeout_s
        for line in self._proc.stderr:
            self.output.append(line)
            if " listening on " in line:
                self.url = line.split(" listening on ", 1)[1].split()[0]
                break
            if time.monotonic() > deadline:
                break
        if not self.url:
            self.stop()
            raise RuntimeError("the server did not start:\n" + "".join(self.output))
        # Keep draining its log so the server never blocks on a full pipe.
        self._drain = threading.Thread(target=self._read_rest, daemon=True)
        self._drain.start()

    def _read_rest(self) -> None:
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            self.output.append(line)

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=15)
            except Exception:
                self._proc.kill()
                self._proc.wait()
        if self._proc.stderr is not None:
            self._proc.stderr.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
