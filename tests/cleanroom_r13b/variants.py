"""Round 13 (b): faulty variants of the resilient clean-room client, writers and readers.

Each target swaps exactly the client side of ``DurableTarget`` for a faulty subclass of
``ResilientClient``. Written from the RFC, the public contract, docs/certify.md and the clean-room
baselines only.
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar

from conformance.contract.delta import (
    Catalog,
    CatalogError,
    CatalogTimeout,
    CommitConflict,
    MaintenancePolicy,
    RatifiedCommit,
    ReadResult,
    Storage,
    TableInfo,
)
from tests.cleanroom.client import Action, CleanClient, LogView, ReadError, RetriesExhausted, decode, encode
from tests.cleanroom_r3.base import DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant, variant_of

# ================================================================ writing clients


class PublishHookClient(ResilientClient):
    """Correct helper (not a variant): the baseline publisher with the bytes it copies for a ratified
    commit as a method, ``published_bytes``; here the ratified bytes themselves."""

    def published_bytes(self, info: TableInfo, c: RatifiedCommit) -> bytes:
        return self.content(c)

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        done = -1
        for c in self.publish_order(list(view.catalog_commits.values())):
            target = f"{info.location}/_delta_log/{self.delta_name(c.version)}"
            if c.version not in view.published:
                with contextlib.suppress(FileExistsError):  # published by someone else: the same bytes
                    self.storage.put(target, self.published_bytes(info, c), if_absent=True)
            done = max(done, c.version)
        for _ in range(self.max_attempts if done >= 0 else 0):
            try:
                self.catalog.mark_published(info.table_id, done)
                return
            except CatalogTimeout:
                continue
        if done >= 0:
            raise RetriesExhausted(f"no answer from the catalog to the publication mark of v{done}")


class PublishStagedByListingClient(PublishHookClient):
    """cr13b-wrt-publish-staged-by-listing. WRT-PUBLISH-IDENTICAL (MUST); RFC "Publishing Commits" (a
    published Delta file holds exactly the actions of the ratified commit, in order).

    Bug: the publisher does not GET the staged file by the URI the catalog returns (catalogs hand back
    URIs in their own spelling, ``s3a://`` for ``s3://``, a host alias, a signed URL), it locates the
    staged file of version v in the table's own ``_delta_log/_staged_commits/`` by LISTing it and taking
    the first file named ``<v>.*.json``. That is the ratified file as long as one proposal was staged for
    v. When a writer lost the race for v (or crashed after staging), its rejected staged file sits beside
    the ratified one, and if its UUID sorts first its actions are copied to ``_delta_log/<v>.json``:
    the table's published history holds a commit that was never ratified. Readers and the catalog's
    own listing are unaffected (they use the catalog's URI), so the damage shows only after publication.

    Why a shallow suite misses it: it publishes tables written by one writer, where each version has a
    single staged file; the bug needs a losing proposal of the same version whose UUID sorts first.
    """

    def published_bytes(self, info: TableInfo, c: RatifiedCommit) -> bytes:
        if c.inline_content is not None:
            return c.inline_content
        folder = f"{info.location}/_delta_log/_staged_commits/"
        mine = f"{folder}{c.version:020d}."
        for f in self.storage.list(folder):
            if f.uri.startswith(mine) and f.uri.endswith(".json"):
                return self.storage.get(f.uri)
        return self.content(c)


class NoopCommitNoTxnIdClient(ResilientClient):
    """cr13b-wrt-noop-commit-no-txnid. WRT-TXNID (MUST); RFC "Commit Provenance Information" (every
    commitInfo carries a transaction identifier, ``txnId``).

    Bug: the transaction id is assigned the way a transaction manager does it, lazily, when the
    transaction first touches a data file (an ``add`` or a ``remove`` is registered). A commit that
    changes no file, a DELETE whose ids match no row or an append of no rows, is still committed (it is
    a version of the table, with its commitInfo and in-commit timestamp) but its commitInfo has no
    ``txnId``.

    Why a shallow suite misses it: it checks txnIds on appends and deletes that change rows; a no-op
    DELETE (ids absent from the table) or an empty append is an edge case it never commits.
    """

    def order_actions(self, commit_info: Action, actions: list[Action]) -> list[Action]:
        if not any("add" in a or "remove" in a for a in actions):
            commit_info = {"commitInfo": {k: v for k, v in commit_info["commitInfo"].items() if k != "txnId"}}
        return super().order_actions(commit_info, actions)


class RebaseCommitInfoAppendedClient(ResilientClient):
    """cr13b-wrt-rebase-commitinfo-appended. WRT-COMMITINFO-FIRST (MUST); PROTOCOL.md In-Commit Timestamps
    (the commitInfo action, which carries the inCommitTimestamp, is the first action of every commit).

    Bug: a commit that lost its version is assembled again by the retry path, a separate code path
    from the first attempt's: it rebuilds the actions on the new snapshot (right) and attaches a fresh
    commitInfo (new in-commit timestamp above the winner's, new txnId) by ``append``-ing it to the
    rebuilt actions, so every commit that landed after a lost race ends with its commitInfo. First
    attempts go through ``order_actions`` and are laid out correctly.

    Why a shallow suite misses it: it checks the layout of commits made without contention; only a
    commit that lost a race for its first version and landed at the next one is laid out wrong.
    """

    def transact(self, name: str, operation: str, build: Any) -> int:
        info = self._info(name)
        log = f"{info.location}/_delta_log"
        first = True
        for _ in range(self.max_attempts):
            view = self.view(info)
            snap = self.snapshot(view, view.latest)
            version = view.latest + 1
            ict = self.next_ict(snap.in_commit_timestamp)
            fresh = self.commit_info_for(info, version, operation, ict)
            actions: list[Action] = build(info, snap, ict)
            # the retry path attaches the fresh commitInfo after the rebuilt actions
            body = self.order_actions(fresh, actions) if first else [*actions, fresh]
            first = False
            content = encode(body)
            uri = self.stage(log, version, content, None)
            self.before_propose(log, version, content)
            try:
                self.catalog.commit(info.table_id, version, staged_uri=uri, in_commit_timestamp=ict)
            except CommitConflict:
                if not self.on_conflict(info, version, uri, content):
                    continue
            except CatalogTimeout:
                if not self.on_lost_answer(info, version, uri, content):
                    continue
            self.after_ratified(info, version)
            return version
        raise RetriesExhausted(f"gave up committing to {name} after {self.max_attempts} lost races")


class PublishBacksOffInflightClient(ResilientClient):
    """cr13b-wrt-publish-backs-off-inflight. WRT-CRASH-RECOVERY (MUST); RFC "Publishing Commits" and
    "Terminology - Commits" (after a writer crashed before publishing, the next one publishes every
    ratified commit).

    Bug: to keep two publishers from copying the same backlog, the publisher backs off when it finds the
    oldest unpublished commit the catalog lists already copied to ``_delta_log``: "another publisher is
    at work, and it will send the publication mark". When that other publisher crashed after copying
    part of the backlog (or its mark's answer was lost and it gave up), nobody finishes: every later
    publish backs off for ever, the rest of the backlog is never published and the catalog never learns
    of the publication (its unpublished commits pile up until its cap refuses proposals).

    Why a shallow suite misses it: it publishes tables nobody published before, or publishes twice in a
    row after a complete publication; only a publication interrupted between two copies leaves the
    first unpublished version copied and a later one not.
    """

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        pending = self.publish_order(list(view.catalog_commits.values()))
        if pending and pending[0].version in view.published:
            return  # another publisher is copying this backlog; it sends the mark
        super().publish(name)


class PolicyFailOpenClient(ResilientClient):
    """cr13b-wrt-policy-fail-open. WRT-MAINTENANCE-POLICY (MUST); RFC "Maintenance Operations on
    Catalog-managed Tables" (clients consult the catalog before any maintenance job and run none its
    policy forbids).

    Bug: maintenance is treated as best effort and the policy look-up fails open: the writer asks the
    catalog for the table's policy once, and when that call fails (its answer lost, a timeout, a
    transient error) it falls back to Delta's default, where every maintenance operation is allowed
    ("maintenance must not fail a job because the catalog was slow"). A checkpoint, a log compaction or
    a metadata cleanup the catalog forbids then runs whenever the policy's answer does not arrive.

    Why a shallow suite misses it: it tests forbidding policies on a healthy catalog, where the writer
    obeys them, and loses answers (the nemesis) on tables whose policy allows everything.
    """

    def policy_allows(self, info: TableInfo, op: str) -> bool:
        try:
            policy = self.raw_catalog.maintenance_policy(info.table_id)
        except CatalogError:
            policy = MaintenancePolicy()  # the default: every known operation allowed
        return policy.allows(op)  # type: ignore[arg-type]


# ================================================================ reading clients


class ListingKeyedCatalogCacheClient(ResilientClient):
    """cr13b-rdr-listing-keyed-catalog-cache. RDR-UNPUBLISHED (MUST); RFC "Reader Requirements for
    Catalog-managed tables" (the reader includes the ratified commits that are not published yet, staged
    or inline).

    Bug: to stay under the catalog's rate limit the read path caches the catalog's answer (latest version
    and ratified commits) per table and asks the catalog again only when the table's log changed: it
    LISTs ``_delta_log/`` (which it does anyway) and compares the listing (names and sizes, staged
    commits included) with the one it saw with the cached answer. A staged commit, publication,
    checkpoint or cleanup changes the listing and refreshes the cache. An *inline* commit changes no
    file: after one, the reader keeps serving the previous latest version and misses the inline commit,
    read after read, until some file in the log changes. (So does a staged commit whose file the reader
    LISTed before the catalog ratified it: the ratification itself changes no file.)

    Why a shallow suite misses it: staged commits (the usual kind) invalidate the cache; inline commits
    are read right by a fresh reader (the RFC's worked example); it needs a reader that read the table
    before an inline commit landed.
    """

    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        super().__init__(catalog, storage)
        self._cached: dict[str, tuple[tuple[tuple[str, int], ...], LogView]] = {}

    def _listing_key(self, info: TableInfo) -> tuple[tuple[str, int], ...]:
        return tuple((f.uri, f.size) for f in self.storage.list(f"{info.location}/_delta_log/"))

    def cached_view(self, info: TableInfo) -> LogView:
        key = self._listing_key(info)
        hit = self._cached.get(info.table_id)
        if hit is not None and hit[0] == key:
            return hit[1]
        fresh = self.view(info)
        self._cached[info.table_id] = (self._listing_key(info), fresh)
        return fresh

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        info = self._info(name)
        view = self.cached_view(info)
        if timestamp_ms is not None:
            version = self.version_at(self.timeline(view), timestamp_ms)
        target = self.readable_bound(view, version)
        snap = self.snapshot(view, target)
        return ReadResult(target, self.rows(info.location, snap))


class VersionReadPointListingClient(ResilientClient):
    """cr13b-rdr-version-read-point-listing. RDR-UNPUBLISHED (MUST); RFC "Reader Requirements for
    Catalog-managed tables" (the reader includes the ratified commits that are not published yet).

    Bug: a read of an explicit version asks the catalog for that version only
    (``get_commits(table, v, v)``, which also brings the latest version to bound the read: "the catalog
    is needed for the asked version; what lies below it is in the log") and takes every other commit
    from the published files. A read of the latest version, or by
    timestamp, asks for the whole listing and is right. With two or more unpublished commits, a read of
    an unpublished version above the oldest of them misses the commits below it and fails (they are
    neither in its listing nor published).

    Why a shallow suite misses it: time travel by version is tested on published history, or with a
    single unpublished commit (the asked one); it needs a version read with an unpublished commit below
    the asked version.
    """

    def point_view(self, info: TableInfo, version: int) -> LogView:
        """The baseline's view, with the catalog asked for the one version the read needs."""
        resp = self.catalog.get_commits(info.table_id, version, version)
        latest = resp.latest_version
        log = f"{info.location}/_delta_log/"
        published: dict[int, str] = {}
        checkpoints: dict[int, str] = {}
        for f in self.storage.list(log):
            rel = f.uri[len(log) :]
            if rel.endswith(".checkpoint.parquet") and rel[:20].isdigit() and int(rel[:20]) <= latest:
                checkpoints[int(rel[:20])] = f.uri
            elif len(rel) == 25 and rel.endswith(".json") and rel[:20].isdigit() and int(rel[:20]) <= latest:
                published[int(rel[:20])] = f.uri
        commits = {c.version: c for c in resp.commits if c.version == version}
        return LogView(info, latest, commits, published, checkpoints, f"{log}_last_checkpoint")

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        if version is None or timestamp_ms is not None:
            return super().read(name, version=version, timestamp_ms=timestamp_ms)
        info = self._info(name)
        view = self.point_view(info, version) if version >= 0 else self.view(info)
        target = self.readable_bound(view, version)
        snap = self.snapshot(view, target)
        return ReadResult(target, self.rows(info.location, snap))


class TornLogCheckClient(ResilientClient):
    """cr13b-rdr-torn-log-check. RDR-IGNORE-UNRATIFIED (MUST); RFC "Delta Log Entries" and "Terminology -
    Commits" (staged commit: a staged file is part of the table only once the catalog ratifies it; the
    reader ignores unratified, rejected and partially written staged files).

    Bug: the read path guards against torn logs: before replaying, it checks that every commit file of
    the versions it reads is whole (each line parses as JSON) and refuses the read when one is not,
    rather than return wrong rows. It finds those files by LISTing ``_delta_log/`` (recursively, as the
    storage lists) and checks every ``*.json`` whose version is at or below the catalog's latest
    ratified version, the files in ``_staged_commits/`` included. A rejected or abandoned proposal whose
    upload was cut off (a writer that crashed while staging a version another writer then won) is such a
    partial file: from then on every read of the table fails, though the catalog never named that file.

    Why a shallow suite misses it: files above the latest ratified version are skipped, so the RFC's
    worked example (its partial staged file is for version 10, above the latest, 9) reads right; it
    needs a partial staged file at a version that is already ratified.
    """

    def check_whole(self, view: LogView) -> None:
        log = f"{view.info.location}/_delta_log/"
        for f in self.storage.list(log):
            name = f.uri[len(log) :].rsplit("/", 1)[-1]
            if not name.endswith(".json") or not name[:20].isdigit() or int(name[:20]) > view.latest:
                continue
            try:
                decode(self.storage.get(f.uri))
            except ValueError as exc:
                raise ReadError(f"torn commit file {f.uri}: refusing to read") from exc

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        info = self._info(name)
        view = self.view(info)
        self.check_whole(view)
        if timestamp_ms is not None:
            version = self.version_at(self.timeline(view), timestamp_ms)
        target = self.readable_bound(view, version)
        snap = self.snapshot(view, target)
        return ReadResult(target, self.rows(info.location, snap))


# ================================================================ targets


class PublishStagedByListingTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PublishStagedByListingClient


class NoopCommitNoTxnIdTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = NoopCommitNoTxnIdClient


class RebaseCommitInfoAppendedTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = RebaseCommitInfoAppendedClient


class PublishBacksOffInflightTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PublishBacksOffInflightClient


class PolicyFailOpenTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PolicyFailOpenClient


class ListingKeyedCatalogCacheTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = ListingKeyedCatalogCacheClient


class TornLogCheckTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = TornLogCheckClient


class VersionReadPointListingTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = VersionReadPointListingClient


VARIANTS: list[Variant] = [
    variant_of(
        "cr13b-wrt-publish-staged-by-listing",
        PublishStagedByListingTarget,
        "client",
        "delta-cm-writer",
        ("WRT-PUBLISH-IDENTICAL",),
        "MUST",
        ("concurrency", "publication", "orphan-staged-files"),
    ),
    variant_of(
        "cr13b-wrt-noop-commit-no-txnid",
        NoopCommitNoTxnIdTarget,
        "client",
        "delta-cm-writer",
        ("WRT-TXNID",),
        "MUST",
        ("boundaries", "no-op-commit"),
    ),
    variant_of(
        "cr13b-wrt-rebase-commitinfo-appended",
        RebaseCommitInfoAppendedTarget,
        "client",
        "delta-cm-writer",
        ("WRT-COMMITINFO-FIRST",),
        "MUST",
        ("concurrency", "retries", "ordering"),
    ),
    variant_of(
        "cr13b-wrt-publish-backs-off-inflight",
        PublishBacksOffInflightTarget,
        "client",
        "delta-cm-writer",
        ("WRT-CRASH-RECOVERY",),
        "MUST",
        ("crash", "publication", "concurrency"),
    ),
    variant_of(
        "cr13b-wrt-policy-fail-open",
        PolicyFailOpenTarget,
        "client",
        "delta-cm-writer",
        ("WRT-MAINTENANCE-POLICY",),
        "MUST",
        ("lost-answers", "maintenance", "error-handling"),
    ),
    variant_of(
        "cr13b-rdr-listing-keyed-catalog-cache",
        ListingKeyedCatalogCacheTarget,
        "client",
        "delta-cm-reader",
        ("RDR-UNPUBLISHED",),
        "MUST",
        ("caching", "inline-commits", "repeated-reads"),
    ),
    variant_of(
        "cr13b-rdr-version-read-point-listing",
        VersionReadPointListingTarget,
        "client",
        "delta-cm-reader",
        ("RDR-UNPUBLISHED",),
        "MUST",
        ("time-travel", "long-unpublished-backlog"),
    ),
    variant_of(
        "cr13b-rdr-torn-log-check",
        TornLogCheckTarget,
        "client",
        "delta-cm-reader",
        ("RDR-IGNORE-UNRATIFIED",),
        "MUST",
        ("crash", "partial-files", "orphan-staged-files"),
    ),
]
