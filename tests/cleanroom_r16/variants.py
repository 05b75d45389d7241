"""Round 16: faulty variants of the durable clean-room catalog (catalog writer).

Each target swaps the catalog side of ``DurableTarget`` for a faulty subclass of ``DurableCatalog`` and
keeps the correct ``ResilientClient``. Written from the RFC, the public contract, docs/certify.md and the
clean-room baselines only; the faults are shown in ``tests/test_cleanroom_r16_faults.py``.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from typing import Any, ClassVar

from conformance.contract.delta import (
    CommitConflict,
    InvalidRequest,
    RatifiedCommit,
    TableInfo,
)
from tests.cleanroom.catalog import _STAGED_NAME, _TABLE_NAME, CleanCatalog, TableState, is_int
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget
from tests.cleanroom_r3.variant import Variant, variant_of

# ================================================================ 1. inline content kept in chunks

INLINE_CHUNK = 16 * 1024


def chunk_rows(content: bytes) -> dict[str, bytes]:
    """The rows an inline commit is written as: one row per 16 KiB chunk, keyed by its index as text."""
    return {str(i): content[off : off + INLINE_CHUNK] for i, off in enumerate(range(0, len(content), INLINE_CHUNK))}


def read_rows(rows: dict[str, bytes]) -> bytes:
    """The commit read back: the rows in the store's key order (text order), joined (the fault)."""
    return b"".join(rows[key] for key in sorted(rows))


class InlineChunksTextOrderCatalog(DurableCatalog):
    """cr16-cat-inline-chunks-text-order. CAT-RETAIN-UNPUBLISHED (MUST); RFC "Terminology - Commits"
    (inline commit; a ratified commit stays stored, unchanged, and served to readers until it is
    published) and "Commit Protocol" option 2.

    Bug: the catalog's store limits the size of one item, so an inline commit is written as rows of
    16 KiB chunks under the sort key ``<version>#<chunk index>``, the index written as plain text, and
    read back by a range query over the version, which returns the rows in sort-key (text) order. Up
    to ten chunks (160 KiB) text order is numeric order and the commit comes back byte for byte; from
    the eleventh chunk on, chunk ``10`` sorts between ``1`` and ``2`` and the served commit is the
    ratified bytes shuffled: same size, lines cut and spliced in the wrong order.

    Why a shallow suite misses it: inline commits in tests are a few actions, a few hundred bytes; even
    a limit check that tries "a large commit" at 64 or 128 KiB passes. Only a commit above 160 KiB
    (a probe at a discovered or declared multi-MiB inline limit, or a commit with many adds) shows it.
    """

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if commit.inline_content is not None:
            commit = dataclasses.replace(commit, inline_content=read_rows(chunk_rows(commit.inline_content)))
        super().store(t, commit)


class InlineChunksTextOrderTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = InlineChunksTextOrderCatalog


# ================================================================ 2. conflict's latest from the first page

LISTING_PAGE = 8


class ConflictLatestFirstPageCatalog(DurableCatalog):
    """cr16-cat-conflict-latest-first-page. CAT-CONFLICT-LATEST (SHOULD); RFC "Commit Protocol" (the
    catalog provides the latest ratified commit information whenever a commit fails due to a version
    conflict).

    Bug: the conflict answer reuses the listing's paged query to find "the latest ratified commit": it
    fetches the first page (8 commits, ascending) of the commits the catalog still stores and states
    the version of the last one on that page (the publication mark when nothing is stored). While a
    table holds at most 8 unpublished commits the first page ends at the latest version and the stated
    version is right; with 9 or more unpublished commits the conflict states the 8th oldest
    unpublished version, below the table's latest, and a writer that rebases on it conflicts again.

    Why a shallow suite misses it: conflict tests race two writers on a fresh or freshly published table
    (one or two unpublished commits), and listings themselves are whole. Only a conflict on a table
    whose publication lags by more than a page shows the wrong number.
    """

    def check_sequence(self, t: TableState, version: int) -> None:
        if version <= t.latest:
            page = self.listed(t, 0, t.latest)[:LISTING_PAGE]
            stated = page[-1].version if page else t.published
            raise CommitConflict(f"version {version} is already ratified", latest_version=stated)
        super().check_sequence(t, version)


class ConflictLatestFirstPageTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ConflictLatestFirstPageCatalog


# ================================================================ 3. resend shortcut skips the version check


class ResendShortcutAnyVersionCatalog(DurableCatalog):
    """cr16-cat-resend-shortcut-any-version. CAT-STAGED-VERSION (MUST); RFC "Delta Log Entries" (note on
    staged versions: the version in a staged file's name is the only version it may be ratified as)
    and "Commit Protocol" option 1.

    Bug: to answer re-sent proposals kindly (a writer whose answer was lost sends the same staged file
    again), ``commit`` first looks the staged URI up among the table's stored commits and, when a
    ratified commit already has that file, acknowledges at once ("already ratified, nothing to do")
    without looking at the proposed version. A staged file ratified as v and proposed again for v+1
    (a writer that reuses its file after a conflict, or any later version) is therefore not refused:
    the proposer is told its commit is ratified at v+1, which holds nothing of it (or another writer's
    commit). Nothing is stored twice, so CAT-RESEND-ONCE holds.

    Why a shallow suite misses it: it re-sends a proposal for the same version (acknowledged: right),
    and tests a staged file named for another version with a fresh file (refused by the name check:
    right). Only a file that is already ratified, proposed for a different version, meets the shortcut.
    """

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
        if isinstance(staged_uri, str) and inline_content is None:
            t = self._table(table_id, InvalidRequest)
            with t.lock:
                if any(c.staged_uri == staged_uri for c in t.stored.values()):
                    return  # "a re-sent proposal": already ratified, acknowledge
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            latest_published_version=latest_published_version,
        )


class ResendShortcutAnyVersionTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ResendShortcutAnyVersionCatalog


# ================================================================ 4. restart finds staged files by listing


class RestartStagedFromListingCatalog(DurableCatalog):
    """cr16-cat-restart-staged-from-listing. CAT-RATIFY-DURABLE, CAT-LIST-RATIFIED-ONLY (MUST); RFC
    "Commit Protocol" (ratification atomically records that the file corresponds to version v) and
    "Terminology - Commits" (ratified commits survive, served unchanged; rejected staged files are
    never part of the table).

    Bug: to keep its state documents small the catalog persists, for a staged commit, only its version
    and a "staged" flag, not the file's URI ("the file is in the table's _staged_commits/ folder anyway").
    At start-up it lists ``<location>/_delta_log/_staged_commits/`` and takes, for each such version,
    the first file named for it in listing (URI) order. While the process lives every answer comes from
    memory and is right. After a restart, a version whose staged folder also holds a loser's file (a
    writer that lost the race for it), an abandoned one or a partial one sorting before the winner's
    UUID is served with that file: a rejected proposal is listed as the ratified commit.

    Why a shallow suite misses it: restart checks commit with one writer, so each version has exactly
    one staged file and the listing finds the right one. Only a restart after a race (or a crash) left a
    second file for an unpublished version, sorting first, shows it.
    """

    def encode_table(self, t: TableState) -> dict[str, Any]:
        doc = super().encode_table(t)
        for c in doc["stored"]:
            if c["staged_uri"] is not None:
                c["staged_uri"] = None
                c["staged"] = True
        return doc

    def decode_table(self, doc: dict[str, Any]) -> TableState:
        staged = {int(c["version"]) for c in doc["stored"] if c.get("staged")}
        t = super().decode_table(doc)
        if staged:
            folder = f"{t.location}/_delta_log/_staged_commits/"
            found: dict[int, str] = {}
            for f in self.storage.list(folder):
                m = _STAGED_NAME.fullmatch(f.uri[len(folder) :])
                if m is not None:
                    found.setdefault(int(m.group(1)), f.uri)
            for v in staged:
                old = t.stored[v]
                t.stored[v] = RatifiedCommit(v, found.get(v), None, old.in_commit_timestamp)
        return t


class RestartStagedFromListingTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = RestartStagedFromListingCatalog


# ================================================================ 5. inline rows ignore the start bound


class ListInlineIgnoresStartCatalog(DurableCatalog):
    """cr16-cat-list-inline-ignores-start. CAT-LIST-RANGE (MUST); RFC "Getting Ratified Commits from the
    Catalog" and "Sample Catalog Client API" (only the ratified commits in [startVersion, endVersion]).

    Bug: the catalog keeps staged commits (a URI) and inline commits (a blob) in two stores and a listing
    is the union of two range queries; the inline query was written with the upper bound only
    (``version <= end``), the staged one with both. Inline commits below ``start_version`` that the
    catalog still stores are listed too: a reader asking "anything new after v?" is handed old inline
    commits, a writer checking whether version v is its own gets every unpublished inline commit below.

    Why a shallow suite misses it: range checks run over staged commits (the common option), and inline
    commits are checked by a full listing or a listing that starts at the oldest stored one. Only a
    bounded listing over a table holding unpublished inline commits below the start shows it.
    """

    def listed(self, t: TableState, lo: int, hi: int) -> list[RatifiedCommit]:
        staged = [t.stored[v] for v in sorted(t.stored) if t.stored[v].inline_content is None and lo <= v <= hi]
        inline = [t.stored[v] for v in sorted(t.stored) if t.stored[v].inline_content is not None and v <= hi]
        return sorted(staged + inline, key=lambda c: c.version)


class ListInlineIgnoresStartTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ListInlineIgnoresStartCatalog


# ================================================================ 6. registration of a named table renames it


class RegisterRenamesByIdCatalog(DurableCatalog):
    """cr16-cat-register-renames-by-id. CAT-RESOLVE-LOCATION (MUST); RFC "Table Discovery" (resolving a
    table's name returns its storage location) and "Creating and Dropping Catalog-managed Tables"
    (phase 3 names a *staged* table).

    Bug: ``register_table(name, table_id)`` is written as ``UPDATE tables SET name = ? WHERE id = ?``
    after checking that the name is free, without ``AND name IS NULL``: registering a table id that is
    already named does not refuse, it renames the table. Its old name no longer resolves (readers and
    writers of it get ``TableNotFound`` though nobody dropped it) and the new name resolves to the
    existing table's location, with its history, instead of being refused.

    Why a shallow suite misses it: registration is tested with fresh staging tables (right), with a name
    that is taken (refused: right) and with an unknown id (refused: right). Only a second registration of
    an id that already has a name, under a free name, reaches the update.
    """

    def register_table(self, name: str, table_id: str) -> TableInfo:
        with self._lock:
            t = self._by_id.get(table_id) if isinstance(table_id, str) else None
            named = t is not None and t.name is not None
        if not named or t is None:
            return super().register_table(name, table_id)
        if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
            raise InvalidRequest(f"bad table name {name!r}")
        with self._lock:
            if name in self._by_name:
                raise InvalidRequest(f"table {name!r} exists")
            old = t.name
            if old is not None:
                self._by_name.pop(old, None)
            t.name = name
            self._by_name[name] = t.table_id
        with t.lock:
            self.persist(t)
        return TableInfo(t.table_id, name, t.location, True)


class RegisterRenamesByIdTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = RegisterRenamesByIdCatalog


# ================================================================ 7. staged name regex with unescaped dots

_UNESCAPED_DOTS = re.compile(
    r"([0-9]{20}).([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}).json"
)


class StagedNameUnescapedDotCatalog(DurableCatalog):
    """cr16-cat-staged-name-unescaped-dot. CAT-STAGED-NAME (MUST); RFC "Terminology - Commits" (staged
    commit) and "Delta Log Entries" (a staged commit is ``<20-digit version>.<uuid>.json``).

    Bug: the staged-name pattern was written with its two dots unescaped,
    ``([0-9]{20}).(<uuid>).json``, and applied with ``fullmatch``. Every well-formed name matches, and
    names missing the UUID, with a short or malformed UUID, another suffix or extra text are still
    refused; but a dot may be any character, so ``00000000000000000003_<uuid>.json``,
    ``00000000000000000003.<uuid>-json`` or ``00000000000000000003-<uuid>_json`` are ratified: files
    that are no staged commit by name, that readers and cleanup never recognise as one.

    Why a shallow suite misses it: malformed names in tests are of the kinds above that are refused
    (``00000000000000000003.json``, a UUID part that is no UUID); a name that differs from a valid one
    only in the character where a dot belongs is not tried.
    """

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.startswith(prefix) else ""
        m = _UNESCAPED_DOTS.fullmatch(rest)
        if m is None:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class StagedNameUnescapedDotTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedNameUnescapedDotCatalog


# ================================================================ 8. a carried mark vouches for a gap


class MarkVouchesForGapCatalog(DurableCatalog):
    """cr16-cat-mark-vouches-for-gap. CAT-RATIFY-SEQUENTIAL (MUST); RFC "Commit Protocol" (a catalog must
    not ratify version v until it has ratified v-1) and "Publishing Commits".

    Bug: the catalog knows of RFC option 3 (a writer may ratify and publish in one PUT-if-absent of
    ``_delta_log/<v>.json``, "regardless of when or whether the catalog is made aware") and takes a
    proposal of v that carries the publication mark ``latest_published_version = v - 1`` as the news
    that versions up to v-1 were committed that way: when v would leave a gap, it moves its latest
    version and its mark up to v-1, without looking at storage, and ratifies v. A proposal far past the
    latest that carries "everything before me is published" is therefore ratified over the gap, and
    the unpublished commits below it are forgotten as published.

    Why a shallow suite misses it: gap checks propose a far version without a mark (refused: right),
    and marks in proposals are tested with valid proposals (v = latest + 1 with mark v-1: right). Only a
    far proposal carrying a mark of exactly v-1 reaches the catch-up.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._carried = threading.local()
        super().__init__(*args, **kwargs)

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
        self._carried.mark = latest_published_version
        try:
            super().commit(
                table_id,
                version,
                staged_uri=staged_uri,
                inline_content=inline_content,
                in_commit_timestamp=in_commit_timestamp,
                latest_published_version=latest_published_version,
            )
        finally:
            self._carried.mark = None

    def check_sequence(self, t: TableState, version: int) -> None:
        mark = getattr(self._carried, "mark", None)
        if is_int(mark) and mark == version - 1 and version > t.latest + 1:
            # "published up to v-1 by PUT-if-absent (RFC option 3)": catch up with the writer
            t.latest = mark
            t.published = max(t.published, mark)
        super().check_sequence(t, version)


class MarkVouchesForGapTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = MarkVouchesForGapCatalog


# ================================================================ the variants

_CAT = "delta-cm-catalog"

VARIANTS: list[Variant] = [
    variant_of(
        "cr16-cat-inline-chunks-text-order",
        InlineChunksTextOrderTarget,
        "catalog",
        _CAT,
        ("CAT-RETAIN-UNPUBLISHED",),
        "MUST",
        ("sizes", "inline-commits", "ordering"),
    ),
    variant_of(
        "cr16-cat-conflict-latest-first-page",
        ConflictLatestFirstPageTarget,
        "catalog",
        _CAT,
        ("CAT-CONFLICT-LATEST",),
        "SHOULD",
        ("publication-lag", "paging", "concurrency"),
    ),
    variant_of(
        "cr16-cat-resend-shortcut-any-version",
        ResendShortcutAnyVersionTarget,
        "catalog",
        _CAT,
        ("CAT-STAGED-VERSION",),
        "MUST",
        ("duplicate-delivery", "retries"),
    ),
    variant_of(
        "cr16-cat-restart-staged-from-listing",
        RestartStagedFromListingTarget,
        "catalog",
        _CAT,
        ("CAT-RATIFY-DURABLE", "CAT-LIST-RATIFIED-ONLY"),
        "MUST",
        ("restart", "concurrency", "orphan-files"),
    ),
    variant_of(
        "cr16-cat-list-inline-ignores-start",
        ListInlineIgnoresStartTarget,
        "catalog",
        _CAT,
        ("CAT-LIST-RANGE",),
        "MUST",
        ("inline-commits", "listing-bounds"),
    ),
    variant_of(
        "cr16-cat-register-renames-by-id",
        RegisterRenamesByIdTarget,
        "catalog",
        _CAT,
        ("CAT-RESOLVE-LOCATION",),
        "MUST",
        ("registration", "retries"),
    ),
    variant_of(
        "cr16-cat-staged-name-unescaped-dot",
        StagedNameUnescapedDotTarget,
        "catalog",
        _CAT,
        ("CAT-STAGED-NAME",),
        "MUST",
        ("encodings", "staged-names"),
    ),
    variant_of(
        "cr16-cat-mark-vouches-for-gap",
        MarkVouchesForGapTarget,
        "catalog",
        _CAT,
        ("CAT-RATIFY-SEQUENTIAL",),
        "MUST",
        ("piggy-backed-mark", "gaps"),
    ),
]
