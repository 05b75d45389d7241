"""Lint of the requirement catalog and its coverage (the test262 lesson: metadata is checked)."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.requirements import load_all, profiles
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


def test_entries_are_well_formed() -> None:
    for r in load_all().values():
        assert re.fullmatch(r"[A-Z]+(-[A-Z0-9]+)+", r.id), r.id
        assert r.statement.endswith(".") and "\n" not in r.statement and len(r.statement) <= 170, r.id
        assert r.profile in profiles()


def test_sections_exist_in_the_spec() -> None:
    if not RFC.exists():
        return  # the spec lives beside the repository; CI has it
    headings = {line.lstrip("#").strip().lower() for line in RFC.read_text().splitlines() if line.startswith("#")}
    for r in (r for r in load_all().values() if r.spec.key == "delta_catalog_managed"):
        for part in r.section.split(";"):
            name = part.split("(")[0].strip().lower().replace("terminology - ", "terminology: ")
            if name.startswith("protocol.md") or not name:
                continue
            assert any(name in h for h in headings), f"{r.id}: no section {part.strip()!r} in the RFC"


def test_every_fault_names_known_requirements() -> None:
    for f in all_faults().values():
        assert f.breaks and set(f.breaks) <= set(load_all()), f.name


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
