"""The shapes of inline commit the catalog histories propose, each a valid commit a writer may send.

RFC "Terminology: Commits": an inline commit's content is held by the catalog and served back as the
commit itself, so the bytes are the commit. A catalog that parses and re-serialises them, normalises
text, trims a line end or caps a line count changes a commit without changing its JSON meaning, and
only a byte-for-byte comparison sees it. One example of each detail would be one blind spot less;
the histories cycle through all of them, every run, whatever the seed:

- ``compact``: ASCII with compact separators, as lakecert's own writer sends it;
- ``utf8``: raw UTF-8 text, with characters of two, three and four bytes (one outside the Basic
  Multilingual Plane, a surrogate pair to UTF-16 stores);
- ``escapes``: JSON escapes as written (``\\u00e9``, ``\\"``, ``\\\\``, ``\\/``, ``\\t``, ``\\u2028``)
  that a re-serialiser turns into other bytes;
- ``spaced``: separators with spaces and keys in no sorted order;
- ``many``: commitInfo and 60 ``add`` actions, one per line (a commit of many lines);
- ``unterminated``: no newline after the last line (``decode_commit``: some writers omit it);
- ``unicode_breaks``: raw U+0085, U+2028 and U+2029 inside a string (JSON keeps them raw; Spark and
  Kernel write them so), over several lines: a store that splits content into lines with a Unicode
  line splitter (``str.splitlines``) cuts an action in two;
- ``crlf``: CR LF line ends (CR is JSON whitespace): a store that splits and joins lines, or reads
  text with universal newlines, serves them as LF;
- ``normalisation``: raw text that a Unicode normalisation changes, whichever form (NFC, NFD, NFKC,
  NFKD): decomposed letters (``e`` + U+0301, as macOS writes file names, and Hangul jamo), precomposed
  ones, canonical singletons (OHM and ANGSTROM SIGN), combining marks out of canonical order,
  compatibility characters (the ligature U+FB01, full-width and half-width forms, a superscript), in a
  value and in an added file's path (served normalised, the add names a file that does not exist),
  and the same decomposed text escaped (``e\\u0301``) beside it;
- ``invisibles``: raw text that a cleaning step drops or replaces: a lone combining mark at the start
  of a string, zero-width joiner, non-joiner and space, word joiner, a byte order mark inside a
  string, a soft hyphen, a variation selector, and non-characters that are valid UTF-8 (U+FDD0,
  U+FFFE, U+FFFF, U+1FFFE, U+10FFFF).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

from conformance.checks.delta.builders import raw_utf8
from reference_impl.delta import actions as A

Shape = Callable[[int, int], bytes]
MANY_ADDS = 60


def _info(version: int, ict: int, **extra: str) -> A.Action:
    info = A.commit_info_action(ict, f"inline-{version}", "WRITE")["commitInfo"]
    return {"commitInfo": {**info, **extra}}


def _lines(actions: list[A.Action], *, separators: tuple[str, str] = (",", ":"), ascii_only: bool = True) -> bytes:
    return b"".join(json.dumps(a, separators=separators, ensure_ascii=ascii_only).encode() + b"\n" for a in actions)


def compact(version: int, ict: int) -> bytes:
    return _lines([_info(version, ict)])


def unique(version: int, ict: int) -> bytes:
    """Compact, with a commitInfo field no other proposal has: a proposal of a taken version is then
    never byte for byte the commit ratified there, which a catalog may answer as an accepted replay
    (Unity Catalog does; so does ``lakecert serve``). Not one of ``SHAPES``."""
    return _lines([_info(version, ict, proposal=str(uuid.uuid4()))])


def utf8(version: int, ict: int) -> bytes:
    return _lines([_info(version, ict, userMetadata="Zürich · Ωmega · 東京 · 𝄞 ✓")], ascii_only=False)


def escapes(version: int, ict: int) -> bytes:
    # Written by hand: json.dumps would not emit "\/" nor keep "\u00e9" beside raw text.
    line = json.dumps(_info(version, ict), separators=(",", ":"))
    tail = r',"userMetadata":"caf\u00e9 \"q\" back\\slash a\/b tab\t ls\u2028end"}}'
    return line[: -len("}}")].encode() + tail.encode() + b"\n"


def spaced(version: int, ict: int) -> bytes:
    info = _info(version, ict)["commitInfo"]
    reordered = {"commitInfo": dict(reversed(list(info.items())))}
    return _lines([reordered], separators=(", ", ": "))


def many(version: int, ict: int) -> bytes:
    adds = [
        A.add_action(f"inline-{version}-part-{i:03d}.parquet", 100 + i, ict, '{"numRecords":0}')
        for i in range(MANY_ADDS)
    ]
    return _lines([_info(version, ict), *adds])


# Every printable ASCII character and some of each UTF-8 length, at three offsets: a store that keeps
# content through a binary-to-text codec (base64 and its URL-safe variant differ in two symbols) or an
# escaping layer meets every symbol and every alignment of a 3-byte group.
EVERY_CHAR = "".join(chr(c) for c in range(0x20, 0x7F)) + "\u00e9\u00ff\u0100\u07ff\u0800\u6771\uffee\U0001d11e"


def every_char(version: int, ict: int) -> bytes:
    texts = {f"text{offset}": "x" * offset + EVERY_CHAR for offset in range(3)}
    return _lines([_info(version, ict, **texts)], ascii_only=False)


def unterminated(version: int, ict: int) -> bytes:
    return compact(version, ict).rstrip(b"\n")


def _few(version: int, ict: int) -> list[A.Action]:
    """commitInfo and two adds: a few lines, well below any cap on actions a catalog declares."""
    adds = [A.add_action(f"inline-{version}-part-{i}.parquet", 100 + i, ict, '{"numRecords":0}') for i in range(2)]
    return [_info(version, ict), *adds]


def unicode_breaks(version: int, ict: int) -> bytes:
    return raw_utf8(_few(version, ict))


def crlf(version: int, ict: int) -> bytes:
    return _lines(_few(version, ict)).replace(b"\n", b"\r\n")


# Text that any Unicode normalisation changes (RFC "Terminology: Commits": the commit is its bytes, so
# a catalog that normalises "look-alike" text serves another commit): each piece is changed by NFC or
# NFD, and the compatibility ones by NFKC and NFKD too.
NORMALISABLE = (
    "cafe\u0301"  # decomposed é (NFC composes it), as a macOS file name
    " caf\u00e9"  # precomposed é (NFD decomposes it)
    " \u1100\u1161"  # Hangul jamo (NFC composes them into one syllable)
    " \u2126\u212b"  # OHM SIGN and ANGSTROM SIGN: canonical singletons, replaced by every form
    " q\u0307\u0323"  # combining marks out of canonical order (every form reorders them)
    " \ufb01le \uff21\uff22\uff23\uff11 \uff76\u00b2\u2160"  # ligature, full-/half-width, superscript, numeral
)
# Text that a cleaning step (stripping invisibles, replacing what is "not a character") changes, all
# valid UTF-8 and raw in JSON strings (RFC 8259 escapes only what is below U+0020).
INVISIBLE = (
    "\u0301lone mark"  # a combining mark with nothing to combine with
    " a\u200db a\u200cb a\u200bb a\u2060b a\ufeffb a\u00adb \u2764\ufe0f"  # ZWJ, ZWNJ, ZWSP, WJ, BOM, SHY, VS16
    " \ufdd0\ufffe\uffff\U0001fffe\U0010ffff"  # non-characters
)


def normalisation(version: int, ict: int) -> bytes:
    # The same decomposed text escaped beside the raw one, written by hand (json.dumps writes one
    # spelling only): a store that re-serialises the JSON, raw or escaped, changes one of the two.
    info = json.dumps(_info(version, ict, userMetadata=NORMALISABLE), separators=(",", ":"), ensure_ascii=False)
    first = info[: -len("}}")] + r',"escaped":"cafe\u0301 \ufb01"}}' + "\n"
    add = A.add_action(f"inline-{version}-cafe\u0301-\ufb01le.parquet", 100, ict, '{"numRecords":0}')
    return first.encode() + _lines([add], ascii_only=False)


def invisibles(version: int, ict: int) -> bytes:
    adds = [A.add_action(f"inline-{version}-a\u200db\ufeff.parquet", 100, ict, '{"numRecords":0}')]
    return _lines([_info(version, ict, userMetadata=INVISIBLE), *adds], ascii_only=False)


SHAPES: dict[str, Shape] = {
    "compact": compact,
    "utf8": utf8,
    "escapes": escapes,
    "spaced": spaced,
    "many": many,
    "unterminated": unterminated,
    "every_char": every_char,
    "unicode_breaks": unicode_breaks,
    "crlf": crlf,
    "normalisation": normalisation,
    "invisibles": invisibles,
}
