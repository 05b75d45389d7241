"""What a vendor reads in the terminal: per failing check the rule, why, the reproducer and a rerun
command that, pasted into a shell, reproduces the failure; partial runs never read as a verdict."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from conformance.config import load_config
from conformance.plugin.progress import Ticker
from conformance.report.rerun import rerun_command, secrets_to_set
from conformance.report.summary import MAX_DETAILED, PARTIAL, print_summary
from tests.helpers import REPO, lakecert, results

GAP_CHECK = "checks/delta/catalog/test_ratification.py::test_gap_is_refused"


def test_rerun_repeats_the_target_options_and_names_secrets_only(tmp_path: Path) -> None:
    cfg_file = tmp_path / "lakecert.yaml"
    cfg_file.write_text("seed: 7\n")
    env = {
        "LAKECERT__targets__uc__options__url": "http://127.0.0.1:8080/api",
        "LAKECERT__targets__uc__options__token": "s3cr3t-value",
        "LAKECERT__targets__other__options__url": "http://elsewhere",
        "LAKECERT__targets__uc__options__api_key": "another-secret",
    }
    cfg = load_config(cfg_file, env).with_overrides(target="uc")
    line = rerun_command(cfg, ["delta-cm-catalog"], [GAP_CHECK])
    words = shlex.split(line)
    assert "s3cr3t-value" not in line and "another-secret" not in line and "elsewhere" not in line
    assert "LAKECERT__targets__uc__options__url=http://127.0.0.1:8080/api" in words
    assert 'LAKECERT__targets__uc__options__token="$UC_TOKEN"' in line
    assert sorted(secrets_to_set(cfg)) == ["UC_API_KEY", "UC_TOKEN"]
    run = words[words.index("lakecert") :]
    assert run[:2] == ["lakecert", "run"]
    assert run[run.index("--config") + 1] == str(cfg_file.resolve())
    assert run[run.index("--seed") + 1] == "7" and run[run.index("--target") + 1] == "uc"
    assert run[run.index("--select") + 1] == GAP_CHECK


def test_rerun_of_an_interop_check_names_the_catalog_target_and_its_options(tmp_path: Path) -> None:
    # Issue 27 item 8: without them the pasted line exits 2 (Kernel) or judges another catalog.
    env = {
        "LAKECERT__targets__uc__options__url": "http://127.0.0.1:8080",
        "LAKECERT__targets__delta_kernel__options__jars": "/opt/kernel",
        "LAKECERT__targets__other__options__url": "http://elsewhere",
    }
    cfg = load_config(None, env).with_overrides(target="delta-kernel", catalog_target="uc")
    words = shlex.split(rerun_command(cfg, ["delta-cm-interop"], [GAP_CHECK]))
    assert "LAKECERT__targets__uc__options__url=http://127.0.0.1:8080" in words
    assert "LAKECERT__targets__delta_kernel__options__jars=/opt/kernel" in words
    assert not any("elsewhere" in w for w in words)
    run = words[words.index("lakecert") :]
    assert run[run.index("--catalog-target") + 1] == "uc" and run[run.index("--target") + 1] == "delta-kernel"


def _rerun_lines(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    return [lines[i + 1].strip() for i, line in enumerate(lines) if line.strip().startswith("rerun")]


def test_failing_run_prints_why_and_a_rerun_that_reproduces_when_pasted(out: Path, tmp_path: Path) -> None:
    env = {"LAKECERT__race__repeats": "2", "LAKECERT__storage__secret_access_key": "never-printed"}
    proc = lakecert("run", "--target", "faulty:accept-gap", "--profile", "delta-cm-catalog", "--out", str(out), env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "never-printed" not in proc.stdout + proc.stderr
    assert "failed," not in proc.stdout and " passed" not in proc.stdout  # pytest's own summary line
    # No reprs of the suite's objects from pytest's assertion introspection ("+  where ... object at").
    assert " object at 0x" not in proc.stdout and "+  where" not in proc.stdout
    assert all(" object at 0x" not in r["message"] for r in results(out)["results"])
    failing = [r for r in results(out)["results"] if r["status"] == "FAIL"]
    assert failing
    for row in failing:
        assert f"FAIL {row['test']}" in proc.stdout
        assert str(out / row["reproducer"]) in proc.stdout
        assert "rule:       CAT-RATIFY-SEQUENTIAL (MUST): " in proc.stdout
        assert f"why:        {row['message'].splitlines()[0]}" in proc.stdout
    reruns = _rerun_lines(proc.stdout)
    assert len(reruns) == len(failing)
    gap = next(r for r in reruns if GAP_CHECK in r)
    assert "LAKECERT__race__repeats=2" in gap and "$STORAGE_SECRET_ACCESS_KEY" in gap
    again = tmp_path / "again"
    # Paste it into a shell where `lakecert` is this checkout's CLI and the named secret is set.
    script = f'lakecert() {{ "{sys.executable}" -m conformance.cli "$@"; }}\nexport STORAGE_SECRET_ACCESS_KEY=x\n'
    script += f"{gap} --out {shlex.quote(str(again))}\n"
    pasted = subprocess.run(
        ["bash", "-c", script], cwd=REPO, capture_output=True, text=True, env=dict(os.environ), timeout=3600
    )
    assert pasted.returncode == 1, pasted.stdout + pasted.stderr
    res = results(again)
    assert [(r["test"], r["status"]) for r in res["results"]] == [(GAP_CHECK, "FAIL")]
    assert res["run_info"]["config"]["race"]["repeats"] == 2
    assert PARTIAL in pasted.stdout and "NOT_CERTIFIED" not in pasted.stdout


def test_passing_partial_run_is_not_called_a_verdict(out: Path) -> None:
    proc = lakecert("run", "--select", "checks/delta/catalog/test_ratification.py", "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"verdict: {PARTIAL}" in proc.stdout
    assert "NOT_CERTIFIED" not in proc.stdout and "CERTIFIED" not in proc.stdout
    assert not (out / "certificate.json").exists()


def _results_with(message: str) -> dict[str, object]:
    return {
        "run_info": {"suite_version": "0", "target": "t", "seed": 1, "partial": False, "complete": True},
        "results": [
            {
                "test": "checks/x.py::test_y",
                "requirements": ["ICE-X"],
                "status": "FAIL",
                "message": message,
                "reproducer": None,
                "violated": [],
            },
        ],
        "requirements": {"ICE-X": {"level": "MUST", "status": "FAIL"}},
        "profiles": {"iceberg-row-delta": {"verdict": "NOT_CERTIFIED"}},
        "counts": {"FAIL": 1},
        "verdict": "NOT_CERTIFIED",
    }


def test_history_explanation_is_printed_under_the_why(tmp_path: Path) -> None:
    explanation = "\n".join(
        ["the read at v3 returns row 1 deleted, which no serial order explains", "schedule:", "  1. w1", "  2. r"]
    )
    buf = io.StringIO()
    code = print_summary(_results_with(explanation), tmp_path, Console(file=buf, width=200, soft_wrap=True))
    text = buf.getvalue()
    assert code == 1
    assert "why:        the read at v3 returns row 1 deleted, which no serial order explains" in text
    for line in explanation.splitlines()[1:]:
        assert f"              {line}" in text
    assert "[/" not in text


def test_a_long_check_is_named_while_it_runs() -> None:
    stream = io.StringIO()
    ticker = Ticker("checks/x.py::test_slow", stream, first_s=0.01, every_s=0.01)
    try:
        deadline = time.monotonic() + 60  # a hang guard only
        while stream.getvalue().count("still running checks/x.py::test_slow") < 2:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        ticker.stop()
    said = stream.getvalue()
    Ticker("checks/x.py::test_fast", stream, first_s=30).stop()  # a check that ends in time is not named
    assert stream.getvalue() == said


def test_many_failures_beyond_the_first_ones_get_one_line_each(tmp_path: Path) -> None:
    data = _results_with("first\nsecond")
    row = data["results"][0]  # type: ignore[index]
    data["results"] = [{**row, "test": f"checks/x.py::test_{i}"} for i in range(MAX_DETAILED + 2)]
    buf = io.StringIO()
    print_summary(data, tmp_path, Console(file=buf, width=200, soft_wrap=True))
    text = buf.getvalue()
    assert text.count("  why:        first") == MAX_DETAILED
    assert "\n2 more (each reproducer has its rerun command):" in text
    for i in (MAX_DETAILED, MAX_DETAILED + 1):
        assert f"  FAIL checks/x.py::test_{i} (ICE-X): first\n" in text


# A vendor's catalog whose staging calls take a second each: the check that stages three tables is
# silent for seconds, far longer than the thresholds the run below is given.
SLOW_ADAPTER = """
import time

from memory_catalog import MemoryCatalog, MemoryCatalogTarget


class SlowCatalog(MemoryCatalog):
    def create_staging_table(self):
        time.sleep(1.0)
        return super().create_staging_table()


class SlowTarget(MemoryCatalogTarget):
    name = "slow-memory-catalog"

    def make_catalog(self, env):
        return SlowCatalog(env.warehouse_uri, env.storage, self.max_unpublished)
"""

# The thresholds are module constants, not settings: the run is started with them lowered.
RUN_WITH_LOW_THRESHOLDS = """
import sys
import conformance.plugin.progress as progress
progress.FIRST_S, progress.EVERY_S = 0.05, 0.2
from conformance.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_silent_check_is_announced_on_a_stderr_that_is_no_terminal(tmp_path: Path) -> None:
    """Issue 30: checks of minutes printed nothing, because the line went to the stderr pytest
    captures while a check runs. Here stderr is a pipe, as in a CI log."""
    (tmp_path / "slow_adapter.py").write_text(SLOW_ADAPTER)
    check = "checks/delta/catalog/test_discovery.py::test_staging_locations_are_unique"
    proc = subprocess.run(
        [sys.executable, "-c", RUN_WITH_LOW_THRESHOLDS, "run", "--target", "slow_adapter:SlowTarget"]
        + ["--select", check, "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO / 'tests' / 'adapters'}"},
        timeout=600,  # a hang guard only
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"lakecert: still running {check} (" in proc.stderr, proc.stderr[-2000:]
    assert "still running" not in proc.stdout  # pytest's dots stay apart from the announcements


def test_a_network_check_names_its_http_replay_script(tmp_path: Path) -> None:
    rel = "reproducers/checks_x.py_test_y.json"
    (tmp_path / "reproducers").mkdir()
    (tmp_path / rel).write_text(
        json.dumps({"rerun": "lakecert run ...", "http": {"replay": "checks_x.http/replay.sh"}})
    )
    data = _results_with("the catalog answered 500")
    data["results"][0]["reproducer"] = rel  # type: ignore[index]
    buf = io.StringIO()
    print_summary(data, tmp_path, Console(file=buf, width=400, soft_wrap=True))
    assert f"  http:       bash {tmp_path / 'reproducers' / 'checks_x.http' / 'replay.sh'}" in buf.getvalue()


def test_targets_shows_the_side_of_each_variant() -> None:
    lines = lakecert("targets").stdout.splitlines()
    assert lines[0].split() == ["TARGET", "KIND", "SIDE", "DESCRIPTION"]
    sides = {line.split()[0]: line.split()[2] for line in lines[1:]}
    assert sides["faulty:accept-gap"] == "catalog" and sides["faulty:abort-after-swap"] == "engine"
    assert sides["reference"] == "-"
