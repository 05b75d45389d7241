"""Issue 18, "Done means": the stock `uc` target against a served catalog that ratifies a first commit
over a gap, or a staged file named for another version, reports FAIL on the requirement broken.

`lakecert serve --fault first-commit-over-gap` and `--fault staged-any-version` (the server asks the
served catalog itself whether a proposal is well formed, so the fault is not masked over the wire),
then `lakecert run --target uc` as a user runs it. Only the two checks that send these proposals run
(`--select`); the whole profile over HTTP is `test_server_certify.py`'s slow test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import lakecert, results
from tests.tooling.server import served

CHECKS = {
    "CAT-RATIFY-SEQUENTIAL": "checks/delta/catalog/test_proposals.py::test_first_commit_over_a_gap_is_refused",
    "CAT-STAGED-VERSION": "checks/delta/catalog/test_proposals.py::test_staged_file_of_another_version_is_refused",
}


def _run_uc(tmp_path: Path, *serve_args: str) -> dict[str, str]:
    """Serve (in this process, loopback), run the two checks over the `uc` target: status per requirement."""
    with served("--db", str(tmp_path / "catalog.sqlite"), *serve_args) as (url, _):
        config = {
            "target": "uc",
            "profiles": ["delta-cm-catalog"],
            "targets": {"uc": {"adapter": "conformance.adapters.uc:UCTarget", "options": {"url": url}}},
        }
        select = [a for check in CHECKS.values() for a in ("--select", check)]
        (tmp_path / "lakecert.yaml").write_text(json.dumps(config))
        out = tmp_path / "out"
        proc = lakecert("run", "--config", str(tmp_path / "lakecert.yaml"), "--out", str(out), *select)
        assert (out / "results.json").exists(), proc.stdout + proc.stderr
        res = results(out)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # never "the suite broke"
    return {rid: res["requirements"][rid]["status"] for rid in CHECKS}


def test_served_reference_passes_both(tmp_path: Path) -> None:
    assert _run_uc(tmp_path) == dict.fromkeys(CHECKS, "PASS")


FAULTS = [("first-commit-over-gap", "CAT-RATIFY-SEQUENTIAL"), ("staged-any-version", "CAT-STAGED-VERSION")]


@pytest.mark.parametrize(("fault", "broken"), FAULTS)
def test_served_fault_fails_its_requirement_only(tmp_path: Path, fault: str, broken: str) -> None:
    statuses = _run_uc(tmp_path, "--fault", fault)
    assert statuses[broken] == "FAIL"
    assert {rid: s for rid, s in statuses.items() if rid != broken} == {r: "PASS" for r in CHECKS if r != broken}
