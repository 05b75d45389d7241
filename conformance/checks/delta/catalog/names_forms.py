"""Table names in several Unicode spellings, and creating a table under a name the catalog may refuse.

RFC "Table Discovery": resolving a table's name returns its location. docs/certify.md "Names of any
script": a catalog may refuse names outside its alphabet, but a name it accepted must resolve, in the
exact spelling it was registered, to its own table. Precomposed (NFC) and decomposed (NFD) spellings
of one word are different strings; a catalog that normalises one side of its index and not the other
accepts a name and then never finds it. Every spelling is drawn on every run.
"""

from __future__ import annotations

from conformance.checks.delta.builders import CatalogDriver
from conformance.contract.delta import CatalogError, TableInfo
from conformance.report.outcomes import PremiseBroken

# (what, tail): NFC and NFD spellings of a Latin word and of a Hangul syllable (whose NFD form is
# three jamo), and a compatibility ligature that only NFKC/NFKD fold.
NAME_TAILS: tuple[tuple[str, str], ...] = (
    ("NFC", "caf\u00e9"),
    ("NFD", "cafe\u0301"),
    ("Hangul NFC", "\ud55c"),
    ("Hangul NFD", "\u1112\u1161\u11ab"),
    ("ligature (NFKC-foldable)", "\ufb01le"),
)

# Pairs of distinct names equal under a 32-bit hash a catalog's front end may index, shard or cache its
# names by: a lookup through such an index that never compares the name it finds with the one asked for
# sends one name of the pair to the other's table. Each pair collides after any common prefix (a check's
# key): for Java's ``String.hashCode`` (31 * h + unit) and for CRC-32 (affine), whether two names that
# share a prefix and have tails of one length collide depends on the tails alone. ``Aa``/``BB``:
# ``String.hashCode``; ``c0``/``an``: the same, both lower case, so they also meet
# under a hash of the case-folded name; ``l98cu``/``pvdba``: CRC-32 of the UTF-8 bytes (zlib, Go's
# ``hash/crc32``).
HASH_TWINS = (("Aa", "BB"), ("c0", "an"), ("l98cu", "pvdba"))


def spelled_names(base: str) -> dict[str, str]:
    """Name -> its spelling's description. Each tail gets its own prefix, so that two canonically
    equivalent spellings never compete for one name (whether they are one name is the catalog's)."""
    return {f"{base}_u{i}_{tail}": what for i, (what, tail) in enumerate(NAME_TAILS)}


def create_named(driver: CatalogDriver, name: str) -> TableInfo | None:
    """Create a table named ``name``; None when the catalog refuses the name (its alphabet is its own)."""
    try:
        return driver.new_table(name)
    except PremiseBroken as e:
        if isinstance(e.__cause__, CatalogError):
            return None
        raise


def resolved(driver: CatalogDriver, name: str) -> TableInfo | None:
    """The catalog's answer to resolving ``name``: the table, or None when it raised a catalog error."""
    try:
        return driver.catalog.resolve(name)
    except CatalogError:
        return None
