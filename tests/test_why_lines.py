"""A check's why line is lakecert's words about the product (issue 30): what the product did and
what the rule required, never pytest's ("assert None is not None", "DID NOT RAISE CommitConflict")
and never a sentence that contradicts itself ("asked for [7, 9], got [7, 9]")."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from tests.helpers import REPO

CHECKS = REPO / "conformance" / "checks"
# Invariants of lakecert's own explorer (mypy's narrowing): no product answer reaches them.
INTERNAL = {("explorer/runner.py", "self.plan is not None"), ("explorer/runner.py", "self._pool is not None")}


def _bare_asserts_and_raises() -> list[str]:
    found = []
    for path in sorted(CHECKS.rglob("*.py")):
        rel = path.relative_to(CHECKS).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assert) and node.msg is None and (rel, ast.unparse(node.test)) not in INTERNAL:
                found.append(f"{rel}:{node.lineno}: assert without a message")
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "pytest.raises":
                found.append(f"{rel}:{node.lineno}: pytest.raises (its failure reads 'DID NOT RAISE ...')")
    return found


def test_every_assert_of_a_check_has_its_own_words() -> None:
    assert not _bare_asserts_and_raises()


def bad_why(why: str) -> str | None:
    """What is wrong with a why line, or None."""
    if why.startswith("assert ") or "DID NOT RAISE" in why:
        return "pytest's words"
    asked = re.search(r"asked for (\[[^\]]*\])", why)
    got = re.search(r"got (\[[^\]]*\])", why)
    if asked and got and asked.group(1) == got.group(1):
        return "asked for X, got X"
    return None


def test_the_detector_knows_the_shapes_of_issue_30() -> None:
    assert bad_why("DID NOT RAISE <class 'CommitConflict'>")
    assert bad_why("assert None is not None")
    assert bad_why("asked for [7, 9], got [7, 9]: stored commits left out")
    assert not bad_why("asked for v7 to v9, the catalog listed [7, 9] and left out [8]")


def bad_whys(selftest_out: Path) -> dict[str, str]:
    """The why lines in pytest's words among the failing checks of a self-test's runs (the self-test
    of tests/test_selftest.py hands its folder here: one self-test for both tests' questions)."""
    rows: list[tuple[str, dict[str, Any]]] = [
        (run.parent.name, row)
        for run in sorted(selftest_out.glob("*/results.json"))
        for row in json.loads(run.read_text())["results"]
        if row["status"] in ("FAIL", "WARN", "ERROR")
    ]
    assert len({name for name, _ in rows}) > 50  # the variants ran and failed checks
    return {
        f"{name} {row['test']}": why
        for name, row in rows
        for why in [(row["message"] or "").strip().splitlines()[0] if (row["message"] or "").strip() else ""]
        if not why or bad_why(why)
    }
