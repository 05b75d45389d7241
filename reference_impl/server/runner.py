"""``lakecert serve`` in its own process (tests, benchmarks): ``ServerProcess`` for one, ``serving()`` for
several on one database. (In-process, in a thread: ``reference_impl.asgi_thread.ServerThread``.)"""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from types import TracebackType

from reference_impl.server.deps import PREFIX

_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy


class ServerProcess:
    """``python -m reference_impl.server.cli --db DB [--warehouse W] ARGS`` on 127.0.0.1, any free port,
    log level ``warning`` unless ``ARGS`` say otherwise. Ready once it answers HTTP (or RuntimeError
    after ``timeout_s``). ``kill()`` is a SIGKILL (a crash); ``stop()`` a clean stop. Always stopped
    by ``with``."""

    def __init__(self, db: str, warehouse: str | None = None, *args: str, timeout_s: float = 60.0) -> None:
        command = [sys.executable, "-m", "reference_impl.server.cli", "--db", db]
        command += ["--warehouse", warehouse] if warehouse is not None else []
        command += ["--host", "127.0.0.1", "--port", "0", "--log-level", "warning", *args]
        self._proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
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
        # Keep draining its log so the server never blocks on a full pipe.
        self._drain = threading.Thread(target=self._read_rest, daemon=True)
        self._drain.start()
        if not self.url or not self._answers(deadline):
            self.stop()
            raise RuntimeError("lakecert serve did not start:\n" + "".join(self.output))

    def _answers(self, deadline: float) -> bool:
        """Whether the server answers HTTP (any status) before ``deadline``."""
        while self._proc.poll() is None and time.monotonic() < deadline:
            try:
                with _DIRECT.open(f"{self.url}{PREFIX}/lakecert/v1/capabilities", timeout=5):
                    return True
            except urllib.error.HTTPError:  # an answer all the same
                return True
            except (OSError, http.client.HTTPException):  # no answer (yet): refused, reset, timed out
                time.sleep(0.02)
        return False

    def _read_rest(self) -> None:
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            self.output.append(line)

    @property
    def pid(self) -> int:
        return self._proc.pid

    def kill(self) -> None:
        """SIGKILL: no clean-up in the server at all."""
        if self._proc.poll() is None:
            os.kill(self._proc.pid, signal.SIGKILL)
        self._proc.wait(timeout=30)

    def signal_and_wait(self, sig: int, timeout_s: float = 60.0) -> int:
        """Send ``sig`` (SIGTERM, SIGINT) and return the exit code once the server has stopped."""
        if self._proc.poll() is None:
            os.kill(self._proc.pid, sig)
        return self._proc.wait(timeout=timeout_s)

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
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


@contextmanager
def serving(count: int, db: str, warehouse: str, *args: str) -> Iterator[list[ServerProcess]]:
    """``count`` servers on one database, started in parallel; every one that started is stopped."""
    with ExitStack() as stack, ThreadPoolExecutor(count) as pool:
        futures = [pool.submit(ServerProcess, db, warehouse, *args) for _ in range(count)]
        servers, errors = [], []
        for future in futures:
            try:
                servers.append(stack.enter_context(future.result()))
            except Exception as e:
                errors.append(e)
        if errors:
            raise errors[0]
        yield servers
