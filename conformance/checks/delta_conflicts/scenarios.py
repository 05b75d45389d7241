"""The Delta checks as data: table configurations, operations and the schedules each check runs.

The initial rows are the Iceberg checks' (``jack`` and ``jill`` share a data file, ``kim`` has its
own), so a DELETE of ``jack`` updates a deletion vector (or rewrites the shared file) while a
DELETE of ``kim`` drops a whole file; ``lee`` and ``max`` are only inserted or merged in.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, replace

from conformance.checks.iceberg.scenarios import (
    ALL_KINDS,
    COMPACT_ALL,
    DATA_FILES,
    DELETE_JACK,
    DELETE_JILL,
    DELETE_LEE,
    DELETE_RED,
    INSERT_LEE,
    INSERT_MAX,
    ROW_KINDS,
    UPDATE_JACK_COLOR,
    UPDATE_JACK_LABEL,
    UPDATE_LEE,
    UPDATE_RED_TO_BLUE,
)
from conformance.contract.delta_engine import DeltaSetup, IsolationLevel
from conformance.contract.iceberg import Operation, OpKind
from conformance.history import AnomalyKind, SerialOrder
from conformance.schedules.enumerate import HeldSchedule, held_schedules, outlasting, pairs, publication_variants

# (deletion vectors, row tracking): row tracking only changes conflict resolution with vectors on
FEATURES = ((False, False), (True, False), (True, True))
# Catalog-managed tables (the catalog ratifies each version), deletion vectors off and on (with row
# tracking, so that a loser rebases deletion vectors onto winners the catalog reports)
CATALOG_FEATURES = ((False, False), (True, True))
FILESYSTEM = tuple(
    DeltaSetup(level, dv, rt, DATA_FILES) for level, (dv, rt) in itertools.product(IsolationLevel, FEATURES)
)
CATALOG_MANAGED = tuple(
    DeltaSetup(level, dv, rt, DATA_FILES, catalog_managed=True)
    for level, (dv, rt) in itertools.product(IsolationLevel, CATALOG_FEATURES)
)
CONFIGS = FILESYSTEM + CATALOG_MANAGED
SERIALIZABLE = tuple(c for c in CONFIGS if c.isolation is IsolationLevel.SERIALIZABLE)
WRITE_SERIALIZABLE = tuple(c for c in CONFIGS if c.isolation is IsolationLevel.WRITE_SERIALIZABLE)


def config_id(setup: DeltaSetup) -> str:
    """E.g. ``writeserializable-dv-rt``: stable test ids that results are keyed on."""
    features = ("-dv" if setup.deletion_vectors else "-nodv") + ("-rt" if setup.row_tracking else "")
    return setup.isolation.value.lower() + features + ("-cm" if setup.catalog_managed else "")


def serial_order(setup: DeltaSetup) -> SerialOrder:
    """What the table's isolation level promises (docs "Isolation levels")."""
    if setup.isolation is IsolationLevel.SERIALIZABLE:
        return SerialOrder.COMMIT
    return SerialOrder.WRITE_SERIALIZABLE


DELETE_KIM = Operation(OpKind.DELETE, "kim")
UPDATE_KIM = Operation(OpKind.UPDATE, "kim", (None, "blue", None))
MERGE_JACK = Operation(OpKind.MERGE, "jack", ("jack", "green", "C"))
MERGE_LEE = Operation(OpKind.MERGE, "lee", ("lee", "red", "A"))
MERGE_LEE_BLUE = Operation(OpKind.MERGE, "lee", ("lee", "blue", "B"))
SET_PROPERTY = Operation(OpKind.METADATA)


@dataclass(frozen=True)
class Scenario:
    """Schedules to run and which anomalies of the checker break ``requirement``; the order the
    reads are judged against comes from each table's isolation level."""

    requirement: str
    schedules: tuple[HeldSchedule, ...]
    kinds: frozenset[AnomalyKind]
    part: tuple[int, int] = (1, 1)  # (k, n): the check runs every n-th schedule from the k-th (slices)

    def order_for(self, setup: DeltaSetup) -> SerialOrder:
        return serial_order(setup)

    def schedules_on(self, setup: DeltaSetup) -> tuple[HeldSchedule, ...]:
        """The schedules a check runs on ``setup`` (with both publication lags on a catalog-managed
        table), of its part only."""
        k, n = self.part
        return tuple(schedules_for(setup, self.schedules))[k - 1 :: n]


# A check holds at most this many schedules of one configuration: the exhaustive scenario is cut
# into parts of its own (``slices``), so that a run split across machines (``--shard``) can balance
# its parts; a part held 432 schedules before, the longest check of a deep budget by far
# (docs/benchmarks.md, "shards").
SLICE_SCHEDULES = 108


def slices(scenario: Scenario, setup: DeltaSetup) -> list[Scenario]:
    """The scenario on ``setup`` as parts of at most ``SLICE_SCHEDULES`` schedules each, interleaved
    (every n-th schedule), so that each part gets its share of every kind of schedule."""
    n = -(-len(scenario.schedules_on(setup)) // SLICE_SCHEDULES)
    return [replace(scenario, part=(k, n)) for k in range(1, n + 1)]


def schedules_for(setup: DeltaSetup, schedules: tuple[HeldSchedule, ...]) -> Iterator[HeldSchedule]:
    """On a catalog-managed table each schedule runs with both publication lags, unless it says
    itself when commits are published."""
    for schedule in schedules:
        if setup.catalog_managed and not schedule.publishes():
            yield from publication_variants(schedule)
        else:
            yield schedule


def race(first: Operation, second: Operation) -> HeldSchedule:
    """Both begin on the same version and are held; ``first`` is released first."""
    return HeldSchedule(((0, first), (1, second)), (("begin", 0), ("begin", 1), ("release", 0), ("release", 1)))


def behind_a_bystander(loser: Operation, winner: Operation, bystander: Operation) -> HeldSchedule:
    """``bystander`` begins on the winner's version, so it commits cleanly on any engine (even one
    that aborts appends racing a rewrite); ``loser`` must check both commits."""
    return outlasting(loser, winner, bystander)


def both_ways(a: Operation, b: Operation) -> tuple[HeldSchedule, ...]:
    return (race(a, b), race(b, a))


def _one_insert(a: Operation, b: Operation) -> bool:
    return not (a.kind is OpKind.INSERT and b.kind is OpKind.INSERT and a.id == b.id)


MENU = (
    UPDATE_JACK_COLOR,
    UPDATE_JACK_LABEL,
    DELETE_JACK,
    DELETE_JILL,
    DELETE_KIM,
    INSERT_LEE,
    MERGE_JACK,
    MERGE_LEE,
    COMPACT_ALL,
    SET_PROPERTY,
)
EVERY_PAIR = tuple(s for a, b in pairs(MENU, _one_insert) for s in held_schedules((a, b)))
RESURRECTION = frozenset({AnomalyKind.RESURRECTED_ROW})

RESURRECTION_PAIRS = Scenario(
    "DELTA-NO-RESURRECTION",
    (
        *both_ways(UPDATE_JACK_COLOR, DELETE_JACK),
        *both_ways(DELETE_JACK, DELETE_JILL),
        race(DELETE_JACK, DELETE_JACK),
        *both_ways(MERGE_JACK, DELETE_JACK),
        *both_ways(DELETE_KIM, UPDATE_KIM),
    ),
    RESURRECTION,
)
DUPLICATE_PAIRS = Scenario(
    "DELTA-NO-DUPLICATE-ROW",
    (
        *both_ways(UPDATE_JACK_COLOR, UPDATE_JACK_LABEL),
        *both_ways(MERGE_JACK, UPDATE_JACK_LABEL),
        race(MERGE_LEE, MERGE_LEE_BLUE),
    ),
    frozenset({AnomalyKind.DUPLICATE_ROW}),
)
COMPACTION_PAIRS = Scenario(
    "DELTA-COMPACTION-PRESERVES-ROWS",
    tuple(
        s for op in (COMPACT_ALL, DELETE_JACK, UPDATE_JACK_COLOR, MERGE_JACK) for s in held_schedules((op, COMPACT_ALL))
    ),
    ROW_KINDS,
)
SERIALIZABLE_PAIRS = Scenario(
    "DELTA-SERIALIZABLE-COMMIT-ORDER",
    (race(INSERT_LEE, MERGE_LEE_BLUE), race(INSERT_LEE, DELETE_LEE), race(INSERT_LEE, UPDATE_LEE)),
    frozenset({AnomalyKind.NOT_COMMIT_ORDER}),
)
WRITE_SERIALIZABLE_PAIRS = Scenario(
    "DELTA-WRITE-SERIALIZABLE-ORDER",
    (race(MERGE_LEE, MERGE_LEE_BLUE), race(MERGE_LEE, DELETE_LEE), race(MERGE_LEE, UPDATE_LEE)),
    frozenset({AnomalyKind.NOT_COMMIT_ORDER, AnomalyKind.DUPLICATE_ROW}),
)
ABORT_PAIRS = Scenario(
    "DELTA-ABORT-LEAVES-NO-TRACE",
    tuple(
        s
        for a, b in ((UPDATE_JACK_COLOR, UPDATE_JACK_LABEL), (UPDATE_JACK_COLOR, DELETE_JACK))
        for s in held_schedules((a, b))
    ),
    frozenset({AnomalyKind.ABORTED_WRITE_VISIBLE, AnomalyKind.ORPHAN_VERSION}),
)
# A non-key predicate (every initial row is red) racing an append of a new red row: under
# Serializable the write must see the appended row (update or delete it too) or abort. Judging the
# appended rows by the ids the write matched instead of by its predicate misses the phantom.
SERIALIZABLE_PHANTOMS = Scenario(
    "DELTA-SERIALIZABLE-COMMIT-ORDER",
    (race(INSERT_LEE, UPDATE_RED_TO_BLUE), race(INSERT_LEE, DELETE_RED)),
    frozenset({AnomalyKind.NOT_COMMIT_ORDER}),
)
# The conflicting winner commits, then a blind INSERT of an unrelated row begun on the winner's
# version (nothing to conflict with, under either level), then the loser: a checker that looks only
# at the newest commit misses the winner's rewrite of the loser's rows.
THREE_WRITERS = Scenario(
    "DELTA-ISOLATION-LEVEL",
    (
        behind_a_bystander(DELETE_JACK, UPDATE_JACK_COLOR, INSERT_MAX),
        behind_a_bystander(UPDATE_JACK_LABEL, UPDATE_JACK_COLOR, INSERT_MAX),
    ),
    ALL_KINDS,
)
VERSION_PAIRS = Scenario(
    "DELTA-ONE-VERSION-PER-COMMIT",
    (race(INSERT_LEE, INSERT_MAX), race(UPDATE_JACK_COLOR, INSERT_LEE), race(DELETE_JILL, UPDATE_JACK_COLOR)),
    frozenset({AnomalyKind.VERSION_REUSED}),
)
EVERY_TWO_OPERATION_SCHEDULE = Scenario("DELTA-ISOLATION-LEVEL", EVERY_PAIR, ALL_KINDS)

# Catalog-managed tables: a loser of the catalog's ratification races winners it has not seen.
# Pairs where the winner removes or rewrites what the loser also changes, so that a loser that
# misses the winner brings a row back, duplicates it or loses the winner's change.
CATALOG_RACES = (
    *both_ways(UPDATE_JACK_COLOR, DELETE_JACK),
    *both_ways(DELETE_JACK, DELETE_JILL),
    *both_ways(UPDATE_JACK_COLOR, UPDATE_JACK_LABEL),
    *both_ways(MERGE_JACK, DELETE_KIM),
    race(MERGE_LEE, MERGE_LEE_BLUE),
)
LOST_OR_BACK = frozenset(
    {AnomalyKind.RESURRECTED_ROW, AnomalyKind.DUPLICATE_ROW, AnomalyKind.LOST_ROW, AnomalyKind.WRONG_VALUE}
)
# The winner is ratified but not yet published when the loser retries: only the catalog knows it.
UNPUBLISHED_WINNERS = Scenario(
    "DELTA-CM-CHECK-RATIFIED-WINNERS", tuple(publication_variants(s)[1] for s in CATALOG_RACES), LOST_OR_BACK
)
# The winner is published before the loser retries: the loser must still check it before it
# proposes again.
PUBLISHED_WINNERS = Scenario(
    "DELTA-CM-CHECK-BEFORE-REPROPOSE", tuple(publication_variants(s)[0] for s in CATALOG_RACES), LOST_OR_BACK
)

# (scenario, the configurations it runs on), for lakecert's own tests of the checks
ALL_SCENARIOS: tuple[tuple[Scenario, tuple[DeltaSetup, ...]], ...] = (
    (RESURRECTION_PAIRS, CONFIGS),
    (DUPLICATE_PAIRS, CONFIGS),
    (COMPACTION_PAIRS, CONFIGS),
    (SERIALIZABLE_PAIRS, SERIALIZABLE),
    (WRITE_SERIALIZABLE_PAIRS, WRITE_SERIALIZABLE),
    (SERIALIZABLE_PHANTOMS, SERIALIZABLE),
    (THREE_WRITERS, CONFIGS),
    (ABORT_PAIRS, CONFIGS),
    (VERSION_PAIRS, CONFIGS),
    (EVERY_TWO_OPERATION_SCHEDULE, CONFIGS),
    (UNPUBLISHED_WINNERS, CATALOG_MANAGED),
    (PUBLISHED_WINNERS, CATALOG_MANAGED),
)
