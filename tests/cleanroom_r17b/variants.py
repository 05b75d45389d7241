"""Round 17 (b): faulty variants of the resilient clean-room client, writers and readers.

Each target swaps the client side of ``DurableTarget`` for a faulty subclass of ``ResilientClient``;
the catalog stays the correct ``DurableCatalog``. Written from the RFC, the public contract,
docs/certify.md and the clean-room baselines only.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq

from conformance.contract.delta import CatalogTimeout, CommitConflict, TableInfo
from tests.cleanroom.client import (
    _CHECKPOINT,
    _DELTA,
    _ROWS,
    Action,
    CleanClient,
    LogView,
    RetriesExhausted,
    decode,
    encode,
)
from tests.cleanroom_r3.base import DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant, variant_of

# ================================================================ writing clients


class PublishBatchMarksLatestClient(ResilientClient):
    """cr17b-wrt-publish-batch-marks-latest. WRT-PUBLISH-ORDER (MUST); RFC "Publishing Commits"
    (commits must be published in order: version v-1 before version v).

    Bug: to bound the latency of one ``publish`` call, the publisher copies at most ``BATCH`` (32)
    ratified, unpublished commits per call, oldest first ("the next publish catches up"), but then
    reports the publication mark from the view it started with, ``view.latest``, instead of the last
    version it copied. The catalog forgets every commit above the batch although none was copied:
    they are never published, and the next publication writes later versions into ``_delta_log``
    while those versions are missing for good.

    Why a shallow suite misses it: with up to 32 unpublished commits (every short test, and every
    test that publishes after each write) the batch holds them all and the mark is right; only a
    long run of unpublished commits (a long history without publishing) goes past the batch."""

    BATCH: ClassVar[int] = 32

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        pending = self.publish_order(list(view.catalog_commits.values()))
        for c in pending[: self.BATCH]:
            if c.version not in view.published:
                with contextlib.suppress(FileExistsError):
                    target = f"{info.location}/_delta_log/{self.delta_name(c.version)}"
                    self.storage.put(target, self.content(c), if_absent=True)
        if not pending:
            return
        for _ in range(self.max_attempts):
            try:
                self.catalog.mark_published(info.table_id, view.latest)
                return
            except CatalogTimeout:
                continue
        raise RetriesExhausted(f"no answer from the catalog to the publication mark of v{view.latest}")


class PublishBatchMarksLatestTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PublishBatchMarksLatestClient


class IctRetryWinnerPlusOneClient(ResilientClient):
    """cr17b-wrt-ict-retry-winner-plus-one. WRT-ICT-WALLCLOCK (MUST); PROTOCOL.md In-Commit Timestamps
    (an in-commit timestamp is the commit's time, UTC milliseconds since the epoch), made mandatory by
    the RFC's "Writer Requirements for Catalog-managed tables".

    Bug: after losing a version to a rival (a ``CommitConflict``), the writer rebuilds its commit on
    the winner's snapshot and stamps it ``winner's in-commit timestamp + 1`` without reading its clock
    again ("we lost by a hair: the winner's time plus one keeps the order and is close enough"). When
    the winner was stamped well behind the writer's clock (a peer whose clock is an hour slow, a
    commit replayed from elsewhere), the retried commit carries a time an hour in the past.

    Why a shallow suite misses it: first attempts, which are nearly every commit, read the clock
    rightly; a conflict test usually checks the version landed and the order of the timestamps (still
    strictly increasing), not the wall-clock distance of a retried commit behind a slow-clocked rival."""

    def transact(self, name: str, operation: str, build: Any) -> int:
        info = self._info(name)
        log = f"{info.location}/_delta_log"
        retried = False
        for _ in range(self.max_attempts):
            view = self.view(info)
            snap = self.snapshot(view, view.latest)
            version = view.latest + 1
            if retried and snap.in_commit_timestamp is not None:
                ict = snap.in_commit_timestamp + 1
            else:
                ict = self.next_ict(snap.in_commit_timestamp)
            actions: list[Action] = build(info, snap, ict)
            content = encode(self.order_actions(self.commit_info_for(info, version, operation, ict), actions))
            uri = self.stage(log, version, content, None)
            self.before_propose(log, version, content)
            try:
                self.catalog.commit(info.table_id, version, staged_uri=uri, in_commit_timestamp=ict)
            except CommitConflict:
                if not self.on_conflict(info, version, uri, content):
                    retried = True
                    continue
            except CatalogTimeout:
                if not self.on_lost_answer(info, version, uri, content):
                    continue
            self.after_ratified(info, version)
            return version
        raise RetriesExhausted(f"gave up committing to {name} after {self.max_attempts} lost races")


class IctRetryWinnerPlusOneTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = IctRetryWinnerPlusOneClient


class ContentAddressedDataClient(ResilientClient):
    """cr17b-wrt-content-addressed-data. WRT-FILE-ACTIONS-ONCE (MUST); PROTOCOL.md Add File and Remove
    File (a commit holds at most one add action for any one path).

    Bug: data files are named by a hash of their Parquet bytes (``part-<sha256>.parquet``), written
    put-if-absent with an existing file taken as "already uploaded", so that a retried upload of the
    same rows is idempotent. A delete that rewrites two data files whose kept rows are the same (the
    same row appended twice, in two files, each with another row deleted) produces one file name for
    both rewrites, and the commit carries two ``add`` actions for that one path (and the table keeps
    one copy of the row instead of two).

    Why a shallow suite misses it: every file of distinct rows gets a distinct name, so appends and
    deletes of unique ids look right in every respect; only duplicate rows across files, rewritten in
    one delete, collide."""

    def write_data(self, location: str, rows: Any) -> Action:
        buf = io.BytesIO()
        table = pa.Table.from_pylist([{"id": r["id"], "value": r["value"]} for r in rows], schema=_ROWS)
        pq.write_table(table, buf)
        data = buf.getvalue()
        path = f"part-{hashlib.sha256(data).hexdigest()[:32]}.parquet"
        with contextlib.suppress(FileExistsError):  # the same bytes are already there: idempotent
            self.storage.put(f"{location}/{path}", data, if_absent=True)
        ids = [int(r["id"]) for r in rows]
        stats = {"numRecords": len(rows), "minValues": {"id": min(ids)}, "maxValues": {"id": max(ids)}}
        return {
            "add": {
                "path": path,
                "partitionValues": {},
                "size": len(data),
                "modificationTime": self.now_ms(),
                "dataChange": True,
                "stats": json.dumps(stats, separators=(",", ":")),
            }
        }


class ContentAddressedDataTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = ContentAddressedDataClient


class PublishLatin1TextClient(ResilientClient):
    """cr17b-wrt-publish-latin1-text. WRT-PUBLISH-IDENTICAL (MUST); RFC "Publishing Commits"
    (publishing copies the ratified commit to ``_delta_log/<v>.json``; its content is immutable).

    Bug: the publisher moves commits through a text pipeline (it checks each line is a JSON object
    before copying) and decodes the ratified bytes as ISO-8859-1 ("decodes any byte, never fails"),
    then writes the text back with the default UTF-8 encoder. Every non-ASCII character of a commit is
    published as mojibake (``café`` becomes ``cafÃ©``): a commit another writer ratified with a
    non-ASCII string (an operation parameter, a user comment, engine info, a partition value, a
    path) is published with other actions than the ratified ones.

    Why a shallow suite misses it: for ASCII content the round trip is the identity, and this
    client's own commits, like most test commits, are pure ASCII; only a non-ASCII commit published
    by this client shows it."""

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        done = -1
        for c in self.publish_order(list(view.catalog_commits.values())):
            text = self.content(c).decode("latin-1")
            for line in text.split("\n"):
                if line.strip() and not line.lstrip().startswith("{"):
                    raise ValueError(f"commit {c.version} is not newline-delimited JSON")
            if c.version not in view.published:
                with contextlib.suppress(FileExistsError):
                    target = f"{info.location}/_delta_log/{self.delta_name(c.version)}"
                    self.storage.put(target, text.encode("utf-8"), if_absent=True)
            done = max(done, c.version)
        if done >= 0:
            self.catalog.mark_published(info.table_id, done)


class PublishLatin1TextTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = PublishLatin1TextClient


class CompactionReadsPublishedClient(ResilientClient):
    """cr17b-wrt-compaction-reads-published. WRT-COMPACTION-CONTENT (MUST); RFC "Maintenance
    Operations on Catalog-managed Tables" and PROTOCOL.md Log Compaction Files (a log compaction file
    of x..y holds the reconciled actions of exactly the commits x to y), with the RFC's "Reading
    Catalog-managed Tables" (for a version the catalog returns, its commit is authoritative).

    Bug: log compaction may only cover published versions, so the writer builds the compaction from
    the published files ``_delta_log/<v>.json`` it has just checked, rather than from the table's
    commits as a reader resolves them. For a version the catalog still returns (its publication mark
    was lost) whose published file is not the ratified commit (a stale or foreign file, the case the
    RFC makes the catalog authoritative for), the compaction file carries that file's actions instead
    of the ratified commit's.

    Why a shallow suite misses it: on a log whose published files are exact copies of the ratified
    commits (every ordinary publication), both sources hold the same actions; only a compaction over
    a version where the catalog's commit and the published file differ shows it."""

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
        adds: dict[str, Action] = {}
        removes: dict[str, Action] = {}
        other: list[Action] = []
        for v in range(start_version, end_version + 1):
            for a in decode(self.storage.get(view.published[v])):
                if "add" in a:
                    adds[a["add"]["path"]] = a
                    removes.pop(a["add"]["path"], None)
                elif "remove" in a:
                    removes[a["remove"]["path"]] = a
                    adds.pop(a["remove"]["path"], None)
                elif "commitInfo" not in a:
                    other.append(a)
        body = encode([*other, *adds.values(), *removes.values()])
        uri = f"{info.location}/_delta_log/{start_version:020d}.{end_version:020d}.compacted.json"
        with contextlib.suppress(FileExistsError):
            self.storage.put(uri, body, if_absent=True)
        return True


class CompactionReadsPublishedTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CompactionReadsPublishedClient


# ================================================================ reading clients


class ListStopsAtUnknownClient(ResilientClient):
    """cr17b-rdr-list-stops-at-unknown. RDR-LIST-FALLBACK (MUST); RFC "Reading Catalog-managed Tables"
    and "Getting Ratified Commits from the Catalog" (commits the catalog no longer stores are read from
    the published files in ``_delta_log``).

    Bug: the reader walks the sorted listing of ``_delta_log`` and stops at the first entry that is
    neither a Delta file nor a checkpoint, reasoning that the numbered files sort first and only
    ``_last_checkpoint`` and ``_staged_commits/`` come after them. A log compaction file
    (``<x>.<y>.compacted.json`` sorts just before ``<x>.json``) or a version checksum file
    (``<v>.crc`` sorts before ``<v>.json``) ends the walk early: every published commit from there on is
    unseen, and once the catalog has dropped them the read fails (or, from an older checkpoint, misses
    them).

    Why a shallow suite misses it: a log of Delta files and checkpoints only (what this client and most
    tests write) is walked completely; compaction and checksum files are tested for their writers, and
    reads over them usually happen while the catalog still holds the commits."""

    def view(self, info: TableInfo) -> LogView:
        resp = self.catalog.get_commits(info.table_id)
        latest = resp.latest_version
        log = f"{info.location}/_delta_log/"
        published: dict[int, str] = {}
        checkpoints: dict[int, str] = {}
        for f in self.storage.list(log):
            rel = f.uri[len(log) :]
            m = _DELTA.fullmatch(rel)
            c = _CHECKPOINT.fullmatch(rel)
            if m is None and c is None:
                break  # past the numbered files
            if m and int(m.group(1)) <= latest:
                published[int(m.group(1))] = f.uri
            if c and int(c.group(1)) <= latest:
                checkpoints[int(c.group(1))] = f.uri
        commits = {c.version: c for c in resp.commits if c.version <= latest}
        return LogView(info, latest, commits, published, checkpoints, f"{log}_last_checkpoint")


class ListStopsAtUnknownTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = ListStopsAtUnknownClient


_MULTIPART = re.compile(r"([0-9]{20})\.checkpoint\.([0-9]{10})\.([0-9]{10})\.parquet")


class MultipartCheckpointOnePartClient(ResilientClient):
    """cr17b-rdr-multipart-checkpoint-one-part. RDR-LIST-FALLBACK and RDR-GOLDEN-TABLES (MUST); RFC
    "Reading Catalog-managed Tables" (commits the catalog no longer stores are read from what is
    published in ``_delta_log``, checkpoints included) and PROTOCOL.md Checkpoints (a multi-part
    checkpoint ``<v>.checkpoint.<i>.<n>.parquet`` is the union of its n parts).

    Bug: the reader was taught multi-part checkpoints by widening its file-name pattern, but its log
    view still maps a checkpoint version to one file: every part listed overwrites the previous one,
    and the snapshot starts from the last part alone. The protocol, metadata and files held by the
    other parts are lost: a read from such a checkpoint returns only the files of its last part.

    Why a shallow suite misses it: single-file checkpoints, the only kind this client and most writers
    produce, are read rightly; only a table with a multi-part checkpoint (as Delta engines write for
    large tables, or a golden table) shows it."""

    def view(self, info: TableInfo) -> LogView:
        base = super().view(info)
        log = f"{info.location}/_delta_log/"
        for f in self.storage.list(log):
            m = _MULTIPART.fullmatch(f.uri[len(log) :])
            if m and int(m.group(1)) <= base.latest:
                base.checkpoints[int(m.group(1))] = f.uri
        return base


class MultipartCheckpointOnePartTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = MultipartCheckpointOnePartClient


_NUMBERED = re.compile(r"([0-9]{20})\.[^/]+")


class CatalogAboveLogWatermarkClient(ResilientClient):
    """cr17b-rdr-catalog-above-log-watermark. RDR-UNPUBLISHED (MUST); RFC "Reader Requirements for
    Catalog-managed tables" (readers contact the catalog for the unpublished ratified commits) and
    "Maintenance Operations on Catalog-managed Tables" (a version checksum file of v can be created
    before v is published).

    Bug: to keep the catalog's answer small, the reader lists ``_delta_log`` first and asks the catalog
    only for the commits above the log's high-water mark, the highest version any numbered file
    directly in ``_delta_log`` carries (``get_commits(start_version=mark + 1)``). A checksum file
    ``<v>.crc`` written for a ratified but unpublished version v (which the RFC allows) raises the mark
    to v: the reader never asks for commit v, which is neither returned nor published, and the read of
    the table fails.

    Why a shallow suite misses it: Delta files and checkpoints exist only for published versions, so
    with them alone the mark is the newest published version and every unpublished commit is asked
    for; only a checksum file ahead of publication moves the mark past one."""

    def view(self, info: TableInfo) -> LogView:
        log = f"{info.location}/_delta_log/"
        listing = self.storage.list(log)
        mark = -1
        for f in listing:
            m = _NUMBERED.fullmatch(f.uri[len(log) :])
            if m:
                mark = max(mark, int(m.group(1)))
        resp = self.catalog.get_commits(info.table_id, mark + 1 if mark >= 0 else None)
        latest = resp.latest_version
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


class CatalogAboveLogWatermarkTarget(DurableTarget):
    client_cls: ClassVar[type[CleanClient]] = CatalogAboveLogWatermarkClient


# ================================================================ the variants

VARIANTS: list[Variant] = [
    variant_of(
        "cr17b-wrt-publish-batch-marks-latest",
        PublishBatchMarksLatestTarget,
        "client",
        "delta-cm-writer",
        ("WRT-PUBLISH-ORDER",),
        "MUST",
        ("long-history", "publication", "sizes"),
    ),
    variant_of(
        "cr17b-wrt-ict-retry-winner-plus-one",
        IctRetryWinnerPlusOneTarget,
        "client",
        "delta-cm-writer",
        ("WRT-ICT-WALLCLOCK",),
        "MUST",
        ("clock", "several-clients", "conflict-retry"),
    ),
    variant_of(
        "cr17b-wrt-content-addressed-data",
        ContentAddressedDataTarget,
        "client",
        "delta-cm-writer",
        ("WRT-FILE-ACTIONS-ONCE",),
        "MUST",
        ("duplicate-rows", "delete", "idempotent-retries"),
    ),
    variant_of(
        "cr17b-wrt-publish-latin1-text",
        PublishLatin1TextTarget,
        "client",
        "delta-cm-writer",
        ("WRT-PUBLISH-IDENTICAL",),
        "MUST",
        ("encodings", "several-clients", "publication"),
    ),
    variant_of(
        "cr17b-wrt-compaction-reads-published",
        CompactionReadsPublishedTarget,
        "client",
        "delta-cm-writer",
        ("WRT-COMPACTION-CONTENT",),
        "MUST",
        ("maintenance", "catalog-precedence", "lost-answer"),
    ),
    variant_of(
        "cr17b-rdr-list-stops-at-unknown",
        ListStopsAtUnknownTarget,
        "client",
        "delta-cm-reader",
        ("RDR-LIST-FALLBACK",),
        "MUST",
        ("maintenance", "ordering", "log-compaction"),
    ),
    variant_of(
        "cr17b-rdr-multipart-checkpoint-one-part",
        MultipartCheckpointOnePartTarget,
        "client",
        "delta-cm-reader",
        ("RDR-LIST-FALLBACK", "RDR-GOLDEN-TABLES"),
        "MUST",
        ("checkpoints", "sizes", "golden-tables"),
    ),
    variant_of(
        "cr17b-rdr-catalog-above-log-watermark",
        CatalogAboveLogWatermarkTarget,
        "client",
        "delta-cm-reader",
        ("RDR-UNPUBLISHED",),
        "MUST",
        ("maintenance", "checksum-files", "caching"),
    ),
]
