"""Faults for the round-15 blind misses (issue 28, session 21): see docs/mutation.md, round 15.

Two families of CAT-RETAIN-UNPUBLISHED (a ratified commit is served as ratified until published):

- inline text a text-processing step changes. The blind miss normalised it to NFC; its neighbours
  here clean it instead (drop invisible characters, replace non-characters). Each changes only text
  the inline shapes ``normalisation`` and ``invisibles`` hold (conformance/checks/delta/catalog/
  inline_shapes.py): every other shape is untouched, so the older checks pass them.
- in-commit timestamps the catalog does not keep as proposed when they are not the rising, present-day
  ones every other check proposes. The blind miss made them monotonic; its neighbours here take 0 for
  "none" and stamp their own clock, or pull a timestamp far ahead of their clock back to it.
  ``test_in_commit_timestamps_out_of_order_are_served_as_proposed_or_refused`` proposes both.
"""

from __future__ import annotations

import re
import time
from typing import Any

from conformance.contract.delta import CommitRejected, RatifiedCommit
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.catalog.transaction import Tx
from reference_impl.faults.base import fault

# Default-ignorable characters a "cleaning" store drops: zero-width space, non-joiner and joiner, word
# joiner, byte order mark (zero-width no-break space), soft hyphen.
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")


def _noncharacter(c: str) -> bool:
    """A Unicode non-character: U+FDD0..U+FDEF and the last two code points of every plane."""
    return 0xFDD0 <= ord(c) <= 0xFDEF or ord(c) & 0xFFFE == 0xFFFE


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@fault(
    "inline-content-invisibles-stripped",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="Keeps an inline commit as text cleaned of invisible characters (zero-width space, joiner and"
    " non-joiner, word joiner, a byte order mark inside the text, soft hyphen), to keep look-alike text apart:"
    " a commit holding them (an emoji sequence, Indic or Persian text, a file name) is served without them,"
    " other bytes than ratified. Every commit without them round-trips byte for byte.",
)
class InlineContentInvisiblesStripped(ReferenceCatalog):
    def commit(self, table_id: str, version: int, *, inline_content: bytes | None = None, **kw: Any) -> None:
        if inline_content is not None:
            # the fault: the store's text is not the commit's bytes
            inline_content = _INVISIBLE.sub("", inline_content.decode("utf-8")).encode("utf-8")
        super().commit(table_id, version, inline_content=inline_content, **kw)


@fault(
    "inline-content-noncharacters-replaced",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="Keeps an inline commit as text in which Unicode non-characters (U+FDD0-U+FDEF, U+FFFE, U+FFFF"
    " and the last two of every plane), valid UTF-8 all, are replaced with U+FFFD, as a strict text or XML"
    " layer does: a commit holding one is served changed. Every other commit round-trips byte for byte.",
)
class InlineContentNoncharactersReplaced(ReferenceCatalog):
    def commit(self, table_id: str, version: int, *, inline_content: bytes | None = None, **kw: Any) -> None:
        if inline_content is not None:
            # the fault: "not a character" is not "not the commit"
            text = inline_content.decode("utf-8")
            inline_content = "".join("\ufffd" if _noncharacter(c) else c for c in text).encode("utf-8")
        super().commit(table_id, version, inline_content=inline_content, **kw)


@fault(
    "ict-zero-stamped-by-clock",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="Takes an in-commit timestamp for missing when it is falsy (``ict or now``) and stamps the"
    " catalog's own clock: a proposal at the epoch, 0, is ratified and served with the time it arrived. Every"
    " timestamp above 0 is kept as proposed.",
)
class IctZeroStampedByClock(ReferenceCatalog):
    def commit(self, table_id: str, version: int, *, in_commit_timestamp: int | None = None, **kw: Any) -> None:
        # the fault: 0 is a timestamp (the epoch), not "none"
        super().commit(table_id, version, in_commit_timestamp=in_commit_timestamp or _now_ms(), **kw)


# How far ahead of the catalog's clock a timestamp may be before the faulty catalog pulls it back.
SKEW_MS = 24 * 3600 * 1000


@fault(
    "ict-future-clamped-to-clock",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="Distrusts writers' clocks: an in-commit timestamp more than a day ahead of the catalog's clock"
    " is ratified but recorded as the catalog's clock, so the commit is served with another timestamp than"
    " it was proposed with (refusing the proposal would have been its right). Timestamps up to a day ahead,"
    " and every past one, are kept as proposed.",
)
class IctFutureClampedToClock(ReferenceCatalog):
    def commit(self, table_id: str, version: int, *, in_commit_timestamp: int | None = None, **kw: Any) -> None:
        now = _now_ms()
        if in_commit_timestamp is not None and in_commit_timestamp > now + SKEW_MS:
            in_commit_timestamp = now  # the fault: ratified, but not as proposed
        super().commit(table_id, version, in_commit_timestamp=in_commit_timestamp, **kw)


@fault(
    "ict-non-rising-refused",
    "catalog",
    breaks=(),  # conformant: a catalog may reject an invalid commit (RFC "Catalog-managed Tables", motivation 1)
    description="Refuses (CommitRejected, changing nothing) a proposal whose in-commit timestamp is not above the"
    " one it holds for the previous version, as PROTOCOL.md's monotonic timestamps want (conformant: the RFC"
    " lets a catalog reject an invalid commit; a taken version is still answered with a conflict first).",
)
class IctNonRisingRefused(ReferenceCatalog):
    def _write_commit(self, tx: Tx, table_id: str, commit: RatifiedCommit) -> None:
        prev = tx.commit_at(table_id, commit.version - 1)
        ict, prev_ict = commit.in_commit_timestamp, None if prev is None else prev.in_commit_timestamp
        if ict is not None and prev_ict is not None and ict <= prev_ict:
            raise CommitRejected(f"in-commit timestamp {ict} is not above v{commit.version - 1}'s {prev_ict}")
        super()._write_commit(tx, table_id, commit)
