"""Round 14b: faulty client variants of the resilient clean-room client.

Each target swaps exactly the client side of ``DurableTarget`` for a faulty subclass of
``ResilientClient``. Written from the RFC, the public contract, docs/certify.md and the clean-room
baselines only.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from conformance.contract.delta import TableInfo
from tests.cleanroom.client import (
    _CHECKPOINT_SCHEMA,
    _ROWS,
    Action,
    CleanClient,
    LogView,
)
from tests.cleanroom_r3.base import DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant, variant_of

T = TypeVar("T")

_COMPACTED = re.compile(r"([0-9]{20})\.([0-9]{20})\.compacted\.json")

# ================================================================ writing clients


class CheckpointReaderFeaturesClient(ResilientClient):
    """cr14b-wrt-checkpoint-reader-features. WRT-PROTOCOL-VERSIONS (MUST); RFC "Catalog-managed Table
    Enablement" (reader version 3, writer version 7, ``catalogManaged`` in both feature lists). Bug: the
    checkpoint writer "normalises" the protocol row it writes: it keeps in ``readerFeatures`` only the
    features its engine knows to be reader-writer features (a hard-coded list that predates
    ``catalogManaged``: columnMapping, deletionVectors, timestampNtz, typeWidening, v2Checkpoint,
    vacuumProtocolCheck, variantType), so the checkpoint's protocol lists ``catalogManaged`` as a writer
    feature only. Every commit, version 0 included, carries the right protocol; only the table's state
    as replayed from a checkpoint (and, after metadata cleanup, the table itself) loses the reader
    feature, so path-based readers no longer see that the table is catalog-managed. A shallow suite
    checks the protocol action of version 0 (or of the replayed commits) and never opens a checkpoint."""

    KNOWN_READER_WRITER_FEATURES: ClassVar[frozenset[str]] = frozenset(
        {
            "columnMapping",
            "deletionVectors",
            "timestampNtz",
            "typeWidening",
            "v2Checkpoint",
            "vacuumProtocolCheck",
            "variantType",
        }
    )

    def checkpoint_protocol(self, protocol: Action) -> Action:
        out = dict(protocol)
        out["readerFeatures"] = [
            f for f in protocol.get("readerFeatures") or [] if f in self.KNOWN_READER_WRITER_FEATURES
        ]
        return out

    def checkpoint(self, name: str) -> int | None:
        info = self._info(name)
        if not self.policy_allows(info, "checkpoint"):
            return None
        view = self.view(info)
        version = self.checkpoint_version(view)
        if version is None:
            return None
        snap = self.snapshot(view, version)
        rows: list[dict[str, Any]] = [
            {"protocol": self.checkpoint_protocol(snap.protocol)},
            {"metaData": snap.metadata},
        ]
        rows += [
            {"add": {k: a.get(k) for k in _CHECKPOINT_SCHEMA.field("add").type.names}} for a in snap.files.values()
        ]
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows, schema=_CHECKPOINT_SCHEMA), buf)
        log = f"{info.location}/_delta_log"
        try:
            self.storage.put(f"{log}/{version:020d}.checkpoint.parquet", buf.getvalue(), if_absent=True)
        except FileExistsError:
            return version
        pointer = {"version": version, "size": len(rows), "numOfAddFiles": len(snap.files)}
        self.storage.put(f"{log}/_last_checkpoint", json.dumps(pointer).encode())
        return version


class CheckpointReaderFeaturesTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CheckpointReaderFeaturesClient


class PublishUploadCacheClient(ResilientClient):
    """cr14b-wrt-publish-upload-cache. WRT-PUBLISH-IDENTICAL (MUST); RFC "Publishing Commits" (publishing
    copies the ratified commit of version v to ``_delta_log/<v>.json``). Bug: to save a GET per commit the
    client keeps in memory the bytes it uploaded as staged commits, keyed by (table log, version), and its
    publisher copies those bytes when it has them, reading the catalog's staged file or inline content
    only for versions it has not staged itself. The cache is filled when a staged file is written, not
    when a proposal is ratified: after a lost race for v (another writer's commit holds v, this client
    rebased to v+1) the cache still holds the losing attempt for v, and publishing writes the rejected
    proposal as ``_delta_log/<v>.json``; the rival's ratified commit is never published. A shallow suite
    publishes after sequential commits of one client (the cache holds exactly the ratified bytes) or with
    a fresh client; a writer that lost a race and then publishes is never checked byte for byte."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._uploads: dict[tuple[str, int], bytes] = {}

    def stage(self, log: str, version: int, content: bytes, previous_uri: str | None) -> str:
        uri = super().stage(log, version, content, previous_uri)
        self._uploads[(log, version)] = content
        return uri

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        log = f"{info.location}/_delta_log"
        done = -1
        for c in self.publish_order(list(view.catalog_commits.values())):
            if c.version not in view.published:
                body = self._uploads.get((log, c.version))
                with contextlib.suppress(FileExistsError):
                    self.storage.put(
                        f"{log}/{self.delta_name(c.version)}",
                        body if body is not None else self.content(c),
                        if_absent=True,
                    )
            done = max(done, c.version)
        if done >= 0:
            self.catalog.mark_published(info.table_id, done)


class PublishUploadCacheTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PublishUploadCacheClient


class DataFilesJoinedClient(ResilientClient):
    """cr14b-wrt-data-files-joined. WRT-DISCOVERY (MUST); RFC "Writer Requirements" / "Table Discovery"
    (the writer writes at the location the catalog resolves). Bug: data file URIs are built with URL-join
    semantics (``urljoin(location, "part-....parquet")``), which replaces the last path segment of a
    location that has no trailing slash: every data file lands in the *parent* folder of the table's
    location (the warehouse folder every table shares), and the add action records that absolute URI, as
    the protocol allows. The commits, the staged files and ``_delta_log`` are at the resolved location, and
    every read returns the right rows (readers follow absolute paths), so a suite that checks where the
    log files are and what reads return never notices; the table's data is outside its location (a
    catalog's credential scoping, VACUUM and a DROP's clean-up of the location all miss it)."""

    def data_uri(self, location: str, path: str) -> str:
        return f"{location.rsplit('/', 1)[0]}/{path}"  # what urljoin does without a trailing slash

    def write_data(self, location: str, rows: Sequence[dict[str, object]]) -> Action:
        buf = io.BytesIO()
        table = pa.Table.from_pylist([{"id": r["id"], "value": r["value"]} for r in rows], schema=_ROWS)
        pq.write_table(table, buf)
        data = buf.getvalue()
        uri = self.data_uri(location, f"part-{uuid.uuid4()}.parquet")
        self.storage.put(uri, data, if_absent=True)
        ids = [int(r["id"]) for r in rows]  # type: ignore[call-overload]
        stats = {"numRecords": len(rows), "minValues": {"id": min(ids)}, "maxValues": {"id": max(ids)}}
        return {
            "add": {
                "path": uri,
                "partitionValues": {},
                "size": len(data),
                "modificationTime": self.now_ms(),
                "dataChange": True,
                "stats": json.dumps(stats, separators=(",", ":")),
            }
        }


class DataFilesJoinedTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = DataFilesJoinedClient


class NumericTxnIdClient(ResilientClient):
    """cr14b-wrt-txnid-numeric. WRT-TXNID (MUST); RFC "Commit Provenance Information" (``commitInfo.txnId``
    stores a unique transaction identifier *string*). Bug: the client takes its transaction ids from its
    transaction manager, which hands out 63-bit random integers (unique, as the rule wants), and writes
    them into commitInfo as they are: a JSON number, not a string. Every commit has a txnId, non-empty and
    unique, so a suite that checks ``commitInfo.get("txnId")`` for presence and uniqueness passes it;
    readers that bind commitInfo to a schema (txnId: string) reject or mangle every commit's
    provenance."""

    def commit_info(self, operation: str, ict: int, *, first: bool = False) -> Action:
        action = super().commit_info(operation, ict, first=first)
        action["commitInfo"]["txnId"] = uuid.uuid4().int >> 65
        return action


class NumericTxnIdTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = NumericTxnIdClient


class CleanupBeforeCutoffClient(ResilientClient):
    """cr14b-wrt-cleanup-checkpoint-before-cutoff. WRT-CLEANUP-STAGED-BELOW, WRT-CLEANUP-COMPACTION
    (SHOULD); RFC "Metadata Cleanup" step 2 (the cut-off checkpoint is the newest checkpoint *not newer
    than* the cut-off commit; one at the cut-off commit is ideal) and step 3 (delete staged commits and
    log compaction files at or below the cut-off checkpoint's version). Bug: the cut-off commit is taken as
    exclusive: the cut-off checkpoint is the newest checkpoint strictly *before* it. With a checkpoint at
    the cut-off commit and none before, cleanup does nothing at all; with an older one, everything
    between the two checkpoints stays (staged commits, the compaction files starting there). It never
    deletes too much, so every MUST of cleanup holds and a suite that only checks what must be kept (or
    cleans up with a cut-off above the newest checkpoint) passes it; the staged commits and compaction
    files that step 3 says to delete stay forever when the cut-off is, as usual, the checkpoint's own
    version."""

    def cleanup_cutoff_checkpoint(self, view: LogView, cutoff: int) -> int | None:
        below = [v for v in view.checkpoints if v < cutoff]
        return max(below) if below else None


class CleanupBeforeCutoffTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CleanupBeforeCutoffClient


class PolicyAfterJobClient(ResilientClient):
    """cr14b-wrt-policy-after-job. WRT-MAINTENANCE-POLICY (MUST); RFC "Maintenance Operations on
    Catalog-managed Tables" (clients consult the catalog *before* running any maintenance job and run none
    its policy forbids; the policies cover metadata cleanup too). Bug: policy lookups are slow, so the
    client runs a maintenance job first and asks the policy afterwards ("optimistic maintenance"), undoing
    the job when the policy forbids it: a checkpoint or log compaction file it wrote is deleted again and
    ``_last_checkpoint`` restored, leaving no trace. Metadata cleanup cannot be undone: under a policy that
    forbids it, the Delta files, checkpoints, staged commits and compaction files below the cut-off
    checkpoint are gone anyway. A suite that tests the policy with a forbidden checkpoint or compaction
    (the usual probe) and compares the log before and after sees nothing; only a cleanup under a policy
    that forbids it shows the deletions."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._job = threading.local()

    def checkpoint(self, name: str) -> int | None:
        info = self._info(name)
        pointer_uri = f"{info.location}/_delta_log/_last_checkpoint"
        try:
            pointer: bytes | None = self.storage.get(pointer_uri)
        except FileNotFoundError:
            pointer = None
        existing = {f.uri for f in self.storage.list(f"{info.location}/_delta_log/")}
        version = self.run_job(lambda: super(PolicyAfterJobClient, self).checkpoint(name))
        if version is None or self.policy_allows(info, "checkpoint"):
            return version
        uri = f"{info.location}/_delta_log/{version:020d}.checkpoint.parquet"
        if uri not in existing:
            self.storage.delete(uri)
        if pointer is None:
            self.storage.delete(pointer_uri)
        else:
            self.storage.put(pointer_uri, pointer)
        return None

    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        info = self._info(name)
        uri = f"{info.location}/_delta_log/{start_version:020d}.{end_version:020d}.compacted.json"
        existed = self.storage.exists(uri)
        if not self.run_job(lambda: super(PolicyAfterJobClient, self).compact_log(name, start_version, end_version)):
            return False
        if self.policy_allows(info, "log_compaction"):
            return True
        if not existed:
            self.storage.delete(uri)
        return False

    def cleanup(self, name: str, cutoff_version: int) -> None:
        info = self._info(name)
        view = self.view(info)
        checkpoint = self.cleanup_cutoff_checkpoint(view, cutoff_version)
        if checkpoint is not None:
            files = [f.uri for f in self.storage.list(f"{info.location}/_delta_log/")]
            for uri in self.cleanup_doomed(view, files, checkpoint, cutoff_version):
                self.storage.delete(uri)
        self.policy_allows(info, "metadata_cleanup")  # asked afterwards: nothing left to undo

    def policy_allows(self, info: TableInfo, op: str) -> bool:
        if getattr(self._job, "running", False):
            return True  # the job runs first; the policy is asked once it is done
        return super().policy_allows(info, op)

    def run_job(self, job: Callable[[], T]) -> T:
        self._job.running = True
        try:
            return job()
        finally:
            self._job.running = False


class PolicyAfterJobTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PolicyAfterJobClient


# ================================================================ reading clients


class CheckpointDistrustClient(ResilientClient):
    """cr14b-rdr-checkpoint-distrust. RDR-LIST-FALLBACK (MUST); RFC "Reading Catalog-managed Tables" and
    "Getting Ratified Commits from the Catalog" (commits the catalog no longer stores are read from what is
    published in ``_delta_log``, checkpoints included). Bug: the reader does not start a snapshot from a
    checkpoint whose version the catalog still returns ("the catalog's commit is authoritative, a checkpoint
    of that version may have been built from another file"): it looks for an older checkpoint, or replays
    from version 0. The catalog still returns a published version when the publisher copied it but its
    publication mark never arrived (the RFC's worked example: 7 is published, the catalog does not know),
    and a checkpoint of it is legal. After a metadata cleanup at that checkpoint the commits below it are
    gone, and the reader cannot build any version of the table although checkpoint + catalog commits
    would. A shallow suite checkpoints and cleans up only tables whose publication was recorded, where
    the catalog no longer returns the checkpoint's version."""

    def start_checkpoint(self, view: LogView, target: int) -> int | None:
        candidates = [v for v in view.checkpoints if v <= target and v not in view.catalog_commits]
        return max(candidates) if candidates else None


class CheckpointDistrustTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CheckpointDistrustClient


class CompactionTimelineClient(ResilientClient):
    """cr14b-rdr-timeline-skips-compacted. RDR-TIME-TRAVEL-ICT (MUST); RFC "Publishing Commits" (note on
    timestamps: time travel resolves versions by in-commit timestamp). Bug: the reader builds its time
    travel index (version -> in-commit timestamp) from the files of the log segment it would replay, and
    where a log compaction file x..y stands in for published commits it does not open those commits
    (that is what the compaction is for): versions x..y are left out of the index, the compaction file
    having no commitInfo. A timestamp at or after the in-commit timestamp of x resolves to the newest
    dated version before it, x - 1 (or nothing), until the first commit after y. Time travel is right on
    every table without compaction files and for timestamps outside compacted ranges, so a suite that
    tests time travel and log compaction separately passes it."""

    def compacted_versions(self, view: LogView) -> set[int]:
        log = f"{view.info.location}/_delta_log/"
        out: set[int] = set()
        for f in self.storage.list(log):
            m = _COMPACTED.fullmatch(f.uri[len(log) :])
            if m is None:
                continue
            covered = range(int(m.group(1)), int(m.group(2)) + 1)
            if all(v in view.published and v not in view.catalog_commits for v in covered):
                out.update(covered)
        return out

    def timeline(self, view: LogView) -> list[tuple[int, int]]:
        skipped = self.compacted_versions(view)
        return [(v, ict) for v, ict in super().timeline(view) if v not in skipped]


class CompactionTimelineTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CompactionTimelineClient


VARIANTS: list[Variant] = [
    variant_of(
        "cr14b-wrt-checkpoint-reader-features",
        CheckpointReaderFeaturesTarget,
        "client",
        "delta-cm-writer",
        ("WRT-PROTOCOL-VERSIONS",),
        "MUST",
        ("maintenance", "checkpoint-content", "long-history"),
    ),
    variant_of(
        "cr14b-wrt-publish-upload-cache",
        PublishUploadCacheTarget,
        "client",
        "delta-cm-writer",
        ("WRT-PUBLISH-IDENTICAL",),
        "MUST",
        ("concurrency", "retries", "caching"),
    ),
    variant_of(
        "cr14b-wrt-data-files-joined",
        DataFilesJoinedTarget,
        "client",
        "delta-cm-writer",
        ("WRT-DISCOVERY",),
        "MUST",
        ("encoding", "paths", "data-files"),
    ),
    variant_of(
        "cr14b-wrt-txnid-numeric",
        NumericTxnIdTarget,
        "client",
        "delta-cm-writer",
        ("WRT-TXNID",),
        "MUST",
        ("encoding", "types"),
    ),
    variant_of(
        "cr14b-wrt-cleanup-checkpoint-before-cutoff",
        CleanupBeforeCutoffTarget,
        "client",
        "delta-cm-writer",
        ("WRT-CLEANUP-STAGED-BELOW", "WRT-CLEANUP-COMPACTION"),
        "SHOULD",
        ("maintenance", "boundaries"),
    ),
    variant_of(
        "cr14b-wrt-policy-after-job",
        PolicyAfterJobTarget,
        "client",
        "delta-cm-writer",
        ("WRT-MAINTENANCE-POLICY",),
        "MUST",
        ("maintenance", "ordering"),
    ),
    variant_of(
        "cr14b-rdr-checkpoint-distrust",
        CheckpointDistrustTarget,
        "client",
        "delta-cm-reader",
        ("RDR-LIST-FALLBACK",),
        "MUST",
        ("maintenance", "lost-answers", "publication"),
    ),
    variant_of(
        "cr14b-rdr-timeline-skips-compacted",
        CompactionTimelineTarget,
        "client",
        "delta-cm-reader",
        ("RDR-TIME-TRAVEL-ICT",),
        "MUST",
        ("maintenance", "time-travel"),
    ),
]
