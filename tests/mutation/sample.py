"""Find one cosmic-ray mutant by what it does to a line: the CI sample (tests/test_mutation.py)
names mutants by their source, not by cosmic-ray's occurrence numbers, which move with any edit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cosmic_ray.plugins
from cosmic_ray.mutating import mutate_code

MAX_OCCURRENCES = 2000  # a hang guard: no module here has that many places for one operator


@dataclass(frozen=True)
class Mutant:
    file: str  # repository-relative
    operator: str  # cosmic-ray operator name
    before: str  # the stripped source line
    after: str  # the stripped line as the mutant has it
    group: str  # tests.mutation.groups: whose run judges it
    select: tuple[str, ...]  # the checks that cover it (paths under conformance/)


def mutated_source(tree: Path, mutant: Mutant) -> str:
    """The module's source with exactly this mutant applied (cosmic-ray's own mutation)."""
    source = (tree / mutant.file).read_text()
    operator = cosmic_ray.plugins.get_operator(mutant.operator)()
    original = source.splitlines()
    for occurrence in range(MAX_OCCURRENCES):
        code = mutate_code(source, operator, occurrence)
        if code is None:
            break
        changed = [(a, b) for a, b in zip(original, code.splitlines(), strict=False) if a != b]
        if [(a.strip(), b.strip()) for a, b in changed] == [(mutant.before, mutant.after)]:
            return str(code)
    raise LookupError(f"{mutant.operator} never turns {mutant.before!r} into {mutant.after!r} in {mutant.file}")
