"""The Delta Kernel driver process: one JVM, JSON lines over its stdin and stdout.

The driver (``java/src/lakecert/kernel``, compiled by ``make setup``) announces every file Kernel
writes, copies or deletes before going on, and waits for an acknowledgement; ``KernelProcess``
hands each announcement to an observer first, so the observer's record is ordered exactly against
whatever else happens meanwhile (the catalog calls Kernel makes over HTTP).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.contract.delta import AdapterBroken

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_JARS = ROOT / ".cache" / "jars" / "kernel"
DEFAULT_CLASSES = ROOT / ".cache" / "kernel-driver"
MAIN_CLASS = "lakecert.kernel.Driver"

Observer = Callable[[dict[str, Any]], None]
# The driver's error kind for its own failures (Errors.java), never Kernel's answer.
HARNESS = "harness"


class KernelSetupError(Exception):
    """The jars or the compiled driver are missing: run ``make setup``."""


class KernelDied(Exception):
    """The driver process ended or stopped answering."""


class KernelHarnessError(KernelDied, AdapterBroken):
    """lakecert's driver does not fit the Kernel jars it runs on: the driver classified what the JVM
    raised as ``harness`` (a ``LinkageError`` such as ``NoSuchMethodError`` or ``NoClassDefFoundError``,
    a ``ReflectiveOperationException``, or a failure of its compat layer, ``KernelCompat.java``).

    That says nothing about Kernel, so it must never become Kernel's refusal (NOT_APPLICABLE) or a
    product defect (FAIL): it is the contract's ``AdapterBroken`` (ERROR, ``conformance/plugin/outcomes.py``), and a
    ``KernelDied`` so that callers which stop on a broken driver stop on it too. It is not a
    ``KernelFailed``, which the adapters turn into the contract's errors or ``NotSupported``."""

    def __init__(self, java_class: str, message: str, causes: list[str]) -> None:
        super().__init__(
            f"lakecert's Kernel driver does not fit the loaded jars: {java_class}: {message}"
            + "".join(f"\n  caused by {c}" for c in causes)
        )
        self.java_class = java_class


class KernelFailed(Exception):
    """Kernel raised: ``kind`` is the driver's classification (conflict, rejected, not_found, invalid,
    error), ``java_class`` the exception's class."""

    def __init__(self, kind: str, java_class: str, message: str, causes: list[str]) -> None:
        super().__init__(f"{java_class}: {message}" + "".join(f"\n  caused by {c}" for c in causes))
        self.kind = kind
        self.java_class = java_class


def classpath(jars: Path, classes: Path) -> str:
    if not (classes / "lakecert" / "kernel" / "Driver.class").is_file():
        raise KernelSetupError(f"the Delta Kernel driver is not compiled in {classes}: run `make setup`")
    found = sorted(jars.glob("*.jar"))
    if not any(j.name.startswith("delta-kernel-api-") for j in found):
        raise KernelSetupError(f"no Delta Kernel jars in {jars}: run `make setup`")
    return ":".join([str(classes), *map(str, found)])


class KernelProcess:
    """``java lakecert.kernel.Driver URL [TOKEN]``; ``call`` sends one request and returns its value.

    A reader thread feeds a queue, so a silent JVM is noticed after ``timeout_s`` (a hang guard,
    generous) instead of blocking forever."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        jars: Path = DEFAULT_JARS,
        classes: Path = DEFAULT_CLASSES,
        java: str = "java",
        timeout_s: float = 600.0,
        hadoop: dict[str, str] | None = None,
    ) -> None:
        settings = [f"{k}={v}" for k, v in (hadoop or {}).items()]
        self._command = [java, "-Xmx1g", "-cp", classpath(jars, classes), MAIN_CLASS, url, token or "", *settings]
        self._timeout_s = timeout_s
        self._lock = threading.Lock()
        self._interrupted = False
        self._start()

    def _start(self) -> None:
        """Start the driver and wait for its hello (again, after an interrupted request killed it)."""
        self._proc = subprocess.Popen(
            self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: list[str] = []
        threading.Thread(target=self._pump_stdout, args=(self._proc, self._lines), daemon=True).start()
        threading.Thread(target=self._pump_stderr, args=(self._proc, self._stderr), daemon=True).start()
        hello = self._next()
        if hello.get("type") != "ready":
            self.close()
            raise KernelDied(f"unexpected first line from the driver: {hello}")
        self._read_hello(hello)

    def _read_hello(self, hello: dict[str, Any]) -> None:
        """``kernel_version`` (delta-kernel-api's) and ``components``: per jar (delta-kernel-api,
        -defaults, -unitycatalog, delta-storage, unitycatalog-client), the version the JVM actually
        loaded, as the driver read it from the jar ("unknown" when it could not)."""
        self.kernel_version = str(hello.get("kernel") or "unknown")
        loaded = hello.get("components")
        self.components: dict[str, str] = (
            {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}
        )

    @staticmethod
    def _pump_stdout(proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    @staticmethod
    def _pump_stderr(proc: subprocess.Popen[str], tail: list[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            tail.append(line)
            del tail[:-200]  # the tail is what explains a crash

    def _next(self) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=self._timeout_s)
        except queue.Empty as e:
            raise KernelDied(f"the driver did not answer within {self._timeout_s}s") from e
        if line is None:
            raise KernelDied("the driver exited:\n" + "".join(self._stderr[-40:]))
        message: dict[str, Any] = json.loads(line)
        return message

    def _write(self, text: str) -> None:
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(text + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, ValueError) as e:
            raise KernelDied("the driver's input is closed:\n" + "".join(self._stderr[-40:])) from e

    def call(self, request: dict[str, Any], observer: Observer) -> Any:
        """Run one request; each storage event goes to ``observer`` before the driver may go on."""
        with self._lock:
            if self._interrupted:  # lakecert killed it: a new driver, so the next check starts clean
                self._interrupted = False
                self._start()
            self._write(json.dumps(request))
            try:
                return self._exchange(observer)
            except (KernelFailed, KernelDied):
                raise
            except BaseException:
                # Interrupted mid-request (a deadline, an observer that raised): the driver may be
                # waiting for an ack or hold an unread answer, so nothing it says can be trusted.
                self._proc.kill()
                self._proc.wait()
                self._interrupted = True
                raise

    def _exchange(self, observer: Observer) -> Any:
        while True:
            message = self._next()
            kind = message.get("type")
            if kind == "event":
                observer(message)
                self._write("ack")
            elif kind == "result":
                return message.get("value")
            elif kind == "error" and message.get("kind") == HARNESS:
                raise KernelHarnessError(
                    str(message.get("class")),
                    str(message.get("message")),
                    [str(c) for c in message.get("causes", [])],
                )
            elif kind == "error":
                raise KernelFailed(
                    str(message.get("kind")),
                    str(message.get("class")),
                    str(message.get("message")),
                    [str(c) for c in message.get("causes", [])],
                )
            else:
                raise KernelDied(f"unexpected line from the driver: {message}")

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._write(json.dumps({"op": "exit"}))
                self._proc.wait(timeout=30)
            except (KernelDied, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()
