"""Faulty clients that assume the reference catalog's answer shapes (issue 28, answer shapes).

The reference catalog answers a conflict with the latest version, drops a commit from its listings
once told it is published, and lists ascending. The RFC lets catalogs answer otherwise (a conflict
need not state the latest version; published commits may still be served; no section orders a
listing), and Unity Catalog does. Each client below is right against the reference catalog and wrong
only against such answers, which lakecert's ``ShapedCatalog`` (``conformance/nemesis/shapes.py``)
gives the client bound through it in the writer and reader histories."""

from __future__ import annotations

import sys

from conformance.contract.delta import CommitConflict, FileInfo, GetCommitsResponse, TableInfo
from reference_impl.delta.client import Proposals, ReferenceClient
from reference_impl.delta.snapshot import LogReader, LogSegment, Snapshot, replay
from reference_impl.faults.base import fault

# ====================================================================== writers


@fault(
    "conflict-without-latest-is-own",
    "client",
    ("WRT-LOST-ANSWER-ONCE",),
    "Takes a conflict that states no latest version for the catalog's replay of its own proposal and"
    " reports the version as its own: the rival's commit holds it, its change is lost.",
)
class ConflictWithoutLatestIsOwn(ReferenceClient):
    def _own_after_conflict(self, table: TableInfo, version: int, mine: Proposals) -> bool:
        conflict = sys.exc_info()[1]  # called while the conflict is handled
        if isinstance(conflict, CommitConflict) and conflict.latest_version is None:
            return True
        return super()._own_after_conflict(table, version, mine)


@fault(
    "publish-in-listing-order",
    "client",
    ("WRT-PUBLISH-ORDER",),
    "Publishes the catalog's commits in the order the listing gives them: right for an ascending"
    " listing, newest first (or shuffled) for a catalog that lists so.",
)
class PublishInListingOrder(ReferenceClient):
    def _publish_order(self, versions: list[int]) -> list[int]:
        return versions


# ====================================================================== readers


class _LastListedIsLatestReader(LogReader):
    def _ratified_commits(self, table_id: str, listing: list[FileInfo]) -> GetCommitsResponse:
        """Takes the last commit listed for the latest version, not the listing's latest version."""
        resp = super()._ratified_commits(table_id, listing)
        latest = resp.commits[-1].version if resp.commits else resp.latest_version
        return GetCommitsResponse(resp.commits, latest)


@fault(
    "reader-last-listed-is-latest",
    "client",
    ("RDR-UNPUBLISHED",),
    "Takes the version of the last commit the catalog lists for the table's latest: right for an"
    " ascending listing, an older version for one listed newest first.",
)
class ReaderLastListedIsLatest(ReferenceClient):
    reader_class = _LastListedIsLatestReader


class _ListingOrderReader(LogReader):
    """Replays the catalog's commits in the order the catalog lists them, after the state below them."""

    _listed: tuple[int, ...] = ()

    def _ratified_commits(self, table_id: str, listing: list[FileInfo]) -> GetCommitsResponse:
        resp = super()._ratified_commits(table_id, listing)
        self._listed = tuple(c.version for c in resp.commits)
        return resp

    def snapshot_of(self, seg: LogSegment, version: int | None = None) -> Snapshot:
        target = seg.latest_version if version is None else version
        tail = [v for v in self._listed if v <= target and v in seg.commits]
        if not tail or min(tail) < 1:
            return super().snapshot_of(seg, version)
        base = super().snapshot_of(seg, min(tail) - 1)
        commits = [(v, self.commit_actions(seg.commits[v])) for v in tail]
        protocol, metadata, files, infos = replay(base.state_actions(), commits)
        assert protocol is not None and metadata is not None  # the base's, at least
        return Snapshot(seg.location, target, protocol, metadata, files, {**base.commit_infos, **infos})


@fault(
    "reader-replays-listing-order",
    "client",
    ("RDR-UNPUBLISHED",),
    "Replays the catalog's commits in the order the listing gives them: right for an ascending listing;"
    " newest first, a delete is applied before the append of the file it removes, whose rows come back.",
)
class ReaderReplaysListingOrder(ReferenceClient):
    reader_class = _ListingOrderReader
