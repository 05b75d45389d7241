"""Round 15 (b): faulty variants of the resilient clean-room client (writers and readers).

Each target swaps exactly the client side of ``DurableTarget`` for a faulty subclass of
``ResilientClient``. Written from the RFC, the public contract, docs/certify.md and the clean-room
baselines only.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from typing import Any, ClassVar

from conformance.contract.delta import CatalogTimeout, CommitConflict, RatifiedCommit, TableInfo
from tests.cleanroom.client import (
    SCHEMA_STRING,
    Action,
    CleanClient,
    LogView,
    ReadError,
    RetriesExhausted,
    Snapshot,
    decode,
    encode,
)
from tests.cleanroom_r3.base import DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant, variant_of

_DELTA_NAME = re.compile(r"([0-9]{20})\.json")
_CHECKPOINT_NAME = re.compile(r"([0-9]{20})\.checkpoint\.parquet")
_BOM = b"\xef\xbb\xbf"


# ================================================================ writing clients


class CompactionFromSnapshotClient(ResilientClient):
    """cr15b-wrt-compaction-from-snapshot. WRT-COMPACTION-CONTENT (MUST); RFC "Maintenance Operations on
    Catalog-managed Tables" and PROTOCOL.md "Log Compaction Files" (a log compaction file of versions x to
    y holds the reconciled actions of exactly the commits x to y). Bug: to reconcile a range the writer
    reuses its snapshot machinery: the compaction's ``add`` actions are the live files of the snapshot at
    version y (whoever added them), plus the range's own removes and its other non-commitInfo actions.
    For a range that starts at the table's first data commit (the range a shallow suite compacts: 1..y,
    or 0..y) that is exactly the reconciled content; for any later start x the file also carries an
    ``add`` of every live file added before x, so a reader that replays checkpoint + compaction (or
    commits < x + compaction) sees those files twice and the file states actions the range never made."""

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
        live = self.snapshot(view, end_version).files  # the fault: every live file, not the range's adds
        removes: dict[str, Action] = {}
        other: list[Action] = []
        for v in range(start_version, end_version + 1):
            for a in decode(self.content(sources[v])):
                if "remove" in a:
                    removes[a["remove"]["path"]] = a
                elif "add" not in a and "commitInfo" not in a:
                    other.append(a)
        adds = [{"add": add} for add in live.values()]
        tombstones = [r for path, r in removes.items() if path not in live]
        body = encode([*other, *adds, *tombstones])
        uri = f"{info.location}/_delta_log/{start_version:020d}.{end_version:020d}.compacted.json"
        with contextlib.suppress(FileExistsError):
            self.storage.put(uri, body, if_absent=True)
        return True


class CompactionFromSnapshotTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CompactionFromSnapshotClient


class StagedNameFirstAttemptClient(ResilientClient):
    """cr15b-wrt-staged-name-first-attempt. WRT-STAGED-NAME (MUST); RFC "Delta Log Entries" and
    "Terminology - Commits (staged commit)" (a staged commit is
    ``_staged_commits/<20-digit version>.<uuid>.json`` named for the version it proposes). Bug: the
    writer allocates a transaction's staging key when the transaction starts (the version it is about
    to propose) and only draws a fresh UUID per attempt: after a lost race the rebuilt commit for v+1 is
    written to ``<v>.<new uuid>.json`` and proposed for v+1. A strict catalog refuses it (the append
    fails with ``InvalidRequest``), a lax one ratifies a file whose name says another version. Without a
    lost race (every commit of a shallow suite's single writer, and every first attempt) the name is
    right; the file is fresh every time, so no staged file is ever reused."""

    def transact(self, name: str, operation: str, build: Any) -> int:
        info = self._info(name)
        log = f"{info.location}/_delta_log"
        key_version: int | None = None
        for _ in range(self.max_attempts):
            view = self.view(info)
            snap = self.snapshot(view, view.latest)
            version = view.latest + 1
            if key_version is None:
                key_version = version  # the fault: the key is taken once per transaction
            ict = self.next_ict(snap.in_commit_timestamp)
            actions: list[Action] = build(info, snap, ict)
            content = encode(self.order_actions(self.commit_info_for(info, version, operation, ict), actions))
            uri = f"{log}/_staged_commits/{self.staged_name(key_version)}"
            self.storage.put(uri, content, if_absent=True)
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


class StagedNameFirstAttemptTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = StagedNameFirstAttemptClient


class CheckpointOneBehindClient(ResilientClient):
    """cr15b-wrt-checkpoint-one-behind. WRT-CHECKPOINT-PUBLISHED (MUST); RFC "Maintenance Operations on
    Catalog-managed Tables" (a checkpoint of version v only once ``_delta_log/<v>.json`` exists). Bug:
    the checkpoint step checks whether the latest ratified version is published; when it is not, it
    checkpoints the version before it without looking, reasoning that commits are published in order and
    a writer publishes right after committing, so at most the newest one can be in flight. With one
    unpublished commit (what a shallow suite leaves before asking for a checkpoint) that is right; with
    two or more unpublished commits the checkpoint is written for a version that is ratified but not
    published: ``<latest-1>.checkpoint.parquet`` appears while ``<latest-1>.json`` does not exist."""

    def checkpoint_version(self, view: LogView) -> int | None:
        if view.latest in view.published:
            return view.latest
        return view.latest - 1 if view.latest >= 1 else None


class CheckpointOneBehindTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CheckpointOneBehindClient


class StagedBomClient(ResilientClient):
    """cr15b-wrt-staged-bom-non-ascii. WRT-STAGED-FORMAT (MUST); RFC "Terminology - Commits (staged
    commit)" (a staged commit has the published Delta file format: newline-delimited JSON, one action per
    line). Bug: the writer keeps string statistics (``minValues``/``maxValues`` of ``value``, as engines
    do) and serialises commits as UTF-8 text (``ensure_ascii=False``); when the text is not plain ASCII
    it is written through a text encoder set to ``utf-8-sig``, which puts a byte-order mark before the
    first action. The client's own reader strips it and its publisher copies the bytes, so its own round
    trip works; any other reader fails to parse the first line (JSON forbids a BOM). Appends of ASCII
    values, what a shallow suite writes, produce plain ASCII commits with no BOM."""

    def write_data(self, location: str, rows: Any) -> Action:
        add = super().write_data(location, rows)
        values = sorted(str(r["value"]) for r in rows if r.get("value") is not None)
        if values:
            stats = json.loads(add["add"]["stats"])
            stats["minValues"]["value"] = values[0]
            stats["maxValues"]["value"] = values[-1]
            stats["nullCount"] = {"id": 0, "value": sum(1 for r in rows if r.get("value") is None)}
            add["add"]["stats"] = json.dumps(stats, separators=(",", ":"), ensure_ascii=False)
        return add

    def serialise(self, actions: list[Action]) -> bytes:
        text = "".join(json.dumps(a, separators=(",", ":"), ensure_ascii=False) + "\n" for a in actions)
        return text.encode("utf-8-sig") if not text.isascii() else text.encode()  # the fault: a BOM

    def content(self, source: RatifiedCommit | str) -> bytes:
        data = super().content(source)
        return data[len(_BOM) :] if data.startswith(_BOM) else data

    def raw_content(self, c: RatifiedCommit) -> bytes:
        if c.inline_content is not None:
            return c.inline_content
        assert c.staged_uri is not None
        return self.storage.get(c.staged_uri)

    def transact(self, name: str, operation: str, build: Any) -> int:
        info = self._info(name)
        log = f"{info.location}/_delta_log"
        for _ in range(self.max_attempts):
            view = self.view(info)
            snap = self.snapshot(view, view.latest)
            version = view.latest + 1
            ict = self.next_ict(snap.in_commit_timestamp)
            actions: list[Action] = build(info, snap, ict)
            content = self.serialise(self.order_actions(self.commit_info_for(info, version, operation, ict), actions))
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

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        done = -1
        for c in self.publish_order(list(view.catalog_commits.values())):
            target = f"{info.location}/_delta_log/{self.delta_name(c.version)}"
            if c.version not in view.published:
                with contextlib.suppress(FileExistsError):
                    self.storage.put(target, self.raw_content(c), if_absent=True)  # a byte copy
            done = max(done, c.version)
        if done >= 0:
            self.catalog.mark_published(info.table_id, done)


class StagedBomTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = StagedBomClient


class RebasePublishedOnlyClient(ResilientClient):
    """cr15b-wrt-rebase-published-only. WRT-REBASE-UNPUBLISHED (MAY); RFC "Terminology - Commits" (a
    proposed commit is ratified or rejected) and "Commit Protocol" (the catalog states the latest
    ratified commit on conflict; the writer rebases over it). Bug: the writer's conflict path was ported
    from its filesystem-table code: after a lost race (not its own commit) it re-reads the table and
    rebases only when ``_delta_log`` has caught up with the catalog's latest version; when the winning
    commit is ratified but not yet published it gives up (``RetriesExhausted``: "winner not published
    yet, retry later"). A shallow rebase check lets the rival publish before the loser retries (the
    INT-CONCURRENT-REBASE set-up): it rebases; losing to a ratified, unpublished commit it fails."""

    def on_conflict(self, info: TableInfo, version: int, staged_uri: str, content: bytes) -> bool:
        if self.was_ratified(info, version, staged_uri, content):
            return True
        view = self.view(info)
        newest_published = max(view.published, default=-1)
        if any(v > newest_published for v in view.catalog_commits):
            raise RetriesExhausted(f"lost v{version} to a commit not yet published; retry once it is published")
        return False


class RebasePublishedOnlyTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = RebasePublishedOnlyClient


class CreateMetadataTwiceClient(ResilientClient):
    """cr15b-wrt-create-metadata-twice. WRT-FILE-ACTIONS-ONCE (MUST); PROTOCOL.md "Change Metadata" (a
    commit holds at most one ``metaData`` action) and "Add File and Remove File". Bug: table creation is
    composed from the writer's building blocks: CREATE TABLE writes the table's base ``metaData`` (empty
    configuration), then the step that turns on in-commit timestamps (the same code as ``ALTER TABLE ...
    SET TBLPROPERTIES``, the one engines run to enable a feature on an existing table) appends its own
    updated ``metaData`` to the same commit instead of replacing the first, with the enablement version
    and timestamp. Version 0 carries two ``metaData`` actions. Every reader takes the last one, so the
    table reads right, its protocol is right and the last metaData enables in-commit timestamps (a check
    of WRT-ICT-ENABLED on the replayed snapshot passes); data commits are right, and a check of
    duplicate file actions that looks at ``add``/``remove`` only, or only at commits the writer makes
    after creation, misses it."""

    def create_table(self, name: str) -> None:
        staging = self.catalog.create_staging_table()
        ict = self.next_ict(None)
        base: Action = {
            "id": str(uuid.uuid4()),
            "format": {"provider": "parquet", "options": {}},
            "schemaString": SCHEMA_STRING,
            "partitionColumns": [],
            "configuration": {},
            "createdTime": ict,
        }
        enabled = {
            **base,
            "configuration": {
                "delta.enableInCommitTimestamps": "true",
                "delta.inCommitTimestampEnablementVersion": "0",
                "delta.inCommitTimestampEnablementTimestamp": str(ict),
            },
        }
        actions = [
            self.commit_info("CREATE TABLE", ict, first=True),
            {
                "protocol": {
                    "minReaderVersion": 3,
                    "minWriterVersion": 7,
                    "readerFeatures": ["catalogManaged"],
                    "writerFeatures": ["catalogManaged", "inCommitTimestamp"],
                }
            },
            {"metaData": base},
            {"metaData": enabled},  # the fault: the enabling step appends a second metaData
        ]
        self.storage.put(f"{staging.location}/_delta_log/{self.delta_name(0)}", encode(actions), if_absent=True)
        self.catalog.register_table(name, staging.table_id)


class CreateMetadataTwiceTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CreateMetadataTwiceClient


# ================================================================ reading clients


class CatalogFromListingClient(ResilientClient):
    """cr15b-rdr-catalog-from-listing. RDR-IGNORE-ABOVE-LATEST, RDR-CATALOG-PRECEDENCE (MUST); RFC
    "Reading Catalog-managed Tables" / "Reader Requirements" (published and staged files above the
    catalog's latest ratified version are ignored; the catalog's commit of a version wins over a
    published file of it). Bug: to keep listings short the reader LISTs ``_delta_log`` first and asks the
    catalog only for the commits after the newest published file it saw (``get_commits(start=newest +
    1)``, "everything below is published"); it LISTs again after the catalog's answer and, rightly, keeps
    only published files at or below the catalog's latest version. But the query's start came from the
    unfiltered first listing: a stray ``<v>.json`` above the latest makes the query start past every
    unpublished commit, which are then in neither answer, and a read of the latest version fails; and a
    published file of a version the catalog still holds, when it is the newest file, hides the catalog's
    commit of it. With no stray file and a catalog that forgets what is published, reads are right, and
    the stray file's own content is never used, so a check that only looks for its rows passes."""

    def view(self, info: TableInfo) -> LogView:
        log = f"{info.location}/_delta_log/"
        seen = [int(m.group(1)) for f in self.storage.list(log) if (m := _DELTA_NAME.fullmatch(f.uri[len(log) :]))]
        start = max(seen, default=-1) + 1  # the fault: the newest file listed, above the latest too
        resp = self.catalog.get_commits(info.table_id, start)
        latest = resp.latest_version
        published: dict[int, str] = {}
        checkpoints: dict[int, str] = {}
        for f in self.storage.list(log):  # listed again, after the catalog's answer
            rel = f.uri[len(log) :]
            m = _DELTA_NAME.fullmatch(rel)
            if m and int(m.group(1)) <= latest:
                published[int(m.group(1))] = f.uri
            m = _CHECKPOINT_NAME.fullmatch(rel)
            if m and int(m.group(1)) <= latest:
                checkpoints[int(m.group(1))] = f.uri
        commits = {c.version: c for c in resp.commits if c.version <= latest}
        return LogView(info, latest, commits, published, checkpoints, f"{log}_last_checkpoint")


class CatalogFromListingTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CatalogFromListingClient


class CheckpointFilesUnremovableClient(ResilientClient):
    """cr15b-rdr-checkpoint-files-unremovable. RDR-UNPUBLISHED, RDR-LIST-FALLBACK (MUST); RFC "Reader
    Requirements" (the reader includes ratified, unpublished commits) and "Reading Catalog-managed Tables"
    (commits the catalog no longer stores are read from ``_delta_log``: a checkpoint and the commits after
    it). Bug: the reader loads a checkpoint's files as a base layer and replays the commits after the
    checkpoint as a separate layer, then unions the two: a ``remove`` after the checkpoint only cancels
    an ``add`` of the replayed layer, never a file the checkpoint holds. Reads without a checkpoint, reads
    of the checkpoint's own version, and appends after a checkpoint are right (what a shallow suite
    tries); a delete (or any remove) after a checkpoint of a file the checkpoint lists is ignored, the
    deleted rows come back, and the rewritten survivors appear twice."""

    def snapshot(self, view: LogView, target: int) -> Snapshot:
        cp = self.start_checkpoint(view, target)
        if cp is None or cp == target:
            return super().snapshot(view, target)
        sources = self.commit_sources(view)
        missing = [v for v in range(cp + 1, target + 1) if v not in sources]
        if missing:
            raise ReadError(f"commits {missing} of version {target} are neither in the catalog nor published")
        base = self.replay(cp, [self.checkpoint_actions(view.checkpoints[cp])])
        tail = self.replay(target, [decode(self.content(sources[v])) for v in range(cp + 1, target + 1)])
        files = {**base.files, **tail.files}  # the fault: the tail's removes never reach the base layer
        return Snapshot(
            target, tail.protocol or base.protocol, tail.metadata or base.metadata, files, tail.in_commit_timestamp
        )


class CheckpointFilesUnremovableTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CheckpointFilesUnremovableClient


# ================================================================ the list


VARIANTS: list[Variant] = [
    variant_of(
        "cr15b-wrt-compaction-from-snapshot",
        CompactionFromSnapshotTarget,
        "client",
        "delta-cm-writer",
        ("WRT-COMPACTION-CONTENT",),
        "MUST",
        ("maintenance", "ranges", "long-history"),
    ),
    variant_of(
        "cr15b-wrt-staged-name-first-attempt",
        StagedNameFirstAttemptTarget,
        "client",
        "delta-cm-writer",
        ("WRT-STAGED-NAME",),
        "MUST",
        ("concurrency", "retries", "staged-names"),
    ),
    variant_of(
        "cr15b-wrt-checkpoint-one-behind",
        CheckpointOneBehindTarget,
        "client",
        "delta-cm-writer",
        ("WRT-CHECKPOINT-PUBLISHED",),
        "MUST",
        ("maintenance", "unpublished-runs"),
    ),
    variant_of(
        "cr15b-wrt-staged-bom-non-ascii",
        StagedBomTarget,
        "client",
        "delta-cm-writer",
        ("WRT-STAGED-FORMAT",),
        "MUST",
        ("encodings", "non-ascii-values"),
    ),
    variant_of(
        "cr15b-wrt-rebase-published-only",
        RebasePublishedOnlyTarget,
        "client",
        "delta-cm-writer",
        ("WRT-REBASE-UNPUBLISHED",),
        "MAY",
        ("concurrency", "rebase", "unpublished-runs"),
    ),
    variant_of(
        "cr15b-wrt-create-metadata-twice",
        CreateMetadataTwiceTarget,
        "client",
        "delta-cm-writer",
        ("WRT-FILE-ACTIONS-ONCE",),
        "MUST",
        ("table-creation", "feature-enablement"),
    ),
    variant_of(
        "cr15b-rdr-catalog-from-listing",
        CatalogFromListingTarget,
        "client",
        "delta-cm-reader",
        ("RDR-IGNORE-ABOVE-LATEST", "RDR-CATALOG-PRECEDENCE"),
        "MUST",
        ("stray-files", "unpublished-runs", "listing-bounds"),
    ),
    variant_of(
        "cr15b-rdr-checkpoint-files-unremovable",
        CheckpointFilesUnremovableTarget,
        "client",
        "delta-cm-reader",
        ("RDR-UNPUBLISHED", "RDR-LIST-FALLBACK"),
        "MUST",
        ("maintenance", "deletes", "checkpoints"),
    ),
]
