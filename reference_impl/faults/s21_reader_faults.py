"""Faults for the round-16 blind misses (issue 28, session 21): see docs/mutation.md, round 16.

Readers whose bound on the log has a special case at a boundary of the catalog's latest version
(``test_files_above_a_boundary_latest_are_ignored``), and readers that drop files a Delta engine adds
with ``dataChange: false`` in one of the shapes it writes them
(``test_files_added_without_data_change_are_live``, and the golden table ``engine-maintenance-shapes``).
"""

from __future__ import annotations

from conformance.contract.delta import FileInfo, GetCommitsResponse
from reference_impl.delta.actions import Action
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.snapshot import CommitRef, LogReader, LogSegment, listed_log_files
from reference_impl.faults.base import fault


def _restated(action: Action) -> bool:
    """An add that re-states a file without changing rows (checkpoint rows, OPTIMIZE)."""
    return "add" in action and action["add"].get("dataChange") is False


class _LatestFromLogWhenNoneStoredReader(LogReader):
    def _ratified_commits(self, table_id: str, listing: list[FileInfo]) -> GetCommitsResponse:
        resp = super()._ratified_commits(table_id, listing)
        if resp.commits:
            return resp
        # The fault: "the catalog stores no commit, so the log is all published and complete": the
        # newest published file is taken as the latest when it is above the catalog's.
        newest = max((lf.version for lf, _ in listed_log_files(listing) if lf.kind == "delta"), default=-1)
        return GetCommitsResponse([], max(resp.latest_version, newest))


@fault(
    "latest-from-log-when-catalog-stores-none",
    "client",
    breaks=("RDR-IGNORE-ABOVE-LATEST",),
    description="When the catalog returns no commits (every version published, or a table at version 0),"
    " takes the newest published file in _delta_log as the latest version: a stray or foreign commit file"
    " above the catalog's latest is read as the table.",
)
class LatestFromLogWhenCatalogStoresNone(ReferenceClient):
    reader_class = _LatestFromLogWhenNoneStoredReader


class _RewriteAddsSkippedReader(LogReader):
    def commit_actions(self, ref: CommitRef) -> list[Action]:
        # The fault: commits replayed as a change feed reads them: an add with dataChange false is not a
        # change, so an OPTIMIZE commit's new file is dropped while its removes are applied.
        return [a for a in super().commit_actions(ref) if not _restated(a)]


@fault(
    "rewrite-adds-skipped",
    "client",
    breaks=("RDR-LIST-FALLBACK", "RDR-GOLDEN-TABLES"),
    description="Replays commits without their adds that carry dataChange false (checkpoints are read in"
    " full): after an OPTIMIZE commit (removes and one add, all dataChange false) the rewritten rows are"
    " gone from every version replayed through it.",
)
class RewriteAddsSkipped(ReferenceClient):
    reader_class = _RewriteAddsSkippedReader


class _CheckpointRestatedAddsSkippedReader(LogReader):
    def _base_checkpoint(self, seg: LogSegment, target: int) -> tuple[int | None, list[Action]]:
        cp, base = super()._base_checkpoint(seg, target)
        # The fault: checkpoint rows read through the change-feed filter: an engine's checkpoint, whose
        # adds all carry dataChange false, contributes no file.
        return cp, [a for a in base if not _restated(a)]


@fault(
    "checkpoint-restated-adds-skipped",
    "client",
    breaks=("RDR-LIST-FALLBACK", "RDR-GOLDEN-TABLES"),
    description="Reads a checkpoint without its adds that carry dataChange false, as Delta engines write"
    " every add of a checkpoint: a version read from such a checkpoint loses every file added before it.",
)
class CheckpointRestatedAddsSkipped(ReferenceClient):
    reader_class = _CheckpointRestatedAddsSkippedReader
