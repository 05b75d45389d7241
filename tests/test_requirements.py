"""Lint of the requirement catalog and its coverage (the test262 lesson: metadata is checked)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.requirements import RequirementError, load_all, profiles
from conformance.requirements.coverage import checks_by_requirement
from conformance.requirements.docs import render
from reference_impl.faults.registry import all_faults

REPO = Path(__file__).resolve().parents[1]
RFC = REPO.parent / "shared" / "spec" / "delta-catalog-managed-rfc.md"


def test_every_must_has_a_check_or_a_reason() -> None:
    covered = checks_by_requirement()
    missing = [r.id for r in load_all().values() if r.level == "MUST" and not covered.get(r.id) and not r.untestable]
    assert not missing, f"MUST requirements without a check or an `untestable` reason: {missing}"


def test_checks_name_only_known_requirements() -> None:
    unknown = set(checks_by_requirement()) - set(load_all())
    assert not unknown, f"checks mark unknown requirement IDs: {sorted(unknown)}"


def test_retired_rules_have_no_checks_and_no_ways_to_break() -> None:
    covered = checks_by_requirement()
    for r in (r for r in load_all().values() if r.retired):
        assert not covered.get(r.id) and not r.violations, f"{r.id} is retired but still judged"
        assert all(r.id != live.id for rs in profiles().values() for live in rs), r.id


def test_entries_are_well_formed() -> None:
    for r in load_all().values():
        assert re.fullmatch(r"[A-Z]+(-[A-Z0-9]+)+", r.id), r.id
        assert r.statement.endswith(".") and "\n" not in r.statement and len(r.statement) <= 170, r.id
        assert r.profile in profiles()
        assert r.retired is None or r.retired.strip(), r.id


def test_sections_exist_in_the_spec() -> None:
    if not RFC.exists():
        return  # the spec lives beside the repository; CI has it
    headings = {line.lstrip("#").strip().lower() for line in RFC.read_text().splitlines() if line.startswith("#")}
    rfc_keys = ("delta_catalog_managed", "delta_row_conflicts_catalog")  # spec files whose sections are the RFC's
    for r in (r for r in load_all().values() if r.spec.key in rfc_keys):
        for part in r.section.split(";"):
            name = part.split("(")[0].strip().lower().replace("terminology - ", "terminology: ")
            if name.startswith("protocol.md") or not name:
                continue
            assert any(name in h for h in headings), f"{r.id}: no section {part.strip()!r} in the RFC"


def test_every_fault_names_known_requirements() -> None:
    for f in all_faults().values():
        # An empty ``breaks``: a conformant variant, which the self-test expects certified.
        assert set(f.breaks) <= set(load_all()) and (f.breaks or f.side == "catalog"), f.name


def test_requirements_doc_is_current() -> None:
    doc = REPO / "docs" / "requirements.md"
    assert doc.read_text() == render() + "\n", "docs/requirements.md is stale: run `make docs`"


ICEBERG_SPEC = REPO.parent / "shared" / "spec" / "iceberg-concurrency-model.md"


def test_iceberg_sections_exist_in_the_model_spec() -> None:
    if not ICEBERG_SPEC.exists():
        return  # the spec lives beside the repository; CI has it
    text = ICEBERG_SPEC.read_text().splitlines()
    headings = {line.lstrip("#").strip().lower() for line in text if line.startswith("#")}
    for r in load_all().values():
        if r.spec.key != "iceberg_row_delta":
            continue
        for part in r.section.split(";"):
            name = part.split("(")[0].strip().lower()
            assert any(h.startswith(name) for h in headings), f"{r.id}: no section {part.strip()!r} in the model spec"


def test_every_must_and_should_lists_its_violations() -> None:
    """Issue 18: the negative space of every rule, as data (``violations:`` in the YAML)."""
    missing = [
        r.id
        for r in load_all().values()
        if r.level in ("MUST", "SHOULD") and not r.untestable and not r.violations and not r.retired
    ]
    assert not missing, f"MUST/SHOULD requirements without `violations:`: {missing}"


def test_every_listed_violation_names_a_check_of_its_requirement() -> None:
    """A listed way to break a rule names only checks that exist and are marked with the rule."""
    covered = {rid: {c.split("::")[-1] for c in checks} for rid, checks in checks_by_requirement().items()}
    unseen = [
        f"{r.id}: {b.way!r} -> {c}"
        for r in load_all().values()
        for b in r.violations
        for c in b.checks
        if c not in covered.get(r.id, set())
    ]
    assert not unseen, "violations naming no check of their requirement:\n" + "\n".join(unseen)


def test_the_loader_refuses_malformed_violations(tmp_path: Path) -> None:
    entry = (
        "spec: {name: s, revision: r, url: u}\n"
        "requirements:\n"
        "  - {id: X-Y, level: MUST, binds: catalog, profile: p, section: s, statement: s., violations: %s}\n"
    )
    for bad in (
        "[]",
        "[{way: w}]",
        "[{way: '', checks: [test_a]}]",
        "[{way: w, checks: [a]}]",
        "[{way: w, checks: []}]",
    ):
        (tmp_path / "x.yaml").write_text(entry % bad)
        with pytest.raises(RequirementError):
            load_all.__wrapped__(tmp_path)
    (tmp_path / "x.yaml").write_text(entry % "[{way: w, checks: [test_a]}]")
    assert load_all.__wrapped__(tmp_path)["X-Y"].violations[0].checks == ("test_a",)
