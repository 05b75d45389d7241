"""A model world as the history checker sees it: operation outcomes and a read (with its dangling
delete files) of every version."""

from __future__ import annotations

from conformance.history.events import History, ReadRecord, ScheduleStep
from conformance.model.iceberg.invariants import dangling_deletes
from conformance.model.iceberg.world import World


def history_of(world: World, schedule: tuple[ScheduleStep, ...] = ()) -> History:
    """The outcomes so far and a read of every version in the current snapshot log (time travel);
    the set-up's version is the initial state."""
    meta = world.metadata
    store = world.store
    reads = tuple(
        ReadRecord(s.version, tuple(r for _, r in store.live_rows(s)), dangling_deletes(store, s))
        for s in meta.snapshots
    )
    rows = next((r.rows for r in reads if r.version == world.setup_version), ())
    return History(world.setup_version, rows, world.records, reads, schedule)
