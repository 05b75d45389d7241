"""The self-test: the reference is certified, every faulty variant is caught by what it breaks,
and every check fails against at least one variant (no check that cannot fail)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import lakecert


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


def test_an_engine_variant_runs_only_the_profiles_it_breaks() -> None:
    """The other format's engine of an engine variant is the reference's: its profile is not run."""
    from conformance.selftest import _engine_profiles

    assert _engine_profiles("faulty:delta-cm-published-winners-only") == ["--profile", "delta-row-conflicts"]
    assert _engine_profiles("faulty:no-conflict-validation") == ["--profile", "iceberg-row-delta"]
    assert _engine_profiles("faulty:ratify-twice") == []  # a catalog variant runs every profile it has
    assert _engine_profiles("reference") == []
