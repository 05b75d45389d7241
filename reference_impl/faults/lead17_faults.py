"""Faulty catalogs for the round-7 blind misses the lead closed himself (issue 28, session 17): one
commit listed twice where a listing runs longer than a page, and an in-commit timestamp stored through
a date-time without a zone."""

from __future__ import annotations

import calendar
import contextlib
import datetime

from conformance.contract.delta import CatalogTimeout, GetCommitsResponse, TableInfo, TableNotFound
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient
from reference_impl.faults.base import fault

_PAGE = 8  # commits per page of the faulty catalog's store


@fault(
    "listing-page-boundary-repeated",
    "catalog",
    breaks=("CAT-LIST-CONTIGUOUS",),
    description="A listing longer than a page of 8 commits serves the commit closing each page again at"
    " the start of the next page (the continuation starts at the last version served, not after it).",
)
class ListingPageBoundaryRepeated(ReferenceCatalog):
    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        resp = super().get_commits(table_id, start_version, end_version)
        commits = sorted(resp.commits, key=lambda c: c.version)
        paged = [
            c for i, c in enumerate(commits) for _ in range(2 if i % _PAGE == _PAGE - 1 and i + 1 < len(commits) else 1)
        ]
        return GetCommitsResponse(paged, resp.latest_version)


def _through_local_datetime(ms: int) -> int:
    """Epoch milliseconds kept as a naive local date-time and read back as if that were UTC."""
    naive = datetime.datetime.fromtimestamp(ms / 1000)  # noqa: DTZ006 - the fault: local wall time, no zone
    return calendar.timegm(naive.timetuple()) * 1000 + ms % 1000


@fault(
    "ict-stored-as-local-datetime",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="The in-commit timestamp of a proposal is stored as a date-time without a zone (local wall"
    " time) and served as if it were UTC: exact on a host in UTC, off by the zone's offset anywhere else.",
)
class IctStoredAsLocalDatetime(ReferenceCatalog):
    def commit(
        self,
        table_id: str,
        version: int,
        *,
        staged_uri: str | None = None,
        inline_content: bytes | None = None,
        in_commit_timestamp: int | None = None,
        latest_published_version: int | None = None,
        staged_content: bytes | None = None,
    ) -> None:
        if in_commit_timestamp is not None:
            in_commit_timestamp = _through_local_datetime(in_commit_timestamp)
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            latest_published_version=latest_published_version,
            staged_content=staged_content,
        )


@fault(
    "register-takes-a-taken-name",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="Registering a staged table under a name another table has drops that table's name first"
    " (create or replace) instead of refusing: the name then resolves to the new table.",
)
class RegisterTakesATakenName(ReferenceCatalog):
    def register_table(self, name: str, table_id: str) -> TableInfo:
        with contextlib.suppress(TableNotFound):
            if self.resolve(name).table_id != table_id:
                self.drop_table(name)
        return super().register_table(name, table_id)


@fault(
    "name-cut-at-64-on-lookup",
    "client",
    breaks=("WRT-DISCOVERY", "RDR-DISCOVERY"),
    description="The client looks a table's name up cut to its first 64 characters (a fixed-width key), but"
    " creates it under the whole name: a longer name finds nothing, or the table named by its prefix.",
)
class NameCutAt64OnLookup(ReferenceClient):
    def _table(self, name: str) -> TableInfo:
        return super()._table(name[:64])


@fault(
    "publish-quiet-on-lost-listing",
    "client",
    breaks=("WRT-LOST-ANSWER-ONCE",),
    description="A publish whose listing's answer is lost returns as if done ('the next publish will catch"
    " up'), having published nothing: its caller believes every ratified commit is in _delta_log.",
)
class PublishQuietOnLostListing(ReferenceClient):
    def publish(self, name: str) -> None:
        with contextlib.suppress(CatalogTimeout):
            super().publish(name)
