"""Faults for the round-16 blind misses (issue 28, session 21): see docs/mutation.md, round 16."""

from __future__ import annotations

from conformance.contract.delta import InvalidRequest, TableInfo
from reference_impl.catalog.catalog import ReferenceCatalog, _check_name, delta_file_uri
from reference_impl.faults.base import fault


@fault(
    "register-releases-own-name-before-refusing",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="Runs a registration as release-then-bind, so that a retry (an id registered again under its own"
    " name) could bind the name again: an id's current name is released in its own transaction first, then the"
    " bind finds the id registered (it has versions) and refuses. A second registration of a named id, under"
    " its own name, a free one or a taken one, is refused yet leaves the table without a name: its readers and"
    " writers no longer resolve it. Registrations of staged ids are as the reference's.",
)
class RegisterReleasesOwnNameBeforeRefusing(ReferenceCatalog):
    def register_table(self, name: str, table_id: str) -> TableInfo:
        with self._store.read() as tx:
            row = tx.table(table_id) if isinstance(table_id, str) else None
        if row is not None and row.name is not None:
            with self._store.write() as tx:
                tx.unregister(table_id)  # the fault: released before the bind finds the id registered
        return super().register_table(name, table_id)  # refused: the id has versions (registered once)


@fault(
    "register-id-unnamed-checked-in-snapshot",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="Registration checks that the table id is unnamed in the read snapshot it takes before checking"
    " storage for version 0, and its write transaction checks again only that the name is free: two"
    " registrations of one staged id under two free names that overlap are both acknowledged, and the later"
    " renames the table (the earlier name resolves to nothing). An id registered already is refused later.",
)
class RegisterIdUnnamedCheckedInSnapshot(ReferenceCatalog):
    def register_table(self, name: str, table_id: str) -> TableInfo:
        _check_name(name)
        self._check_name_length(name)
        with self._store.read() as tx:
            row = tx.table(table_id) if isinstance(table_id, str) else None
        if row is None or row.name is not None or row.latest_version >= 0:
            raise InvalidRequest(f"no unregistered staging table {table_id!r}")
        if self._storage is not None and not self._storage.exists(delta_file_uri(row.location, 0)):
            raise InvalidRequest(f"version 0 of {table_id} is not written")
        with self._store.write() as tx:
            if tx.table_by_name(name) is not None:  # the fault: the id is not checked unnamed again
                raise InvalidRequest(f"name {name!r} is taken")
            tx.register(table_id, name, latest=0, published=0)
            row = tx.table(table_id)
        assert row is not None
        return self._table_info(row)
