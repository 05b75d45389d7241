"""Round 13 (catalog writer): faulty variants of the durable clean-room catalog.

Each target swaps exactly the catalog side of ``DurableTarget`` for a faulty subclass. Written from the
RFC, the public contract, docs/certify.md and the clean-room baselines only.
"""

from __future__ import annotations

import re
import threading
from typing import Any, ClassVar

from conformance.contract.delta import (
    CatalogLimits,
    CommitConflict,
    GetCommitsResponse,
    InvalidRequest,
    RatifiedCommit,
    TableInfo,
    TableNotFound,
)
from tests.cleanroom.catalog import CleanCatalog, TableState
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget
from tests.cleanroom_r3.variant import Variant, variant_of

PROFILE = "delta-cm-catalog"

# ================================================================ correct helpers (not variants)


NAME_LIMIT = 64


class NameLimitCatalog(DurableCatalog):
    """Correct helper (not a variant): names longer than ``NAME_LIMIT`` characters are refused with
    ``InvalidRequest`` before anything is touched (the declared ``name_length``)."""

    def register_table(self, name: str, table_id: str) -> TableInfo:
        if isinstance(name, str) and len(name) > NAME_LIMIT:
            raise InvalidRequest(f"table name longer than {NAME_LIMIT} characters")
        return super().register_table(name, table_id)


class NameLimitTarget(DurableTarget):
    """Correct helper: ``NameLimitCatalog`` with its name limit declared."""

    catalog_cls: ClassVar[type[CleanCatalog]] = NameLimitCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(name_length=NAME_LIMIT)


class DroppingDurableCatalog(DurableCatalog):
    """Correct helper (not a variant): a durable catalog that offers ``drop_table``. Dropping removes
    the table's name and its catalog record (and state file); its files in storage stay, and nothing
    is committed to it."""

    def drop_table(self, name: str) -> None:
        with self._lock:
            table_id = self._by_name.pop(name, None) if isinstance(name, str) else None
            if table_id is None:
                raise TableNotFound(f"no table {name!r}")
            self.forget_record(table_id)

    def forget_record(self, table_id: str) -> None:
        """Remove one table's record from memory and disk (caller holds ``self._lock``)."""
        self._by_id.pop(table_id, None)
        if self.state_dir is not None:
            (self.state_dir / f"{table_id}.json").unlink(missing_ok=True)


class DroppingTarget(DurableTarget):
    """Correct helper: the durable catalog with ``drop_table``."""

    catalog_cls: ClassVar[type[CleanCatalog]] = DroppingDurableCatalog


# ================================================================ catalog faults


class ListEndWithoutStartCatalog(DurableCatalog):
    """cr13-cat-list-end-without-start. CAT-LIST-RANGE (MUST); RFC "Getting Ratified Commits from the
    Catalog" and "Sample Catalog Client API" (``getRatifiedCommits`` returns the ratified commits in
    ``[startVersion, endVersion]``). Bug: the listing has a "full listing" fast path, written when the
    API only took a start version: when ``start_version`` is not given it returns every stored commit
    and never looks at ``end_version``. A listing with both bounds, with a start only, or with neither
    is right; only an upper bound without a lower one (a reader asking for "everything up to v", as
    time travel to version v does) gets commits above v. A shallow suite that bounds its listings on
    both sides, or only from below, never sees it."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        if start_version is None:
            t = self._table(table_id, TableNotFound)
            with t.lock:
                latest = self.latest_of(t)
                return GetCommitsResponse(self.listed(t, 0, latest), latest)
        return super().get_commits(table_id, start_version, end_version)


class ListEndWithoutStartTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ListEndWithoutStartCatalog


class NameLimitBurnsStagingCatalog(NameLimitCatalog):
    """cr13-cat-name-limit-burns-staging. CAT-LIMIT-CLEAN-REFUSAL (MUST); RFC "Terminology - Commits"
    (proposed commit), "Table Discovery" and docs/certify.md "Limits" (one past a limit the call is
    refused and changes nothing). Bug: registration first claims the staging table (so that two
    concurrent registrations of one staging table cannot both win) and only then checks the name
    against the declared limit of 64 characters; the refusal of a 65-character name is clean
    (``InvalidRequest``, the name resolves to nothing) but the claim is not released, so the staging
    table, whose version 0 is written, can never be registered again, under any name: the refused
    call changed the catalog. A shallow suite checks that the long name is refused and resolves to no
    table; it does not retry the same staging table with a valid name, as a client that shortens a
    rejected name does."""

    def register_table(self, name: str, table_id: str) -> TableInfo:
        with self._lock:
            t = self._by_id.get(table_id) if isinstance(table_id, str) else None
            claimed = t is not None and t.name is None
        if isinstance(name, str) and len(name) > NAME_LIMIT:
            if claimed and t is not None:
                with self._lock:
                    t.name = ""  # the claim made above, never released on this path
            raise InvalidRequest(f"table name longer than {NAME_LIMIT} characters")
        return super().register_table(name, table_id)


class NameLimitBurnsStagingTarget(NameLimitTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = NameLimitBurnsStagingCatalog


def _like(pattern: str) -> re.Pattern[str]:
    """What SQL ``LIKE`` makes of a pattern: ``_`` is any one character, ``%`` any run."""
    out = "".join("." if ch == "_" else ".*" if ch == "%" else re.escape(ch) for ch in pattern)
    return re.compile(out, re.DOTALL)


class ResolveLikeWildcardCatalog(DurableCatalog):
    """cr13-cat-resolve-like-wildcard. CAT-RESOLVE-LOCATION (MUST); RFC "Table Discovery" and "Reader
    Requirements for Catalog-managed tables" (resolving a name returns that table's location). Bug:
    the name index lives in a SQL table and resolution is ``WHERE name LIKE ? ORDER BY name LIMIT 1``
    (the query was shared with the "list tables matching" endpoint), with the name not escaped: ``_``,
    a legal and common character of table names, matches any one character. Registration checks
    uniqueness with ``=``, so ``sales_eu`` and ``salesXeu`` are two tables; ``resolve("sales_eu")``
    returns whichever sorts first (``salesAeu`` before ``sales_eu``), and a name with ``_`` that is
    not registered resolves to a neighbour instead of ``TableNotFound``. A shallow suite's names never
    differ only where one has ``_``; its names resolve to their own tables."""

    def resolve(self, name: str) -> TableInfo:
        if not isinstance(name, str):
            raise TableNotFound(f"no table {name!r}")
        pattern = _like(name)
        with self._lock:
            hits = sorted(n for n in self._by_name if pattern.fullmatch(n))
            table_id = self._by_name[hits[0]] if hits else None
            t = self._by_id.get(table_id) if table_id is not None else None
        if t is None or t.name is None:
            raise TableNotFound(f"no table {name!r}")
        return TableInfo(t.table_id, t.name, t.location, True)


class ResolveLikeWildcardTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ResolveLikeWildcardCatalog


class DropReapsStagingCatalog(DroppingDurableCatalog):
    """cr13-cat-drop-reaps-staging. CAT-DROP (MAY); RFC "Creating and Dropping Catalog-managed Tables"
    (a catalog that drops a table removes that table's name and leaves other tables as they were).
    Bug: ``drop_table`` also garbage-collects "abandoned" staging tables, the ones handed out by
    ``create_staging_table`` and not registered, meant to reclaim creations that crashed between
    phase 1 and phase 3 (its author assumed creations run one at a time, as its own console does, so
    any unregistered staging table seen at a drop is a leftover). A creation in flight on another
    client (phase 1 done, version 0 being written) loses its staging table: its registration is
    refused, although nobody touched that table. A shallow suite drops a table while no creation is
    in flight; the dropped table goes, the registered neighbours stay."""

    def drop_table(self, name: str) -> None:
        super().drop_table(name)
        with self._lock:
            for table_id in [tid for tid, t in self._by_id.items() if t.name is None]:
                self.forget_record(table_id)


class DropReapsStagingTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = DropReapsStagingCatalog


class ForgetInlineUnboundedCatalog(DurableCatalog):
    """cr13-cat-forget-inline-unbounded. CAT-FORGET-PUBLISHED-ONLY, CAT-RETAIN-UNPUBLISHED (MUST); RFC
    "Publishing Commits" (after publication up to b the catalog may drop commits at or below b only)
    and "Terminology - Commits" (a ratified commit is stored and served until it is published). Bug:
    the catalog keeps staged commits (their locations) and inline commits (their bytes) in two stores;
    a publication mark drops staged rows at or below b correctly, but its delete of inline contents
    has lost its version predicate (``DELETE FROM inline_content WHERE table_id = ?``): every inline
    commit of the table goes, also the ones above b, still unpublished. A shallow suite tests
    publication marks with staged commits, and inline commits with no mark, or with a mark up to the
    latest version (everything published, nothing to lose)."""

    def forget_published(self, t: TableState, version: int) -> None:
        for v in [v for v, c in t.stored.items() if c.inline_content is not None]:
            del t.stored[v]
        super().forget_published(t, version)


class ForgetInlineUnboundedTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ForgetInlineUnboundedCatalog


LISTING_BYTE_BUDGET = 2 << 20


class ListByteBudgetCatalog(DurableCatalog):
    """cr13-cat-list-byte-budget. CAT-LIST-CONTIGUOUS, CAT-RETAIN-UNPUBLISHED (MUST); RFC "Getting
    Ratified Commits from the Catalog" (the listed commits form a contiguous run ending at the latest
    ratified version) and "Terminology - Commits" (a ratified commit is served until it is
    published). Bug: to keep responses under its HTTP layer's 2 MiB body limit, the listing stops
    adding commits once the inline bytes it holds would pass 2 MiB, and answers as if it were
    complete: no continuation, and ``latest_version`` still the true latest. The listing is counted
    in bytes, not commits, so a long history of small commits (the shallow suite's long-history
    test) is listed whole; a few large inline commits, each well under the inline limit, waiting
    unpublished together, cut the listing short: the newest ratified commits are not served."""

    def listed(self, t: TableState, lo: int, hi: int) -> list[RatifiedCommit]:
        out: list[RatifiedCommit] = []
        used = 0
        for c in super().listed(t, lo, hi):
            size = len(c.inline_content or b"")
            if out and used + size > LISTING_BYTE_BUDGET:
                break
            out.append(c)
            used += size
        return out


class ListByteBudgetTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ListByteBudgetCatalog


class UpsertThenConflictCatalog(DurableCatalog):
    """cr13-cat-upsert-then-conflict. CAT-LIST-RATIFIED-ONLY, CAT-RETAIN-UNPUBLISHED (MUST); RFC
    "Terminology - Commits" (a rejected proposal is never part of the table; a ratified commit is
    stored unchanged until published) and "Commit Protocol" (a later proposal for a ratified version
    gets a conflict). Bug: ratification is one ``INSERT ... ON CONFLICT (table_id, version) DO UPDATE``
    followed by the sequence check on the table's latest version (the upsert was meant to make a
    re-sent proposal idempotent). A proposal for the latest version, or any ratified version still
    stored, is answered with the right ``CommitConflict`` and the right latest version, but its
    content has replaced the winner's row: the listing serves the loser's staged file or bytes as the
    ratified commit. A shallow suite checks the loser's conflict and the latest version, not what the
    listing serves for the contested version afterwards."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._proposal = threading.local()
        super().__init__(*args, **kwargs)

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        self._proposal.kwargs = kwargs
        try:
            super().commit(table_id, version, **kwargs)
        finally:
            self._proposal.kwargs = None

    def check_sequence(self, t: TableState, version: int) -> None:
        kwargs: dict[str, Any] | None = getattr(self._proposal, "kwargs", None)
        if kwargs is not None and version in t.stored:  # the upsert hits the stored row
            inline = kwargs.get("inline_content")
            t.stored[version] = RatifiedCommit(
                version,
                kwargs.get("staged_uri"),
                None if inline is None else bytes(inline),
                kwargs.get("in_commit_timestamp"),
            )
            self.persist(t)
        super().check_sequence(t, version)


class UpsertThenConflictTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = UpsertThenConflictCatalog


class ConflictDeletesLoserFileCatalog(DurableCatalog):
    """cr13-cat-conflict-deletes-loser-file. CAT-RETAIN-UNPUBLISHED (MUST); RFC "Terminology - Commits"
    (a ratified commit is stored and served, unchanged, until it is published) and "Commit Protocol".
    Bug: the catalog tidies up after lost races: a staged proposal refused with ``CommitConflict`` has
    its staged file deleted ("it can never be ratified"). It does not compare the file with the one it
    ratified for that version, so a proposal delivered again (its answer lost and re-sent, or
    duplicated by the network) deletes the staged file of the ratified commit itself: the catalog
    goes on listing the commit, and its content is gone before anyone published it. A shallow suite
    checks that the re-sent proposal is not ratified twice (the listing and latest version are right),
    and conflicts between two different files (the loser's file goes, which is harmless)."""

    def check_sequence(self, t: TableState, version: int) -> None:
        try:
            super().check_sequence(t, version)
        except CommitConflict:
            staged = getattr(self._loser, "uri", None)
            if staged is not None:
                self.storage.delete(staged)
            raise

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._loser = threading.local()
        super().__init__(*args, **kwargs)

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        self._loser.uri = kwargs.get("staged_uri")
        try:
            super().commit(table_id, version, **kwargs)
        finally:
            self._loser.uri = None


class ConflictDeletesLoserFileTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ConflictDeletesLoserFileCatalog


# ================================================================ the variants


def _cat(name: str, cls: Any, rules: tuple[str, ...], level: str, dims: tuple[str, ...]) -> Variant:
    return variant_of(name, cls, "catalog", PROFILE, rules, level, dims)


VARIANTS: list[Variant] = [
    _cat(
        "cr13-cat-list-end-without-start",
        ListEndWithoutStartTarget,
        ("CAT-LIST-RANGE",),
        "MUST",
        ("boundaries", "optional-arguments"),
    ),
    _cat(
        "cr13-cat-name-limit-burns-staging",
        NameLimitBurnsStagingTarget,
        ("CAT-LIMIT-CLEAN-REFUSAL",),
        "MUST",
        ("limits", "retries", "creation"),
    ),
    _cat(
        "cr13-cat-resolve-like-wildcard",
        ResolveLikeWildcardTarget,
        ("CAT-RESOLVE-LOCATION",),
        "MUST",
        ("encoding", "names"),
    ),
    _cat(
        "cr13-cat-drop-reaps-staging",
        DropReapsStagingTarget,
        ("CAT-DROP",),
        "MAY",
        ("concurrency", "maintenance", "creation"),
    ),
    _cat(
        "cr13-cat-forget-inline-unbounded",
        ForgetInlineUnboundedTarget,
        ("CAT-FORGET-PUBLISHED-ONLY", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("publication", "inline", "mixed-workload"),
    ),
    _cat(
        "cr13-cat-list-byte-budget",
        ListByteBudgetTarget,
        ("CAT-LIST-CONTIGUOUS", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("sizes", "inline", "listing"),
    ),
    _cat(
        "cr13-cat-upsert-then-conflict",
        UpsertThenConflictTarget,
        ("CAT-LIST-RATIFIED-ONLY", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("concurrency", "retries"),
    ),
    _cat(
        "cr13-cat-conflict-deletes-loser-file",
        ConflictDeletesLoserFileTarget,
        ("CAT-RETAIN-UNPUBLISHED",),
        "MUST",
        ("retries", "duplicates", "maintenance"),
    ),
]
