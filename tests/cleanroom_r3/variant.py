"""A blind round's faulty variant as the measure reads it (``tests/cleanroom_r3/measure.py``), shared by
every round's package: each round's writers were given round 3's shape to follow."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Side = Literal["catalog", "client"]


@dataclass(frozen=True)
class Variant:
    name: str
    target: str  # "module:Class", the target lakecert runs
    side: Side
    profile: str  # "delta-cm-catalog" | "delta-cm-writer" | "delta-cm-reader"
    rules: tuple[str, ...]  # the rule ids the variant breaks
    level: str  # "MUST" | "SHOULD" | "MAY": the level of those rules
    dimensions: tuple[str, ...]  # where a shallow suite is silent, in the writer's words
    doc: str  # the faulty side's docstring: what it does wrong and why a shallow suite misses it


def variant_of(
    name: str, cls: Any, side: Side, profile: str, rules: tuple[str, ...], level: str, dimensions: tuple[str, ...]
) -> Variant:
    """The variant whose target is ``cls`` (a target class swapping one side), documented by that side."""
    side_cls = cls.catalog_cls if side == "catalog" else cls.client_cls
    return Variant(
        name,
        f"{cls.__module__}:{cls.__name__}",
        side,
        profile,
        rules,
        level,
        dimensions,
        (side_cls.__doc__ or "").strip(),
    )
