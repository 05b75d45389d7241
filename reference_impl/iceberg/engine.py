"""The Iceberg model (conformance/model/iceberg) as an engine implementing ``IcebergEngine``.

Each writer's operation runs through READ_DATA_FILES, WRITE_DATA_FILES and WRITE_METADATA_FILES
at ``begin`` and stops before COMMIT: the catalog boundary. ``release`` commits, and after a
refused swap refreshes, revalidates and retries, as a real Iceberg writer does.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.contract.iceberg import CommitResult, Operation, TableRead, TableSetup
from conformance.model.iceberg import CORRECTED, IcebergModel, Preset, Step, World
from conformance.model.iceberg.invariants import dangling_deletes

PREPARING = frozenset({Step.READ_DATA_FILES, Step.WRITE_DATA_FILES, Step.WRITE_METADATA_FILES})
DONE = frozenset({Step.COMMITTED, Step.ABORTED})


@dataclass
class _Table:
    model: IcebergModel
    world: World


class ModelHeldCommit:
    """A model writer waiting at COMMIT (or already ABORTED while preparing)."""

    def __init__(self, engine: ModelEngine, table: str, writer: int, name: str, start_version: int) -> None:
        self._engine = engine
        self._table = table
        self._writer = writer
        self._name = name
        self._start_version = start_version
        self._result: CommitResult | None = None

    @property
    def start_version(self) -> int:
        return self._start_version

    def release(self) -> CommitResult:
        if self._result is None:
            self._result = self._engine._finish(self._table, self._writer, self._name)
        return self._result


class ModelEngine:
    """The correct reference engine by default (the ``CORRECTED`` preset); other presets give the
    faulty variants."""

    def __init__(self, preset: Preset = CORRECTED) -> None:
        self.preset = preset
        self._tables: dict[str, _Table] = {}

    def create_table(self, name: str, setup: TableSetup) -> TableRead:
        if name in self._tables:
            raise ValueError(f"table {name} exists")
        model = IcebergModel(setup, self.preset)
        self._tables[name] = _Table(model, model.initial(0))
        return self.read(name)

    def begin(self, table: str, writer: int, op: Operation) -> ModelHeldCommit:
        t = self._tables[table]
        world = t.world.with_writers(writer + 1)
        if not world.writers[writer].idle:
            raise RuntimeError(f"writer {writer} already holds an operation")
        world = t.model.start(world, writer, op)
        started = world.writers[writer]
        while world.writers[writer].step in PREPARING:
            world = t.model.advance(world, writer)
        t.world = world
        return ModelHeldCommit(self, table, writer, started.name, started.start_version)

    def _finish(self, table: str, writer: int, name: str) -> CommitResult:
        t = self._tables[table]
        while t.world.writers[writer].step not in DONE:
            t.world = t.model.advance(t.world, writer)
        record = next(r for r in t.world.records if r.name == name)
        return CommitResult(record.committed, record.commit_version, t.world.writers[writer].reason)

    def read(self, table: str, version: int | None = None) -> TableRead:
        world = self._tables[table].world
        meta = world.metadata
        if version is not None and not any(s.version == version for s in meta.snapshots):
            raise ValueError(f"{table} has no version {version}")
        snap = meta.current if version is None else meta.at(version)
        return TableRead(snap.version, tuple(r for _, r in world.store.live_rows(snap)))

    def dangling_deletes(self, table: str, version: int) -> tuple[str, ...]:
        """``DeleteFileAudit``: the model sees its own files."""
        world = self._tables[table].world
        return dangling_deletes(world.store, world.metadata.at(version))

    def close(self) -> None:
        self._tables.clear()
