"""A long table name and tables named by its prefixes, for the discovery rules of clients.

RFC "Table Discovery": a client finds a table by its name through the catalog. A client that
shortens a name on one of its paths (a lookup key, a cache, a column of fixed width) still finds a
table whose name is short, and with a long one it finds nothing or, worse, the table named by the
shortened name. So the long name (within Unity Catalog's 255 characters) has neighbours named by its
first 32, 64, 100 and 128 characters, each holding rows of its own. The name has upper-case letters,
and its lower-case spelling names one more neighbour: the catalog decides whether case matters (the
reference's names are case-sensitive), and a client that folds the case of the name it was given
asks for another table."""

from __future__ import annotations

LENGTH = 200
CUTS = (32, 64, 100, 128)


def long_name(base: str) -> str:
    """``base`` (a check's table name) lengthened to ``LENGTH`` characters, each prefix cut distinct."""
    filler = "".join(f"_{i:02d}" for i in range(LENGTH))
    return (base + "_Long_Name" + filler)[:LENGTH]


def prefix_names(name: str) -> list[str]:
    """The names of ``name``'s neighbours: its prefixes at ``CUTS``, and its lower-case spelling."""
    return [name[:cut] for cut in CUTS if cut < len(name)] + ([name.lower()] if name.lower() != name else [])
