"""Exhaustive schedules, in a deterministic order.

Two levels: ``explore`` walks every interleaving of the Iceberg model's writer steps for small
bounds (breadth first, memoising states, so the first counterexample it meets is a shortest one);
``held_schedules`` lists every order in which an engine's held commits can begin and be released.
"""

from __future__ import annotations

import gc
import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from conformance.contract.iceberg import Isolation, Operation
from conformance.history import Anomaly, History, SerialOrder, check
from conformance.model.iceberg import (
    Action,
    Bounds,
    IcebergModel,
    World,
    actions,
    apply,
    describe,
    history_of,
    reduced_actions,
)

# ---------------------------------------------------------------- model steps


@dataclass(frozen=True)
class Counterexample:
    actions: tuple[Action, ...]
    history: History  # with the schedule that produced it
    anomalies: tuple[Anomaly, ...]


@dataclass(frozen=True)
class Exploration:
    states: int  # distinct worlds reached
    final_states: int  # worlds where nothing more can happen
    # distinct complete schedules (paths to a final world), counted, not enumerated; None when the
    # exploration stopped at its first counterexample (counting them costs a tenth of that time)
    schedules: int | None
    histories: int  # distinct histories judged
    seconds: float
    counterexample: Counterexample | None


def serial_order_for(model: IcebergModel) -> SerialOrder:
    return SerialOrder.COMMIT if model.setup.isolation is Isolation.SERIALIZABLE else SerialOrder.ANY


def explore(
    model: IcebergModel,
    bounds: Bounds,
    *,
    stop_at_first: bool = False,
    reduce: bool = True,
    judge: Callable[[History], list[Anomaly]] | None = None,
) -> Exploration:
    """Every schedule of ``model`` within ``bounds``, each history judged by the checker.

    ``reduce`` applies partial-order reduction (``reduced_actions``): schedules that differ only in
    when a writer's local steps ran are walked once; ``reduce=False`` walks every interleaving.
    """
    # The worlds explored are immutable and acyclic: the cyclic garbage collector only rescans the
    # growing memo tables, a third of the time to the first counterexample. Off while exploring.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _explore(model, bounds, stop_at_first, reduce, judge)
    finally:
        if collecting:
            gc.enable()


def _explore(
    model: IcebergModel,
    bounds: Bounds,
    stop_at_first: bool,
    reduce: bool,
    judge: Callable[[History], list[Anomaly]] | None,
) -> Exploration:
    began = time.perf_counter()
    how = serial_order_for(model)
    judge = judge or (lambda h: check(h, how))
    root = model.initial(bounds.writers)
    parent: dict[World, tuple[World, Action] | None] = {root: None}
    successors: dict[World, list[World]] = {}
    verdicts: dict[History, list[Anomaly]] = {}
    found: World | None = None

    def violates(world: World, link: tuple[World, Action]) -> bool:
        if not _changed(world, link):
            return False
        history = history_of(world)
        if history not in verdicts:
            verdicts[history] = judge(history)
        return bool(verdicts[history])

    # Worlds are judged as they are first reached, in the order the next level will be expanded
    # in: the first counterexample is the same as judging them when expanded, one level sooner.
    frontier = [root]
    while frontier and not (stop_at_first and found is not None):
        following: list[World] = []
        for world in frontier:
            enabled = reduced_actions(bounds, world) if reduce else actions(bounds, world)
            nxt = [apply(model, world, a) for a in enabled]
            successors[world] = nxt
            for a, t in zip(enabled, nxt, strict=True):
                if t in parent:
                    continue
                parent[t] = link = (world, a)
                following.append(t)
                if found is None and violates(t, link):
                    found = t
                    if stop_at_first:
                        break
            if stop_at_first and found is not None:
                break
        frontier = following
    counterexample = None if found is None else _counterexample(model, parent, found, judge)
    finals = sum(1 for s in successors.values() if not s)
    return Exploration(
        len(parent),
        finals,
        None if stop_at_first and found is not None else _count_paths(root, successors),
        len(verdicts),
        time.perf_counter() - began,
        counterexample,
    )


def _changed(world: World, link: tuple[World, Action] | None) -> bool:
    """Only a commit or an abort changes the history; other steps need no new judgement."""
    if link is None:
        return False
    before = link[0]
    return before.records != world.records or before.catalog != world.catalog


def _path(parent: dict[World, tuple[World, Action] | None], world: World) -> list[tuple[World, Action, World]]:
    steps: list[tuple[World, Action, World]] = []
    link = parent[world]
    while link is not None:
        before, action = link
        steps.append((before, action, world))
        world, link = before, parent[before]
    return steps[::-1]


def _counterexample(
    model: IcebergModel,
    parent: dict[World, tuple[World, Action] | None],
    world: World,
    judge: Callable[[History], list[Anomaly]],
) -> Counterexample:
    path = _path(parent, world)
    schedule = tuple(describe(b, a, w) for b, a, w in path)
    history = history_of(world, schedule)
    return Counterexample(tuple(a for _, a, _ in path), history, tuple(judge(history)))


def _count_paths(root: World, successors: dict[World, list[World]]) -> int:
    """Complete schedules from ``root``.
    Schedules are a few dozen steps deep, well inside the recursion limit."""
    memo: dict[World, int] = {}

    def count(world: World) -> int:
        if world not in memo:
            memo[world] = sum(count(t) for t in successors.get(world, [])) or 1
        return memo[world]

    return count(root)


# ---------------------------------------------------------------- held commits of an engine

# ("begin", i): operation i starts; ("release", i): it commits; ("publish", i): its ratified commit
# is published (catalog-managed Delta tables; an engine that publishes as it commits ignores it)
Event = tuple[Literal["begin", "release", "publish"], int]


@dataclass(frozen=True)
class HeldSchedule:
    """Operations (writer, operation), named T0, T1... in order, and when each begins and is released."""

    ops: tuple[tuple[int, Operation], ...]
    events: tuple[Event, ...]

    def describe(self) -> list[str]:
        out = []
        for what, i in self.events:
            writer, op = self.ops[i]
            if what == "begin":
                out.append(f"W{writer} begins T{i}: {op.describe()} and is held before its commit")
            elif what == "publish":
                out.append(f"publish T{i}'s ratified commit (and any before it) into _delta_log")
            else:
                out.append(f"release T{i}'s commit")
        return out

    def publishes(self) -> bool:
        return any(what == "publish" for what, _ in self.events)


def publication_variants(schedule: HeldSchedule) -> tuple[HeldSchedule, HeldSchedule]:
    """The two publication lags of a catalog-managed table: each commit published as soon as it is
    ratified (before any later writer retries or begins), or every commit published only after
    the last release (later writers must learn the winners from the catalog)."""
    prompt: list[Event] = []
    for what, i in schedule.events:
        prompt.append((what, i))
        if what == "release":
            prompt.append(("publish", i))
    lagging = (*schedule.events, *(("publish", i) for what, i in schedule.events if what == "release"))
    return HeldSchedule(schedule.ops, tuple(prompt)), HeldSchedule(schedule.ops, lagging)


def interleavings(n: int) -> Iterator[tuple[Event, ...]]:
    """Every order of begin/release events of ``n`` operations, each begun before its release.

    Begins with no release between them start from the same version, so only one order of such a
    run is kept (ascending): the rest are the same schedule.
    """

    def extend(
        prefix: tuple[Event, ...], begun: frozenset[int], released: frozenset[int]
    ) -> Iterator[tuple[Event, ...]]:
        if len(released) == n:
            yield prefix
            return
        last_begin = prefix[-1][1] if prefix and prefix[-1][0] == "begin" else -1
        for i in range(n):
            if i not in begun and i > last_begin:
                yield from extend((*prefix, ("begin", i)), begun | {i}, released)
        for i in range(n):
            if i in begun and i not in released:
                yield from extend((*prefix, ("release", i)), begun, released | {i})

    yield from extend((), frozenset(), frozenset())


def outlasting(held: Operation, winner: Operation, later: Operation) -> HeldSchedule:
    """``held`` and ``winner`` begin on one version and ``winner`` commits; ``later`` then begins on
    the winner's version and commits; ``held`` is released last, so its validation must look at
    both commits since its snapshot, not only the newest (both formats use this shape)."""
    events: tuple[Event, ...] = (
        ("begin", 0),
        ("begin", 1),
        ("release", 1),
        ("begin", 2),
        ("release", 2),
        ("release", 0),
    )
    return HeldSchedule(((0, held), (1, winner), (2, later)), events)


def held_schedules(ops: Sequence[Operation]) -> list[HeldSchedule]:
    """Every interleaving of ``ops``, each on its own writer."""
    planned = tuple(enumerate(ops))
    return [HeldSchedule(planned, events) for events in interleavings(len(ops))]


def pairs(
    menu: Sequence[Operation], allowed: Callable[[Operation, Operation], bool]
) -> list[tuple[Operation, Operation]]:
    """Unordered pairs from ``menu`` (with repetition) that ``allowed`` accepts; interleavings cover
    both orders, so (a, b) and (b, a) are the same schedules."""
    return [(a, b) for a, b in itertools.combinations_with_replacement(menu, 2) if allowed(a, b)]
