"""The command line as a new vendor meets it: help, JSON outputs, errors that name the file, signed
certificates, the GitHub Actions job summary."""

from __future__ import annotations

import hashlib
import json
import pwd
import re
import shlex
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from conformance.cli import build_parser
from conformance.config import load_config
from conformance.report.allure_cli import ALLURE_VERSION
from conformance.requirements import load_all
from tests.helpers import REPO, lakecert, results

COMMANDS = {
    "run",
    "diff",
    "record-compat",
    "compat-page",
    "merge",
    "targets",
    "selftest",
    "report",
    "verify-certificate",
    "sign-certificate",
    "gate",
    "serve",
    "requirements",
    "config-schema",
}

# The module-scoped runs are made once: with xdist the tests stay on one worker.
pytestmark = pytest.mark.xdist_group("cli-ux")


def test_help_lists_every_command_with_exit_codes_and_examples() -> None:
    proc = lakecert("--help")
    assert proc.returncode == 0
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    assert set(subparsers.choices) == COMMANDS  # type: ignore[arg-type]
    for name in COMMANDS:
        assert re.search(rf"^\s+{re.escape(name)}\s", proc.stdout, re.M), name
    assert "exit codes" in proc.stdout and "examples:" in proc.stdout
    for name in COMMANDS - {"serve"}:  # serve's options belong to the reference server
        sub = lakecert(name, "--help")
        assert sub.returncode == 0
        assert "`" not in proc.stdout + sub.stdout, name


def test_version() -> None:
    proc = lakecert("--version")
    assert proc.returncode == 0 and re.fullmatch(r"lakecert \d+\.\d+\.\d+\S*\n", proc.stdout)


def test_requirements_json_has_every_rule_with_a_pinned_link() -> None:
    proc = lakecert("requirements", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert {r["id"] for r in rows} == set(load_all())
    for r in rows:
        if "github.com" in r["link"]:  # a spec in a repository: a commit, not a branch
            assert re.search(r"/blob/[0-9a-f]{40}/", r["link"]), r["link"]
        assert r["checks"] or r["untestable"] or r["retired"]


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cert") / "run"
    proc = lakecert("run", "--profile", "delta-cm-reader", "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _copy(run: Path, dest: Path) -> Path:
    dest.mkdir()
    for name in ("results.json", "certificate.json"):
        (dest / name).write_bytes((run / name).read_bytes())
    return dest


@pytest.mark.parametrize("which", ["certificate.json", "results.json"])
def test_malformed_file_is_named(certified: Path, tmp_path: Path, which: str) -> None:
    run = _copy(certified, tmp_path / "copy")
    (run / which).write_text("{not json")
    proc = lakecert("verify-certificate", str(run / "certificate.json"))
    assert proc.returncode == 2
    assert str(run / which) in proc.stderr


def _keys(tmp_path: Path, name: str) -> tuple[Path, Path]:
    key = Ed25519PrivateKey.generate()
    private, public = tmp_path / f"{name}.pem", tmp_path / f"{name}.pub.pem"
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


def test_signed_certificate_verifies_only_with_the_vendors_key(certified: Path, tmp_path: Path) -> None:
    run = _copy(certified, tmp_path / "copy")
    cert = run / "certificate.json"
    private, public = _keys(tmp_path, "vendor")
    _, other = _keys(tmp_path, "other")
    assert lakecert("verify-certificate", str(cert), "--key", str(public)).returncode == 1  # not signed yet
    assert lakecert("sign-certificate", str(cert), "--key", str(private)).returncode == 0
    assert lakecert("verify-certificate", str(cert), "--key", str(public)).returncode == 0
    assert lakecert("verify-certificate", str(cert), "--key", str(other)).returncode == 1
    assert lakecert("verify-certificate", str(cert)).returncode == 0  # the digest alone still holds

    # Someone edits results.json and recomputes the digest in the certificate: the digest check
    # cannot tell (it binds the files, it does not say who wrote them); the signature can.
    res = json.loads((run / "results.json").read_text())
    res["run_info"]["target_version"] = "forged"
    (run / "results.json").write_text(json.dumps(res))
    forged = json.loads(cert.read_text())
    forged["results_sha256"] = hashlib.sha256((run / "results.json").read_bytes()).hexdigest()
    forged["target"]["version"] = "forged"
    cert.write_text(json.dumps(forged))
    assert lakecert("verify-certificate", str(cert)).returncode == 0
    assert lakecert("verify-certificate", str(cert), "--key", str(public)).returncode == 1


def test_signing_with_a_key_that_is_not_ed25519_is_a_usage_error(certified: Path, tmp_path: Path) -> None:
    run = _copy(certified, tmp_path / "copy")
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key")
    before = (run / "certificate.json").read_bytes()
    proc = lakecert("sign-certificate", str(run / "certificate.json"), "--key", str(bad))
    assert proc.returncode == 2 and str(bad) in proc.stderr
    assert (run / "certificate.json").read_bytes() == before


def test_github_summary_goes_to_the_step_summary_file(certified: Path, tmp_path: Path) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n")
    proc = lakecert(
        "report", str(certified), "--no-allure", "--github-summary", env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    assert proc.returncode == 0, proc.stderr
    text = summary.read_text()
    assert text.startswith("earlier step\n")  # appended, as GitHub expects
    assert "## lakecert: ✅ CERTIFIED" in text
    assert "| `delta-cm-reader` | ✅ CERTIFIED |" in text
    assert f"seed {results(certified)['run_info']['seed']}" in text


def test_github_summary_lists_failures_with_their_rerun(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert (
        lakecert("run", "--target", "faulty:accept-gap", "--profile", "delta-cm-catalog", "--out", str(out)).returncode
        == 1
    )
    summary = tmp_path / "summary.md"
    assert lakecert("report", str(out), "--no-allure", "--github-summary", str(summary)).returncode == 0
    text = summary.read_text()
    assert "❌ NOT_CERTIFIED" in text
    for row in results(out)["results"]:
        if row["status"] == "FAIL":
            assert f"`{row['test']}` | CAT-RATIFY-SEQUENTIAL |" in text
            rerun = json.loads((out / row["reproducer"]).read_text())["rerun"]
            assert f"```sh\n{rerun}\n```" in text


def test_github_summary_without_a_file_or_variable_is_a_usage_error(certified: Path) -> None:
    proc = lakecert("report", str(certified), "--no-allure", "--github-summary", env={"GITHUB_STEP_SUMMARY": ""})
    assert proc.returncode == 2


def _steps(path: Path) -> list[dict[str, Any]]:
    doc = yaml.safe_load(path.read_text())
    steps: list[dict[str, Any]] = next(iter(doc["jobs"].values()))["steps"]
    return steps


def test_vendor_workflow_uses_the_wheel_and_the_builtin_uc_target() -> None:
    steps = _steps(REPO / "docs/examples/ci-catalog-vendor.yml")
    runs = "\n".join(s.get("run", "") for s in steps)
    assert re.search(r"pip install \"lakecert(\[\w+\])? @ \S+\.whl\"", runs)
    assert "lakecert run --target uc " in runs and "--github-summary" in runs
    certify = next(s for s in steps if "lakecert run" in s.get("run", ""))
    env = {k: "x" for k in certify["env"]}
    cfg = load_config(environ=env).with_overrides(target="uc")  # the variables are ones lakecert knows
    assert set(cfg.target_options()) == {"url", "token"}
    for path in (REPO / "docs/examples").glob("*.yml"):
        assert ".whl" in "\n".join(s.get("run", "") for s in _steps(path)), path
    # The Allure it installs is the pinned one, and its report command parses (trend kept in a cache).
    assert f"npm install -g allure@{ALLURE_VERSION}" in runs
    report = next(line for line in runs.splitlines() if line.startswith("lakecert report "))
    parsed = build_parser().parse_args(shlex.split(report)[1:])
    assert parsed.history_dir and any(s.get("uses", "").startswith("actions/cache@") for s in steps)


def test_missing_extras_are_named_before_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance import extras
    from conformance.config import ConfigError

    monkeypatch.setattr(extras, "missing_modules", lambda modules: list(modules[:1]))
    with pytest.raises(ConfigError, match=r"lakecert\[clients\]"):
        extras.require_extras(load_config(environ={}).with_overrides(target="delta-rs"))
    extras.require_extras(load_config(environ={}).with_overrides(target="reference"))  # needs nothing


def test_rerun_into_an_old_folder_clears_its_reports_but_bad_usage_keeps_them(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert lakecert("run", "--profile", "delta-cm-reader", "--out", str(out)).returncode == 0
    (out / "matrix.html").write_text("old matrix")
    (out / "allure-report").mkdir()
    before = (out / "results.json").read_bytes()
    assert lakecert("run", "--profile", "no-such-profile", "--out", str(out)).returncode == 2
    assert (out / "results.json").read_bytes() == before and (out / "matrix.html").exists()
    assert lakecert("run", "--profile", "delta-cm-reader", "--out", str(out)).returncode == 0
    assert not (out / "matrix.html").exists() and not (out / "allure-report").exists()
    assert results(out)["verdict"] == "CERTIFIED"


def test_a_typo_in_the_target_changes_nothing_on_disk(tmp_path: Path) -> None:
    out = tmp_path / "new" / "run"
    proc = lakecert("run", "--target", "refrence", "--out", str(out))
    assert proc.returncode == 2 and "'reference'" in proc.stderr  # did you mean, with the right name
    assert not (tmp_path / "new").exists()  # not even the empty folders --out would have made


def test_a_run_writes_nothing_in_the_folder_it_was_started_in(tmp_path: Path) -> None:
    """hypothesis's cache (``.hypothesis/`` of the current folder by default) goes to lakecert's cache folder."""
    start, out, cache = tmp_path / "start", tmp_path / "out", tmp_path / "cache"
    start.mkdir()
    model = "checks/delta/catalog/test_model.py::test_random_schedules_match_the_model"
    env = {"XDG_CACHE_HOME": str(cache)}
    proc = lakecert("run", "--target", "reference", "--out", str(out), "--select", model, cwd=start, env=env)
    assert proc.returncode == 0, proc.stderr
    assert (cache / "lakecert" / "hypothesis").is_dir()  # premise: hypothesis wrote its cache, and there
    assert list(start.iterdir()) == []


def test_hypothesis_cache_folder_is_absolute_without_a_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative ``XDG_CACHE_HOME`` is ignored (XDG Base Directory); without a home, the temporary folder."""
    from conformance.plugin.hypothesis_home import cache_folder

    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", "/home/vendor")
    assert cache_folder() == Path("/home/vendor/.cache/lakecert/hypothesis")

    def unknown_user(uid: int) -> pwd.struct_passwd:
        raise KeyError(uid)

    monkeypatch.delenv("HOME")  # and a user id the system does not know: "~" stays "~"
    monkeypatch.setattr(pwd, "getpwuid", unknown_user)
    assert cache_folder() == Path(tempfile.gettempdir()) / "lakecert" / "hypothesis"
