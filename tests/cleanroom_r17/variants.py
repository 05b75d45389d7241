"""Round 17: faulty variants of the durable clean-room catalog (profile ``delta-cm-catalog``).

Each target swaps exactly one side of ``DurableTarget``, the catalog, for a faulty subclass of
``DurableCatalog`` (or of a correct helper of this module, marked as such) that breaks one MUST or
SHOULD rule and is otherwise correct. Written from the RFC, the public contract, docs/certify.md and the
clean-room baselines only; the faults are shown in ``tests/test_cleanroom_r17_faults.py``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import posixpath
import threading
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from conformance.contract.delta import (
    CatalogLimits,
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    RatifiedCommit,
    Storage,
    TableInfo,
    TableNotFound,
)
from tests.cleanroom.catalog import _STAGED_NAME, CleanCatalog, TableState
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget
from tests.cleanroom_r3.variant import Variant, variant_of

# ================================================================ correct helpers

UNPUBLISHED_CAP = 10


class CappedCatalog(DurableCatalog):
    """Correct helper (not a variant): at most ``CAP`` ratified, unpublished commits per table, staged and
    inline alike; the proposal that would hold one more is refused cleanly (``CommitRejected``), judged
    with the sequence, before a publication mark it carries is applied, so that the refusal changes
    nothing."""

    CAP: ClassVar[int] = UNPUBLISHED_CAP

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._proposal = threading.local()  # the kind of the proposal this thread is judging
        super().__init__(warehouse_uri, storage, state_dir)

    def over_cap(self, t: TableState, inline: bool) -> bool:
        return t.latest - t.published >= self.CAP

    def check_sequence(self, t: TableState, version: int) -> None:
        super().check_sequence(t, version)
        if self.over_cap(t, bool(getattr(self._proposal, "inline", False))):
            raise CommitRejected(f"table holds {self.CAP} unpublished commits; publish first")

    def commit(
        self,
        table_id: str,
        version: int,
        *,
        staged_uri: str | None = None,
        inline_content: bytes | None = None,
        in_commit_timestamp: int | None = None,
        latest_published_version: int | None = None,
    ) -> None:
        self._proposal.inline = inline_content is not None
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            latest_published_version=latest_published_version,
        )


class CappedTarget(DurableTarget):
    """Correct helper: ``CappedCatalog`` with its cap declared."""

    catalog_cls: ClassVar[type[CleanCatalog]] = CappedCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(unpublished=UNPUBLISHED_CAP)


# ================================================================ catalog faults


class StagedPathNormalisedCatalog(DurableCatalog):
    """cr17-cat-staged-path-normalised. CAT-STAGED-IN-TABLE (MUST); RFC "Terminology - Commits" (staged
    commit), "Delta Log Entries" and "Commit Protocol" option 1: a staged proposal is ratified only when
    its file is directly in the table's own ``_delta_log/_staged_commits/``; any other path is refused.
    Bug: to tolerate clients that build paths by joining strings, the catalog runs ``posixpath.normpath``
    over the URI's path before it judges it (``//`` -> ``/``, ``/./`` -> ``/``, ``x/../`` folded away), but
    checks the existence of, and ratifies and serves, the URI as sent. On an object store (S3, an
    in-memory ``Storage``) keys are literal: ``.../_staged_commits//<v>.<uuid>.json``,
    ``.../_staged_commits/./<v>.<uuid>.json``, ``.../_delta_log/tmp/../_staged_commits/<v>.<uuid>.json`` or
    ``<other table>/../<this table>/_delta_log/_staged_commits/<v>.<uuid>.json`` are objects outside the
    table's staging folder (below ``_staged_commits/`` at a second level, below ``_delta_log/tmp/``, below
    another table's prefix), yet they are ratified. Why a shallow suite misses it: the escapes it tries
    (``../<name>``, ``_delta_log/<name>``, another table's folder, a nested folder) all normalise to a
    path outside the folder and are refused; only a detour that comes back into the folder passes."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        parts = urlsplit(staged_uri)
        judged = urlunsplit(parts._replace(path=posixpath.normpath(parts.path)))
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = judged[len(prefix) :] if judged.startswith(prefix) else ""
        m = _STAGED_NAME.fullmatch(rest)
        if m is None:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class StagedPathNormalisedTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedPathNormalisedCatalog


class CapCountsInlineOnlyCatalog(CappedCatalog):
    """cr17-cat-cap-counts-inline-only. CAT-LIMIT-DECLARED (MUST); RFC "Catalog Responsibilities" and
    docs/certify.md "Limits" (a declared limit is the real one: a call at it succeeds, one past it is
    refused). The target declares a cap of 10 ratified, unpublished commits per table
    (``CatalogLimits(unpublished=10)``). Bug: the cap is enforced by the catalog's inline-commit store (a
    row quota that keeps the catalog's own storage bounded), so it counts only the unpublished *inline*
    commits and judges only inline proposals: a staged proposal is never refused, and a table holds any
    number of unpublished staged commits past the declared cap (and inline ones on top of them). Why a
    shallow suite misses it: a cap check that fills a table with inline commits (the cheap way, no file to
    write) sees the 11th refused cleanly and everything at the cap ratified; only one past the cap with a
    staged proposal, or a mix, shows that the declared limit is not the real one."""

    def over_cap(self, t: TableState, inline: bool) -> bool:
        if not inline:
            return False
        waiting = [c for v, c in t.stored.items() if v > t.published and c.inline_content is not None]
        return len(waiting) >= self.CAP


class CapCountsInlineOnlyTarget(CappedTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = CapCountsInlineOnlyCatalog


class ConflictLatestSameKindCatalog(DurableCatalog):
    """cr17-cat-conflict-latest-same-kind. CAT-CONFLICT-LATEST (SHOULD); RFC "Commit Protocol" (the catalog
    is encouraged to provide the latest ratified commit information whenever a commit fails due to a
    version conflict; a conflict that states a latest version states the true one). Bug: the catalog keeps
    staged and inline commits in two stores (a location table and a content table) and its conflict
    handler, written next to each insert path, states ``max(version)`` of the store of the proposal's own
    kind (the table's latest only when that store holds nothing for the table). On a table whose stored
    commits mix both kinds, a staged proposal that loses to an inline commit (or the reverse) is told an
    older version than the latest: a writer that trusts it rebases onto that version and loses again (or
    gives up after its retries). Why a shallow suite misses it: its races use one kind of proposal on a
    table holding only that kind, where the kind's highest version is the latest."""

    def commit(
        self,
        table_id: str,
        version: int,
        *,
        staged_uri: str | None = None,
        inline_content: bytes | None = None,
        in_commit_timestamp: int | None = None,
        latest_published_version: int | None = None,
    ) -> None:
        try:
            super().commit(
                table_id,
                version,
                staged_uri=staged_uri,
                inline_content=inline_content,
                in_commit_timestamp=in_commit_timestamp,
                latest_published_version=latest_published_version,
            )
        except CommitConflict as conflict:
            t = self._table(table_id, InvalidRequest)
            inline = inline_content is not None
            with t.lock:
                same_kind = [v for v, c in t.stored.items() if (c.inline_content is not None) == inline]
                stated = max(same_kind) if same_kind else t.latest
            raise CommitConflict(str(conflict), latest_version=stated) from None


class ConflictLatestSameKindTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ConflictLatestSameKindCatalog


class StateFilePerFoldedNameCatalog(DurableCatalog):
    """cr17-cat-state-file-per-folded-name. CAT-RATIFY-DURABLE (MUST), also CAT-RESOLVE-LOCATION (MUST);
    RFC "Commit Protocol" and "Terminology - Commits" (ratified commits survive a catalog restart, each
    served unchanged; the latest version stays), "Table Discovery". Bug: to make its state directory
    readable by operators, the catalog keeps a registered table's state in a file named after the table
    (``<name>.json``, the table id's file until it is named), lower-cased so that the directory works on
    case-insensitive file systems (macOS, Windows volumes). Names are still registered and resolved
    exactly as given, and ``Caps`` and ``caps`` are two tables while the catalog runs; but both write
    ``caps.json``, each write replacing the other table's state. After a restart only the table written
    last exists: the other's name no longer resolves and every commit it ratified (published or not) is
    gone from the catalog. Why a shallow suite misses it: its restart checks use tables whose names differ
    in more than case, and its look-alike names (``Caps``/``caps``) are judged while the catalog runs,
    where each resolves to its own table."""

    def state_path(self, t: TableState) -> Path:
        assert self.state_dir is not None
        key = t.name.lower() if t.name is not None else t.table_id
        return self.state_dir / f"{key}.json"

    def persist(self, t: TableState) -> None:
        if self.state_dir is None:
            return
        path = self.state_path(t)
        tmp = path.with_suffix(f".{os.getpid()}.{id(t)}.tmp")
        tmp.write_text(json.dumps(self.encode_table(t)))
        os.replace(tmp, path)
        if t.name is not None:  # named now: the id's file is replaced by the name's
            (self.state_dir / f"{t.table_id}.json").unlink(missing_ok=True)


class StateFilePerFoldedNameTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StateFilePerFoldedNameCatalog


def java_hash(name: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units, 32-bit signed)."""
    units = name.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


class NameHashIndexCatalog(DurableCatalog):
    """cr17-cat-name-hash-index. CAT-RESOLVE-LOCATION (MUST); RFC "Table Discovery" and "Reader
    Requirements for Catalog-managed tables" (resolving a table name returns that table's storage
    location). Bug: the names table keeps the name itself (its unique key refuses a taken name), but the
    lookup path that resolution uses is a hash index keyed by the name's 32-bit ``String.hashCode`` (the
    catalog's JVM front end shards and caches by it), and a hit is not compared with the name asked for.
    Two distinct names of equal hash (``Aa`` and ``BB``, ``AaAa`` and ``BBBB``, ``Ab`` and ``BC``... any
    pair is easy to build) are both registered, and resolving the first returns the table registered last
    under the second: its readers and writers go to the other table's location. Why a shallow suite
    misses it: the names it uses (``t1``, ``orders``, names sharing a prefix, ``Caps``/``caps``, accented
    and CJK names, the longest name and one differing in its last character) never share a hash, so every
    name resolves to its own table, before and after a restart."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._by_hash: dict[int, str] = {}
        super().__init__(warehouse_uri, storage, state_dir)

    def load(self) -> None:
        super().load()
        for name, table_id in sorted(self._by_name.items()):
            self._by_hash[java_hash(name)] = table_id

    def register_table(self, name: str, table_id: str) -> TableInfo:
        info = super().register_table(name, table_id)
        with self._lock:
            self._by_hash[java_hash(name)] = info.table_id
        return info

    def resolve(self, name: str) -> TableInfo:
        with self._lock:
            table_id = self._by_hash.get(java_hash(name)) if isinstance(name, str) else None
            t = self._by_id.get(table_id) if table_id is not None else None
        if t is None or t.name is None:
            raise TableNotFound(f"no table {name!r}")
        return TableInfo(t.table_id, name, t.location, True)


class NameHashIndexTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = NameHashIndexCatalog


class InlineCp1252ColumnCatalog(DurableCatalog):
    """cr17-cat-inline-cp1252-column. CAT-RETAIN-UNPUBLISHED (MUST); RFC "Terminology - Commits" (inline
    commit; a ratified commit stays stored, unchanged, and served to readers until it is published) and
    "Commit Protocol" option 2. Bug: inline commits are kept in a ``VARCHAR`` column of a database whose
    collation uses the Windows-1252 code page (SQL Server's default ``SQL_Latin1_General_CP1``); the driver
    moves the commit's bytes through that code page, and the five bytes cp1252 leaves undefined (0x81,
    0x8D, 0x8F, 0x90, 0x9D) come back as ``?``. Every other byte round-trips, so ASCII commits, ``é``, ``ü``,
    ``表``, ``𠀀`` and most emoji are served byte for byte; a commit holding a character whose UTF-8 form
    contains one of those bytes (``Á`` C3 81, ``Í`` C3 8D, ``Ð`` C3 90, ``Ý`` C3 9D, Japanese kana such as
    ``ぁ`` E3 81 81, ``𝔘`` F0 9D 94 98) is served changed, invalid UTF-8 or other text than ratified. Why a
    shallow suite misses it: the non-ASCII text it sends (an accent, a CJK letter) is made of bytes the
    code page defines, and so round-trips."""

    @staticmethod
    def through_column(content: bytes) -> bytes:
        return content.decode("cp1252", errors="replace").encode("cp1252", errors="replace")

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if commit.inline_content is not None:
            commit = dataclasses.replace(commit, inline_content=self.through_column(commit.inline_content))
        super().store(t, commit)


class InlineCp1252ColumnTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = InlineCp1252ColumnCatalog


class ForgetByTimestampCatalog(DurableCatalog):
    """cr17-cat-forget-by-timestamp. CAT-FORGET-PUBLISHED-ONLY (MUST), CAT-RETAIN-UNPUBLISHED (MUST); RFC
    "Publishing Commits" and "Terminology - Commits" (after publication up to b the catalog may drop
    commits at or below b, and keeps serving every commit above b until it is published). Bug: the
    catalog's commit store is partitioned and purged by time, so a publication mark is turned into a time
    cut-off: when the marked commit b is still stored, every stored commit whose in-commit timestamp is
    at or below b's is dropped (``DELETE ... WHERE ict <= (SELECT ict ... WHERE version = b)``), besides
    those at or below b. While in-commit timestamps rise strictly this is the same set; but the catalog
    ratifies, as the contract lets it, proposals whose timestamp equals or is below the previous one, and
    a mark then drops ratified commits above b that nobody published. Why a shallow suite misses it: its
    proposals carry rising timestamps (the writers' clocks, or a counter), and its checks of equal or
    falling timestamps look at what is served right after the proposal, not after a later mark."""

    def forget_published(self, t: TableState, version: int) -> None:
        marked = t.stored.get(version)
        cutoff = marked.in_commit_timestamp if marked is not None else None
        super().forget_published(t, version)
        if cutoff is None:
            return
        stale = [
            v for v, c in t.stored.items() if c.in_commit_timestamp is not None and c.in_commit_timestamp <= cutoff
        ]
        for v in stale:
            del t.stored[v]
        if stale:
            self.persist(t)


class ForgetByTimestampTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ForgetByTimestampCatalog


class ListByPositionCatalog(DurableCatalog):
    """cr17-cat-list-by-position. CAT-LIST-RANGE (MUST), CAT-LIST-CONTIGUOUS (MUST); RFC "Getting Ratified
    Commits from the Catalog" and "Sample Catalog Client API" (only the ratified commits in
    ``[startVersion, endVersion]``, a contiguous run). Bug: the catalog keeps a table's stored commits in
    an array and answers a bounded listing by position, taking version v to sit at index ``v - 1`` (as it
    does on a table whose history starts at v1): ``rows[start - 1 : end]``. Publication marks trim the
    array's head without the offset being kept, so on any table that has dropped published commits a
    bounded listing returns the wrong commits: ``[1, 2]`` lists v6 and v7 of a table published up to v5
    (outside the range), ``[7, 7]`` lists nothing, and a listing with only an end (``end_version=7``, start
    0) lists every stored commit up to the latest. An unbounded listing (start None, no end) is right, and
    so is every listing of a table that never dropped a commit. Why a shallow suite misses it: its range
    checks run on a fresh table, and its listings after publication are unbounded."""

    def listed(self, t: TableState, lo: int, hi: int) -> list[RatifiedCommit]:
        rows = [t.stored[v] for v in sorted(t.stored)]
        return rows[max(lo - 1, 0) : hi]


class ListByPositionTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ListByPositionCatalog


# ================================================================ the variants


def _catalog_variant(name: str, cls: Any, rules: tuple[str, ...], level: str, dims: tuple[str, ...]) -> Variant:
    return variant_of(name, cls, "catalog", "delta-cm-catalog", rules, level, dims)


VARIANTS: list[Variant] = [
    _catalog_variant(
        "cr17-cat-staged-path-normalised",
        StagedPathNormalisedTarget,
        ("CAT-STAGED-IN-TABLE",),
        "MUST",
        ("encoding", "paths", "object-store-keys"),
    ),
    _catalog_variant(
        "cr17-cat-cap-counts-inline-only",
        CapCountsInlineOnlyTarget,
        ("CAT-LIMIT-DECLARED",),
        "MUST",
        ("limits", "staged-and-inline-mixed"),
    ),
    _catalog_variant(
        "cr17-cat-conflict-latest-same-kind",
        ConflictLatestSameKindTarget,
        ("CAT-CONFLICT-LATEST",),
        "SHOULD",
        ("staged-and-inline-mixed", "several-clients"),
    ),
    _catalog_variant(
        "cr17-cat-state-file-per-folded-name",
        StateFilePerFoldedNameTarget,
        ("CAT-RATIFY-DURABLE", "CAT-RESOLVE-LOCATION"),
        "MUST",
        ("restart", "names", "several-tables"),
    ),
    _catalog_variant(
        "cr17-cat-name-hash-index",
        NameHashIndexTarget,
        ("CAT-RESOLVE-LOCATION",),
        "MUST",
        ("several-tables", "names"),
    ),
    _catalog_variant(
        "cr17-cat-inline-cp1252-column",
        InlineCp1252ColumnTarget,
        ("CAT-RETAIN-UNPUBLISHED",),
        "MUST",
        ("encoding", "inline-content"),
    ),
    _catalog_variant(
        "cr17-cat-forget-by-timestamp",
        ForgetByTimestampTarget,
        ("CAT-FORGET-PUBLISHED-ONLY", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("clock", "publication", "non-rising-timestamps"),
    ),
    _catalog_variant(
        "cr17-cat-list-by-position",
        ListByPositionTarget,
        ("CAT-LIST-RANGE", "CAT-LIST-CONTIGUOUS"),
        "MUST",
        ("long-history", "publication", "listing-bounds"),
    ),
]
