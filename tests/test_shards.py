"""A run whose checks are shared among processes (``--jobs``, conformance/plugin/shards.py) reports
what the same run in one process reports, and is never certified when a process's share is missing
or the run was interrupted."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.config import load_config
from conformance.plugin import shards
from conformance.registry import build_target
from conformance.report.outcomes import Outcome
from conformance.report.results import CheckResult, RunSummary
from conformance.run_context import RUN_KEY, RunContext, run_jobs
from tests.helpers import REPO, lakecert, results, start_shared_hang, tree_bytes


def _rows(res: dict[str, Any]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(r["test"], r["status"], tuple(r["violated"])) for r in res["results"]]


@pytest.mark.parametrize(
    ("target", "profiles"),
    [
        ("reference", "delta-cm-catalog,delta-row-conflicts"),
        ("faulty:ratify-twice", "delta-cm-catalog,delta-cm-interop"),
    ],
)
def test_two_processes_report_what_one_reports(target: str, profiles: str, tmp_path: Path) -> None:
    runs = {}
    for jobs in ("1", "2"):
        out = tmp_path / jobs
        proc = lakecert("run", "--target", target, "--profile", profiles, "--jobs", jobs, "--out", str(out))
        assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
        runs[jobs] = (proc.returncode, results(out), out)
    (code1, one, _), (code2, two, out2) = runs["1"], runs["2"]
    assert (one["run_info"]["jobs"], two["run_info"]["jobs"]) == (1, 2)
    assert code1 == code2 and one["verdict"] == two["verdict"]
    assert _rows(one) == _rows(two)  # the same checks, outcomes and broken rules, in collection order
    assert one["requirements"] == two["requirements"]
    assert one["run_info"]["held_schedules"] == two["run_info"]["held_schedules"]
    for row in two["results"]:  # each failure's reproducer is where its row says, whichever process ran it
        if row["status"] != "PASS":
            assert (out2 / row["reproducer"]).is_file(), row["test"]
    assert len(list((out2 / "allure-results").glob("*-result.json"))) == len(two["results"])
    if target == "faulty:ratify-twice":
        assert any(r["status"] == "FAIL" for r in two["results"])


def test_a_missing_share_leaves_the_run_incomplete(tmp_path: Path) -> None:
    """What process 0 does when another process ended without its rows (killed, say)."""
    ctx = RunContext.open(load_config(None), tmp_path / "out")
    config = pytest.Config.fromdictargs({}, [])
    config.stash[RUN_KEY] = ctx
    shard = shards.Shard(0, 2, shards.counter(), children=(), order={"a": 0, "b": 1, "c": 2})
    config.stash[shards.SHARD_KEY] = shard
    mine = [CheckResult("c", ["CAT-RATIFY-ONCE"], Outcome.PASS), CheckResult("a", ["CAT-RATIFY-ONCE"], Outcome.PASS)]
    rows, interrupted = shards.gather(config, mine, interrupted=False)
    assert [r.test for r in rows] == ["a", "c"] and not interrupted
    summary = RunSummary(ctx.run_info(), rows, {}, [], collected=ctx.collected)
    assert ctx.collected == 3 and not summary.complete and not summary.finished
    ctx.close()


def test_an_interrupted_shared_run_stops_every_process(out: Path, tmp_path: Path) -> None:
    # Every process hangs in its first listing, announcing it by a file named after its pid; the
    # run's own process is then interrupted: it stops the others and reports an interrupted run.
    marker = tmp_path / "hanging"
    proc = start_shared_hang(out, marker)
    own = Path(f"{marker}.{proc.pid}")
    while proc.poll() is None and not own.exists():
        time.sleep(0.05)  # waits on a condition: the run's own process is inside a hanging call
    assert proc.poll() is None, "the run ended before its hanging call"
    proc.send_signal(signal.SIGINT)
    proc.communicate()
    assert proc.returncode == 2
    res = results(out)
    assert res["run_info"]["interrupted"] is True and res["verdict"] == "NOT_CERTIFIED"
    assert not (out / "certificate.json").exists()
    for hung in tmp_path.glob("hanging.*"):  # the other process was stopped and reaped
        pid = int(hung.suffix[1:])
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--jobs", "0"], {}),
        (["--jobs", "two"], {}),
        (["--jobs", "2"], {"PYTHONPATH": str(REPO / "tests" / "adapters")}),  # a target that is not in process
        (["--jobs", "2", "--fail-fast"], {}),
        (["--jobs", "100000"], {}),  # every process builds its own target: far more than the cores is a typo
        ([], {"LAKECERT__jobs": "-1"}),
    ],
)
def test_a_bad_number_of_processes_is_refused_and_changes_nothing(
    args: list[str], env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    (out / "work").mkdir(parents=True)
    (out / "results.json").write_text("{}")  # an earlier run's
    (out / "work" / "kept").write_text("x")
    before = tree_bytes(out)
    target = "tests.adapters.memory_catalog:MemoryCatalogTarget" if env.get("PYTHONPATH") else "reference"
    proc = lakecert("run", "--target", target, *args, "--out", str(out), env={**os.environ, **env})
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert tree_bytes(out) == before


@pytest.mark.parametrize(
    ("env", "cores", "selected", "expected"),
    [
        ({}, 8, False, 2),  # auto: the cores, at most two
        ({}, 1, False, 1),
        ({}, 8, True, 1),  # checks named one by one (--select)
        ({"LAKECERT__fail_fast": "true"}, 8, False, 1),  # stops at one FAIL, in one process
        ({"LAKECERT__jobs": "3"}, 8, False, 3),
    ],
)
def test_auto_shares_an_in_process_run_between_at_most_two_processes(
    env: dict[str, str], cores: int, selected: bool, expected: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    cfg = load_config(None, environ=env)
    assert run_jobs(cfg, build_target("reference", cfg), None, selected=selected) == expected


def test_auto_runs_a_target_that_is_not_built_in_process_in_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    cfg = load_config(None, environ={})
    reference = build_target("reference", cfg)
    monkeypatch.setattr(reference, "in_process", False)
    assert run_jobs(cfg, reference, None, selected=False) == 1
    assert run_jobs(cfg, build_target("reference", cfg), reference, selected=False) == 1  # bound to a catalog
