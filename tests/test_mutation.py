"""The mutation-testing harness keeps working (`make mutation`, docs/mutation.md): a handful of
chosen mutants of the reference, applied by cosmic-ray in a copy of the checkout and judged by
`tests.mutation.kill` through the fork server, are killed; an equivalent one survives."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mutation.groups import GROUPS
from tests.mutation.run import copy_tree, forkserver, repoint, tracked_files
from tests.mutation.sample import Mutant, mutated_source

CATALOG = "reference_impl/catalog/catalog.py"
CLIENT = "reference_impl/delta/client.py"
PROPOSALS = "checks/delta/catalog/test_proposals.py"
KILLED = [
    # accepts v + 2 on a table at v: the first commit over a gap (issue 18's Unity Catalog finding)
    Mutant(
        CATALOG,
        "core/NumberReplacer",
        "if version > latest + 1:",
        "if version > latest + 2:",
        "catalog",
        (f"{PROPOSALS}::test_first_commit_over_a_gap_is_refused",),
    ),
    # ratifies the latest version a second time
    Mutant(
        CATALOG,
        "core/ReplaceComparisonOperator_LtE_Lt",
        "if version <= latest:",
        "if version < latest:",
        "catalog",
        ("checks/delta/catalog/test_ratification.py::test_second_proposal_for_a_version_conflicts",),
    ),
    # takes a publication report above the latest version (found by `make mutation`)
    Mutant(
        CATALOG,
        "core/ReplaceOrWithAnd",
        "if not _is_int(version) or not 0 <= version <= row.latest_version:",
        "if not _is_int(version) and not 0 <= version <= row.latest_version:",
        "catalog",
        (
            "checks/delta/catalog/test_retention.py::test_publication_report_above_the_latest_forgets_nothing_ratified_later",
        ),
    ),
    # an in-commit timestamp equal to the previous one when the clock lags
    Mutant(
        CLIENT,
        "core/NumberReplacer",
        "return now if previous is None else max(now, previous + 1)",
        "return now if previous is None else max(now, previous + 0)",
        "client",
        ("checks/delta/writer/test_commit_info.py::test_in_commit_timestamps_pass_a_writer_whose_clock_is_ahead",),
    ),
]
# Equivalent (tests/mutation/equivalent.py): retrying 11 times instead of 10 changes no verdict.
SURVIVES = Mutant(
    CLIENT,
    "core/NumberReplacer",
    "max_retries: int = 10,",
    "max_retries: int = 11,",
    "client",
    ("checks/delta/writer/test_staging.py::test_conflict_rewrites_the_commit_in_a_new_file",),
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of the checkout with one fork server (both groups here run in-process, unserved)."""
    root = tmp_path_factory.mktemp("mutation") / "tree"
    copy_tree(root, tracked_files())
    with forkserver(GROUPS["catalog"], root, workdir=root.parent):
        yield root


def judged(tree: Path, mutant: Mutant, *, mutate: bool = True) -> subprocess.CompletedProcess[str]:
    """Apply the mutant in the tree, run the kill command as cosmic-ray would, restore the module."""
    path = tree / mutant.file
    original = path.read_text()
    if mutate:
        path.write_text(mutated_source(tree, mutant))
    try:
        args = [sys.executable, "-m", "tests.mutation.kill", mutant.group]
        args += [a for s in mutant.select for a in ("--select", s)]
        env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
        return subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True, timeout=600)  # hang guard
    finally:
        path.write_text(original)


@pytest.mark.parametrize("group", ["catalog", "client"])
def test_unmutated_reference_passes_the_sampled_checks(tree: Path, group: str) -> None:
    sampled = [m for m in [*KILLED, SURVIVES] if m.group == group]
    every = Mutant(sampled[0].file, "", "", "", group, tuple(s for m in sampled for s in m.select))
    proc = judged(tree, every, mutate=False)
    assert (proc.returncode, proc.stdout[:8]) == (0, "SURVIVED"), proc.stdout + proc.stderr


@pytest.mark.parametrize("mutant", KILLED, ids=lambda m: f"{Path(m.file).stem}:{m.after}")
def test_chosen_mutant_is_killed(tree: Path, mutant: Mutant) -> None:
    proc = judged(tree, mutant)
    assert (proc.returncode, proc.stdout[:6]) == (1, "KILLED"), proc.stdout + proc.stderr


def test_equivalent_mutant_survives(tree: Path) -> None:
    assert mutated_source(tree, SURVIVES) != (tree / SURVIVES.file).read_text()  # the mutant changes the code
    proc = judged(tree, SURVIVES)
    assert (proc.returncode, proc.stdout[:8]) == (0, "SURVIVED"), proc.stdout + proc.stderr


def test_a_copied_cache_mutates_this_checkouts_tree(tmp_path: Path) -> None:
    """cosmic-ray keeps absolute module paths: a session copied from another checkout must be
    pointed at this one's tree, or its mutants change the other tree and all "survive" here."""
    session = tmp_path / "s.sqlite"
    with sqlite3.connect(session) as db:
        db.execute("CREATE TABLE mutation_specs (module_path VARCHAR, job_id VARCHAR)")
        db.executemany("INSERT INTO mutation_specs VALUES (?, ?)", [("/elsewhere/tree/m.py", "a"), ("/x/m.py", "b")])
    repoint(session, "/here/tree/m.py")
    with sqlite3.connect(session) as db:
        assert {p for (p,) in db.execute("SELECT module_path FROM mutation_specs")} == {"/here/tree/m.py"}
