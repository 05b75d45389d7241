"""Faulty catalogs wrong at one edge of one call's arguments, and nowhere else (issue 28): a listing
bound, a publication mark given again or above the latest, a mark carried by a proposal, a gap
proposal in inline form. The long catalog history draws every such edge each run
(``conformance/checks/delta/catalog/edges.py``); no directed check asks any of these."""

from __future__ import annotations

from typing import Any

from conformance.contract.delta import CommitConflict, GetCommitsResponse, RatifiedCommit
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.faults.base import fault


def _row_versions(catalog: ReferenceCatalog, table_id: str) -> tuple[int, int]:
    """(latest, published) of a table as the catalog stores them, or (-1, -1) for an unknown id."""
    with catalog._store.read() as tx:
        row = tx.table(table_id)
    return (-1, -1) if row is None else (row.latest_version, row.latest_published_version)


@fault(
    "listing-reversed-bounds-swapped",
    "catalog",
    breaks=("CAT-LIST-RANGE",),
    description="A listing whose start is above its end is answered for the swapped range [end, start]"
    " instead of being refused or empty: it lists commits outside what was asked.",
)
class ListingReversedBoundsSwapped(ReferenceCatalog):
    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        if start_version is not None and end_version is not None and start_version > end_version:
            start_version, end_version = end_version, start_version
        return super().get_commits(table_id, start_version, end_version)


@fault(
    "listing-open-start-end-below-mark-ignored",
    "catalog",
    breaks=("CAT-LIST-RANGE",),
    description="A listing with no start whose end is one below the publication mark (nothing stored"
    " there) takes the end for 'no end': it lists the unpublished commits above the range.",
)
class ListingOpenStartEndBelowMarkIgnored(ReferenceCatalog):
    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        open_start = start_version is None and end_version is not None and end_version >= 1
        if open_start and end_version == _row_versions(self, table_id)[1] - 1:
            end_version = None
        return super().get_commits(table_id, start_version, end_version)


@fault(
    "proposal-mark-at-latest-drops-the-proposal",
    "catalog",
    breaks=("CAT-FORGET-PUBLISHED-ONLY",),
    description="A ratified proposal of v carrying the mark v-1 ('everything before me is published') is"
    " taken for 'everything is published': the catalog drops v too, ratified and unpublished.",
)
class ProposalMarkAtLatestDropsTheProposal(ReferenceCatalog):
    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        super()._ratify(table_id, proposal, published, content)
        if published is not None and published == proposal.version - 1:
            with self._store.write() as tx:
                tx.delete_commits(table_id, up_to=proposal.version)


@fault(
    "inline-far-gap-reserves-its-version",
    "catalog",
    breaks=("CAT-RATIFY-SEQUENTIAL",),
    description="An inline proposal three or more versions past the latest is refused, but its version"
    " stays reserved: once the versions before it are ratified, a proposal of it gets a conflict.",
)
class InlineFarGapReservesItsVersion(ReferenceCatalog):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reserved: set[tuple[str, int]] = set()

    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        if (table_id, proposal.version) in self._reserved:
            raise CommitConflict(f"version {proposal.version} is reserved")
        if proposal.inline_content is not None and proposal.version >= _row_versions(self, table_id)[0] + 3:
            self._reserved.add((table_id, proposal.version))
        super()._ratify(table_id, proposal, published, content)


@fault(
    "conflicting-inline-proposal-applies-its-mark",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="An inline proposal of a version already ratified applies the publication mark it carries"
    " (cut to the latest) before it is judged, then gets its conflict: commits nobody published are dropped.",
)
class ConflictingInlineProposalAppliesItsMark(ReferenceCatalog):
    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        mark = kwargs.get("latest_published_version")
        if kwargs.get("inline_content") is not None and isinstance(mark, int) and isinstance(version, int):
            latest = _row_versions(self, table_id)[0]
            if 0 <= version <= latest:
                with self._store.write() as tx:
                    self._publish(tx, table_id, min(mark, latest))
        super().commit(table_id, version, **kwargs)


@fault(
    "mark-above-latest-cut-to-latest",
    "catalog",
    breaks=("CAT-PUBLISH-REPORT-POSSIBLE",),
    description="A publication report above the latest version is cut to the latest instead of refused:"
    " every ratified commit nobody published is dropped.",
)
class MarkAboveLatestCutToLatest(ReferenceCatalog):
    def mark_published(self, table_id: str, version: int) -> None:
        latest = _row_versions(self, table_id)[0]
        super().mark_published(table_id, min(version, latest) if isinstance(version, int) else version)
