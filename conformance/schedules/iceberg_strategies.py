"""Hypothesis strategies for Iceberg schedules larger than exhaustive enumeration can cover.

``held_schedules`` generates schedules of held commits for an engine; ``bounds`` and
``model_walks`` generate larger model parameters and random walks through the model's steps.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from conformance.contract.iceberg import Isolation, Mode, Operation, OpKind, Row, TableSetup
from conformance.model.iceberg import Action, Bounds, IcebergModel, World, actions, apply
from conformance.schedules.enumerate import Event, HeldSchedule


def table_setups(data_files: tuple[tuple[Row, ...], ...] = ()) -> st.SearchStrategy[TableSetup]:
    """Any write modes, isolation level and format version, with the given initial data files."""
    return st.builds(
        TableSetup,
        st.sampled_from(list(Mode)),
        st.sampled_from(list(Mode)),
        st.sampled_from(list(Isolation)),
        st.sampled_from([2, 3]),
        st.just(data_files),
    )


def operations(ids: Sequence[str], new_ids: Sequence[str], extended: bool = True) -> st.SearchStrategy[Operation]:
    """UPDATE, DELETE or COMPACT on ``ids``; INSERT of one of ``new_ids``. ``extended`` adds FizzBee's
    behaviours: INSERT again of one of ``ids`` (``held_schedules`` keeps that for after a DELETE of
    it), UPDATE and DELETE by a non-key column."""
    some_id = st.sampled_from(list(ids))
    basic = st.one_of(
        st.builds(
            lambda i, c: Operation(OpKind.UPDATE, i, (None, c, None)), some_id, st.sampled_from(["blue", "green"])
        ),
        st.builds(lambda i, lab: Operation(OpKind.UPDATE, i, (None, None, lab)), some_id, st.sampled_from(["B", "C"])),
        st.builds(lambda i: Operation(OpKind.DELETE, i), some_id),
        st.builds(lambda i: Operation(OpKind.INSERT, i, (i, "red", "A")), st.sampled_from(list(new_ids))),
        st.builds(lambda i: Operation(OpKind.COMPACT, i), st.none() | some_id),
    )
    if not extended:
        return basic
    where = st.tuples(st.just(1), st.sampled_from(["red", "blue"])) | st.tuples(st.just(2), st.sampled_from(["A", "B"]))
    new_color = st.sampled_from(["blue", "green"])
    return st.one_of(
        basic,
        st.builds(lambda w, c: Operation(OpKind.UPDATE, None, (None, c, None), w), where, new_color),
        st.builds(lambda w: Operation(OpKind.DELETE, where=w), where),
        st.builds(lambda i: Operation(OpKind.INSERT, i, (i, "green", "A")), some_id),
    )


@st.composite
def held_schedules(
    draw: st.DrawFn,
    ids: Sequence[str] = ("jack", "jill"),
    new_ids: Sequence[str] = ("lee", "max"),
    max_ops: int = 4,
    writers: int = 3,
    ops_from: st.SearchStrategy[Operation] | None = None,
) -> HeldSchedule:
    """Operations on ``writers`` writers, begun in order, each released at a drawn moment; a writer
    holds one operation at a time and an id is inserted only when none is, or after a DELETE of it
    (a re-insert, which may then race that DELETE). ``ops_from`` replaces the Iceberg
    operations (the Delta checks draw theirs)."""
    drawn = draw(st.lists(ops_from or operations(ids, new_ids), min_size=2, max_size=max_ops))
    ops: list[tuple[int, Operation]] = []
    present = set(ids)  # ids the workload may not insert: a row has them, or an insert is drawn
    for op in drawn:
        if op.kind is OpKind.INSERT and op.id in present:
            op = Operation(OpKind.DELETE, op.id)  # an id is inserted again only after a DELETE of it
        if op.id is not None and op.kind in (OpKind.INSERT, OpKind.DELETE):
            present = present | {op.id} if op.kind is OpKind.INSERT else present - {op.id}
        ops.append((draw(st.integers(0, writers - 1)), op))
    events: list[Event] = []
    held: list[int] = []
    begun = 0
    while begun < len(ops) or held:
        busy = {ops[i][0] for i in held}
        can_begin = begun < len(ops) and ops[begun][0] not in busy
        choice = draw(st.integers(0, len(held) - (0 if can_begin else 1)))
        if can_begin and choice == len(held):
            events.append(("begin", begun))
            held.append(begun)
            begun += 1
        else:
            events.append(("release", held.pop(choice)))
    return HeldSchedule(tuple(ops), tuple(events))


def bounds() -> st.SearchStrategy[Bounds]:
    """Model parameters past the exhaustive ones: up to 3 writers, 5 writes, a compaction, 2 rows,
    with or without non-key predicates and re-inserts."""
    return st.builds(
        Bounds,
        writers=st.integers(2, 3),
        max_write_ops=st.integers(3, 5),
        max_compactions=st.integers(0, 1),
        ids=st.sampled_from([("jack",), ("jack", "jill")]),
        colors=st.just(("red", "blue")),
        labels=st.sampled_from([("A",), ("A", "B")]),
        predicates=st.booleans(),
        reinsert=st.booleans(),
    )


def model_walks(max_steps: int = 80) -> st.SearchStrategy[list[int]]:
    """Choices for ``walk``: which enabled action to take at each step."""
    return st.lists(st.integers(0, 1 << 16), max_size=max_steps)


def walk(model: IcebergModel, limits: Bounds, choices: Sequence[int]) -> tuple[World, list[Action]]:
    """Take the drawn choices, then the first enabled action, until nothing is enabled; the final
    world and the actions taken."""
    world = model.initial(limits.writers)
    taken: list[Action] = []
    while enabled := actions(limits, world):
        pick = choices[len(taken)] % len(enabled) if len(taken) < len(choices) else 0
        taken.append(enabled[pick])
        world = apply(model, world, enabled[pick])
    return world, taken
