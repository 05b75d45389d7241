"""A process that has imported lakecert's heavy dependencies once and forks one child per mutant.

``python -m tests.mutation.forkserver SOCKET TIMEOUT_S`` in a group's tree. Importing pytest,
hypothesis, pyarrow, fastapi and pyiceberg takes a few seconds per process, more than a catalog
run's checks on a loaded machine; lakecert's own modules are NOT imported here, so each child
imports them fresh from disk, with cosmic-ray's mutation in place. ``kill.py`` sends its
arguments over the socket and gets the child's exit code and output back.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import socket
import sys
from pathlib import Path

HEAVY = (
    "pytest",
    "hypothesis",
    "pydantic",
    "pyarrow",
    "pyarrow.parquet",
    "allure",
    "allure_pytest",
    "yaml",
    "httpx",
    "fastapi",
    "uvicorn",
    "pyiceberg.catalog.rest",
    "pyiceberg.table",
    "sqlalchemy",
)


def _child(conn: socket.socket, argv: list[str], timeout_s: float) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the run may wait for processes of its own
    signal.alarm(max(1, int(timeout_s)))  # a mutant that hangs ends here too, not only its client
    code, why = 1, "the run broke"
    try:
        from tests.mutation.kill import judge

        code, why = judge(argv)
    except BaseException as e:  # noqa: BLE001 - whatever the mutant raised is a kill
        why = f"{type(e).__name__}: {e}"
    conn.sendall(json.dumps({"code": code, "output": why}).encode() + b"\n")
    os._exit(0)  # no atexit handlers of the server's copy


def serve(path: str, timeout_s: float) -> None:
    for name in HEAVY:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        server.listen()
        Path(path + ".ready").touch()
        while True:
            conn, _ = server.accept()
            request = json.loads(conn.makefile().readline())
            if os.fork() == 0:
                server.close()
                _child(conn, request["argv"], timeout_s)
            conn.close()


if __name__ == "__main__":
    serve(sys.argv[1], float(sys.argv[2]))
