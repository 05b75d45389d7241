"""Helpers for lakecert's own tests: run the real CLI, read its results."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


# For tests that ask something other than how far the generated histories and schedules reach
# (credentials, shards, a real client's verdict): the quick budget, few examples, no shrinking.
# tests/test_selftest.py judges every variant on the default budget (docs/benchmarks.md, session 22).
QUICK_BUDGET = {
    "LAKECERT__delta__budget": "quick",
    "LAKECERT__model__examples": "5",
    "LAKECERT__model__steps": "10",
    "LAKECERT__model__shrink": "false",
}


def lakecert(
    *args: str, env: dict[str, str] | None = None, cwd: Path = REPO, fresh: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in its own process, as a user would.

    The process is forked from a server process that has imported what a run imports (pytest,
    hypothesis, the checks), as ``lakecert selftest`` forks its runs: about a second less per run,
    and the suite makes about two hundred. ``fresh=True``, or an ``env`` naming a variable a new
    interpreter reads as it starts (``PYTHONPATH``, ``PYTHONHASHSEED``), starts a new interpreter."""
    merged = {**os.environ, **(env or {})}
    if fresh or any(name.startswith("PYTHON") for name in env or {}):
        return subprocess.run(
            [sys.executable, "-m", "conformance.cli", *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=merged,
            timeout=3600,  # a hang guard only: generous enough for a loaded 2-core machine
        )
    return _forked(list(args), merged, cwd)


# The fork server starts at the first run of a test process and imports ``tests.cli_warm`` once;
# it has one thread, so forking it is safe where forking a test process (with its servers'
# threads) is not.
_FORKS = multiprocessing.get_context("forkserver")
_FORKS.set_forkserver_preload(["tests.cli_warm"])


def _forked(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "conformance.cli", *args]  # what a new interpreter would run
    with tempfile.TemporaryDirectory(prefix="lakecert-cli-") as folder:
        out, err = Path(folder, "stdout"), Path(folder, "stderr")
        run = _FORKS.Process(target=_cli_in_child, args=(args, env, str(cwd), str(out), str(err)))
        run.start()
        run.join(timeout=3600)  # a hang guard only, as above
        if run.exitcode is None:
            run.kill()
            run.join()
            raise subprocess.TimeoutExpired(command, 3600)
        return subprocess.CompletedProcess(command, run.exitcode, out.read_text(), err.read_text())


def _cli_in_child(args: list[str], env: dict[str, str], cwd: str, out: str, err: str) -> None:
    """In the forked process: the run's environment, folder and output files, then the CLI."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    for fd, path in ((1, out), (2, err)):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(opened, fd)
        os.close(opened)
    from conformance.cli import main

    code = 2
    try:
        code = main(args)
    except SystemExit as e:  # as the interpreter ends on it
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
        code = e.code if isinstance(e.code, int) else int(e.code is not None)
    except BaseException:  # noqa: BLE001 - uncaught, as the interpreter reports it and exits 1
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def results(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "results.json").read_text())
    return data


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` by its relative path: two trees are equal byte for byte when these are."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def schedule_runs(out: Path) -> dict[str, list[list[str]]]:
    """Per Allure result (by its name), the held schedules its check ran, from its "schedules run"
    attachment: per schedule, its steps (what each writer did), without the table's line."""
    allure = out / "allure-results"
    found: dict[str, list[list[str]]] = {}
    for path in allure.glob("*-result.json"):
        data = json.loads(path.read_text())
        logs = [a for a in data.get("attachments", []) if a["name"].startswith("schedules run (")]
        found[data["name"]] = [
            [line.strip() for line in block.splitlines()[1:]]
            for a in logs
            for block in (allure / a["source"]).read_text().split("\n\n")
        ]
    return found
