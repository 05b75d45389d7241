"""Near misses of a staged commit's URI: every component of
``<table location>/_delta_log/_staged_commits/<20 digits>.<uuid>.json`` perturbed, one at a time.

RFC "Terminology - Commits": a staged commit is written at ``_delta_log/_staged_commits/<v>.<uuid>.json``
of its table. A URI that differs from that in any component (scheme, bucket or host, the case of a
folder, a segment added or left out, a name with something before or after it, an encoded ``/``)
names another object on every object store, and the catalog must not ratify it. Only perturbations
that make another object are drawn: an upper-case UUID (RFC 4122 reads UUIDs case-insensitively),
``%5F`` for ``_``, the case of the scheme or the bucket (RFC 3986 makes them the same URI) are not.
Dot segments (``./``, ``x/../``) are drawn apart (``dot_segment_misses``): RFC 3986 makes them the
folder's own URI, so a catalog may ratify one as that URI, but never as sent, a key outside the folder.

Every edge is drawn on every run: the family is small, and a seed that skips a component lets a
catalog that ignores it through.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from conformance.checks.delta.builders import CatalogDriver, LogBuilder, ict_of, new_uuid, premise
from conformance.contract.delta import CatalogError, TableInfo
from reference_impl.delta import log_paths as P

LOG = "_delta_log"
STAGED = "_staged_commits"


@dataclass(frozen=True)
class NearMiss:
    """A proposed URI, what it perturbs, and whether lakecert writes the file there first (a URI on
    the run's storage; a file on another scheme or authority cannot be written, and need not be: a
    catalog may ratify without looking at storage, docs/certify.md)."""

    uri: str
    what: str
    writable: bool


def _swap_case(segment: str) -> str:
    """The segment with the case of its letters changed: upper-case when it has lower-case letters."""
    return segment.upper() if segment != segment.upper() else segment.lower()


def _title(segment: str) -> str:
    return "_".join(part[:1].upper() + part[1:] for part in segment.split("_"))


def folder_misses(location: str, name: str) -> list[NearMiss]:
    """``name`` (a well-formed staged name) under folders that are not the table's staging folder."""
    loc = location.rstrip("/")
    parts = urlsplit(loc)
    misses: list[NearMiss] = []
    # Another scheme and another authority, the same path (a catalog comparing paths only).
    other_scheme = "s3" if parts.scheme != "s3" else "file"
    other_netloc = "lakecert-other-bucket" if other_scheme == "s3" else ""
    foreign = urlunsplit((other_scheme, other_netloc, parts.path, "", ""))
    misses.append(NearMiss(f"{foreign}/{LOG}/{STAGED}/{name}", f"scheme {other_scheme}://", False))
    misses.append(
        NearMiss(
            urlunsplit((parts.scheme, "lakecert-other-host", parts.path, "", "")) + f"/{LOG}/{STAGED}/{name}",
            "another bucket or host",
            False,
        )
    )
    # (Not the bucket's or the scheme's case: RFC 3986 makes both case-insensitive, the same URI.)
    # The case of every folder, one at a time and all together (a case-insensitive comparison).
    table_dir = loc.rsplit("/", 1)
    if len(table_dir) == 2 and _swap_case(table_dir[1]) != table_dir[1]:
        recased = f"{table_dir[0]}/{_swap_case(table_dir[1])}"
        misses.append(NearMiss(f"{recased}/{LOG}/{STAGED}/{name}", "the table folder's case", True))
    for log, staged, what in (
        (LOG.upper(), STAGED, "_delta_log's case"),
        (LOG, STAGED.upper(), "_staged_commits' case"),
        (_title(LOG), _title(STAGED), "both folders' case"),
    ):
        misses.append(NearMiss(f"{loc}/{log}/{staged}/{name}", what, True))
    # A segment added, or left out.
    misses += [
        NearMiss(f"{loc}/{LOG}/{STAGED}/retry/{name}", "a folder below _staged_commits", True),
        NearMiss(f"{loc}/{LOG}/x/{STAGED}/{name}", "a folder between _delta_log and _staged_commits", True),
        NearMiss(f"{loc}/x/{LOG}/{STAGED}/{name}", "a folder between the table and _delta_log", True),
        NearMiss(f"{loc}/{LOG}/{name}", "no _staged_commits", True),
        NearMiss(f"{loc}/{STAGED}/{name}", "no _delta_log", True),
        NearMiss(f"{loc}{LOG}/{STAGED}/{name}", "the table folder run into _delta_log", True),
        NearMiss(f"{loc}/{LOG}{STAGED}/{name}", "_delta_log run into _staged_commits", True),
        NearMiss(f"{loc}/{LOG}/{STAGED}{name}", "_staged_commits run into the name", True),
        # An encoded / is part of a name, not a separator (RFC 3986 section 2.2): written where the URI
        # says, an object in the folder above, which a catalog that decodes before it validates takes.
        NearMiss(f"{loc}/{LOG}%2F{STAGED}/{name}", "an encoded / between the folders", True),
        NearMiss(f"{loc}/{LOG}/{STAGED}%2F{name}", "an encoded / before the name", True),
        # An empty segment (``//``) is a segment of its own: RFC 3986 removes dot segments only, and an
        # object store keeps ``a//b`` as another key than ``a/b``. A catalog that collapses slashes (or
        # runs ``normpath``) before it judges the path, then ratifies the path as sent, passes these.
        NearMiss(f"{loc}/{LOG}/{STAGED}//{name}", "an empty segment before the name", True),
        NearMiss(f"{loc}/{LOG}//{STAGED}/{name}", "an empty segment between the folders", True),
        NearMiss(f"{loc}//{LOG}/{STAGED}/{name}", "an empty segment after the table folder", True),
    ]
    return misses


def dot_segment_misses(location: str, other_location: str, name: str) -> list[NearMiss]:
    """``name`` in the table's staging folder by a detour of dot segments (``./``, a folder then
    ``../``, another table's folder then ``../``) that leads back into it. RFC 3986 section 6.2.2.3 lets a
    reader remove dot segments before comparing URIs, so a catalog may take each for the staging folder's
    own URI; an object store does not: its key keeps the dots, another object (below ``_delta_log/tmp/``,
    below another table's prefix), which no reader or cleanup of the folder finds."""
    loc = location.rstrip("/")
    misses = [
        NearMiss(f"{loc}/{LOG}/{STAGED}/./{name}", "a ./ segment before the name", True),
        NearMiss(f"{loc}/{LOG}/./{STAGED}/{name}", "a ./ segment between the folders", True),
        NearMiss(f"{loc}/{LOG}/tmp/../{STAGED}/{name}", "a folder of _delta_log, then ..", True),
        NearMiss(f"{loc}/{LOG}/{STAGED}/retry/../{name}", "a folder below _staged_commits, then ..", True),
        NearMiss(f"{loc}/{LOG}/{STAGED}/../{STAGED}/{name}", "out of _staged_commits and back", True),
    ]
    parent, _, folder = loc.rpartition("/")
    other_parent, _, other_folder = other_location.rstrip("/").rpartition("/")
    if parent == other_parent and folder and other_folder != folder:
        # The other table's prefix, then back: the object lies among the other table's files.
        misses.append(
            NearMiss(
                f"{parent}/{other_folder}/../{folder}/{LOG}/{STAGED}/{name}", "another table's folder, then ..", True
            )
        )
    return misses


def uuid_spellings(uuid: str) -> list[tuple[str, str]]:
    """Other spellings of ``uuid`` (lower-case, as ``str(uuid4())`` writes it) that are still a UUID, so
    ``<v>.<spelling>.json`` is a well-formed staged name: RFC 9562 section 4 (RFC 4122 section 3) writes a
    UUID's hex digits in lower case but reads them in either case, and the RFC's ``<uuid>`` asks no case
    (.NET and Windows writers, ``uuid4().hex.upper()``, write upper case). Each names another object than
    the lower-case one on a case-sensitive store, so a catalog that ratifies it must serve it as spelled."""
    # Mixed case: every other hex letter upper-case (digits and dashes have no case).
    chars = list(uuid)
    for i in [i for i, c in enumerate(chars) if c.isalpha()][1::2]:
        chars[i] = chars[i].upper()
    return [(uuid.upper(), "upper-case"), ("".join(chars), "mixed-case")]


def propose_spelled(driver: CatalogDriver, table: TableInfo, first: int) -> tuple[dict[int, str], dict[int, str]]:
    """Propose v``first`` on, one version for each of ``uuid_spellings``, staged as ``<v>.<spelling>.json``.
    Returns the staged URI of each version ratified and, of those ratified under a spelling, the spelling.
    A spelling refused (a strict reading of ``<uuid>``, which serves no other name) is staged again as
    ``str(uuid4())`` names it: a premise."""
    ratified: dict[int, str] = {}
    spelled: dict[int, str] = {}
    for version, (uuid, what) in enumerate(uuid_spellings(new_uuid()), start=first):
        uri = P.staged_uri(table.location, version, uuid)
        with premise(f"staging v{version} of {table.name} under a {what} UUID"):
            driver.storage.put(uri, LogBuilder(driver.storage, table.location).data_commit(version))
        try:
            driver.catalog.commit(table.table_id, version, staged_uri=uri, in_commit_timestamp=ict_of(version))
        except CatalogError:
            ratified |= driver.commit_range(table, version, version)
            continue
        ratified[version], spelled[version] = uri, what
    return ratified, spelled


# Whitespace and control characters around a name: each is part of the object's name on a file system
# and an object store (a name read from a line of text, its line end kept), yet a check lets it through
# where Python's ``$`` matches before a final newline, ``strip()`` (Java's ``trim()``) drops it, or
# ``^``/``$`` match at every line. On a POSIX file system only NUL cannot be in a name.
PADDING = (
    ("\n", "a newline"),
    ("\r\n", "a CR LF"),
    ("\r", "a carriage return"),
    ("\t", "a tab"),
    (" ", "a space"),
    ("\x0b\x0c", "a vertical tab and a form feed"),
    ("\u00a0", "a no-break space"),
    ("\u2028", "a line separator (U+2028)"),
    ("\x00", "a NUL"),
)


def padded_misses(location: str, good: str) -> list[NearMiss]:
    """``good`` (a well-formed staged name) with whitespace or a control character after it, before it,
    or a line of text on the other side of it: names that are not ``<v>.<uuid>.json``."""
    folder = P.staged_dir(location)
    misses = [
        NearMiss(f"{folder}/{name}", what, "\x00" not in name)
        for pad, kind in PADDING
        for name, what in ((f"{good}{pad}", f"{kind} after it"), (f"{pad}{good}", f"{kind} before it"))
    ]
    # A multi-line name whose one line is a staged name: anchors that match at line ends take it.
    return misses + [
        NearMiss(f"{folder}/{good}\nx", "a second line after it", True),
        NearMiss(f"{folder}/x\n{good}", "a line before it", True),
    ]


# Characters in place of one of a staged name's fixed characters, each what a loose pattern takes there:
# an unescaped ``.`` takes any character, ``\W``, ``[-_.]`` or ``[._-]?`` take the punctuation, ``\w`` a
# letter or a digit. Drawn in turn (``_rotated``) so that each kind of fixed character meets several.
STAND_INS = ("_", "-", ".", "x", "0")


def _rotated(start: int, count: int, original: str) -> list[str]:
    """``count`` of ``STAND_INS`` from ``start`` on (wrapping), none of them ``original``."""
    others = [c for c in STAND_INS if c != original]
    return [others[(start + k) % len(others)] for k in range(count)]


def character_misses(version: int, uuid: str) -> list[tuple[str, str]]:
    r"""``<20 digits>.<uuid>.json`` with one of its fixed characters (the two dots, the UUID's four
    dashes, the letters of ``json``) replaced by another, left out, or doubled; and with one of its
    variable characters (a version digit, a UUID hex digit) replaced by a character of the same class
    for a loose pattern that is no ASCII digit or hex digit. RFC "Delta Log Entries" spells the name
    exactly, and a file system or an object store keeps every such name as another object that no reader
    takes for a staged commit: a catalog whose pattern has a dot unescaped, a class too wide (``\d`` in a
    Unicode regex, ``\w``, ``[a-z]`` for hex) or a quantifier too loose (``-?``, ``-+``) ratifies them."""
    good = f"{version:020d}.{uuid}.json"
    dashes = [21 + i for i, c in enumerate(uuid) if c == "-"]
    dot2 = 21 + len(uuid)
    fixed = (
        [(20, "the dot after the version", 4)]
        + [(i, f"the UUID's dash {n}", 2) for n, i in enumerate(dashes, start=1)]
        + [(dot2, "the dot before json", 4)]
        + [(dot2 + 1 + k, f"the {c!r} of json", 1) for k, c in enumerate("json")]
    )
    misses: list[tuple[str, str]] = []
    for n, (i, what, stand_ins) in enumerate(fixed):
        # The dots get every stand-in (any of them passes an unescaped dot); the others some, in turn.
        for c in _rotated(n, stand_ins, good[i]):
            misses.append((good[:i] + c + good[i + 1 :], f"{what} replaced by {c!r}"))
        misses.append((good[:i] + good[i + 1 :], f"{what} left out"))
        misses.append((good[:i] + good[i] + good[i:], f"{what} doubled"))
    # Letters that are not hex in each of the UUID's five groups (``[a-z]``, ``\w``, ``[0-9a-zA-Z]``),
    # and digits of other scripts in a UUID group and in one place of the version (``\d`` and ``int()``
    # take them for 0-9 in Python and Java).
    starts = [21] + [i + 1 for i in dashes]
    for i, c in zip(starts, "gzGkq", strict=True):
        misses.append((good[:i] + c + good[i + 1 :], f"a letter that is not hex ({c!r}) in the UUID at {i - 21}"))
    misses.append((good[:21] + "\u0663" + good[22:], "an Arabic-Indic digit in the UUID"))
    misses.append((good[:19] + chr(0x966 + version % 10) + good[20:], "the version's last digit in Devanagari"))
    misses.append((good[:19] + chr(0xFF10 + version % 10) + good[20:], "the version's last digit full-width"))
    return misses


def name_misses(location: str, version: int, uuid: str) -> list[NearMiss]:
    """Names that begin or end like ``<20 digits>.<uuid>.json`` and are not it: the staged folder
    holds them (an upload's temporary name, a checksum beside it), no reader takes them for a commit;
    and names one character away from it (``character_misses``)."""
    good = f"{version:020d}.{uuid}.json"
    # UUID parts that are not a UUID's 8-4-4-4-12 hex form yet pass a loose pattern (hex digits and
    # dashes, 36 characters): no dashes, the dashes moved, a digit short, a letter that is not hex.
    digits = uuid.replace("-", "")
    moved = f"{digits[:9]}-{digits[9:13]}-{digits[13:17]}-{digits[17:21]}-{digits[21:]}"
    # The version in decimal digits of other scripts: Python's and Java's \d, and int(), take them for
    # 0-9; a file system and an object store keep them as other characters, another object's name.
    padded = f"{version:020d}"
    other_digits = (
        ("".join(chr(0x660 + int(d)) for d in padded), "the version in Arabic-Indic digits"),
        ("".join(chr(0xFF10 + int(d)) for d in padded), "the version in full-width digits"),
    )
    not_uuids = (
        (digits + digits[:4], "36 hex digits with no dashes"),
        (moved, "a UUID's dashes moved"),
        (uuid[:-1], "a UUID a digit short"),
        (uuid[:-1] + "g", "a UUID ending in a letter that is not hex"),
    )
    misses = (
        [NearMiss(f"{P.staged_dir(location)}/{version:020d}.{part}.json", what, True) for part, what in not_uuids]
        + padded_misses(location, good)
        + [NearMiss(f"{P.staged_dir(location)}/{v}.{uuid}.json", what, True) for v, what in other_digits]
        + [
            NearMiss(f"{P.staged_dir(location)}/{name}", what, not name.endswith("/"))
            for name, what in (
                (f"{good}.tmp", "a .tmp suffix"),
                (f"{good}.crc", "a .crc suffix"),
                (f"{good}l", "a .jsonl extension"),
                (f"{good}.json", "a doubled .json"),
                (f"{good}~", "a ~ suffix"),
                (f".{good}", "a hidden-file dot before it"),
                (f"x{good}", "a letter before it"),
                (f"{version:020d}.{uuid}x.json", "a character after the UUID"),
                (f"{version:020d}.{uuid}", "no .json"),
                (f"{version:020d}.{uuid}.JSON", "an upper-case .JSON"),
                (f"{good}/", "a trailing slash"),
            )
        ]
        + [NearMiss(f"{P.staged_dir(location)}/{name}", what, True) for name, what in character_misses(version, uuid)]
    )
    # One proposal a name (each costs round trips over HTTP and S3): the first perturbation that makes it.
    unique: dict[str, NearMiss] = {}
    for miss in misses:
        unique.setdefault(miss.uri, miss)
    return list(unique.values())
