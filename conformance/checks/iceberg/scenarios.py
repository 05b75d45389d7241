"""The Iceberg checks as data: table configurations, operations and the schedules each check runs.

Rows: ``jack`` and ``jill`` share a data file (so a merge-on-read DELETE of one writes a delete
file rather than dropping the file), ``kim`` sits in a second file so that compaction has files to
merge; ``lee`` and ``max`` are ids only inserted by the schedules. Every row starts red with label A, so
a predicate on color or label (a non-key column) matches rows in both data files.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace

from conformance.checks.explorer.plan import Explored
from conformance.contract.iceberg import Isolation, Mode, Operation, OpKind, Row, TableSetup
from conformance.history import AnomalyKind, SerialOrder
from conformance.schedules.enumerate import HeldSchedule, held_schedules, outlasting, pairs

DATA_FILES: tuple[tuple[Row, ...], ...] = (
    (("jack", "red", "A"), ("jill", "red", "A")),
    (("kim", "red", "A"),),
)

CONFIGS = tuple(
    TableSetup(update, delete, isolation, version, DATA_FILES)
    for update, delete, isolation, version in itertools.product(Mode, Mode, Isolation, (2, 3))
)
SERIALIZABLE_CONFIGS = tuple(c for c in CONFIGS if c.isolation is Isolation.SERIALIZABLE)

_SHORT = {Mode.COPY_ON_WRITE: "cow", Mode.MERGE_ON_READ: "mor"}


def config_id(setup: TableSetup) -> str:
    """E.g. ``upd-mor-del-cow-snapshot-v2``: stable test ids that results are keyed on."""
    modes = f"upd-{_SHORT[setup.update_mode]}-del-{_SHORT[setup.delete_mode]}"
    return f"{modes}-{setup.isolation.value}-v{setup.format_version}"


UPDATE_JACK_COLOR = Operation(OpKind.UPDATE, "jack", (None, "blue", None))
UPDATE_JACK_LABEL = Operation(OpKind.UPDATE, "jack", (None, None, "B"))
DELETE_JACK = Operation(OpKind.DELETE, "jack")
DELETE_JILL = Operation(OpKind.DELETE, "jill")
INSERT_LEE = Operation(OpKind.INSERT, "lee", ("lee", "red", "A"))
INSERT_MAX = Operation(OpKind.INSERT, "max", ("max", "red", "A"))
UPDATE_LEE = Operation(OpKind.UPDATE, "lee", (None, "blue", None))
DELETE_LEE = Operation(OpKind.DELETE, "lee")
COMPACT_ALL = Operation(OpKind.COMPACT)
# predicates on non-key columns (FizzBee's workload has them; every row starts red, label A)
DELETE_RED = Operation(OpKind.DELETE, where=(1, "red"))
UPDATE_RED_TO_BLUE = Operation(OpKind.UPDATE, values=(None, "blue", None), where=(1, "red"))
UPDATE_LABEL_A_TO_C = Operation(OpKind.UPDATE, values=(None, None, "C"), where=(2, "A"))
REINSERT_JACK = Operation(OpKind.INSERT, "jack", ("jack", "green", "A"))  # after a DELETE of jack

ROW_KINDS = frozenset(
    {AnomalyKind.RESURRECTED_ROW, AnomalyKind.DUPLICATE_ROW, AnomalyKind.LOST_ROW, AnomalyKind.WRONG_VALUE}
)
ALL_KINDS = frozenset(AnomalyKind)


@dataclass(frozen=True)
class Scenario:
    """Schedules to run, and which anomalies of the checker break the rule of the check that runs them.

    The rule itself is named once, by the check's ``req`` mark; ``configs`` are the table
    configurations the check is parametrized with."""

    schedules: tuple[HeldSchedule, ...]
    kinds: frozenset[AnomalyKind]
    order: SerialOrder = SerialOrder.ANY
    configs: tuple[TableSetup, ...] = CONFIGS
    audits_files: bool = False  # needs an engine that audits its delete files (DeleteFileAudit)
    # How many of the leading schedules the core budget runs (None: all; 0: the check is left out
    # of the core budget). A real engine pays seconds per schedule; the full budget runs them all.
    core: int | None = None

    def order_for(self, setup: TableSetup) -> SerialOrder:
        """The same order on every configuration (the check names it)."""
        return self.order

    def schedules_on(self, setup: TableSetup) -> tuple[HeldSchedule, ...]:
        """The same schedules on every configuration."""
        return self.schedules


def in_budget(scenario: Scenario, core: bool) -> Scenario:
    """The scenario as the budget runs it: its leading ``core`` schedules in the core budget."""
    if not core or scenario.core is None:
        return scenario
    return replace(scenario, schedules=scenario.schedules[: scenario.core])


def scenario_budget(core: bool) -> Callable[[Explored], Explored]:
    """The explorer's budget hook (``ScheduleRunner(budget=...)``): a scenario as the budget runs it."""

    def budget(scenario: Explored) -> Explored:
        if isinstance(scenario, Scenario):
            return in_budget(scenario, core)
        return scenario

    return budget


def race(first: Operation, second: Operation) -> HeldSchedule:
    """Both begin on the same snapshot and are held; ``first`` is released first."""
    return HeldSchedule(((0, first), (1, second)), (("begin", 0), ("begin", 1), ("release", 0), ("release", 1)))


def after_delete(write: Operation, delete: Operation, insert: Operation) -> HeldSchedule:
    """``write`` begins and is held; meanwhile ``delete`` commits, then ``insert`` puts the row back;
    ``write`` is released last."""
    return outlasting(write, delete, insert)


def _one_insert(a: Operation, b: Operation) -> bool:
    return not (a.kind is OpKind.INSERT and b.kind is OpKind.INSERT and a.id == b.id)


MENU = (UPDATE_JACK_COLOR, UPDATE_JACK_LABEL, DELETE_JACK, DELETE_JILL, INSERT_LEE, COMPACT_ALL)
EVERY_PAIR = tuple(s for a, b in pairs(MENU, _one_insert) for s in held_schedules((a, b)))

UPDATE_THEN_DELETE = Scenario((race(UPDATE_JACK_COLOR, DELETE_JACK),), frozenset({AnomalyKind.RESURRECTED_ROW}))
DELETE_THEN_UPDATE = Scenario((race(DELETE_JACK, UPDATE_JACK_COLOR),), frozenset({AnomalyKind.RESURRECTED_ROW}))
DELETES_IN_ONE_FILE = Scenario(
    (race(DELETE_JACK, DELETE_JILL), race(DELETE_JACK, DELETE_JACK)),
    frozenset({AnomalyKind.RESURRECTED_ROW}),
)
CONCURRENT_UPDATES = Scenario(
    (race(UPDATE_JACK_COLOR, UPDATE_JACK_LABEL), race(UPDATE_JACK_LABEL, UPDATE_JACK_COLOR)),
    frozenset({AnomalyKind.DUPLICATE_ROW}),
)
DELETE_THEN_COMPACTION = Scenario((race(DELETE_JACK, COMPACT_ALL),), ROW_KINDS)
COMPACTION_THEN_DELETE = Scenario((race(COMPACT_ALL, DELETE_JACK),), ROW_KINDS)
UPDATE_THEN_COMPACTION = Scenario((race(UPDATE_JACK_COLOR, COMPACT_ALL),), ROW_KINDS)
DELETE_MISSES_INSERT = Scenario(
    (race(INSERT_LEE, DELETE_LEE),),
    frozenset({AnomalyKind.NOT_COMMIT_ORDER}),
    SerialOrder.COMMIT,
    SERIALIZABLE_CONFIGS,
)
UPDATE_MISSES_INSERT = Scenario(
    (race(INSERT_LEE, UPDATE_LEE),),
    frozenset({AnomalyKind.NOT_COMMIT_ORDER}),
    SerialOrder.COMMIT,
    SERIALIZABLE_CONFIGS,
)
CONFLICTS_ABORT_CLEANLY = Scenario(
    tuple(
        s
        for a, b in ((UPDATE_JACK_COLOR, UPDATE_JACK_LABEL), (UPDATE_JACK_COLOR, DELETE_JACK))
        for s in held_schedules((a, b))
    ),
    frozenset({AnomalyKind.ABORTED_WRITE_VISIBLE, AnomalyKind.ORPHAN_VERSION}),
)
COMMITS_GET_OWN_VERSIONS = Scenario(
    (
        race(INSERT_LEE, INSERT_MAX),
        race(UPDATE_JACK_COLOR, INSERT_LEE),
        race(DELETE_JILL, UPDATE_JACK_COLOR),
    ),
    frozenset({AnomalyKind.VERSION_REUSED}),
)
EVERY_TWO_OPERATION_SCHEDULE = Scenario(EVERY_PAIR, ALL_KINDS)

# ---------------------------------------------------------------- FizzBee's behaviours (issue #17)
MOR_CONFIGS = tuple(c for c in CONFIGS if Mode.MERGE_ON_READ in (c.update_mode, c.delete_mode))

# The core budget (Spark's default) runs one schedule of the non-key and re-insert checks (four
# more engine runs than without them, docs/benchmarks.md) and leaves the serializable non-key race out.
NON_KEY_PREDICATES = Scenario(
    (
        race(UPDATE_LABEL_A_TO_C, DELETE_JILL),
        race(UPDATE_JACK_LABEL, DELETE_RED),
        race(DELETE_RED, UPDATE_JACK_LABEL),
        race(UPDATE_RED_TO_BLUE, UPDATE_JACK_LABEL),
    ),
    ROW_KINDS,
    core=1,
)
DELETE_BY_COLOR_MISSES_INSERT = Scenario(
    (race(INSERT_LEE, DELETE_RED), race(INSERT_LEE, UPDATE_RED_TO_BLUE)),
    frozenset({AnomalyKind.NOT_COMMIT_ORDER}),
    SerialOrder.COMMIT,
    SERIALIZABLE_CONFIGS,
    core=0,
)
REINSERTED_ROW = Scenario(
    (
        after_delete(UPDATE_JACK_COLOR, DELETE_JACK, REINSERT_JACK),
        after_delete(UPDATE_JACK_LABEL, DELETE_JACK, REINSERT_JACK),
        after_delete(DELETE_JACK, DELETE_JACK, REINSERT_JACK),
    ),
    ROW_KINDS,
    core=1,
)
# A row-level write committed after a compaction or copy-on-write rewrite removed its data file.
DANGLING_DELETES = Scenario(
    (
        race(COMPACT_ALL, DELETE_JACK),
        race(COMPACT_ALL, UPDATE_JACK_COLOR),
        race(UPDATE_JACK_COLOR, DELETE_JILL),
        race(DELETE_JILL, UPDATE_JACK_COLOR),
    ),
    frozenset({AnomalyKind.DANGLING_DELETE}),
    configs=MOR_CONFIGS,
    audits_files=True,
)
