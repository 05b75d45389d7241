"""The executable model: one table, its catalog and object store, and writers stepping through
START -> READ_DATA_FILES -> WRITE_DATA_FILES -> WRITE_METADATA_FILES -> COMMIT -> COMMITTED | ABORTED.

Every step is a pure function from a ``World`` to the next one, so exploration can branch and
memoise freely. A commit the catalog refuses (another writer swapped first) sends the writer back
to WRITE_METADATA_FILES: refresh, revalidate, rewrite the metadata, commit again.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.contract.iceberg import Operation, OpKind, TableSetup
from conformance.history.events import OpRecord
from conformance.model.iceberg.presets import CORRECTED, Preset
from conformance.model.iceberg.rewrite import Hit, write_files
from conformance.model.iceberg.snapshot import Metadata, Snapshot
from conformance.model.iceberg.validation import validate
from conformance.model.iceberg.world import World, collect_garbage, initial_world
from conformance.model.iceberg.writer import Step, Writer


@dataclass(frozen=True)
class IcebergModel:
    setup: TableSetup
    preset: Preset = CORRECTED

    def initial(self, writers: int) -> World:
        return initial_world(writers, self.setup.data_files)

    # ------------------------------------------------------------------ steps

    def start(self, world: World, index: int, op: Operation) -> World:
        """An idle writer starts ``op``; the current snapshot becomes its starting snapshot."""
        w = world.writers[index]
        assert w.idle, f"writer {index} is busy"
        started = Writer(
            index,
            Step.READ_DATA_FILES,
            op,
            name=f"T{world.started}",
            op_seq=w.op_seq + 1,
            start_version=world.metadata.version,
            base=world.catalog.pointer,
        )
        if op.kind is OpKind.COMPACT:
            return world.with_writer(started, compactions=world.compactions + 1)
        inserted = world.inserted | {op.id} if op.kind is OpKind.INSERT and op.id else world.inserted
        return world.with_writer(started, write_ops=world.write_ops + 1, inserted=inserted)

    def advance(self, world: World, index: int) -> World:
        """The writer's next step."""
        w = world.writers[index]
        if w.step is Step.READ_DATA_FILES:
            return self._read_data_files(world, w)
        if w.step is Step.WRITE_DATA_FILES:
            return self._write_data_files(world, w)
        if w.step is Step.WRITE_METADATA_FILES:
            return self._write_metadata_files(world, w)
        if w.step is Step.COMMIT:
            return self._commit(world, w)
        raise ValueError(f"writer {index} has no next step in {w.step}")

    def _start_snapshot(self, world: World, w: Writer) -> Snapshot:
        return world.store.metadata(w.base).at(w.start_version)

    def _read_data_files(self, world: World, w: Writer) -> World:
        files, hits = self._scan(world, w, self._start_snapshot(world, w))
        return world.with_writer(w.but(step=Step.WRITE_DATA_FILES, files=files, hits=hits))

    def _scan(self, world: World, w: Writer, snapshot: Snapshot) -> tuple[frozenset[str], tuple[Hit, ...]]:
        """The data files the operation rewrites or deletes from, and the rows it matches."""
        op = w.op
        assert op is not None
        live = list(world.store.live_rows(snapshot))
        if op.kind is OpKind.COMPACT:
            files = frozenset(p[0] for p, r in live if op.id is None or r[0] == op.id)
            if op.id is None:
                files |= snapshot.data_files  # fully deleted files go too
            return files, tuple(h for h in live if h[0][0] in files)
        hits = tuple(h for h in live if op.kind is not OpKind.INSERT and op.matches(h[1]))
        return frozenset(p[0] for p, _ in hits), hits

    def _write_data_files(self, world: World, w: Writer) -> World:
        written, objects = write_files(self.setup, w, self._start_snapshot(world, w), world.store)
        store = world.store.put(*objects)
        return world.with_writer(w.but(step=Step.WRITE_METADATA_FILES, written=written), store=store)

    def _write_metadata_files(self, world: World, w: Writer) -> World:
        assert w.op is not None and w.written is not None
        base = world.catalog.pointer  # refresh
        current = world.store.metadata(base)
        if self.preset.validate_before_swap:
            conflict = self._validate(world, w, current)
            if conflict is not None:
                return self._end(world, w, None, conflict)
        new = Metadata((*current.snapshots, self._next_snapshot(world, w, current)))
        staged = f"w{w.index}o{w.op_seq}-v{new.version}"
        store = world.store.put((staged, new))
        return world.with_writer(w.but(step=Step.COMMIT, base=base, staged=staged), store=store)

    def _commit(self, world: World, w: Writer) -> World:
        swapped = world.catalog.swap(w.base, w.staged, compare=self.preset.compare_and_swap)
        if swapped is None:  # another writer committed first: refresh and try again
            return collect_garbage(world.with_writer(w.but(step=Step.WRITE_METADATA_FILES, staged="")))
        after = world.with_catalog(swapped)
        version = after.metadata.version
        late = None if self.preset.validate_before_swap else self._validate(world, w, world.store.metadata(w.base))
        if late is not None:
            return self._end(after, w, None, late)  # the faulty variant: too late, the swap happened
        return self._end(after, w, version)

    def _end(self, world: World, w: Writer, version: int | None, reason: str = "") -> World:
        op = w.op
        assert op is not None
        record = OpRecord(w.name, op.kind, op.id, op.values, w.start_version, version, w.index, op.where)
        step = Step.ABORTED if version is None else Step.COMMITTED
        done = Writer(w.index, step, op_seq=w.op_seq, reason=reason)
        records = tuple(sorted((*world.records, record), key=lambda r: r.name))
        return collect_garbage(world.with_writer(done, records=records))

    # ------------------------------------------------------------------ helpers

    def _validate(self, world: World, w: Writer, current: Metadata) -> str | None:
        assert w.op is not None and w.written is not None
        checks = self.preset.validations(w.op.kind, self.setup.mode(w.op.kind))
        return validate(self.setup, checks, w.op, w.start_version, w.written, current, world.store)

    def _next_snapshot(self, world: World, w: Writer, current: Metadata) -> Snapshot:
        written = w.written
        assert written is not None
        head = current.current
        data = (head.data_files - written.removed_data) | written.added_data
        # A writer that removes data files drops the delete files only they were targets of (as
        # Iceberg does for deletion vectors); the delete files it adds stay as written, so one aimed
        # at a data file that is already gone dangles (invariants.dangling_deletes).
        inherited = head.delete_files - written.removed_deletes
        kept = frozenset(d for d in inherited if world.store.deletes(d).data_files & data)
        deletes = kept | written.added_deletes
        return Snapshot(
            head.version + 1,
            written.operation,
            data,
            deletes,
            added_data=written.added_data,
            removed_data=written.removed_data & head.data_files,
            added_deletes=written.added_deletes,
        )
