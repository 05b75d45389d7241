"""What may happen next in a world: the bounded workload of the spec's model parameters."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.contract.iceberg import Operation, OpKind
from conformance.model.iceberg.model import IcebergModel
from conformance.model.iceberg.world import World
from conformance.model.iceberg.writer import Step


@dataclass(frozen=True)
class Bounds:
    """The spec's state-space limits: writers, write operations, compactions and column values."""

    writers: int = 2
    max_write_ops: int = 3
    max_compactions: int = 0
    ids: tuple[str, ...] = ("jack",)
    colors: tuple[str, ...] = ("red", "blue")
    labels: tuple[str, ...] = ("A",)
    # FizzBee's workload too: UPDATE and DELETE with a predicate on a non-key column (color =, and
    # label = when there are several labels), and an INSERT of an id whose row is deleted
    predicates: bool = False
    reinsert: bool = False
    # FizzBee's constraint: an UPDATE or DELETE starts only when its predicate matches a row of the
    # current snapshot (and an UPDATE by color changes it); off, every predicate may start
    must_match: bool = False


@dataclass(frozen=True)
class Action:
    """Writer ``writer`` starts ``op``, or (``op`` None) takes its next step."""

    writer: int
    op: Operation | None = None


def operations(bounds: Bounds, world: World) -> list[Operation]:
    """Operations a writer may start now, in a fixed order."""
    ops: list[Operation] = []
    if world.write_ops < bounds.max_write_ops:
        insertable = _reinsertable(world, bounds) if bounds.reinsert else set(bounds.ids) - world.inserted
        for i in bounds.ids:
            if i in insertable:
                ops += [Operation(OpKind.INSERT, i, (i, c, lab)) for c in bounds.colors for lab in bounds.labels]
            ops += [Operation(OpKind.UPDATE, i, (None, c, None)) for c in bounds.colors]
            if len(bounds.labels) > 1:
                ops += [Operation(OpKind.UPDATE, i, (None, None, lab)) for lab in bounds.labels]
            ops.append(Operation(OpKind.DELETE, i))
        if bounds.predicates:
            ops += _non_key_operations(bounds)
    if bounds.must_match:
        live = [r for _, r in world.store.live_rows(world.metadata.current)]
        ops = [o for o in ops if o.kind is OpKind.INSERT or any(o.matches(r) for r in live)]
    if world.compactions < bounds.max_compactions and world.metadata.current.data_files:
        ops.append(Operation(OpKind.COMPACT))
    return ops


def _non_key_operations(bounds: Bounds) -> list[Operation]:
    wheres = [(1, c) for c in bounds.colors] + [(2, lab) for lab in bounds.labels]
    ops = [Operation(OpKind.DELETE, where=w) for w in wheres]
    for w in wheres:
        ops += [Operation(OpKind.UPDATE, values=(None, c, None), where=w) for c in bounds.colors if w != (1, c)]
    return ops


def _reinsertable(world: World, bounds: Bounds) -> set[str]:
    """Ids whose row the current snapshot lacks and that no writer is inserting (FizzBee's rule)."""
    present = {r[0] for _, r in world.store.live_rows(world.metadata.current)}
    pending = {w.op.id for w in world.writers if not w.idle and w.op is not None and w.op.kind is OpKind.INSERT}
    return set(bounds.ids) - present - pending


def actions(bounds: Bounds, world: World) -> list[Action]:
    """Every enabled action, writers in order; a world with none is final."""
    out: list[Action] = []
    startable = operations(bounds, world)
    for w in world.writers:
        if w.idle:
            out += [Action(w.index, op) for op in startable]
        else:
            out.append(Action(w.index))
    return out


# Steps that only read the writer's own (immutable) starting snapshot and write files under fresh
# names: they commute with every step of every other writer and change no history.
LOCAL_STEPS = frozenset({Step.READ_DATA_FILES, Step.WRITE_DATA_FILES})


def reduced_actions(bounds: Bounds, world: World) -> list[Action]:
    """``actions`` under partial-order reduction: when some writer has a local step pending, that
    step alone. Every other order of it is equivalent, so the histories reached stay the same."""
    for w in world.writers:
        if w.step in LOCAL_STEPS:
            return [Action(w.index)]
    return actions(bounds, world)


def apply(model: IcebergModel, world: World, action: Action) -> World:
    if action.op is not None:
        return model.start(world, action.writer, action.op)
    return model.advance(world, action.writer)
