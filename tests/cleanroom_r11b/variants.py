"""Round 11 (writer F): faulty variants of the resilient clean-room client.

Each target swaps exactly one side of ``DurableTarget`` (here always the client) for a faulty subclass.
Written from the RFC, the public contract, docs/certify.md and the clean-room baselines only.
"""

from __future__ import annotations

import contextlib
import io
import uuid
from collections.abc import Sequence
from typing import ClassVar

import pyarrow as pa
import pyarrow.parquet as pq

from conformance.contract.delta import TableInfo
from tests.cleanroom.client import (
    SCHEMA_STRING,
    Action,
    CleanClient,
    LogView,
    ReadError,
    Snapshot,
    encode,
)
from tests.cleanroom_r3.base import DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant, variant_of

# ================================================================ writing clients


class CreateProtocolFirstClient(ResilientClient):
    """cr11b-wrt-create-protocol-first. WRT-COMMITINFO-FIRST (MUST), RFC section "PROTOCOL.md In-Commit
    Timestamps". The table-creating commit (version 0, written to the staging location) is laid out the
    way engines lay out CREATE TABLE: protocol, then metaData, then commitInfo, so that a reader peeking at
    the head of the file finds the protocol first. Every later commit (append, delete) correctly starts
    with its commitInfo. A shallow suite checks the order of actions in the commits its writes produce
    (appends, deletes) and never looks at version 0, which the client writes outside the commit path."""

    def create_table(self, name: str) -> None:
        staging = self.catalog.create_staging_table()
        ict = self.next_ict(None)
        actions: list[Action] = [
            {
                "protocol": {
                    "minReaderVersion": 3,
                    "minWriterVersion": 7,
                    "readerFeatures": ["catalogManaged"],
                    "writerFeatures": ["catalogManaged", "inCommitTimestamp"],
                }
            },
            {
                "metaData": {
                    "id": str(uuid.uuid4()),
                    "format": {"provider": "parquet", "options": {}},
                    "schemaString": SCHEMA_STRING,
                    "partitionColumns": [],
                    "configuration": {"delta.enableInCommitTimestamps": "true"},
                    "createdTime": ict,
                }
            },
            self.commit_info("CREATE TABLE", ict, first=True),
        ]
        self.storage.put(f"{staging.location}/_delta_log/{self.delta_name(0)}", encode(actions), if_absent=True)
        self.catalog.register_table(name, staging.table_id)


class CommitNamedChunksClient(ResilientClient):
    """cr11b-wrt-commit-named-chunks. WRT-FILE-ACTIONS-ONCE (MUST), RFC section "PROTOCOL.md Add File and
    Remove File; PROTOCOL.md Change Metadata". Large appends are split into data files of at most
    ``CHUNK`` rows; each data file is named after the commit that adds it (``part-<ict>-<session>``, to
    group a commit's files), but the chunk index is left out of the name. An append of more than
    ``CHUNK`` rows therefore writes every chunk to the same path (each overwriting the last) and the commit
    holds several add actions for that one path; all but the last chunk's rows are lost. A shallow suite
    appends a handful of rows per commit: one chunk, one add, correct."""

    CHUNK: ClassVar[int] = 1000

    def chunk_file(self, location: str, rows: Sequence[dict[str, object]], ict: int) -> Action:
        buf = io.BytesIO()
        table = pa.Table.from_pylist(
            [{"id": r["id"], "value": r["value"]} for r in rows],
            schema=pa.schema([("id", pa.int64()), ("value", pa.string())]),
        )
        pq.write_table(table, buf)
        data = buf.getvalue()
        path = f"part-{ict}-{self.session_id}.parquet"
        self.storage.put(f"{location}/{path}", data)  # overwrite: a retry rewrites its own file
        return {
            "add": {
                "path": path,
                "partitionValues": {},
                "size": len(data),
                "modificationTime": ict,
                "dataChange": True,
                "stats": f'{{"numRecords":{len(rows)}}}',
            }
        }

    def append(self, name: str, rows: Sequence[dict[str, object]]) -> int:
        chunks = [rows[i : i + self.CHUNK] for i in range(0, len(rows), self.CHUNK)]

        def build(info: TableInfo, _snap: Snapshot, ict: int) -> list[Action]:
            return [self.chunk_file(info.location, chunk, ict) for chunk in chunks]

        return self.transact(name, "WRITE", build)


class CleanupMakesCheckpointClient(ResilientClient):
    """cr11b-wrt-cleanup-makes-checkpoint. WRT-MAINTENANCE-POLICY (MUST), RFC section "Maintenance
    Operations on Catalog-managed Tables". Metadata cleanup consults the catalog's policy for
    ``metadata_cleanup``; when it finds no checkpoint at or before the cut-off it helpfully writes one
    first (so the cleanup can do its work) through its internal checkpoint routine, which skips the
    ``checkpoint`` policy question: the policy was "already checked" by the cleanup job. A catalog that
    allows cleanup but forbids checkpoints gets a checkpoint. A shallow suite checks the policy of each
    operation on its own (a forbidden ``checkpoint()`` call writes nothing: right; an allowed cleanup
    with a checkpoint present: right) and never forbids checkpoints while allowing cleanup of a table
    without a checkpoint."""

    _inside_cleanup: bool = False

    def policy_allows(self, info: TableInfo, op: str) -> bool:
        if self._inside_cleanup and op == "checkpoint":
            return True  # already vetted by the cleanup job
        return super().policy_allows(info, op)

    def cleanup(self, name: str, cutoff_version: int) -> None:
        info = self._info(name)
        if self.policy_allows(info, "metadata_cleanup"):
            view = self.view(info)
            if self.cleanup_cutoff_checkpoint(view, cutoff_version) is None:
                self._inside_cleanup = True
                try:
                    self.checkpoint(name)
                finally:
                    self._inside_cleanup = False
        super().cleanup(name, cutoff_version)


class PublishMarksOnlyNewCopiesClient(ResilientClient):
    """cr11b-wrt-publish-marks-only-new-copies. WRT-CRASH-RECOVERY (MUST), RFC section "Terminology -
    Commits (staged commit); Reading Catalog-managed Tables; Publishing Commits". The publisher sends the
    publication mark only when it copied something itself ("nothing new, nothing to tell the catalog").
    After a publisher crashed between copying the ratified commits to ``_delta_log`` and marking them,
    the next publisher finds every file present, copies nothing and never tells the catalog: the
    catalog keeps the commits as unpublished forever (and a catalog with an unpublished cap ends up
    refusing all writes). A shallow suite publishes from a clean state (copies then marks: right) and
    never crashes a publisher between the copy and the mark."""

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        done = -1
        copied = False
        for c in self.publish_order(list(view.catalog_commits.values())):
            target = f"{info.location}/_delta_log/{self.delta_name(c.version)}"
            if c.version not in view.published:
                with contextlib.suppress(FileExistsError):
                    self.storage.put(target, self.content(c), if_absent=True)
                    copied = True
            done = max(done, c.version)
        if copied and done >= 0:
            self.catalog.mark_published(info.table_id, done)


# ================================================================ reading clients


class VersionFromNamePrefixClient(ResilientClient):
    """cr11b-rdr-version-from-name-prefix. RDR-LIST-FALLBACK (MUST), RFC section "Reading Catalog-managed
    Tables; Getting Ratified Commits from the Catalog". The reader finds published commits by listing
    ``_delta_log/`` and taking every top-level ``*.json`` whose first 20 characters are digits, the first
    listed file of a version winning. A log compaction file ``x.y.compacted.json`` lists just before
    ``x.json`` and is taken as commit ``x``: reading version ``x`` (or any version from ``x`` on) after the
    catalog forgot it replays the compaction's reconciled actions of ``x..y`` instead of commit ``x``,
    showing rows of later versions and losing commit ``x``'s commitInfo. A shallow suite reads published
    tables without compaction files, or reads only the latest version, which the compaction does not
    change."""

    def view(self, info: TableInfo) -> LogView:
        resp = self.catalog.get_commits(info.table_id)
        latest = resp.latest_version
        log = f"{info.location}/_delta_log/"
        published: dict[int, str] = {}
        checkpoints: dict[int, str] = {}
        for f in self.storage.list(log):
            rel = f.uri[len(log) :]
            if "/" in rel or not rel[:20].isdigit():
                continue
            v = int(rel[:20])
            if v > latest:
                continue
            if rel.endswith(".checkpoint.parquet"):
                checkpoints.setdefault(v, f.uri)
            elif rel.endswith(".json"):
                published.setdefault(v, f.uri)
        commits = {c.version: c for c in resp.commits if c.version <= latest}
        return LogView(info, latest, commits, published, checkpoints, f"{log}_last_checkpoint")


class VersionReadPublishedOnlyClient(ResilientClient):
    """cr11b-rdr-version-read-published-only. RDR-UNPUBLISHED (MUST), RFC section "Reader Requirements for
    Catalog-managed tables". A read of the latest version includes the catalog's unpublished commits,
    but time travel by an explicit version is bounded by the newest *published* version (time travel is
    treated as a history feature of ``_delta_log``): asking for a ratified, unpublished version by
    number fails as if it did not exist. A shallow suite checks unpublished commits with a latest read
    and time-travels by version only on published tables (or to old, published versions)."""

    def readable_bound(self, view: LogView, version: int | None) -> int:
        if version is None:
            return view.latest
        newest_published = max(view.published, default=-1)
        if version < 0 or version > newest_published:
            raise ReadError(f"version {version} is not in the table's history (newest {newest_published})")
        return version


# ================================================================ targets


class CreateProtocolFirstTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CreateProtocolFirstClient


class CommitNamedChunksTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CommitNamedChunksClient


class CleanupMakesCheckpointTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CleanupMakesCheckpointClient


class PublishMarksOnlyNewCopiesTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PublishMarksOnlyNewCopiesClient


class VersionFromNamePrefixTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = VersionFromNamePrefixClient


class VersionReadPublishedOnlyTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = VersionReadPublishedOnlyClient


VARIANTS: list[Variant] = [
    variant_of(
        "cr11b-wrt-create-protocol-first",
        CreateProtocolFirstTarget,
        "client",
        "delta-cm-writer",
        ("WRT-COMMITINFO-FIRST",),
        "MUST",
        ("creation", "ordering"),
    ),
    variant_of(
        "cr11b-wrt-commit-named-chunks",
        CommitNamedChunksTarget,
        "client",
        "delta-cm-writer",
        ("WRT-FILE-ACTIONS-ONCE",),
        "MUST",
        ("sizes", "naming"),
    ),
    variant_of(
        "cr11b-wrt-cleanup-makes-checkpoint",
        CleanupMakesCheckpointTarget,
        "client",
        "delta-cm-writer",
        ("WRT-MAINTENANCE-POLICY",),
        "MUST",
        ("maintenance", "policy"),
    ),
    variant_of(
        "cr11b-wrt-publish-marks-only-new-copies",
        PublishMarksOnlyNewCopiesTarget,
        "client",
        "delta-cm-writer",
        ("WRT-CRASH-RECOVERY",),
        "MUST",
        ("crash", "publication"),
    ),
    variant_of(
        "cr11b-rdr-version-from-name-prefix",
        VersionFromNamePrefixTarget,
        "client",
        "delta-cm-reader",
        ("RDR-LIST-FALLBACK",),
        "MUST",
        ("maintenance", "naming", "time-travel"),
    ),
    variant_of(
        "cr11b-rdr-version-read-published-only",
        VersionReadPublishedOnlyTarget,
        "client",
        "delta-cm-reader",
        ("RDR-UNPUBLISHED",),
        "MUST",
        ("time-travel", "publication"),
    ),
]
