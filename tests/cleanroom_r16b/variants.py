"""Round 16 (b): faulty variants of the resilient clean-room client (writers and readers).

Each target swaps exactly one side of ``DurableTarget`` (here always the client) for a faulty subclass of
``ResilientClient``. Written from the RFC, the public contract, docs/certify.md and the clean-room
baselines only.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Any, ClassVar

from conformance.contract.delta import CatalogTimeout, CommitConflict, TableInfo
from tests.cleanroom.client import (
    _CHECKPOINT,
    _DELTA,
    Action,
    CleanClient,
    LogView,
    RetriesExhausted,
    Snapshot,
    decode,
    encode,
)
from tests.cleanroom_r3.base import DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant, variant_of

# ================================================================ writing clients


class IctLogicalClockClient(ResilientClient):
    """cr16b-wrt-ict-logical-clock. WRT-ICT-WALLCLOCK (MUST); PROTOCOL.md In-Commit Timestamps, made
    mandatory by the RFC's "Writer Requirements for Catalog-managed tables". Bug: the writer treats the
    in-commit timestamp as a Lamport clock. It reads the wall clock only when there is no previous commit
    (the table-creating commit); every later commit is stamped ``previous + 1``, "strictly increasing and
    immune to clock skew". The timestamps are strictly monotonic (WRT-ICT-MONOTONIC holds) and survive a
    skewed peer (WRT-ICT-SKEW holds), but they are not the commit's time: a commit to a table whose last
    commit is an hour old is stamped an hour in the past (one millisecond after it), and time travel by
    timestamp then lands on the wrong versions. Why a shallow suite misses it: it creates a table and
    appends within seconds, so ``creation + n`` ms is within any tolerance of the call's wall clock; only a
    table whose previous commit is older than the tolerance (a long-lived table, a peer with a slow clock)
    shows that the clock is never read again."""

    def next_ict(self, previous: int | None) -> int:
        return self.now_ms() if previous is None else previous + 1


class IctLogicalClockTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = IctLogicalClockClient


class TxnIdCreateNotRotatedClient(ResilientClient):
    """cr16b-wrt-txnid-create-not-rotated. WRT-TXNID-UNIQUE (MUST); RFC "Commit Provenance Information"
    (``commitInfo.txnId`` stores a unique transaction identifier). Bug: the client keeps a *pending*
    transaction id, drawn at random, and rotates it once a proposal of its is known to be ratified (in the
    ratification hook of its commit loop), so that a proposal rebuilt after a lost race keeps the id of its
    transaction. Table creation does not go through that loop (version 0 is written at the staging
    location and the table then registered), so it stamps the pending id without rotating it: the
    creating commit and the client's next commit, on that table or any other, share one txnId. Why a
    shallow suite misses it: every id is a fresh random UUID, appends and deletes never repeat one, and ids
    are unique across clients; only a suite that also compares the creating commit's id with the ids of
    the commits that follow sees the repeat."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending_txn = str(uuid.uuid4())

    def txn_id(self) -> str:
        return self._pending_txn

    def after_ratified(self, info: TableInfo, version: int) -> None:
        self._pending_txn = str(uuid.uuid4())


class TxnIdCreateNotRotatedTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = TxnIdCreateNotRotatedClient


class CompactionKeepsCancelledAddsClient(ResilientClient):
    """cr16b-wrt-compaction-keeps-cancelled-adds. WRT-COMPACTION-CONTENT (MUST); RFC "Maintenance
    Operations on Catalog-managed Tables" and PROTOCOL.md "Log Compaction Files" / "Action Reconciliation"
    (a log compaction file of x..y holds the *reconciled* actions of commits x..y: at most one action per
    file path, the newest). Bug: the compaction writer de-duplicates adds by path and records every
    remove, but a remove does not evict an earlier add of the same path from the range ("the remove comes
    later in the file, replay will apply it"). A file added and removed inside the range is in the
    compaction file twice, as an add and as a remove. Why a shallow suite misses it: the file is written
    only for published ranges and only when the policy allows it (right), a reader replaying it in order
    (adds, then removes) gets the right rows, and a range without a delete of a file added in it is exact;
    only a suite that checks the reconciliation itself (one action per path) sees the stale add."""

    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        info = self._info(name)
        if not self.policy_allows(info, "log_compaction"):
            return False
        view = self.view(info)
        if (
            start_version < 0
            or start_version > end_version
            or not self.compaction_allowed(view, start_version, end_version)
        ):
            return False
        sources = self.commit_sources(view)
        adds: dict[str, Action] = {}
        removes: dict[str, Action] = {}
        other: list[Action] = []
        for v in range(start_version, end_version + 1):
            for a in decode(self.content(sources[v])):
                if "add" in a:
                    adds[a["add"]["path"]] = a
                    removes.pop(a["add"]["path"], None)
                elif "remove" in a:
                    removes[a["remove"]["path"]] = a  # the fault: the earlier add of the path stays
                elif "commitInfo" not in a:
                    other.append(a)
        body = encode([*other, *adds.values(), *removes.values()])
        uri = f"{info.location}/_delta_log/{start_version:020d}.{end_version:020d}.compacted.json"
        with contextlib.suppress(FileExistsError):
            self.storage.put(uri, body, if_absent=True)
        return True


class CompactionKeepsCancelledAddsTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CompactionKeepsCancelledAddsClient


class AutopublishOwnCommitClient(ResilientClient):
    """cr16b-wrt-autopublish-own-commit. WRT-PUBLISH-ORDER (MUST); RFC "Publishing Commits" (commits are
    published in order: v-1 before v; implementations are encouraged to publish promptly). Bug: to
    publish promptly, the writer copies its own commit to ``_delta_log/<v>.json`` as soon as the catalog
    ratifies it (a post-commit hook; the catalog is told later, by ``publish``), reasoning that earlier
    versions were published the same way by whoever committed them. When the previous version is another
    writer's commit that is ratified but not yet published, version v lands in ``_delta_log`` before v-1.
    Why a shallow suite misses it: with one writer, or peers that publish their commits right away, the
    copies are in order and every file holds its ratified commit; ``publish`` itself publishes in order.
    Only a commit on top of another writer's unpublished commit shows the hole."""

    def after_ratified(self, info: TableInfo, version: int) -> None:
        resp = self.catalog.get_commits(info.table_id, version, version)
        for c in resp.commits:
            if c.version == version:
                target = f"{info.location}/_delta_log/{self.delta_name(version)}"
                with contextlib.suppress(FileExistsError):
                    self.storage.put(target, self.content(c), if_absent=True)


class AutopublishOwnCommitTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = AutopublishOwnCommitClient


class PublishOnLostAnswerClient(ResilientClient):
    """cr16b-wrt-publish-on-lost-answer. WRT-PUBLISH-IDENTICAL (MUST); RFC "Publishing Commits" (the
    published Delta file of v holds exactly the ratified commit of v) and "Commit Protocol" (the catalog
    decides which proposal wins v). Bug: when the answer to a proposal is lost, the writer first copies its
    proposal to ``_delta_log/<v>.json`` (PUT-if-absent, "publishing is idempotent and saves a round trip
    once the catalog confirms"), then asks the catalog whether v is its own, and when it is not it rebases
    and commits at the next version, leaving the file behind. If the lost answer was a conflict (another
    writer's proposal had won v and is not published yet), ``_delta_log/<v>.json`` now holds the loser's
    actions: every later publisher finds the file present and keeps it. Why a shallow suite misses it: a
    lost answer to a proposal that was ratified (the usual nemesis case) publishes the right bytes early,
    and without lost answers nothing differs; only a lost answer to a proposal that lost its race shows the
    wrong file."""

    def transact(self, name: str, operation: str, build: Any) -> int:
        info = self._info(name)
        log = f"{info.location}/_delta_log"
        for _ in range(self.max_attempts):
            view = self.view(info)
            snap = self.snapshot(view, view.latest)
            version = view.latest + 1
            ict = self.next_ict(snap.in_commit_timestamp)
            actions: list[Action] = build(info, snap, ict)
            content = encode(self.order_actions(self.commit_info_for(info, version, operation, ict), actions))
            uri = self.stage(log, version, content, None)
            self.before_propose(log, version, content)
            try:
                self.catalog.commit(info.table_id, version, staged_uri=uri, in_commit_timestamp=ict)
            except CommitConflict:
                if not self.on_conflict(info, version, uri, content):
                    continue
            except CatalogTimeout:
                with contextlib.suppress(FileExistsError):  # the fault: published before the outcome is known
                    self.storage.put(f"{log}/{self.delta_name(version)}", content, if_absent=True)
                if not self.on_lost_answer(info, version, uri, content):
                    continue
            self.after_ratified(info, version)
            return version
        raise RetriesExhausted(f"gave up committing to {name} after {self.max_attempts} lost races")


class PublishOnLostAnswerTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PublishOnLostAnswerClient


# ================================================================ reading clients


class LatestZeroFalsyClient(ResilientClient):
    """cr16b-rdr-latest-zero-falsy. RDR-IGNORE-ABOVE-LATEST (MUST); RFC "Reading Catalog-managed Tables"
    and "Reader Requirements" (if the catalog says v is the latest version, clients ignore any later
    versions that may have been published). Bug: to work with catalogs whose listing omits the latest
    version when they store no commit, the reader writes ``latest = resp.latest_version or <newest
    published file>``: a latest ratified version of 0 (a table that has only its creating commit) is false
    in Python and taken as "not given", so a stray ``_delta_log/<v>.json`` above it (a filesystem writer's,
    a rolled-back or foreign file) is read as the table's latest version. Why a shallow suite misses it: it
    plants stray files above the latest version of tables that already have commits, where the latest is a
    positive number and is obeyed; only a stray file on a table still at version 0 shows it."""

    def view(self, info: TableInfo) -> LogView:
        resp = self.catalog.get_commits(info.table_id)
        log = f"{info.location}/_delta_log/"
        listing = self.storage.list(log)
        listed = [int(m.group(1)) for f in listing if (m := _DELTA.fullmatch(f.uri[len(log) :]))]
        latest = resp.latest_version or max(listed, default=0)  # the fault: 0 counts as "not given"
        published: dict[int, str] = {}
        checkpoints: dict[int, str] = {}
        for f in listing:
            rel = f.uri[len(log) :]
            m = _DELTA.fullmatch(rel)
            if m and int(m.group(1)) <= latest:
                published[int(m.group(1))] = f.uri
            m = _CHECKPOINT.fullmatch(rel)
            if m and int(m.group(1)) <= latest:
                checkpoints[int(m.group(1))] = f.uri
        commits = {c.version: c for c in resp.commits if c.version <= latest}
        return LogView(info, latest, commits, published, checkpoints, f"{log}_last_checkpoint")


class LatestZeroFalsyTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = LatestZeroFalsyClient


class SkipNoDataChangeAddsClient(ResilientClient):
    """cr16b-rdr-skip-no-data-change-adds. RDR-LIST-FALLBACK, RDR-GOLDEN-TABLES (MUST); RFC "Reading
    Catalog-managed Tables" (commits the catalog no longer stores are read from what is published in
    ``_delta_log``: checkpoints and Delta files) and PROTOCOL.md Checkpoints. Bug: the snapshot replay is
    shared with the client's change feed, which skips ``add`` actions whose ``dataChange`` is false (file
    re-statements that add no rows: OPTIMIZE rewrites, checkpoint rows). In a snapshot those adds are live
    files: Delta engines write every add of a checkpoint with ``dataChange: false``, so a checkpoint written
    by such an engine contributes no file at all, and the reader answers an empty (or partial) table for
    every version it reads from that checkpoint. Why a shallow suite misses it: its own checkpoints (and
    the clean-room ones) copy each add's ``dataChange: true``, so a suite that checkpoints through the
    client under test, or never reads a checkpoint written by another engine, sees the right rows."""

    def replay(self, version: int, batches: Any, checkpoint: bool = False) -> Snapshot:
        kept = [[a for a in actions if not ("add" in a and a["add"].get("dataChange") is False)] for actions in batches]
        return super().replay(version, kept, checkpoint)


class SkipNoDataChangeAddsTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = SkipNoDataChangeAddsClient


class IctEnablementByMtimeClient(ResilientClient):
    """cr16b-rdr-ict-enablement-by-mtime. RDR-TIME-TRAVEL-ICT (MUST); RFC "Publishing Commits" (note on
    timestamps: catalog-managed tables use in-commit timestamps for time travel, since file modification
    times of published files do not reflect commit times) and PROTOCOL.md In-Commit Timestamps (versions
    from the enablement version on are dated by their in-commit timestamp). Bug: the reader implements the
    enablement rule of PROTOCOL.md but takes the commit whose ``metaData`` turns
    ``delta.enableInCommitTimestamps`` on as the last version *before* enablement, so it dates that commit
    by its file's modification time. For a catalog-managed table that commit is version 0, the creating
    commit: a timestamp between its in-commit timestamp and the next commit's resolves to no version (or
    the wrong one) whenever the file's modification time differs from the in-commit timestamp (a copied
    table, a creator with a skewed clock, a file rewritten by a restore). Why a shallow suite misses it:
    the suite creates tables and writes version 0 within milliseconds of its in-commit timestamp, and
    dates time-travel targets from version 1 on; only version 0 of a table whose file time differs from
    its in-commit timestamp shows it."""

    def enables_ict(self, actions: list[Action]) -> bool:
        for a in actions:
            conf = (a.get("metaData") or {}).get("configuration") or {}
            if str(conf.get("delta.enableInCommitTimestamps", "")).lower() == "true":
                return True
        return False

    def timeline(self, view: LogView) -> list[tuple[int, int]]:
        log = f"{view.info.location}/_delta_log/"
        mtimes = {f.uri: f.mtime_ms for f in self.storage.list(log)}
        out: list[tuple[int, int]] = []
        enabled = False
        for v, source in sorted(self.commit_sources(view).items()):
            actions = decode(self.content(source))
            if not enabled and self.enables_ict(actions):
                enabled = True
                uri = view.published.get(v)
                if uri is not None and uri in mtimes:  # the fault: the enabling commit dated by its file
                    out.append((v, mtimes[uri]))
                    continue
            ict = self.ict_of(actions)
            if ict is not None:
                out.append((v, ict))
        return out


class IctEnablementByMtimeTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = IctEnablementByMtimeClient


# ================================================================ the variants

VARIANTS: list[Variant] = [
    variant_of(
        "cr16b-wrt-ict-logical-clock",
        IctLogicalClockTarget,
        "client",
        "delta-cm-writer",
        ("WRT-ICT-WALLCLOCK",),
        "MUST",
        ("time", "long-lived-tables", "in-commit-timestamps"),
    ),
    variant_of(
        "cr16b-wrt-txnid-create-not-rotated",
        TxnIdCreateNotRotatedTarget,
        "client",
        "delta-cm-writer",
        ("WRT-TXNID-UNIQUE",),
        "MUST",
        ("txnid", "table-creation", "several-tables"),
    ),
    variant_of(
        "cr16b-wrt-compaction-keeps-cancelled-adds",
        CompactionKeepsCancelledAddsTarget,
        "client",
        "delta-cm-writer",
        ("WRT-COMPACTION-CONTENT",),
        "MUST",
        ("maintenance", "log-compaction", "deletes"),
    ),
    variant_of(
        "cr16b-wrt-autopublish-own-commit",
        AutopublishOwnCommitTarget,
        "client",
        "delta-cm-writer",
        ("WRT-PUBLISH-ORDER",),
        "MUST",
        ("publication", "several-writers", "unpublished-runs"),
    ),
    variant_of(
        "cr16b-wrt-publish-on-lost-answer",
        PublishOnLostAnswerTarget,
        "client",
        "delta-cm-writer",
        ("WRT-PUBLISH-IDENTICAL",),
        "MUST",
        ("lost-answers", "conflicts", "publication"),
    ),
    variant_of(
        "cr16b-rdr-latest-zero-falsy",
        LatestZeroFalsyTarget,
        "client",
        "delta-cm-reader",
        ("RDR-IGNORE-ABOVE-LATEST",),
        "MUST",
        ("boundaries", "version-zero", "stray-files"),
    ),
    variant_of(
        "cr16b-rdr-skip-no-data-change-adds",
        SkipNoDataChangeAddsTarget,
        "client",
        "delta-cm-reader",
        ("RDR-LIST-FALLBACK", "RDR-GOLDEN-TABLES"),
        "MUST",
        ("checkpoints", "foreign-writers", "maintenance"),
    ),
    variant_of(
        "cr16b-rdr-ict-enablement-by-mtime",
        IctEnablementByMtimeTarget,
        "client",
        "delta-cm-reader",
        ("RDR-TIME-TRAVEL-ICT",),
        "MUST",
        ("time-travel", "version-zero", "file-times"),
    ),
]
