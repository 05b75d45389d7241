"""The self-test: the reference is certified, every faulty variant is caught by what it breaks,
and every check fails against at least one variant (no check that cannot fail).

A variant runs only the checks of the rules it is registered to break (``--requirement``), so a
check counts as able to fail only when a variant registered to break one of its rules fails it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reference_impl.faults.registry import all_faults
from tests.helpers import lakecert, results
from tests.test_why_lines import bad_whys


@pytest.mark.slow(seconds=245)
def test_reference_certified_and_every_variant_caught(tmp_path: Path) -> None:
    proc = lakecert("selftest", "--json", "--out", str(tmp_path))
    outcomes = json.loads(proc.stdout)
    by_target = {o["target"]: o for o in outcomes}
    assert by_target["reference"]["verdict"] == "CERTIFIED"
    missed = {o["target"]: (o["expected"], o["caught_by"]) for o in outcomes if not o["ok"]}
    assert not missed, f"variants not caught by the requirement they break: {missed}"
    assert proc.returncode == 0
    reference_checks = set(by_target["reference"]["checks"])
    flagged = {c for o in outcomes if o["target"] != "reference" for c in o["flagged_checks"]}
    never = sorted(reference_checks - flagged)
    assert not never, f"checks that no faulty variant makes fail: {never}"
    # Focused: each variant ran fewer checks than the reference, never more.
    assert all(set(o["checks"]) <= reference_checks for o in outcomes)
    assert len(by_target) == len(all_faults()) + 1
    # Every check a variant fails says why in lakecert's words, not pytest's (issue 30).
    bad = bad_whys(tmp_path)
    assert not bad, json.dumps(bad, indent=1)


def test_requirement_runs_only_its_checks(tmp_path: Path) -> None:
    """``--requirement``: the checks naming the rule and no other; a partial run, judged on them."""
    proc = lakecert(
        "run", "--target", "faulty:accept-gap", "--requirement", "CAT-RATIFY-SEQUENTIAL", "--out", str(tmp_path)
    )
    assert proc.returncode == 1
    res = results(tmp_path)
    assert res["run_info"]["partial"] is True
    assert res["run_info"]["profiles"] == ["delta-cm-catalog"]
    assert res["results"] and all("CAT-RATIFY-SEQUENTIAL" in r["requirements"] for r in res["results"])
    assert res["requirements"]["CAT-RATIFY-SEQUENTIAL"]["status"] == "FAIL"
    assert not (tmp_path / "certificate.json").exists()


def test_unknown_requirement_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = lakecert("run", "--requirement", "CAT-NO-SUCH-RULE", "--out", str(out))
    assert proc.returncode == 2
    assert not out.exists()


def test_an_engine_variant_runs_only_the_profiles_it_breaks() -> None:
    """The other format's engine of an engine variant is the reference's: its profile is not run."""
    from conformance.selftest import _engine_profiles

    assert _engine_profiles("faulty:delta-cm-published-winners-only") == ["delta-row-conflicts"]
    assert _engine_profiles("faulty:no-conflict-validation") == ["iceberg-row-delta"]
    assert _engine_profiles("faulty:ratify-twice") is None  # a catalog variant runs every profile it has
    assert _engine_profiles("reference") is None
