"""What a run collects and imports for its profiles (issue 17: a Delta-only run stays off Iceberg)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conformance.requirements import load_all, profiles
from conformance.requirements.coverage import checks_by_requirement
from conformance.run import PKG_DIR, check_paths


def _modules(paths: list[str]) -> set[str]:
    return {Path(p).relative_to(PKG_DIR).as_posix() for p in paths}


def test_a_profile_collects_exactly_the_modules_naming_its_rules() -> None:
    known = load_all()
    by_profile: dict[str, set[str]] = {}
    for rid, checks in checks_by_requirement().items():  # read once: it parses every check module
        by_profile.setdefault(known[rid].profile, set()).update(c.split("::")[0] for c in checks)
    assert by_profile.keys() == set(profiles())
    for profile, wanted in by_profile.items():
        assert _modules(check_paths(None, [profile])) == wanted, profile


def test_no_profile_narrowing_collects_every_module() -> None:
    assert check_paths(None) == [str(PKG_DIR / "checks")]


def test_requirements_narrow_before_profiles() -> None:
    narrowed = _modules(check_paths(frozenset({"CAT-RATIFY-SEQUENTIAL"}), list(profiles())))
    assert narrowed and all(m.startswith("checks/delta/") for m in narrowed)


def test_delta_profiles_import_no_iceberg_catalog_library() -> None:
    # What a Delta-only run imports before its checks: the target registry, the run context, the
    # plugins and the Delta check modules (the Iceberg REST faults load only when all are listed).
    delta = [p for p in profiles() if p.startswith("delta-")]
    code = (
        "import sys, importlib.util\n"
        "from conformance.run import check_paths, PKG_DIR\n"
        "import conformance.plugin, conformance.registry, conformance.run_context\n"
        "from conformance.registry import build_target\n"
        "from conformance.config import load_config\n"
        "build_target('reference', load_config(None)); build_target('faulty:accept-gap', load_config(None))\n"
        f"for p in check_paths(None, {delta!r}):\n"
        "    name = p.removeprefix(str(PKG_DIR.parent) + '/').removesuffix('.py').replace('/', '.')\n"
        "    __import__(name)\n"
        "heavy = sorted(m for m in ('pyiceberg', 'fastapi', 'uvicorn', 'psycopg', 'boto3') if m in sys.modules)\n"
        "print(heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"
