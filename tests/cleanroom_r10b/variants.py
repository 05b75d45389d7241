"""Round 10 (writer D): faulty writing and reading clients of catalog-managed Delta tables.

Each target swaps exactly one side of ``DurableTarget`` (the client) for a faulty subclass of
``ResilientClient`` that breaks one MUST or SHOULD rule of /tmp/b10/rules.txt and is otherwise correct.
Written from the RFC, the public contract, docs/certify.md and the clean-room baselines only. The faults
are demonstrated in ``tests/test_cleanroom_r10b_faults.py``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any, ClassVar

from conformance.contract.delta import (
    CatalogTimeout,
    CommitConflict,
    RatifiedCommit,
    ReadResult,
    TableInfo,
)
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
from tests.cleanroom_r3.variant import Variant

# ================================================================ writing clients


class IctPrevFromTimestampClient(ResilientClient):
    """cr10b-wrt-ict-prev-from-timestamp. WRT-ICT-MONOTONIC, WRT-ICT-SKEW (MUST); PROTOCOL.md In-Commit
    Timestamps, made mandatory by the RFC's "Writer Requirements for Catalog-managed tables" (and
    "Publishing Commits", note on timestamps). The writer fills ``commitInfo.timestamp`` with its wall
    clock, as Delta writers always have, and ``inCommitTimestamp`` with ``max(clock, previous + 1)`` - but
    it reads "the previous commit's time" from the previous commit's ``commitInfo.timestamp`` (the field its
    older, pre-ICT code used). While the clocks agree the two fields are equal and nothing shows. After a
    peer whose clock runs ahead committed, the writer's first commit is still right (the peer's two fields
    are both ahead, so it stamps peer + 1), but that commit's ``timestamp`` is the writer's own slow clock;
    the writer's *second* commit reads it and goes back in time, below the first. A shallow suite writes
    one commit after the skewed peer and checks that one."""

    _stamping: bool = True  # False while time travel indexes (it reads inCommitTimestamp)

    def commit_info(self, operation: str, ict: int, *, first: bool = False) -> Action:
        action = super().commit_info(operation, ict, first=first)
        action["commitInfo"]["timestamp"] = self.now_ms()
        return action

    def replay(self, version: int, batches: Iterable[list[Action]], checkpoint: bool = False) -> Snapshot:
        batches = list(batches)
        snap = super().replay(version, batches, checkpoint)
        for actions in batches:
            for a in actions:
                if "commitInfo" in a and a["commitInfo"].get("timestamp") is not None:
                    snap.in_commit_timestamp = int(a["commitInfo"]["timestamp"])
        return snap

    def ict_of(self, actions: list[Action]) -> int | None:
        if self._stamping:  # the writer dates the previous commit by its ``timestamp``
            for a in actions:
                if "commitInfo" in a and a["commitInfo"].get("timestamp") is not None:
                    return int(a["commitInfo"]["timestamp"])
        return super().ict_of(actions)

    def timeline(self, view: LogView) -> list[tuple[int, int]]:
        self._stamping = False
        try:
            return super().timeline(view)
        finally:
            self._stamping = True


class IctPrevFromTimestampTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = IctPrevFromTimestampClient


class CheckpointPublishesTargetOnlyClient(ResilientClient):
    """cr10b-wrt-checkpoint-publishes-target-only. WRT-PUBLISH-ORDER (MUST); RFC "Publishing Commits"
    (version v-1 is published before version v) and "Maintenance Operations" (a checkpoint of v needs
    ``_delta_log/<v>.json``). The writer checkpoints the *latest ratified* version, the state users want
    checkpointed; to honour the rule that a checkpoint needs its Delta file, it first publishes that one
    commit (copying the ratified content, put-if-absent) when it is not published yet. So the checkpoint
    rule holds, but with two or more unpublished commits ``<latest>.json`` appears while ``<latest-1>.json``
    does not: publication out of order. A shallow suite checkpoints right after ``publish`` (nothing
    unpublished) or with a single unpublished commit (its predecessor is published): both are right."""

    def checkpoint_version(self, view: LogView) -> int | None:
        latest = view.latest
        if latest not in view.published and latest in view.catalog_commits:
            uri = f"{view.info.location}/_delta_log/{self.delta_name(latest)}"
            with contextlib.suppress(FileExistsError):
                self.storage.put(uri, self.content(view.catalog_commits[latest]), if_absent=True)
            view.published[latest] = uri
        return latest if latest in view.published else super().checkpoint_version(view)


class CheckpointPublishesTargetOnlyTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CheckpointPublishesTargetOnlyClient


class CompactionFileActionsOnlyClient(ResilientClient):
    """cr10b-wrt-compaction-file-actions-only. WRT-COMPACTION-CONTENT (MUST); RFC "Maintenance
    Operations on Catalog-managed Tables" and PROTOCOL.md Log Compaction Files (a compaction file x..y
    holds the reconciled actions of exactly the commits x to y: the last protocol and metaData of the
    range as well as its file actions). The writer reconciles only ``add`` and ``remove`` actions ("log
    compaction is about file actions; protocol and metadata live in checkpoints"). For ranges of appends
    and deletes, what a shallow suite compacts (1..3 after a few writes), the file is exact; a range that
    starts at version 0, or holds any protocol or metaData action, loses them: a reader replaying the
    compaction file in place of those commits finds no schema and no protocol."""

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
        for v in range(start_version, end_version + 1):
            for a in decode(self.content(sources[v])):
                if "add" in a:
                    adds[a["add"]["path"]] = a
                    removes.pop(a["add"]["path"], None)
                elif "remove" in a:
                    removes[a["remove"]["path"]] = a
                    adds.pop(a["remove"]["path"], None)
        body = encode([*adds.values(), *removes.values()])
        uri = f"{info.location}/_delta_log/{start_version:020d}.{end_version:020d}.compacted.json"
        with contextlib.suppress(FileExistsError):
            self.storage.put(uri, body, if_absent=True)
        return True


class CompactionFileActionsOnlyTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CompactionFileActionsOnlyClient


class _TransactingClient(ResilientClient):
    """Correct helper (not a variant): ``ResilientClient.transact`` with the version it returns after a
    lost answer taken from ``lost_answer_version``; the correct value is the proposed version."""

    def lost_answer_version(self, info: TableInfo, version: int) -> int:
        return version

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
                if not self.on_lost_answer(info, version, uri, content):
                    continue
                self.after_ratified(info, version)
                return self.lost_answer_version(info, version)
            self.after_ratified(info, version)
            return version
        raise RetriesExhausted(f"gave up committing to {name} after {self.max_attempts} lost races")


class LostAnswerChecksHeadClient(_TransactingClient):
    """cr10b-wrt-lost-answer-checks-head. WRT-LOST-ANSWER-ONCE (MUST); RFC "Commit Protocol" and
    "Terminology - Commits" (the catalog is the source of truth on whether a proposal was ratified).
    After a lost answer to its proposal the writer asks the catalog, as it should, but asks "is the
    table's newest commit mine?": it lists the stored commits and compares the *last* one's staged file
    with its own. With one writer (how a nemesis usually loses answers) the newest commit is the one just
    proposed and the answer is right. When another writer commits between the lost answer and the
    question, or the commit was published and forgotten meanwhile, the newest commit is not the writer's,
    so it takes its ratified proposal for lost and commits the change a second time."""

    def on_lost_answer(self, info: TableInfo, version: int, staged_uri: str, content: bytes) -> bool:
        resp = self.catalog.get_commits(info.table_id)
        return bool(resp.commits) and resp.commits[-1].staged_uri == staged_uri


class LostAnswerChecksHeadTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = LostAnswerChecksHeadClient


class LostAnswerReturnsLatestClient(_TransactingClient):
    """cr10b-wrt-lost-answer-returns-latest. WRT-LOST-ANSWER-OUTCOME (SHOULD); RFC "Commit Protocol"
    and "Terminology - Commits". After a lost answer the writer finds out correctly whether its proposal
    was ratified (it asks the catalog about its own staged file), and when it was, it reports the table's
    latest version from that same answer ("the version after the write") instead of the version its
    commit holds. With one writer they are equal; when a concurrent writer committed after it before it
    asked, ``append`` returns the other writer's version, and a caller reading its own write by version
    reads someone else's."""

    def lost_answer_version(self, info: TableInfo, version: int) -> int:
        return self.catalog.get_commits(info.table_id, version, version).latest_version


class LostAnswerReturnsLatestTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = LostAnswerReturnsLatestClient


class TxnIdFromIctClient(ResilientClient):
    """cr10b-wrt-txnid-from-ict. WRT-TXNID-UNIQUE (MUST); RFC "Commit Provenance Information" (txnId is a
    unique transaction identifier) and "Writer Requirements". The writer builds the txnId from its session
    id and the commit's in-commit timestamp, reasoning that the session is unique per client and in-commit
    timestamps strictly increase. They do, but per table: the same client committing to two tables within
    one millisecond (or after a skewed peer pushed both tables to the same stamp) gives two commits one
    txnId. Every table's txnIds are unique, and so are two clients'; a shallow suite checks those."""

    def commit_info_for(self, info: TableInfo, version: int, operation: str, ict: int) -> Action:
        action = self.commit_info(operation, ict)
        action["commitInfo"]["txnId"] = f"{self.session_id}-{ict}"
        return action


class TxnIdFromIctTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = TxnIdFromIctClient


# ================================================================ reading clients


class VersionReadTrustsFileClient(ResilientClient):
    """cr10b-rdr-version-read-trusts-file. RDR-IGNORE-ABOVE-LATEST (MUST); RFC "Reading Catalog-managed
    Tables" and "Reader Requirements" (if the catalog says v is the latest version, clients ignore later
    versions that may have been published). Reads of the latest snapshot honour the catalog's latest
    version, but a read *by version* above it looks for the Delta files of the missing versions (RFC
    "Terminology - Commits": a ``<v>.json`` proves v ratified, true of filesystem tables) and serves the
    version when they are listed. A shallow suite plants a stray published file above the latest and
    checks the latest read; a read of that version number is refused by a correct reader, served here."""

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        if version is not None and timestamp_ms is None:
            info = self._info(name)
            view = self.view(info)
            if version > view.latest:
                log = f"{info.location}/_delta_log/"
                for f in self.storage.list(log):
                    m = _DELTA.fullmatch(f.uri[len(log) :])
                    if m:
                        view.published.setdefault(int(m.group(1)), f.uri)
                if all(v in view.published for v in range(view.latest + 1, version + 1)):
                    snap = self.snapshot(view, version)
                    return ReadResult(version, self.rows(info.location, snap))
        return super().read(name, version=version, timestamp_ms=timestamp_ms)


class VersionReadTrustsFileTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = VersionReadTrustsFileClient


class IncrementalCatalogOnlyClient(ResilientClient):
    """cr10b-rdr-incremental-catalog-only. RDR-LIST-FALLBACK (MUST); RFC "Reading Catalog-managed Tables"
    and "Getting Ratified Commits from the Catalog" (commits the catalog no longer stores are read from the
    published files). The reader keeps the latest snapshot it built per table and brings it up to date
    incrementally: it asks the catalog for the commits after the cached version and applies them, without
    LISTing ``_delta_log`` again ("the catalog holds every commit since my last read"). The first read of a
    client, and any read after only unpublished commits, is right; when commits were published (and so
    forgotten by the catalog) between two reads of one client, they are skipped silently and the snapshot
    lacks their rows though it claims the latest version."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._latest: dict[str, Snapshot] = {}

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        if version is not None or timestamp_ms is not None:
            return super().read(name, version=version, timestamp_ms=timestamp_ms)
        info = self._info(name)
        cached = self._latest.get(info.table_id)
        if cached is None:
            view = self.view(info)
            snap = self.snapshot(view, view.latest)
        else:
            resp = self.catalog.get_commits(info.table_id, cached.version + 1)
            base: list[Action] = [{"protocol": cached.protocol}, {"metaData": cached.metadata}]
            base += [{"add": a} for a in cached.files.values()]
            batches = [base, *(decode(self.content(c)) for c in resp.commits)]
            snap = self.replay(resp.latest_version, batches)
        self._latest[info.table_id] = snap
        return ReadResult(snap.version, self.rows(info.location, snap))


class IncrementalCatalogOnlyTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = IncrementalCatalogOnlyClient


class TimelinePublishedFirstClient(ResilientClient):
    """cr10b-rdr-timeline-published-first. RDR-CATALOG-PRECEDENCE, RDR-TIME-TRAVEL-ICT (MUST); RFC
    "Reading Catalog-managed Tables" / "Reader Requirements" (for a version the catalog returns, use the
    catalog's commit and ignore a published file of that version) and "Publishing Commits" (time travel by
    in-commit timestamp). Snapshots honour the precedence. The time-travel index, though, is built from the
    listed Delta files first and completed with the catalog's commits that are not published ("only
    unpublished commits need the catalog"): for a version both stored by the catalog and present as a
    published file, the file's in-commit timestamp dates it. A shallow suite checks precedence with latest
    and by-version reads, which are right; a timestamp read resolves by the stray file's timestamp."""

    def timeline(self, view: LogView) -> list[tuple[int, int]]:
        sources: dict[int, RatifiedCommit | str] = dict(view.published)
        for v, c in view.catalog_commits.items():
            sources.setdefault(v, c)
        out = []
        for v, source in sorted(sources.items()):
            ict = self.ict_of(decode(self.content(source)))
            if ict is not None:
                out.append((v, ict))
        return out


class TimelinePublishedFirstTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = TimelinePublishedFirstClient


class RecursiveListBasenameClient(ResilientClient):
    """cr10b-rdr-recursive-list-basename. RDR-IGNORE-UNRATIFIED (MUST); RFC "Delta Log Entries" and
    "Terminology - Commits" (staged files are not part of the table unless the catalog names them; the
    reader must ignore rejected ones). The reader's log listing was written for a LIST that returns only
    the entries directly in ``_delta_log`` (a delimiter LIST, ``os.listdir``) and recognises a Delta file
    by its base name: 20 digits, a dot, ending in ``.json`` and not a compaction file. ``Storage.list``
    lists recursively, so ``_staged_commits/<v>.<uuid>.json`` is taken for ``<v>.json`` too, and, sorting
    after it, replaces it. While the catalog holds version v its commit wins, and files above the latest
    are ignored: a shallow suite sees nothing. Once v is published and forgotten, a leftover staged file of
    a losing proposal for v (sorting after the published file and the winner's) is read as version v."""

    def view(self, info: TableInfo) -> LogView:
        resp = self.catalog.get_commits(info.table_id)
        latest = resp.latest_version
        log = f"{info.location}/_delta_log/"
        published: dict[int, str] = {}
        checkpoints: dict[int, str] = {}
        for f in self.storage.list(log):
            base = f.uri.rsplit("/", 1)[-1]
            head = base.split(".", 1)[0]
            if len(head) != 20 or not head.isdigit() or int(head) > latest:
                continue
            if base.endswith(".json") and not base.endswith(".compacted.json"):
                published[int(head)] = f.uri
            elif _CHECKPOINT.fullmatch(base):
                checkpoints[int(head)] = f.uri
        commits = {c.version: c for c in resp.commits if c.version <= latest}
        return LogView(info, latest, commits, published, checkpoints, f"{log}_last_checkpoint")


class RecursiveListBasenameTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = RecursiveListBasenameClient


# ================================================================ the list


def _v(
    name: str,
    cls: type[DurableTarget],
    profile: str,
    rules: tuple[str, ...],
    level: str,
    dimensions: tuple[str, ...],
) -> Variant:
    return Variant(
        name,
        f"tests.cleanroom_r10b.variants:{cls.__name__}",
        "client",
        profile,
        rules,
        level,
        dimensions,
        (cls.client_cls.__doc__ or "").strip(),
    )


W = "delta-cm-writer"
R = "delta-cm-reader"

VARIANTS: list[Variant] = [
    _v(
        "cr10b-wrt-ict-prev-from-timestamp",
        IctPrevFromTimestampTarget,
        W,
        ("WRT-ICT-MONOTONIC", "WRT-ICT-SKEW"),
        "MUST",
        ("clock", "skew", "several-clients"),
    ),
    _v(
        "cr10b-wrt-checkpoint-publishes-target-only",
        CheckpointPublishesTargetOnlyTarget,
        W,
        ("WRT-PUBLISH-ORDER",),
        "MUST",
        ("maintenance", "checkpoints", "unpublished-runs"),
    ),
    _v(
        "cr10b-wrt-compaction-file-actions-only",
        CompactionFileActionsOnlyTarget,
        W,
        ("WRT-COMPACTION-CONTENT",),
        "MUST",
        ("maintenance", "log-compaction", "version-zero"),
    ),
    _v(
        "cr10b-wrt-lost-answer-checks-head",
        LostAnswerChecksHeadTarget,
        W,
        ("WRT-LOST-ANSWER-ONCE",),
        "MUST",
        ("lost-answer", "several-clients", "concurrency"),
    ),
    _v(
        "cr10b-wrt-lost-answer-returns-latest",
        LostAnswerReturnsLatestTarget,
        W,
        ("WRT-LOST-ANSWER-OUTCOME",),
        "SHOULD",
        ("lost-answer", "several-clients", "concurrency"),
    ),
    _v(
        "cr10b-wrt-txnid-from-ict",
        TxnIdFromIctTarget,
        W,
        ("WRT-TXNID-UNIQUE",),
        "MUST",
        ("txnid", "several-tables", "clock"),
    ),
    _v(
        "cr10b-rdr-version-read-trusts-file",
        VersionReadTrustsFileTarget,
        R,
        ("RDR-IGNORE-ABOVE-LATEST",),
        "MUST",
        ("stray-files", "read-by-version"),
    ),
    _v(
        "cr10b-rdr-incremental-catalog-only",
        IncrementalCatalogOnlyTarget,
        R,
        ("RDR-LIST-FALLBACK",),
        "MUST",
        ("caching", "publication", "several-reads"),
    ),
    _v(
        "cr10b-rdr-timeline-published-first",
        TimelinePublishedFirstTarget,
        R,
        ("RDR-CATALOG-PRECEDENCE", "RDR-TIME-TRAVEL-ICT"),
        "MUST",
        ("time-travel", "stray-files", "catalog-precedence"),
    ),
    _v(
        "cr10b-rdr-recursive-list-basename",
        RecursiveListBasenameTarget,
        R,
        ("RDR-IGNORE-UNRATIFIED",),
        "MUST",
        ("staged-commits", "publication", "listing"),
    ),
]
