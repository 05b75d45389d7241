"""Which checks cover which requirement, read statically from the ``req`` marks."""

from __future__ import annotations

import ast
from pathlib import Path

CHECKS_DIR = Path(__file__).parent.parent / "checks"


def _req_args(node: ast.expr) -> list[str]:
    # Matches pytest.mark.req("A", "B") and req("A") in decorators or pytestmark.
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name == "req":
            return [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [i for e in node.elts for i in _req_args(e)]
    return []


def checks_by_requirement(checks_dir: Path = CHECKS_DIR) -> dict[str, list[str]]:
    """Requirement ID -> check ids (``path::function``) whose marks name it."""
    out: dict[str, list[str]] = {}
    for path in sorted(checks_dir.rglob("test_*.py")):
        tree = ast.parse(path.read_text())
        module_ids: list[str] = []
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets
            ):
                module_ids += _req_args(stmt.value)
        rel = path.relative_to(checks_dir.parent).as_posix()
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name.startswith("test_"):
                ids = module_ids + [i for d in stmt.decorator_list for i in _req_args(d)]
                for rid in dict.fromkeys(ids):
                    out.setdefault(rid, []).append(f"{rel}::{stmt.name}")
    return out
