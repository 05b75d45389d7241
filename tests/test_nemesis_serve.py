"""The nemesis's restart over HTTP: `lakecert run --target uc` with a `restart_command` that really stops
`lakecert serve` and starts it again on the same port and database; the restart checks pass against it.
Without the option the same checks are NOT_APPLICABLE (the uc target then has no restart hook)."""

from __future__ import annotations

import json
import shlex
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, lakecert, results

pytestmark = pytest.mark.slow  # minutes: started first (tests/conftest.py)

RESTART_RULES = "CAT-RATIFY-DURABLE"
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _answers(url: str, timeout_s: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with _DIRECT.open(f"{url}/api/2.1/unity-catalog/catalogs", timeout=5):
                return True
        except urllib.error.HTTPError:
            return True
        except OSError:
            time.sleep(0.05)
    return False


def _scripts(work: Path, port: int, *args: str) -> tuple[Path, Path]:
    """start.sh (the server in the background, its pid in server.pid) and stop.sh (stop it, wait until
    it is gone): what a vendor's restart_command would do to its own server."""
    serve = shlex.join(
        [sys.executable, "-m", "reference_impl.server.cli", "--db", str(work / "catalog.sqlite")]
        + ["--warehouse", (work / "warehouse").as_uri(), "--host", "127.0.0.1", "--port", str(port)]
        + ["--log-level", "warning", *args]
    )
    pid, log = work / "server.pid", work / "server.log"
    start, stop = work / "start.sh", work / "stop.sh"
    start.write_text(f"cd {shlex.quote(str(REPO))}\n{serve} >>{log} 2>&1 </dev/null &\necho $! >{pid}\n")
    stop.write_text(
        f"p=$(cat {pid})\nkill $p 2>/dev/null\n"
        "for i in $(seq 600); do kill -0 $p 2>/dev/null || exit 0; sleep 0.05; done\nkill -9 $p\n"
    )
    return start, stop


def _run(work: Path, options: dict[str, Any], out: Path) -> dict[str, Any]:
    config = {
        # The quick budget: each restart here stops and starts a real server (seconds), and the checks
        # that restart once per round do fewer rounds on it.
        "delta": {"budget": "quick"},
        "target": "uc",
        "profiles": ["delta-cm-catalog"],
        "targets": {"uc": {"adapter": "conformance.adapters.uc:UCTarget", "options": options}},
    }
    (work / "lakecert.yaml").write_text(json.dumps(config))
    proc = lakecert("run", "--config", str(work / "lakecert.yaml"), "--requirement", RESTART_RULES, "--out", str(out))
    assert (out / "results.json").exists(), proc.stdout + proc.stderr
    return results(out)


def test_restart_command_restarts_lakecert_serve_and_the_restart_checks_pass(tmp_path: Path) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    start, stop = _scripts(tmp_path, port)
    subprocess.run(["sh", str(start)], check=True)
    try:
        assert _answers(url), (tmp_path / "server.log").read_text()
        first_pid = (tmp_path / "server.pid").read_text().strip()
        restart = f"sh {shlex.quote(str(stop))} && sh {shlex.quote(str(start))}"
        res = _run(tmp_path, {"url": url, "restart_command": restart}, tmp_path / "out")
        rows = [r for r in res["results"] if "test_ratified_commits_survive_a_restart" in r["test"]]
        assert [r["status"] for r in rows] == ["PASS"], rows
        assert (tmp_path / "server.pid").read_text().strip() != first_pid, "the server was never restarted"
        # Without the option: the restart check verifies the hook is absent and does not apply.
        res = _run(tmp_path, {"url": url}, tmp_path / "out-without")
        rows = [r for r in res["results"] if "test_ratified_commits_survive_a_restart" in r["test"]]
        assert [r["status"] for r in rows] == ["NOT_APPLICABLE"], rows
    finally:
        subprocess.run(["sh", str(stop)], check=False)


def test_a_served_catalog_that_keeps_ratifications_in_memory_fails_after_a_real_restart(tmp_path: Path) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    start, stop = _scripts(tmp_path, port, "--fault", "ratifications-in-memory")
    subprocess.run(["sh", str(start)], check=True)
    try:
        assert _answers(url), (tmp_path / "server.log").read_text()
        restart = f"sh {shlex.quote(str(stop))} && sh {shlex.quote(str(start))}"
        res = _run(tmp_path, {"url": url, "restart_command": restart}, tmp_path / "out")
        assert res["requirements"]["CAT-RATIFY-DURABLE"]["status"] == "FAIL", res["results"]
    finally:
        subprocess.run(["sh", str(stop)], check=False)
