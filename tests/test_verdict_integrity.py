"""The outcome machinery itself, judged with broken harness targets (tests/adapters/broken.py) and
broken HTTP servers: each must get the outcome lakecert documents (docs/results.md), with one row
per check, never a hang, and never a certificate for a run that did not finish."""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import REPO, lakecert, results

ADAPTERS = {"PYTHONPATH": str(REPO / "tests" / "adapters")}
LISTING = "checks/delta/catalog/test_listing.py"
# Short hang guards so that the hanging targets end quickly; generous enough for a loaded machine,
# since what is asserted is the outcome, not the time.
QUICK = {"LAKECERT__deadlines__call_s": "3", "LAKECERT__deadlines__check_s": "120"}


def _statuses(out: Path) -> dict[str, str]:
    return {r["test"]: r["status"] for r in results(out)["results"]}


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("tests.adapters.broken:HangingTarget", "ERROR"),  # the call deadline, with the stuck stack
        ("tests.adapters.broken:SkippingTarget", "ERROR"),  # a skip is not a verified NOT_APPLICABLE
        ("tests.adapters.broken:CrashingTarget", "FAIL"),  # an exception from the product's own code
        ("tests.adapters.broken:UnbuildableTarget", "ERROR"),  # the adapter could not build the catalog
    ],
)
def test_broken_targets_get_the_documented_outcome(target: str, expected: str, out: Path) -> None:
    proc = lakecert("run", "--target", target, "--select", LISTING, "--out", str(out), env={**ADAPTERS, **QUICK})
    statuses = set(_statuses(out).values())
    assert expected in statuses, proc.stdout[-3000:]
    res = results(out)
    if expected == "FAIL":  # where a set-up step crashed, its checks say "premise broken": ERROR, not FAIL
        assert statuses <= {"FAIL", "WARN", "PASS", "ERROR"}
        assert all(r["premise_broken"] for r in res["results"] if r["status"] == "ERROR")
    else:
        assert statuses <= {expected, "PASS"}
    assert proc.returncode == (1 if expected == "FAIL" else 2)
    assert len(res["results"]) == res["run_info"]["checks_selected"], "exactly one row per check"
    if target.endswith(":HangingTarget"):
        stuck = [r for r in res["results"] if r["status"] == "ERROR"]
        assert all("get_commits" in json.loads((out / r["reproducer"]).read_text())["message"] for r in stuck)


@pytest.mark.slow
def test_flaky_catalog_is_a_product_fault(out: Path) -> None:
    proc = lakecert(
        "run",
        "--target",
        "tests.adapters.broken:FlippingTarget",
        "--profile",
        "delta-cm-catalog",
        "--out",
        str(out),
        env=ADAPTERS,
    )
    statuses = set(_statuses(out).values())
    assert "FAIL" in statuses, proc.stdout[-3000:]
    # Flaky set-up steps are broken premises (ERROR, charged to no rule); no suite error besides.
    assert all(r["premise_broken"] for r in results(out)["results"] if r["status"] == "ERROR")
    assert proc.returncode == 1


def test_missing_golden_fixtures_block_the_reader_verdict(tmp_path: Path, out: Path) -> None:
    proc = lakecert("run", "--profile", "delta-cm-reader", "--out", str(out), env={"LAKECERT_FIXTURES": str(tmp_path)})
    res = results(out)
    assert proc.returncode == 2
    assert res["profiles"]["delta-cm-reader"]["verdict"] == "NOT_CERTIFIED"
    assert res["requirements"]["RDR-GOLDEN-TABLES"]["status"] == "ERROR"


def test_same_seed_same_statuses(tmp_path: Path) -> None:
    runs = []
    for n in (1, 2):
        out = tmp_path / f"run{n}"
        # New interpreters: each hashes with its own seed, so statuses that hang on set order differ.
        proc = lakecert("run", "--target", "faulty:trust-staged-files", "--seed", "7", "--out", str(out), fresh=True)
        assert proc.returncode == 1, proc.stdout[-2000:]
        runs.append(_statuses(out))
    assert runs[0] == runs[1] and "FAIL" in runs[0].values()


def test_gate_refuses_a_selected_run(tmp_path: Path, out: Path) -> None:
    lakecert("run", "--select", LISTING, "--out", str(out))
    proc = lakecert("gate", str(out), "--baseline", str(tmp_path / "b.yaml"), "--update")
    assert proc.returncode == 2
    assert not (tmp_path / "b.yaml").exists()


@pytest.mark.parametrize(
    "env",
    [{"LAKECERT__race__proposer": "8"}, {"LAKECERT_PROFILE": "delta-cm-catalog"}, {"LAKECERT__race__proposers": "x"}],
)
def test_configuration_typos_are_refused(env: dict[str, str], out: Path) -> None:
    proc = lakecert("run", "--out", str(out), env=env)
    assert proc.returncode == 2
    assert not (out / "results.json").exists()
    assert list(env)[0] in proc.stderr


def test_unknown_adapter_option_is_a_usage_error(tmp_path: Path, out: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("targets:\n  uc:\n    options: {no_such_option: 1}\n")
    proc = lakecert("run", "--target", "uc", "--config", str(cfg), "--out", str(out))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


# ------------------------------------------------------------------ network targets


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def misbehaving_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """A loopback server answering every request 200 with garbage, or dripping a long body."""
    mode: str = request.param

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if mode == "garbage":
                body = b"<html>not json</html>"
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            while not stop.is_set():  # one byte a second, for ever
                self.wfile.write(b" ")
                self.wfile.flush()
                stop.wait(1)

        do_GET = do_POST = _answer

        def log_message(self, *args: object) -> None:
            return

    stop = threading.Event()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    stop.set()
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("misbehaving_server", ["garbage"], indirect=True)
def test_a_server_answering_garbage_is_unavailable(misbehaving_server: str, out: Path) -> None:
    env = {"LAKECERT__targets__uc__options__url": misbehaving_server}
    proc = lakecert("run", "--target", "uc", "--out", str(out), env=env)
    assert proc.returncode == 2
    _stopped_with_one_line(proc.stderr, out)


def _stopped_with_one_line(stderr: str, out: Path) -> None:
    """An unavailable target: one line naming the cause, no check run, nothing written."""
    said = [line for line in stderr.splitlines() if "unavailable, nothing was run" in line]
    assert len(said) == 1, stderr
    assert not (out / "results.json").exists() and not (out / "certificate.json").exists()


@pytest.mark.parametrize("misbehaving_server", ["drip"], indirect=True)
def test_a_dripping_server_ends_in_error_not_a_hang(misbehaving_server: str, out: Path) -> None:
    env = {"LAKECERT__targets__uc__options__url": misbehaving_server, **QUICK}
    proc = lakecert("run", "--target", "uc", "--select", LISTING, "--out", str(out), env=env)
    assert proc.returncode == 2
    if (out / "results.json").exists():  # the drip began after the preflight's call: the check's own ERROR
        assert {r["status"] for r in results(out)["results"]} == {"ERROR"}
    else:  # the preflight's call dripped past its deadline: the run stopped before any check
        _stopped_with_one_line(proc.stderr, out)


def test_a_dead_url_stops_the_run_with_one_line_and_exit_2(out: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    proc = lakecert("run", "--target", "uc", "--out", str(out), env={"LAKECERT__targets__uc__options__url": url})
    assert proc.returncode == 2
    _stopped_with_one_line(proc.stderr, out)
    assert url in proc.stderr and "ConnectionRefusedError" in proc.stderr
    assert len(proc.stdout.strip().splitlines()) == 0, "no progress, summary or rerun lines: " + proc.stdout[-500:]


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_interrupted_run_is_marked_and_never_certified(out: Path, tmp_path: Path) -> None:
    # The run is interrupted inside a check whose catalog call hangs and says so by a file: no
    # timing decides whether the signal lands before the run ends.
    marker = tmp_path / "hanging"
    env = {
        **os.environ,
        **ADAPTERS,
        "BROKEN_HANG_MARKER": str(marker),
        "LAKECERT__deadlines__call_s": "900",  # a hang guard: the signal ends the call, not this
        "LAKECERT__deadlines__check_s": "900",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "conformance.cli", "run", "--target", "tests.adapters.broken:AnnouncedHangTarget"]
        + ["--select", LISTING, "--out", str(out)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # As from a terminal: pytest-xdist's workers ignore SIGINT, and a child inherits that, so
        # the run would never see the signal (how this test once saw a run finish certified).
        preexec_fn=_sigint_default,
    )
    while proc.poll() is None and not marker.exists():
        time.sleep(0.05)  # waits on a condition: a check is inside the hanging call
    assert proc.poll() is None, "the run ended before its hanging call"
    proc.send_signal(signal.SIGINT)
    assert proc.wait() == 2
    res = results(out)
    assert res["run_info"]["interrupted"] is True
    assert res["verdict"] == "NOT_CERTIFIED"
    assert not (out / "certificate.json").exists()
