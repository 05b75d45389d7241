"""The reference catalog (reference_impl/catalog) as the commit arbiter of the reference Delta
engine's catalog-managed tables, in process.

Each catalog-managed table is staged and registered in one ``ReferenceCatalog`` per engine; the
model's proposals are ratified by its ``commit``, the conflict answer is its ``CommitConflict``
with the latest version, and the winners come from its ``get_commits``. The database is SQLite in
memory: the engine is called from one harness thread (the ``DeltaEngine`` contract), which owns the
connection, and nothing outlives the run.
"""

from __future__ import annotations

import itertools

from conformance.contract.delta import CommitConflict
from conformance.model.delta.catalog import staged_file
from reference_impl.catalog.catalog import ReferenceCatalog, staged_dir_uri

WAREHOUSE = "memory://lakecert-delta-engine"


class CatalogArbiter:
    """One table of a ``ReferenceCatalog``, behind the model's ``Arbiter`` protocol."""

    def __init__(self, catalog: ReferenceCatalog, name: str) -> None:
        self._catalog = catalog
        staging = catalog.create_staging_table()
        # No storage is given to this catalog: version 0 lives in the model, not in files.
        self.table_id = catalog.register_table(name, staging.table_id).table_id
        self._prefix = staged_dir_uri(staging.location)
        self._names = itertools.count(1)

    def staged_name(self, version: int) -> str:
        return staged_file(self._prefix, version, next(self._names))

    def ratify(self, version: int, staged: str) -> int | None:
        try:
            self._catalog.commit(self.table_id, version, staged_uri=staged)
        except CommitConflict as e:
            # Without the latest version in the answer, the client asks for it.
            return e.latest_version if e.latest_version is not None else self.ratified()[0]
        return None

    def ratified(self) -> tuple[int, dict[int, str]]:
        got = self._catalog.get_commits(self.table_id)
        return got.latest_version, {c.version: c.staged_uri for c in got.commits if c.staged_uri is not None}

    def published(self, version: int) -> None:
        self._catalog.mark_published(self.table_id, version)


def open_catalog(cls: type[ReferenceCatalog] = ReferenceCatalog) -> ReferenceCatalog:
    return cls(":memory:", WAREHOUSE)
