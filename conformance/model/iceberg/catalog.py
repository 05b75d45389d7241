"""The Catalog role: one pointer to the table's current metadata file, moved by compare-and-swap."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Catalog:
    pointer: str  # name of the current metadata file in the object store

    def swap(self, expected: str, new: str, *, compare: bool = True) -> Catalog | None:
        """The catalog pointing at ``new``, or None when it no longer points at ``expected``.

        ``compare=False`` is a broken catalog that swaps blindly (a faulty variant).
        """
        if compare and self.pointer != expected:
            return None
        return Catalog(new)
