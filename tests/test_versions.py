"""The release under test as a setting: fetching a release (from a loopback Maven repository made by
the test), what happens when a registry lacks it, the version diff of two runs, the gate's refusal
of another target configuration, budgets that leave rules out, and the generated compatibility page."""

from __future__ import annotations

import copy
import functools
import hashlib
import http.server
import json
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.artifacts import maven
from conformance.artifacts.cache import ReleaseUnavailable, filled
from conformance.report.compat import config_of, page, record
from conformance.report.gate import unfit_for_gate, updated_baseline
from conformance.report.version_diff import Incomparable, diff, render
from tests.helpers import REPO, lakecert, results


def _jar(path: Path, version: str) -> None:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", f"Manifest-Version: 1.0\nImplementation-Version: {version}\n")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A Maven repository on loopback: io.example:engine at 1.0.0, 1.0.1 and 1.1.0; io.example:part
    at 1.0.0 only (a release published in part); 1.1.0's jar has a wrong SHA-1."""
    root = tmp_path / "repo"
    for artifact, versions in (("engine", ["1.0.0", "1.0.1", "1.1.0"]), ("part", ["1.0.0"])):
        base = root / "io" / "example" / artifact
        listed = "".join(f"<version>{v}</version>" for v in versions)
        base.mkdir(parents=True)
        (base / "maven-metadata.xml").write_text(
            f"<metadata><versioning><versions>{listed}</versions></versioning></metadata>"
        )
        for v in versions:
            (base / v).mkdir()
            jar = base / v / f"{artifact}-{v}.jar"
            _jar(jar, v)
            digest = hashlib.sha1(jar.read_bytes()).hexdigest() if v != "1.1.0" else "0" * 40
            (base / v / f"{jar.name}.sha1").write_text(digest)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv(maven.REPO_ENV, f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("LAKECERT_CACHE", str(tmp_path / "cache"))
    yield root
    server.shutdown()
    server.server_close()


def test_a_release_is_fetched_once_checked_and_read_back(repo: Path, tmp_path: Path) -> None:
    fetches = []

    def fill(folder: Path) -> None:
        fetches.append(folder)
        maven.download("io.example", "engine", "1.0.1", folder)

    first = filled("engine/1.0.1", "engine 1.0.1", fill)
    again = filled("engine/1.0.1", "engine 1.0.1", fill)
    assert first == again and len(fetches) == 1, "a complete folder is reused, not fetched again"
    assert maven.manifest_version(first / "engine-1.0.1.jar") == "1.0.1"
    assert maven.released("io.example", "engine") == ["1.0.0", "1.0.1", "1.1.0"]
    assert maven.newest_patch("io.example", "part", "1.0.5") == "1.0.0"
    assert maven.newest_patch("io.example", "part", "1.1.0") is None


def test_what_a_registry_lacks_or_corrupts_is_a_set_up_error_that_leaves_nothing(repo: Path) -> None:
    with pytest.raises(ReleaseUnavailable, match="9.9.9"):
        maven.require("io.example", "engine", "9.9.9")

    def corrupt(folder: Path) -> None:
        maven.download("io.example", "engine", "1.1.0", folder)

    with pytest.raises(ReleaseUnavailable):
        filled("engine/1.1.0", "engine 1.1.0", corrupt)
    cache = Path(str(repo.parent / "cache"))
    assert not (cache / "engine" / "1.1.0").exists(), "a failed fetch leaves no folder to be mistaken for a release"


def test_an_unreleased_version_stops_the_run_with_one_line_and_exit_2(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "never"
    env = {maven.REPO_ENV: maven.repo(), "LAKECERT_CACHE": str(tmp_path / "cache"),
           "LAKECERT__targets__spark_iceberg__options__version": "0.0.1"}  # fmt: skip
    proc = lakecert("run", "--target", "spark-iceberg", "--out", str(out), env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "0.0.1" in proc.stderr and "iceberg-spark-runtime" in proc.stderr
    assert len([ln for ln in proc.stderr.splitlines() if ln.startswith("lakecert:")]) == 1
    assert not out.exists(), "a refused configuration changes nothing"


def _results(statuses: dict[str, str], version: str, **info: Any) -> dict[str, Any]:
    rows = [{"test": t, "status": s, "requirements": [f"R-{t}"], "message": ""} for t, s in statuses.items()]
    return {
        "run_info": {"target": "engine", "catalog_target": None, "seed": 1, "profiles": ["delta-row-conflicts"],
                     "target_versions": {"engine": version}, "target_options": {"version": version}, **info},
        "results": rows,
        "requirements": {f"R-{t}": {"status": s, "profile": "delta-row-conflicts", "level": "MUST"}
                         for t, s in statuses.items()},
        "profiles": {"delta-row-conflicts": {"verdict": "NOT_CERTIFIED"}},
    }  # fmt: skip


def test_the_version_diff_names_every_change_and_regressions() -> None:
    old = _results({"a": "FAIL", "b": "PASS", "c": "PASS", "d": "ERROR"}, "4.3.1")
    new = _results({"a": "PASS", "b": "NOT_APPLICABLE", "c": "PASS", "d": "PASS"}, "4.4.0")
    d = diff(old, new)
    changes = {c.test: (c.before, c.after, c.regression) for c in d.changes}
    assert changes == {
        "a": ("FAIL", "PASS", False),
        "b": ("PASS", "NOT_APPLICABLE", True),
        "d": ("ERROR", "PASS", False),
    }
    assert d.rules == {"R-a": ("FAIL", "PASS"), "R-b": ("PASS", "NOT_APPLICABLE"), "R-d": ("ERROR", "PASS")}
    assert d.regressed and "engine 4.3.1" in render(d) and "engine 4.4.0" in render(d)


def test_the_diff_refuses_runs_that_ask_other_questions() -> None:
    old = _results({"a": "PASS"}, "1")
    for change in ({"seed": 2}, {"target": "other"}, {"profiles": ["x"]}, {"partial": True}, {"interrupted": True}):
        new = _results({"a": "PASS"}, "2", **change)
        with pytest.raises(Incomparable):
            diff(old, new)
    other_options = _results({"a": "PASS"}, "2")
    other_options["run_info"]["target_options"]["master"] = "spark://elsewhere:7077"
    with pytest.raises(Incomparable, match="master"):
        diff(old, other_options)


def test_the_gate_records_the_release_and_refuses_another_configuration() -> None:
    run = _results({"a": "FAIL"}, "4.4.0")
    baseline = updated_baseline(run, None)
    assert baseline["target_versions"] == {"engine": "4.4.0"} and baseline["target_options"] == {}
    assert unfit_for_gate(_results({"a": "FAIL"}, "4.4.1"), baseline, allow_partial=False) is None
    moved = copy.deepcopy(run)
    moved["run_info"]["target_options"]["master"] = "spark://elsewhere:7077"
    assert "differ" in (unfit_for_gate(moved, baseline, allow_partial=False) or "")


def test_the_diff_command_exits_1_on_a_regression_and_2_on_a_refusal(tmp_path: Path) -> None:
    for name, statuses, version, seed in (
        ("a", {"x": "PASS"}, "1", 1),
        ("b", {"x": "FAIL"}, "2", 1),
        ("c", {"x": "PASS"}, "3", 2),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(_results(statuses, version, seed=seed)))
    worse = lakecert("diff", str(tmp_path / "a"), str(tmp_path / "b"))
    assert worse.returncode == 1 and "PASS" in worse.stdout and "FAIL" in worse.stdout
    assert lakecert("diff", str(tmp_path / "b"), str(tmp_path / "a")).returncode == 0
    refused = lakecert("diff", str(tmp_path / "a"), str(tmp_path / "c"))
    assert refused.returncode == 2 and "seed" in refused.stderr


def test_a_budget_that_leaves_a_rule_out_certifies_without_it_and_says_so(tmp_path: Path) -> None:
    env = {"LAKECERT__iceberg__matrix": "core", "LAKECERT__iceberg__exhaustive": "false"}
    args = ("run", "--profile", "iceberg-row-delta", "--label", "model, core budget", "--out", str(tmp_path / "run"))
    proc = lakecert(*args, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:]
    res = results(tmp_path / "run")
    left = res["profiles"]["iceberg-row-delta"]["left_out"]
    assert left and all(res["requirements"][rule]["status"] == "NOT_RUN" for rule in left)
    assert all("matrix: full" in how or "exhaustive: true" in how for how in left.values())
    cert = json.loads((tmp_path / "run" / "certificate.json").read_text())
    assert cert["not_judged"]["iceberg-row-delta"] == left
    assert res["run_info"]["label"] == cert["target"]["run_label"] == "model, core budget"
    assert "not judged:" in proc.stdout


def test_the_compatibility_page_is_generated_from_the_records() -> None:
    generated = lakecert("compat-page")
    assert generated.returncode == 0, generated.stderr
    assert (REPO / "docs" / "who-may-write.md").read_text() == generated.stdout, "stale: run `make docs`"


def test_a_record_says_safe_anomaly_refused_per_configuration() -> None:
    res = _results({"t[c1]": "PASS", "t[c2]": "FAIL", "t[c3]": "NOT_APPLICABLE", "u": "PASS"}, "1.0")
    res["results"][1]["violated"] = ["R-x"]
    rec = record(res)
    assert config_of("t[c2]") == "c2" and [c["config"] for c in rec["checks"]][-1] == "(every configuration)"
    text = page([rec], {"engine R-x": "reproducers/x.py"})
    assert "| `c1` | safe |" in text and "anomaly: R-x ([reproducer](reproducers/x.py))" in text
    assert "| `c3` | refused |" in text


def test_a_deltalake_release_lacking_lakecerts_call_is_an_error_not_a_refused_table() -> None:
    from conformance.adapters.delta_rs_engine import DeltaRsEngine, RemoteError
    from conformance.contract.delta import AdapterBroken
    from conformance.contract.delta_engine import DeltaSetup, IsolationLevel, NotSupported

    class Worker:
        def __init__(self, kind: str) -> None:
            self.kind = kind

        def call(self, *args: object) -> object:
            raise RemoteError(self.kind, "from the worker")

    engine = object.__new__(DeltaRsEngine)  # no moto, no proxy: only create_table's judgement
    engine.hold_timeout_s = 1.0
    setup = DeltaSetup(IsolationLevel.WRITE_SERIALIZABLE, deletion_vectors=False, row_tracking=False)
    for kind, expected in (("AttributeError", AdapterBroken), ("DeltaError", NotSupported)):
        engine.__dict__.update(
            _worker=lambda client, kind=kind: Worker(kind), _options=lambda c: {}, _uri=lambda t: "s3://b/t"
        )
        with pytest.raises(expected):
            engine.create_table("t", setup)


def test_a_pyspark_of_another_line_than_the_runtime_jars_is_refused_before_any_fetch() -> None:
    import importlib.metadata

    from conformance.adapters.spark_iceberg.session import use_pyspark

    use_pyspark(importlib.metadata.version("pyspark"))  # the installed one: nothing to do
    with pytest.raises(ReleaseUnavailable, match="Spark 4.1"):
        use_pyspark("4.0.5")  # the runtimes are built for 4.1: refused, nothing downloaded
