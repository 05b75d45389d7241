"""Faults for the round-9 blind misses (issue 28, session 18): names, drops and locations. Each is
another member of the family a blind variant lives in, not a copy of it: a drop that normalises the
Unicode form of its argument, a resolution that form-decodes the location it answers, and a staging
location handed out again once the staging table that had it was abandoned."""

from __future__ import annotations

import threading
import unicodedata
from urllib.parse import unquote_plus

from conformance.contract.delta import TableInfo
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.faults.base import fault


@fault(
    "drop-name-nfc-folded",
    "catalog",
    breaks=("CAT-DROP",),
    description="Names are registered and resolved as given, but drop_table looks its argument up in NFC:"
    " dropping the decomposed spelling of a name drops the table registered under the precomposed one.",
)
class DropNameNfcFolded(ReferenceCatalog):
    def drop_table(self, name: str) -> None:
        super().drop_table(unicodedata.normalize("NFC", name) if isinstance(name, str) else name)


@fault(
    "resolve-location-form-decoded",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="Resolution passes the table's location through form decoding (unquote_plus), as a web"
    " layer reading it from a query string would: under a warehouse path with '+' or '%' in it, the name"
    " resolves to a location other than the one staging handed out.",
)
class ResolveLocationFormDecoded(ReferenceCatalog):
    def resolve(self, name: str) -> TableInfo:
        info = super().resolve(name)
        return TableInfo(info.table_id, info.name, unquote_plus(info.location), info.catalog_managed)


@fault(
    "staging-abandoned-location-reused",
    "catalog",
    breaks=("CAT-STAGING-UNIQUE",),
    description="A staging table never registered is taken for abandoned: the next creation gets its"
    " location again (under a new table id), with whatever the abandoned creation wrote there.",
)
class StagingAbandonedLocationReused(ReferenceCatalog):
    _reuse_lock = threading.Lock()
    _last_staged: tuple[str, str] | None = None  # (table id, location) of the latest staging table

    def _staging_location(self, table_id: str) -> str:
        with self._reuse_lock:
            location = super()._staging_location(table_id)
            last = self._last_staged
            if last is not None and not self._is_registered(last[0]):
                self._last_staged = None  # the fault: the abandoned table's folder, handed out again, once
                return last[1]
            self._last_staged = (table_id, location)
            return location

    def _is_registered(self, table_id: str) -> bool:
        with self._store.read() as tx:
            row = tx.table(table_id)
        return row is not None and row.name is not None
