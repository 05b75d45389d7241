"""A run shared between processes (``--jobs 2``, conformance/plugin/shards.py) under hostile
conditions: a target whose preflight fails, another process that crashes, the run's own process
killed, a Ctrl-C that reaches every process. Each reports what one process would, or an unfinished
run, and leaves no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.plugin import shards
from tests.helpers import REPO, lakecert, results, start_shared_hang

ADAPTERS = {**os.environ, "PYTHONPATH": str(REPO / "tests" / "adapters")}
GUARD_S = 300  # hang guards only: generous for a loaded 2-core machine


def test_a_failed_preflight_stops_a_shared_run_before_any_process_starts(out: Path) -> None:
    # The preflight runs once, in the run's own process, before the other one is forked: an
    # unavailable target stops the run with one line, and no process runs a check against it.
    proc = lakecert(
        "run", "--target", "tests.adapters.shard_hostile:UnavailableSharedTarget", "--jobs", "2", "--out", str(out),
        env=ADAPTERS,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "unavailable, nothing was run" in proc.stderr
    assert not (out / "results.json").exists() and not (out / "certificate.json").exists()
    assert not (out / "work").exists() or not list(out.glob("work/shard-*")), "no share of the run started"


def test_a_process_that_crashes_leaves_the_run_incomplete(out: Path) -> None:
    proc = lakecert(
        "run", "--target", "tests.adapters.shard_hostile:ExitingSharedTarget", "--jobs", "2", "--out", str(out),
        env=ADAPTERS,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    res = results(out)
    info = res["run_info"]
    assert info["complete"] is False and info["interrupted"] is False and res["verdict"] == "NOT_CERTIFIED"
    assert len(res["results"]) < info["checks_selected"]
    assert not (out / "certificate.json").exists()
    assert "INCOMPLETE" in proc.stdout  # the summary says why there is no certificate


def _hanging_run(out: Path, marker: Path) -> tuple[subprocess.Popen[bytes], list[int]]:
    """A shared run whose two processes both hang in their first listing; returns once both do,
    with their pids (the run's own first)."""
    proc = start_shared_hang(out, marker, own_group=True)
    started = time.monotonic()
    while proc.poll() is None and len(list(marker.parent.glob(f"{marker.name}.*"))) < 2:
        assert time.monotonic() - started < GUARD_S, "the run's processes never reached their listing"
        time.sleep(0.05)  # waits on a condition: both processes inside a hanging call
    assert proc.poll() is None, "the run ended before its hanging calls"
    pids = sorted((int(p.suffix[1:]) for p in marker.parent.glob(f"{marker.name}.*")), key=lambda p: p != proc.pid)
    assert pids[0] == proc.pid
    return proc, pids


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] == "Z"  # ended, waiting for init to reap it
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the other process follows the run's by prctl")
def test_a_killed_run_leaves_no_process_behind(out: Path, tmp_path: Path) -> None:
    # SIGKILL gives the run's own process no chance to stop the other one: it used to run on alone,
    # writing into the run's folders, until its own call deadline.
    proc, (own, other) = _hanging_run(out, tmp_path / "hanging")
    proc.kill()
    assert proc.wait() == -signal.SIGKILL
    started = time.monotonic()
    while not _gone(other):
        assert time.monotonic() - started < GUARD_S, f"process {other} of the killed run is still running"
        time.sleep(0.05)
    assert not (out / "certificate.json").exists()


def test_a_ctrl_c_to_every_process_still_gathers_every_share(out: Path, tmp_path: Path) -> None:
    # A terminal's Ctrl-C reaches both processes, and the run's own then stops the other with SIGTERM
    # as well: that second stop used to break the other's session end, losing its rows (and printing
    # a traceback).
    proc, (own, other) = _hanging_run(out, tmp_path / "hanging")
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=GUARD_S)
    assert proc.returncode == 2
    res = results(out)
    assert res["run_info"]["interrupted"] is True and res["verdict"] == "NOT_CERTIFIED"
    assert not (out / "certificate.json").exists()
    assert (shards.work_folder(out, 1) / shards.ROWS).is_file()  # the other process handed its rows over
    assert len(res["results"]) == 2  # each process's interrupted check has its row
    assert b"Traceback" not in err
    assert _gone(other)


def _waiting(pid: int) -> bool:
    """The process sits in waitpid (Linux's wchan); False where the kernel does not say."""
    try:
        return Path(f"/proc/{pid}/wchan").read_text() == "do_wait"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/wchan").exists(), reason="needs Linux's /proc/<pid>/wchan")
def test_an_interrupt_while_the_run_waits_for_the_other_process_says_interrupted(out: Path) -> None:
    # The run's own process ended its session normally and waits for the other one, which hangs:
    # a stop then made results.json say interrupted, but the summary printed no word of it.
    env = {**ADAPTERS, "LAKECERT__deadlines__call_s": "900", "LAKECERT__deadlines__check_s": "900"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "conformance.cli", "run", "--target", "tests.adapters.shard_hostile:ChildHangTarget"]
        + ["--jobs", "2", "--out", str(out)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    started = time.monotonic()
    while proc.poll() is None and not _waiting(proc.pid):
        assert time.monotonic() - started < GUARD_S, "the run's own process never waited for the other one"
        time.sleep(0.05)  # waits on a condition: process 0 is in waitpid
    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=GUARD_S)
    assert proc.returncode == 2
    res = results(out)
    assert res["run_info"]["interrupted"] is True and res["verdict"] == "NOT_CERTIFIED"
    assert not (out / "certificate.json").exists()
    assert b"INTERRUPTED" in stdout
