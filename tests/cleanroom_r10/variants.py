"""Round 10 (writer C): faulty variants of the durable clean-room catalog.

Each target swaps exactly the catalog side of ``DurableTarget`` for a faulty subclass of
``DurableCatalog`` (or of a correct helper written here and marked as such). Written from the RFC, the
public contract, docs/certify.md and the clean-room baselines only; the faults are demonstrated in
``tests/test_cleanroom_r10_faults.py``.
"""

from __future__ import annotations

import base64
import dataclasses
import re
import time
from typing import Any, ClassVar
from urllib.parse import unquote

from conformance.contract.delta import (
    CommitConflict,
    GetCommitsResponse,
    InvalidRequest,
    RatifiedCommit,
)
from tests.cleanroom.catalog import _STAGED_NAME, CleanCatalog, TableState, is_int
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget
from tests.cleanroom_r3.variant import Variant, variant_of

# ================================================================ catalog faults


class IctProtoTimestampCatalog(DurableCatalog):
    """cr10-cat-ict-proto-timestamp. CAT-RETAIN-UNPUBLISHED (MUST); RFC "Terminology - Commits" (a
    ratified commit is stored, unchanged, and served until it is published) and docs/certify.md (a
    served in-commit timestamp is the one proposed). Bug: the catalog's commit record keeps the in-commit
    timestamp as a protobuf-style ``Timestamp(seconds, nanos)`` built by hand from float seconds
    (``t = ict / 1000; seconds = int(t); nanos = int((t - seconds) * 1e9)``) and serves back
    ``seconds * 1000 + nanos // 1_000_000``. The float error of ``t - seconds`` (about 2e-7 s at today's
    epoch) is truncated downwards, so roughly every second millisecond value comes back 1 ms early.
    A shallow suite misses it: it proposes round timestamps (whole seconds, or small test values whose
    float is exact) or never compares the served timestamp with the proposed one; the error is 1 ms and
    only readers' time travel on unpublished commits at that exact millisecond notices."""

    @staticmethod
    def through_record(ict: int | None) -> int | None:
        if ict is None:
            return None
        t = ict / 1000
        seconds = int(t)
        nanos = int((t - seconds) * 1e9)
        return seconds * 1000 + nanos // 1_000_000

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        commit = dataclasses.replace(commit, in_commit_timestamp=self.through_record(commit.in_commit_timestamp))
        super().store(t, commit)


class IctProtoTimestampTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = IctProtoTimestampCatalog


_STAGED_NAME_ANY_CASE = re.compile(_STAGED_NAME.pattern, re.IGNORECASE)


class StagedNameAnyCaseCatalog(DurableCatalog):
    """cr10-cat-staged-name-any-case. CAT-STAGED-NAME (MUST); RFC "Terminology - Commits" (staged commit)
    and "Delta Log Entries": a staged proposal is ratified only when its file name is
    ``<20-digit version>.<uuid>.json``. Bug: the staged-name pattern is compiled with ``re.IGNORECASE``
    (so that upper-case UUIDs, which some writers produce, are accepted); the flag also makes the
    ``.json`` suffix case-insensitive, so ``<v>.<uuid>.JSON`` or ``.Json`` (a Windows tool's upload, a
    file no Delta reader takes for a commit) is ratified. A shallow suite misses it: its malformed names
    (no UUID, short version, another version, a ``.tmp`` tail) are all still refused; only the case of
    the extension slips through."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.startswith(prefix) else ""
        m = _STAGED_NAME_ANY_CASE.fullmatch(rest)
        if m is None:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class StagedNameAnyCaseTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedNameAnyCaseCatalog


class ExistsCheckAfterStoreCatalog(DurableCatalog):
    """cr10-cat-exists-check-after-store. CAT-LIST-RATIFIED-ONLY (MUST); RFC "Terminology - Commits"
    (a rejected proposal is never part of the table) and docs/certify.md (a catalog may refuse a staged
    file that does not exist, but a refusal changes nothing). Bug: to keep the slow storage HEAD out of
    the ratification's critical path, the check that the staged file exists was moved behind the store
    ("validate after accept"): the proposal is ratified and persisted first, then the missing file is
    reported as ``InvalidRequest``, with no rollback. The proposer takes the refusal for a rejection, yet
    the version is listed as ratified and the next one is a gap. A shallow suite misses it: it proposes
    files it wrote, and its refusal checks send bad names and paths, which are still refused before the
    store; only a well-formed proposal whose file is missing (a writer that crashed mid-upload, a file
    deleted by a rival's cleanup) is refused after being ratified."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.startswith(prefix) else ""
        m = _STAGED_NAME.fullmatch(rest)
        if m is None:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        # existence is checked in ``commit``, outside the table lock

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
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            latest_published_version=latest_published_version,
        )
        if staged_uri is not None and not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class ExistsCheckAfterStoreTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ExistsCheckAfterStoreCatalog


class StagingLocationSecondsCatalog(DurableCatalog):
    """cr10-cat-staging-location-seconds. CAT-STAGING-UNIQUE (SHOULD); RFC "Creating and Dropping
    Catalog-managed Tables" (phase 1: each creation gets its own unique staging location). Bug: staging
    locations follow a date-partitioned warehouse layout, ``<warehouse>/tables/<YYYY>/<MM>/<DD>/<HHMMSS>``
    in UTC ("readable and sortable by creation time"), with no part unique to the table: two creations in
    the same second get the same location, and the second table's version 0 lands on the first one's.
    Nothing counts in memory, so it also survives restarts unharmed. A shallow suite misses it: it creates
    its tables one per check, seconds apart (a few staging calls in a row in one check collide; a
    uniqueness check done right after a restart, with tables created over many seconds, sees distinct
    locations)."""

    def new_location(self, table_id: str) -> str:
        return f"{self.warehouse}/tables/{time.strftime('%Y/%m/%d/%H%M%S', time.gmtime())}"


class StagingLocationSecondsTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StagingLocationSecondsCatalog


class ConflictLatestLoadedRowCatalog(DurableCatalog):
    """cr10-cat-conflict-latest-loaded-row. CAT-CONFLICT-LATEST (SHOULD); RFC "Commit Protocol" (on a
    version conflict the catalog provides the latest ratified commit). Bug: the request handler loads the
    table's row once, at the start of the request (with its latest version), validates the staged file
    against storage, and then runs the ratification (the atomic check-and-store). When that loses, the
    conflict is built from the row loaded at the start: under contention the stated latest version is the
    one from before the request, often below the very version that conflicted. A shallow suite misses it:
    its conflicts are sequential (a second proposal for a version ratified earlier), where the loaded
    row is still current; only a rival that ratifies during the request, between the load and the
    ratification, shows the stale value."""

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
        row = self._table(table_id, InvalidRequest)
        loaded_latest = row.latest
        try:
            super().commit(
                table_id,
                version,
                staged_uri=staged_uri,
                inline_content=inline_content,
                in_commit_timestamp=in_commit_timestamp,
                latest_published_version=latest_published_version,
            )
        except CommitConflict as e:
            raise CommitConflict(str(e), latest_version=loaded_latest) from None


class ConflictLatestLoadedRowTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ConflictLatestLoadedRowCatalog


class InlinePathNoGapCheckCatalog(DurableCatalog):
    """cr10-cat-inline-path-no-gap-check. CAT-RATIFY-SEQUENTIAL (MUST); RFC "Commit Protocol" (version v is
    ratified only after v-1; a proposal that would leave a gap is refused and changes nothing). Bug:
    inline commits were added later as a code path of their own (no staged file to validate), and its
    sequence check only tells a taken version from a free one (``version <= latest`` is a conflict,
    anything else is ratified): an inline proposal several versions ahead is ratified and leaves a gap in
    the table's history. Staged proposals go through the original path and are judged right. A shallow
    suite misses it: it tests gaps with staged proposals (the option every catalog supports), and sends
    inline proposals only in sequence."""

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
        if inline_content is None or staged_uri is not None:
            super().commit(
                table_id,
                version,
                staged_uri=staged_uri,
                inline_content=inline_content,
                in_commit_timestamp=in_commit_timestamp,
                latest_published_version=latest_published_version,
            )
            return
        t = self._table(table_id, InvalidRequest)
        if not is_int(version) or version < 1:
            raise InvalidRequest(f"bad version {version!r}")
        if not isinstance(inline_content, bytes | bytearray) or not inline_content:
            raise InvalidRequest("inline_content must be non-empty bytes")
        for extra in (in_commit_timestamp, latest_published_version):
            if extra is not None and not is_int(extra):
                raise InvalidRequest(f"bad integer {extra!r}")
        with self.ratify_lock(t):
            if version <= t.latest:
                raise CommitConflict(f"version {version} is already ratified", latest_version=t.latest)
            if latest_published_version is not None and 0 <= latest_published_version <= t.latest:
                self.forget_published(t, latest_published_version)
            self.store(t, RatifiedCommit(version, None, bytes(inline_content), in_commit_timestamp))


class InlinePathNoGapCheckTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = InlinePathNoGapCheckCatalog


class StagedUriUnquotedCatalog(DurableCatalog):
    """cr10-cat-staged-uri-unquoted. CAT-STAGED-IN-TABLE (MUST); RFC "Terminology - Commits" (staged
    commit) and "Commit Protocol" option 1: a staged proposal is ratified only when its file is directly
    in the table's own ``_delta_log/_staged_commits/``. Bug: the catalog's REST layer receives staged
    paths percent-encoded and the validation runs on ``urllib.parse.unquote(staged_uri)``, while the
    existence check and the stored commit use the URI as sent. ``<location>/_delta_log/_staged_commits%2F
    <v>.<uuid>.json`` is an object directly in ``_delta_log/`` (object stores take ``%2F`` literally), yet
    it validates as a file of ``_staged_commits/`` and is ratified and listed at that URI. A shallow
    suite misses it: every path it sends unencoded (``..``, ``_delta_log/`` itself, another table's
    folder, nested folders) is still refused; only an encoded separator gets past."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        decoded = unquote(staged_uri)
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = decoded[len(prefix) :] if decoded.startswith(prefix) else ""
        m = _STAGED_NAME.fullmatch(rest)
        if m is None:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class StagedUriUnquotedTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedUriUnquotedCatalog


class LazyForgetCatalog(DurableCatalog):
    """Correct helper (not a variant): publication only moves the table's watermark; published commits
    stay as history rows and listings leave out those at or below the watermark (allowed: commits at or
    below the publication mark may be listed or not)."""

    def forget_published(self, t: TableState, version: int) -> None:
        t.published = max(t.published, version)
        self.persist(t)

    def listed(self, t: TableState, lo: int, hi: int) -> list[RatifiedCommit]:
        return [c for c in super().listed(t, lo, hi) if c.version > t.published]


class LazyForgetTarget(DurableTarget):
    """Correct helper: ``LazyForgetCatalog``."""

    catalog_cls: ClassVar[type[CleanCatalog]] = LazyForgetCatalog


class MarkUncheckedWhenCaughtUpCatalog(LazyForgetCatalog):
    """cr10-cat-mark-unchecked-when-caught-up. CAT-PUBLISH-REPORT-POSSIBLE (SHOULD); RFC "Publishing
    Commits" (a publication report for a version not yet ratified is refused or ignored and never makes
    the catalog drop a commit). Bug: ``mark_published`` was written to protect the unpublished commits,
    so it refuses a mark above the newest *unpublished* commit; when every ratified commit is already
    published there is nothing to protect and any mark is accepted ("harmless"). The watermark then
    stands above the latest version, and the commits ratified next, at or below it, are hidden from every
    listing although nobody published them. A shallow suite misses it: it tries a mark above the latest
    version while unpublished commits are stored (refused), not on a table that is wholly published."""

    def mark_published(self, table_id: str, version: int) -> None:
        t = self._table(table_id, InvalidRequest)
        with t.lock:
            if not is_int(version) or version < 0:
                raise InvalidRequest(f"cannot mark {version!r} published")
            unpublished = [v for v in t.stored if v > t.published]
            if unpublished and version > max(unpublished):
                raise InvalidRequest(f"cannot mark {version} published; latest is {t.latest}")
            self.forget_published(t, version)


class MarkUncheckedWhenCaughtUpTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = MarkUncheckedWhenCaughtUpCatalog


class ReversedRangeSwappedCatalog(DurableCatalog):
    """cr10-cat-reversed-range-swapped. CAT-LIST-RANGE (MUST); RFC "Getting Ratified Commits from the
    Catalog" and "Sample Catalog Client API" (only commits inside ``[startVersion, endVersion]`` are
    listed). Bug: a listing whose ``start_version`` is above its ``end_version`` is "forgiven" by swapping
    the bounds (lenient parameter handling copied from the catalog's paging helper), so ``get_commits(5,
    3)``, an empty range, lists versions 3 to 5. A client that computes ``[newest published + 1,
    latest]`` after a rival published past its view gets commits it did not ask for. A shallow suite
    misses it: it lists with ``None`` bounds and well-ordered ranges; a reversed range is answered with
    commits instead of an empty listing or ``InvalidRequest``."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        if start_version is not None and end_version is not None and start_version > end_version:
            start_version, end_version = end_version, start_version
        return super().get_commits(table_id, start_version, end_version)


class ReversedRangeSwappedTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ReversedRangeSwappedCatalog


class StateUrlsafeBase64Catalog(DurableCatalog):
    """cr10-cat-state-urlsafe-base64. CAT-RATIFY-DURABLE (MUST); RFC "Commit Protocol" and "Terminology -
    Commits" (ratified commits survive a restart and are served unchanged). Bug: the state writer encodes
    inline commit content with ``base64.urlsafe_b64encode`` (the helper that also builds the listing's
    continuation tokens), while the loader decodes with ``base64.b64decode``, which by default silently
    discards characters outside the standard alphabet: every ``-`` and ``_`` of the encoding is dropped, so
    after a restart an inline commit whose encoding holds one comes back shortened and garbled (or fails
    to decode). Before a restart every answer is right. A shallow suite misses it: plain ASCII JSON of
    letters, digits, quotes and braces rarely yields the sextets 62 and 63; content with ``~``, ``?``,
    ``>`` or non-ASCII UTF-8 in the right place does."""

    def encode_table(self, t: TableState) -> dict[str, Any]:
        doc = super().encode_table(t)
        for row in doc["stored"]:
            c = t.stored[row["version"]]
            if c.inline_content is not None:
                row["inline"] = base64.urlsafe_b64encode(c.inline_content).decode()
        return doc


class StateUrlsafeBase64Target(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StateUrlsafeBase64Catalog


# ================================================================ the list


VARIANTS: list[Variant] = [
    variant_of(
        "cr10-cat-ict-proto-timestamp",
        IctProtoTimestampTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RETAIN-UNPUBLISHED",),
        "MUST",
        ("timestamps", "encodings", "unpublished-commits"),
    ),
    variant_of(
        "cr10-cat-staged-name-any-case",
        StagedNameAnyCaseTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-STAGED-NAME",),
        "MUST",
        ("staged-names", "validation"),
    ),
    variant_of(
        "cr10-cat-exists-check-after-store",
        ExistsCheckAfterStoreTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-LIST-RATIFIED-ONLY",),
        "MUST",
        ("validation", "ordering", "missing-staged-file"),
    ),
    variant_of(
        "cr10-cat-staging-location-seconds",
        StagingLocationSecondsTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-STAGING-UNIQUE",),
        "SHOULD",
        ("creation", "time", "several-tables"),
    ),
    variant_of(
        "cr10-cat-conflict-latest-loaded-row",
        ConflictLatestLoadedRowTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-CONFLICT-LATEST",),
        "SHOULD",
        ("concurrency", "caching"),
    ),
    variant_of(
        "cr10-cat-inline-path-no-gap-check",
        InlinePathNoGapCheckTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RATIFY-SEQUENTIAL",),
        "MUST",
        ("inline-commits", "gaps"),
    ),
    variant_of(
        "cr10-cat-staged-uri-unquoted",
        StagedUriUnquotedTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-STAGED-IN-TABLE",),
        "MUST",
        ("staged-paths", "encodings"),
    ),
    variant_of(
        "cr10-cat-mark-unchecked-when-caught-up",
        MarkUncheckedWhenCaughtUpTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-PUBLISH-REPORT-POSSIBLE",),
        "SHOULD",
        ("publication", "boundaries"),
    ),
    variant_of(
        "cr10-cat-reversed-range-swapped",
        ReversedRangeSwappedTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-LIST-RANGE",),
        "MUST",
        ("listing-bounds", "boundaries"),
    ),
    variant_of(
        "cr10-cat-state-urlsafe-base64",
        StateUrlsafeBase64Target,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RATIFY-DURABLE",),
        "MUST",
        ("restart", "encodings", "inline-commits"),
    ),
]
