"""Names near a dropped one, for CAT-DROP: a drop must remove exactly the table its name designates.

RFC "Creating and Dropping Catalog-managed Tables": dropping removes that table's name and leaves the
other tables as they were. A drop that looks its argument up differently from registration (folding
case, normalising Unicode, matching a prefix, cutting a long name) takes a neighbour whose name is
near. So the dropped names live among neighbours drawn along each of those lines, every one on every
run: a case twin, a prefix and an extension, the precomposed and decomposed spellings of one word, a
long name and its first 128 characters. A catalog may refuse a name outside its alphabet or length;
only the names it accepted are judged.
"""

from __future__ import annotations

from conformance.checks.delta.long_names import CUTS, long_name


def neighbour_names(base: str) -> list[str]:
    """Names to register, in creation order. ``base`` has letters of both cases, so that its case
    twin differs from it; later names are near earlier ones, so that a drop taking the first match
    (in creation order) of a loose lookup takes an earlier neighbour."""
    long = long_name(base)
    return [
        base,
        base.swapcase(),
        base[:-1],
        f"{base}_1",
        f"{base}_caf\u00e9",  # precomposed (NFC)
        f"{base}_cafe\u0301",  # decomposed (NFD): another string, canonically equivalent
        long,
        long[: CUTS[-1]],
    ]


def unregistered_near_names(base: str) -> list[str]:
    """Names no table is registered under, each near one that is: all-upper and all-lower spellings,
    a shorter prefix, another suffix, the accented word with its accent upper-case, the long name's
    shortest cut and its lower-case spelling."""
    long = long_name(base)
    return [
        base.upper(),
        base.lower(),
        base[:-2],
        f"{base}_2",
        f"{base}_caf\u00c9",
        long[: CUTS[0]],
        long.lower(),
    ]
