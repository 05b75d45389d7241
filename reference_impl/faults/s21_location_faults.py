"""Faults for the round-15 blind misses (issue 28, session 21): see docs/mutation.md, round 15.

Staging locations across drops (CAT-STAGING-UNIQUE, RFC "Creating and Dropping Catalog-managed
Tables"): the RFC's drop is a soft one, the name goes and the files stay, so a location must never be
handed out again, whatever became of its table. Each fault here numbers or picks a location from state
a drop shrinks: a location handed back when its table is dropped, and one numbered from the highest
number among the tables the catalog still holds (read at each creation, or once when the catalog starts).
None shows before a creation that follows a drop; the second only after a drop of the newest table, the
third only when a restart follows it. And a counter of another kind a drop leaves behind: a latest
version kept in the name's record, which a table created under the dropped name inherits (CAT-LIST-LATEST)."""

from __future__ import annotations

import re
import threading

from conformance.contract.delta import StagingTable, TableInfo
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.faults.base import fault

_NUMBERED = re.compile(r"/tables/n(\d+)$")


@fault(
    "dropped-location-recycled",
    "catalog",
    breaks=("CAT-STAGING-UNIQUE",),
    description="A drop hands the dropped table's location back to a pool (as if the drop deleted its files"
    " at once), and the next creation is given it: a new table at a location that still holds the dropped"
    " table's log.",
)
class DroppedLocationRecycled(ReferenceCatalog):
    _pool_lock = threading.Lock()
    _freed: list[str] | None = None  # locations of dropped tables, handed out again first

    def drop_table(self, name: str) -> None:
        row = self.resolve(name) if isinstance(name, str) else None
        super().drop_table(name)
        if row is not None:
            with self._pool_lock:
                self._freed = [*(self._freed or []), row.location]

    def _staging_location(self, table_id: str) -> str:
        with self._pool_lock:
            if self._freed:
                location, self._freed = self._freed[0], self._freed[1:]
                return location  # the fault: a dropped table's location, handed out again
        return super()._staging_location(table_id)


@fault(
    "location-after-highest-live-table",
    "catalog",
    breaks=("CAT-STAGING-UNIQUE",),
    description="Locations are numbered one past the highest number among the tables the catalog holds"
    " (named or still staging), read from its store, so they survive restarts; a dropped table no longer"
    " counts, and once the newest table is dropped the next creation is given its location.",
)
class LocationAfterHighestLiveTable(ReferenceCatalog):
    _number_lock = threading.Lock()

    def create_staging_table(self) -> StagingTable:
        with self._number_lock:  # numbered and inserted as one: concurrent creations do not collide
            return super().create_staging_table()

    def _staging_location(self, table_id: str) -> str:
        with self._store.read() as tx:
            held = tx.conn.execute(
                "SELECT location FROM tables WHERE name IS NOT NULL OR latest_version < 0"
            ).fetchall()
        numbers = [int(m.group(1)) for (location,) in held if (m := _NUMBERED.search(location))]
        return f"{self.warehouse_uri}/tables/n{max(numbers, default=0) + 1:06d}"


@fault(
    "location-counter-seeded-from-live-tables",
    "catalog",
    breaks=("CAT-STAGING-UNIQUE",),
    description="Locations are numbered from a counter kept in memory, seeded when the catalog starts one past"
    " the highest number among the tables it holds (named or still staging): unique while it runs, and across"
    " restarts, until the newest table is dropped before one; the next creation after it is given the dropped"
    " table's location.",
)
class LocationCounterSeededFromLiveTables(ReferenceCatalog):
    _seed_lock = threading.Lock()
    _next: int | None = None

    def create_staging_table(self) -> StagingTable:
        with self._seed_lock:  # numbered and inserted as one: concurrent creations do not collide
            return super().create_staging_table()

    def _staging_location(self, table_id: str) -> str:
        if self._next is None:  # first creation since the catalog started: seeded from its store
            with self._store.read() as tx:
                held = tx.conn.execute(
                    "SELECT location FROM tables WHERE name IS NOT NULL OR latest_version < 0"
                ).fetchall()
            self._next = 1 + max((int(m.group(1)) for (loc,) in held if (m := _NUMBERED.search(loc))), default=0)
        number, self._next = self._next, self._next + 1
        return f"{self.warehouse_uri}/tables/n{number:06d}"


@fault(
    "recreated-name-inherits-latest",
    "catalog",
    breaks=("CAT-LIST-LATEST",),
    description="The latest version is also kept in the name's record, which a drop leaves behind: a table"
    " created under a dropped table's name starts at the dropped table's latest version (its listing says v3"
    " of a table that holds version 0 alone). Names never dropped, or dropped at version 0, are right.",
)
class RecreatedNameInheritsLatest(ReferenceCatalog):
    _names_lock = threading.Lock()
    _left: dict[str, int] | None = None  # name -> latest version of the table last dropped under it

    def drop_table(self, name: str) -> None:
        with self._store.read() as tx:
            row = tx.table_by_name(name) if isinstance(name, str) else None
        super().drop_table(name)
        if row is not None:
            with self._names_lock:
                self._left = {**(self._left or {}), name: row.latest_version}

    def register_table(self, name: str, table_id: str) -> TableInfo:
        info = super().register_table(name, table_id)
        with self._names_lock:
            left = (self._left or {}).get(name, 0)
        if left > 0:
            with self._store.write() as tx:
                tx.raise_latest(table_id, left)  # the fault: the name's record, not the new table, says latest
        return info
