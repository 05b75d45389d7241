"""Faults for the round-14 blind misses (issue 28, session 20): see docs/mutation.md, round 14."""

from __future__ import annotations

import calendar
import dataclasses
import time
from typing import Any

from conformance.contract.delta import RatifiedCommit, TableInfo
from reference_impl.catalog.catalog import ReferenceCatalog, check_commit, staged_dir_uri
from reference_impl.faults.base import fault


@fault(
    "staged-name-checked-stripped",
    "catalog",
    breaks=("CAT-STAGED-NAME",),
    description="Judges a staged file's name after strip() (as a name read from a line of text): a file whose"
    " name has a space, a tab or a line end before or after <v>.<uuid>.json is ratified under that name,"
    " which no reader or cleanup takes for a staged commit. Every name without whitespace is judged exactly.",
)
class StagedNameCheckedStripped(ReferenceCatalog):
    def _check_proposal(self, location: str, proposal: RatifiedCommit) -> None:
        uri = proposal.staged_uri
        prefix = staged_dir_uri(location)
        if isinstance(uri, str) and uri.startswith(prefix):
            # the fault: the name judged is not the name proposed (and ratified, and listed)
            proposal = dataclasses.replace(proposal, staged_uri=prefix + uri[len(prefix) :].strip())
        check_commit(location, proposal)


@fault(
    "inline-content-universal-newlines",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="Keeps an inline commit as text read with universal newlines (CR LF and a lone CR become LF),"
    " as a text column fed through a line-oriented codec: a commit written with CR LF line ends is served"
    " with LF ones, other bytes than ratified. Commits with LF line ends round-trip byte for byte.",
)
class InlineContentUniversalNewlines(ReferenceCatalog):
    def commit(self, table_id: str, version: int, *, inline_content: bytes | None = None, **kw: Any) -> None:
        if inline_content is not None:
            # the fault: the line ends are the codec's, not the commit's
            inline_content = inline_content.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        super().commit(table_id, version, inline_content=inline_content, **kw)


@fault(
    "ict-local-wall-winter-offset",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="Keeps a proposal's in-commit timestamp as the host's local wall time and converts it back with"
    " the zone's standard (winter) offset: exact in UTC and in any zone without daylight saving, an hour late"
    " for every timestamp proposed while summer time is in force.",
)
class IctLocalWallWinterOffset(ReferenceCatalog):
    def commit(self, table_id: str, version: int, *, in_commit_timestamp: int | None = None, **kw: Any) -> None:
        if in_commit_timestamp is not None:
            wall = time.localtime(in_commit_timestamp // 1000)
            # the fault: time.timezone is the standard offset, whatever the wall time's tm_isdst says
            back = calendar.timegm(wall) + time.timezone
            in_commit_timestamp = back * 1000 + in_commit_timestamp % 1000
        super().commit(table_id, version, in_commit_timestamp=in_commit_timestamp, **kw)


@fault(
    "resolve-name-stripped",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="Resolves a name after strip() (a name read from a line of text): a name no table has, a"
    " registered one with a line end, a tab or a space before or after it, resolves to that table's location."
    " Every name without whitespace around it is looked up exactly.",
)
class ResolveNameStripped(ReferenceCatalog):
    def resolve(self, name: str) -> TableInfo:
        return super().resolve(name.strip() if isinstance(name, str) else name)  # the fault: strip()
