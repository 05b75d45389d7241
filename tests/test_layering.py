"""The architecture's floors, kept by reading every module's imports (docs/design.md, "Layout").

- ``conformance.contract`` is the bottom floor: it imports nothing else of lakecert, so a vendor
  who imports it gets nothing more;
- ``reference_impl`` builds on the contract and the executable models only;
- built-in adapters use the contract, the recorders (observe), the fetching of releases (artifacts)
  and the reference as the counterpart of what they lack,
  never the suite's machinery;
- checks never reach into the plugin, the CLI or the registry; only a run (``conformance.run``) and
  the CLI import the plugin.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import REPO

ALLOWED: dict[str, tuple[str, ...]] = {
    "conformance.contract": ("conformance.contract",),
    "reference_impl": ("conformance.contract", "conformance.model", "reference_impl"),
    "conformance.adapters": (
        "conformance.contract",
        "conformance.adapters",
        "conformance.artifacts",
        "conformance.observe",
        "reference_impl",
    ),
    # The independent oracle decodes from the protocol alone: nothing of the reference implementation.
    "conformance.oracle": ("conformance.oracle",),
    # Fetching releases knows nothing of the suite: the adapters say what a release is.
    "conformance.artifacts": ("conformance.artifacts",),
    "conformance.checks": (
        "conformance.checks",
        "conformance.contract",
        "conformance.observe",
        "conformance.history",
        "conformance.model",
        "conformance.schedules",
        "conformance.report.outcomes",
        "conformance.run_context",
        "conformance.nemesis",
        "conformance.oracle",
        "conformance.fixtures_dir",
        "conformance.config",
        "reference_impl",
    ),
}
ONLY_IMPORTED_BY = {"conformance.plugin": ("conformance.cli", "conformance.run", "conformance.plugin")}


def _module(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {m for m in found if m.split(".")[0] in ("conformance", "reference_impl")}


MODULES = {
    _module(p): _imports(p)
    for top in ("conformance", "reference_impl")
    for p in sorted((REPO / top).rglob("*.py"))
    if not _module(p).startswith("conformance.targets")  # the deprecated shims re-export the contract
}


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


@pytest.mark.parametrize("floor", sorted(ALLOWED))
def test_each_floor_imports_only_what_it_may(floor: str) -> None:
    bad = {
        module: sorted(i for i in imports if not any(_within(i, ok) for ok in ALLOWED[floor]))
        for module, imports in MODULES.items()
        if _within(module, floor)
    }
    assert {m: b for m, b in bad.items() if b} == {}


@pytest.mark.parametrize("target", sorted(ONLY_IMPORTED_BY))
def test_only_the_cli_imports_the_plugin(target: str) -> None:
    users = {m for m, imports in MODULES.items() if any(_within(i, target) for i in imports)}
    assert {m for m in users if not any(_within(m, ok) for ok in ONLY_IMPORTED_BY[target])} == set()


def test_the_old_contract_paths_still_work() -> None:
    with pytest.warns(DeprecationWarning):
        import importlib

        import conformance.targets.contract as old

        importlib.reload(old)
    from conformance.contract import delta

    assert old.Catalog is delta.Catalog and old.CommitConflict is delta.CommitConflict


def _edges(path: Path) -> set[str]:
    """The lakecert modules ``path`` imports, wherever the import is (module level, a function, a
    ``TYPE_CHECKING`` block): a circle held apart by a lazy import is still a circle. ``from pkg
    import sub`` counts as importing the module ``pkg.sub``, not the package."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module for a in node.names
            }
    resolved = set()
    for name in found:
        while name and name not in MODULES:  # a name inside a module: the module
            name = name.rpartition(".")[0]
        if name:
            resolved.add(name)
    return resolved - {_module(path)}


def test_no_module_imports_itself_through_others() -> None:
    graph = {_module(p): _edges(p) for top in ("conformance", "reference_impl") for p in (REPO / top).rglob("*.py")}
    graph = {m: {t for t in targets if t in graph} for m, targets in graph.items() if m in MODULES}
    circles = []
    for start in sorted(graph):  # a depth-first walk from each module back to itself
        stack: list[tuple[str, tuple[str, ...]]] = [(start, (start,))]
        seen: set[str] = set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph[node]):
                if nxt == start:
                    circles.append(" -> ".join((*path, start)))
                elif nxt not in seen and nxt > start:  # each circle once, from its smallest module
                    seen.add(nxt)
                    stack.append((nxt, (*path, nxt)))
    assert circles == [], "import circles:\n" + "\n".join(circles)
