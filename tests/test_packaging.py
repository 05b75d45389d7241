"""What a vendor installs: the sdist and the wheel built from it carry the golden fixtures and the
requirement catalog, and a core install (no extras: no Spark, no pyiceberg, no FastAPI) in a fresh
virtual environment certifies the reader profile from a directory outside the checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from reference_impl.server.runner import ServerProcess

ROOT = Path(__file__).resolve().parents[1]
# Packages a core install must not pull in: they belong to extras (pyproject.toml).
EXTRAS_ONLY = ("pyspark", "pyiceberg", "fastapi", "uvicorn", "deltalake", "polars", "psycopg", "selenium")

# Wheels of the core dependencies and build requirements, downloaded by `make setup`: with them the
# build and the install use no index at all, so the test does not depend on PyPI being reachable, and
# a core dependency missing from them (say an extra that crept into the core) fails the install.
WHEELHOUSE = ROOT / ".cache" / "wheels"


def _pip_env() -> dict[str, str]:
    if not (WHEELHOUSE / ".complete").exists():
        return {}  # set-up has not fetched them (an old checkout): PyPI, as a user would
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(WHEELHOUSE)}


# One build and one venv for the module: with xdist its tests stay on one worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("packaging")]


def _run(cmd: list[str], cwd: Path, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # Nothing of this checkout or its settings leaks in (PYTHONPATH would show pip the checkout).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAKECERT", "PYTHON", "VIRTUAL_ENV", "PIP_"))}
    env |= _pip_env() | (extra_env or {})  # pip reads these in the build's isolated environment too
    # A hang guard only: without the wheelhouse a fresh install downloads from PyPI.
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)


def _tracked_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's tracked files (symlinks kept), as a release would be cut from them.

    Building in the checkout itself picks up what the other tests write there meanwhile (pytest's
    bytecode beside the checks, egg-info); a file that vanishes between setuptools listing and
    copying it fails the build."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    src = tmp_path_factory.mktemp("src")
    for name in filter(None, listed.decode().split("\0")):
        origin, copy = ROOT / name, src / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_symlink():
            copy.symlink_to(os.readlink(origin))
        elif origin.is_file():
            shutil.copy2(origin, copy)
    return src


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``python -m build``: the sdist, then the wheel built from that sdist (not from the checkout)."""
    out = tmp_path_factory.mktemp("dist")
    proc = _run([sys.executable, "-m", "build", "--outdir", str(out), str(_tracked_copy(tmp_path_factory))], cwd=out)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {"sdist": next(out.glob("lakecert-*.tar.gz")), "wheel": next(out.glob("lakecert-*.whl"))}


def _golden_files() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for p in (ROOT / "fixtures").rglob("*") if p.is_file()}


def test_sdist_and_wheel_carry_the_fixtures_and_requirements(dists: dict[str, Path]) -> None:
    wanted = {"conformance/" + f for f in _golden_files()}
    with zipfile.ZipFile(dists["wheel"]) as whl:
        in_wheel = set(whl.namelist())
    with tarfile.open(dists["sdist"]) as sdist:
        in_sdist = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    requirements = {p.relative_to(ROOT).as_posix() for p in (ROOT / "conformance/requirements").glob("*.yaml")}
    assert wanted and requirements
    assert wanted <= in_wheel and wanted <= in_sdist
    assert requirements <= in_wheel and requirements <= in_sdist
    assert "conformance/pytest.ini" in in_wheel
    assert "conformance/docs/certify.md" in in_wheel, "`lakecert --help` names the documents: they ship"


@pytest.fixture(scope="module")
def core_venv(dists: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment (no system site-packages) with the wheel and its core dependencies."""
    venv = tmp_path_factory.mktemp("venv")
    assert _run([sys.executable, "-m", "venv", str(venv)], cwd=venv).returncode == 0
    proc = _run([str(venv / "bin/python"), "-m", "pip", "install", "-q", str(dists["wheel"])], cwd=venv)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return venv


def test_core_install_has_no_extras(core_venv: Path) -> None:
    probe = "import importlib.util, json; print(json.dumps({m: bool(importlib.util.find_spec(m)) for m in %r}))"
    proc = _run([str(core_venv / "bin/python"), "-c", probe % (EXTRAS_ONLY,)], cwd=core_venv)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == dict.fromkeys(EXTRAS_ONLY, False)


def test_installed_wheel_certifies_what_the_core_can_and_names_the_extra_for_the_rest(
    core_venv: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "vendor"
    elsewhere.mkdir()
    proc = _run([str(core_venv / "bin/lakecert"), "run", "--out", "run"], elsewhere)  # the README's first command
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = json.loads((elsewhere / "run/results.json").read_text())
    assert res["verdict"] == "CERTIFIED"
    assert "delta-cm-reader" in res["profiles"] and "iceberg-catalog-commit" not in res["profiles"]
    assert set(res["run_info"]["profiles_not_installed"]) == {"iceberg-catalog-commit"}
    said = [line for line in proc.stderr.splitlines() if "iceberg-catalog-commit not run" in line]
    assert len(said) == 1 and "pip install 'lakecert[iceberg]'" in said[0]
    assert res["results"] and all(r["status"] == "PASS" for r in res["results"])
    asked = _run(
        [str(core_venv / "bin/lakecert"), "run", "--profile", "iceberg-catalog-commit", "--out", "no"], elsewhere
    )
    assert asked.returncode == 2 and "lakecert[iceberg]" in asked.stderr and not (elsewhere / "no").exists()
    assert (elsewhere / "run/certificate.json").is_file()
    where = _run([str(core_venv / "bin/python"), "-c", "import conformance; print(conformance.__file__)"], elsewhere)
    assert Path(where.stdout.strip()).is_relative_to(core_venv)  # the installed copy, not this checkout
    version = _run([str(core_venv / "bin/lakecert"), "--version"], elsewhere)
    assert version.returncode == 0 and version.stdout.startswith("lakecert ")
    usage = _run([str(core_venv / "bin/lakecert"), "--help"], elsewhere).stdout
    named = usage.split("docs: ", 1)[1].split()[0]
    assert Path(named).is_file() and Path(named).is_relative_to(core_venv), named  # shipped, not the checkout's


def test_a_target_whose_extras_are_missing_is_a_usage_error(core_venv: Path, tmp_path: Path) -> None:
    for target in ("delta-rs", "spark-iceberg"):
        proc = _run([str(core_venv / "bin/lakecert"), "run", "--target", target, "--out", "run"], tmp_path)
        assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert "lakecert[" in proc.stderr
        assert not (tmp_path / "run" / "results.json").exists()


def test_installed_wheel_certifies_a_catalog_over_http(core_venv: Path, tmp_path: Path) -> None:
    """The core install's reason to exist: the built-in `uc` target against a served catalog.

    The catalog is `lakecert serve` of this checkout (its `server` extra), in its own process on a
    loopback port; the core install is only the client."""
    with ServerProcess(str(tmp_path / "catalog.sqlite"), timeout_s=600) as server:  # a hang guard only
        env = {"LAKECERT__targets__uc__options__url": server.url}
        cmd = [str(core_venv / "bin/lakecert"), "run", "--target", "uc", "--profile", "delta-cm-catalog"]
        proc = _run([*cmd, "--out", "run"], tmp_path, env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = json.loads((tmp_path / "run/results.json").read_text())
    assert res["run_info"]["target"] == "uc" and res["profiles"] == {"delta-cm-catalog": {"verdict": "CERTIFIED"}}
