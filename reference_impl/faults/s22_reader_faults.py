"""Faults for the round-17 blind misses (issue 28, session 22): see docs/mutation.md, round 17.

Readers that take a multi-part checkpoint for whole from the parts they happen to list
(``test_checkpoints_of_versions_the_catalog_returns_are_started_from`` plants a whole set and one
missing a part), and readers that let a non-commit file in ``_delta_log`` (a version checksum file,
which the RFC lets a writer leave for a version not yet published) decide which commits they ask the
catalog for (``test_reader_includes_unpublished_commits`` plants ``<v>.crc`` at unpublished versions).
"""

from __future__ import annotations

import re
from dataclasses import replace

import pyarrow as pa

from conformance.contract.delta import Catalog, FileInfo, GetCommitsResponse, Storage
from reference_impl.delta.actions import Action
from reference_impl.delta.checkpoint import decode_checkpoint
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.log_paths import log_dir
from reference_impl.delta.snapshot import LogReader, LogSegment, listed_log_files
from reference_impl.faults.base import fault

# PROTOCOL.md "Checkpoints": part i of n, both ten digits.
_PART = re.compile(r"([0-9]{20})\.checkpoint\.([0-9]{10})\.([0-9]{10})\.parquet")


class _MultipartPartsPresentReader(LogReader):
    """Reads multi-part checkpoints besides classic ones (which the reference does not)."""

    first_part_only = False

    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        super().__init__(catalog, storage)
        self._parts: dict[int, list[str]] = {}

    def segment(self, table_id: str, location: str) -> LogSegment:
        seg = super().segment(table_id, location)
        log = log_dir(location) + "/"
        parts: dict[int, list[str]] = {}
        for info in self.storage.list(log):
            m = _PART.fullmatch(info.uri[len(log) :])
            if m and int(m[1]) <= seg.latest_version:
                # The fault: every part listed for a version joins its set, and the set is read as
                # the checkpoint without asking whether parts 1..n are all there (a writer that died
                # between parts leaves a set that is no checkpoint).
                parts.setdefault(int(m[1]), []).append(info.uri)
        self._parts = {v: sorted(uris) for v, uris in parts.items()}
        return replace(seg, checkpoints=sorted(set(seg.checkpoints) | set(parts)))

    def _base_checkpoint(self, seg: LogSegment, target: int) -> tuple[int | None, list[Action]]:
        for cp in reversed([c for c in seg.checkpoints if c <= target]):
            if cp not in self._parts:
                continue
            if any(v not in seg.commits for v in range(cp + 1, target + 1)):
                continue
            try:
                # first_part_only, the fault of _MultipartFirstPartReader: one part taken for the set.
                uris = self._parts[cp][:1] if self.first_part_only else self._parts[cp]
                return cp, [a for uri in uris for a in decode_checkpoint(self.storage.get(uri))]
            except (OSError, ValueError, pa.ArrowException):
                continue
        return super()._base_checkpoint(seg, target)


@fault(
    "multipart-checkpoint-parts-present",
    "client",
    breaks=("RDR-LIST-FALLBACK",),
    description="Reads multi-part checkpoints (<v>.checkpoint.<i>.<n>.parquet) as the union of the parts"
    " listed, without checking that parts 1..n are all there: a set missing a part (its writer died between"
    " parts, so no checkpoint) is started from, and the protocol, metadata or files of the missing part are"
    " lost from every version read through it.",
)
class MultipartCheckpointPartsPresent(ReferenceClient):
    reader_class = _MultipartPartsPresentReader


class _CatalogAboveMaintenanceReader(LogReader):
    def _ratified_commits(self, table_id: str, listing: list[FileInfo]) -> GetCommitsResponse:
        # The fault: "maintenance files are written only for published versions", so the catalog is
        # asked only for the versions above the newest checkpoint, compaction or checksum file. The
        # RFC lets a checksum of v be written before v is published: the unpublished commits up to it
        # are never asked for.
        ends = [
            lf.end_version if lf.end_version is not None else lf.version
            for lf, _ in listed_log_files(listing)
            if lf.kind in ("checkpoint", "compaction", "checksum")
        ]
        mark = max(ends, default=-1)
        return self.catalog.get_commits(table_id, mark + 1 if mark >= 0 else None)


@fault(
    "catalog-asked-above-maintenance-files",
    "client",
    breaks=("RDR-UNPUBLISHED",),
    description="Asks the catalog only for the commits above the newest checkpoint, log compaction or version"
    " checksum file in _delta_log, taking those as written for published versions only: a checksum file of a"
    " ratified, unpublished version (which the RFC allows) hides that commit and the ones below it.",
)
class CatalogAskedAboveMaintenanceFiles(ReferenceClient):
    reader_class = _CatalogAboveMaintenanceReader


class _MultipartFirstPartReader(_MultipartPartsPresentReader):
    first_part_only = True


@fault(
    "multipart-checkpoint-first-part-only",
    "client",
    breaks=("RDR-LIST-FALLBACK", "RDR-GOLDEN-TABLES"),
    description="Recognises multi-part checkpoints (<v>.checkpoint.<i>.<n>.parquet) but reads a set from its"
    " first part alone: the protocol and metadata are there, the files of the other parts are lost from every"
    " version read from the set (the round-17 blind reader kept the last part instead).",
)
class MultipartCheckpointFirstPartOnly(ReferenceClient):
    reader_class = _MultipartFirstPartReader


class _MultipartWhenCommitsGoneReader(_MultipartPartsPresentReader):
    def _base_checkpoint(self, seg: LogSegment, target: int) -> tuple[int | None, list[Action]]:
        # A valid strategy (every commit replayed from v0 while all are there) hiding the fault of
        # _MultipartPartsPresentReader until a metadata cleanup leaves a checkpoint as the only route.
        if all(v in seg.commits for v in range(target + 1)):
            return None, []
        return super()._base_checkpoint(seg, target)


@fault(
    "multipart-checkpoint-parts-present-after-cleanup",
    "client",
    breaks=("RDR-LIST-FALLBACK",),
    description="Replays every commit from v0 while all are there and starts from a checkpoint only once a"
    " metadata cleanup deleted some; then takes a multi-part set missing a part for a checkpoint (the parts"
    " listed read as the whole): a version whose commits are gone is built from part of a set instead of refused.",
)
class MultipartCheckpointPartsPresentAfterCleanup(ReferenceClient):
    reader_class = _MultipartWhenCommitsGoneReader
