"""The whole model state: object store, catalog and writers, plus the operations' outcomes."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from conformance.contract.iceberg import Row
from conformance.history.events import OpRecord
from conformance.model.iceberg.catalog import Catalog
from conformance.model.iceberg.files import DataFile
from conformance.model.iceberg.snapshot import EMPTY, Metadata, Snapshot, SnapshotOp
from conformance.model.iceberg.store import ObjectStore
from conformance.model.iceberg.writer import Writer


@dataclass(frozen=True)
class World:
    store: ObjectStore
    catalog: Catalog
    writers: tuple[Writer, ...]
    records: tuple[OpRecord, ...] = ()  # ended operations, by name
    write_ops: int = 0  # INSERT, UPDATE and DELETE operations started
    compactions: int = 0
    inserted: frozenset[str] = EMPTY  # ids ever inserted: the workload never inserts an id twice
    setup_version: int = 0  # the version the set-up's data files made (0: empty table)
    _hash: list[int] = field(default_factory=list, init=False, compare=False, repr=False)

    def __hash__(self) -> int:
        # Exploration hashes every world many times; the fields are immutable, so compute it once.
        if not self._hash:
            self._hash.append(
                hash((self.store, self.catalog, self.writers, self.records, self.write_ops, self.compactions))
            )
        return self._hash[0]

    @property
    def metadata(self) -> Metadata:
        return self.store.metadata(self.catalog.pointer)

    @property
    def started(self) -> int:
        return self.write_ops + self.compactions

    def with_writer(
        self,
        writer: Writer,
        *,
        store: ObjectStore | None = None,
        records: tuple[OpRecord, ...] | None = None,
        write_ops: int | None = None,
        compactions: int | None = None,
        inserted: frozenset[str] | None = None,
    ) -> World:
        # built directly: exploration calls this for every step, and dataclasses.replace is slow
        writers = self.writers[: writer.index] + (writer,) + self.writers[writer.index + 1 :]
        return World(
            self.store if store is None else store,
            self.catalog,
            writers,
            self.records if records is None else records,
            self.write_ops if write_ops is None else write_ops,
            self.compactions if compactions is None else compactions,
            self.inserted if inserted is None else inserted,
            self.setup_version,
        )

    def with_catalog(self, catalog: Catalog) -> World:
        return World(self.store, catalog, *self._rest())

    def with_store(self, store: ObjectStore) -> World:
        return World(store, self.catalog, *self._rest())

    def _rest(self) -> tuple[tuple[Writer, ...], tuple[OpRecord, ...], int, int, frozenset[str], int]:
        return (self.writers, self.records, self.write_ops, self.compactions, self.inserted, self.setup_version)

    def with_writers(self, count: int) -> World:
        """The same world with at least ``count`` writers."""
        extra = tuple(Writer(i) for i in range(len(self.writers), count))
        return replace(self, writers=self.writers + extra) if extra else self


def initial_world(writers: int, data_files: tuple[tuple[Row, ...], ...] = ()) -> World:
    """An empty table at v0; with ``data_files``, one append at v1 holding them."""
    empty = Snapshot(0, SnapshotOp.APPEND)
    snapshots: tuple[Snapshot, ...] = (empty,)
    files = tuple((f"setup-d{i}", DataFile(f"setup-d{i}", rows)) for i, rows in enumerate(data_files))
    if files:
        names = frozenset(n for n, _ in files)
        snapshots += (Snapshot(1, SnapshotOp.APPEND, names, EMPTY, added_data=names),)
    meta = Metadata(snapshots)
    store = ObjectStore(dict(files)).put((f"metadata-{meta.version}", meta))
    inserted = frozenset(r[0] for _, f in files for r in f.rows)
    writer_list = tuple(Writer(i) for i in range(writers))
    return World(store, Catalog(f"metadata-{meta.version}"), writer_list, inserted=inserted, setup_version=meta.version)


def collect_garbage(world: World) -> World:
    """Drop files nothing can read any more: metadata no one points at and the files of aborted
    or superseded attempts. Invisible to every role, and it lets equal states compare equal."""
    roots = {world.catalog.pointer} | {n for w in world.writers for n in (w.base, w.staged) if n}
    keep = set(roots)
    for name in roots:
        for snap in world.store.metadata(name).snapshots:
            keep |= snap.data_files | snap.delete_files | snap.added_data | snap.added_deletes
    for w in world.writers:
        if w.written is not None:
            keep |= w.written.added_data | w.written.added_deletes
    store = world.store.only(keep)
    return world if store is world.store else world.with_store(store)
