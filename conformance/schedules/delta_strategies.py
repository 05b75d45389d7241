"""Hypothesis strategies for Delta schedules: table set-ups and the Delta operation menu, drawn
into held schedules by the same generator as the Iceberg ones."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from conformance.contract.delta_engine import DeltaSetup, IsolationLevel
from conformance.contract.iceberg import Operation, OpKind, Row
from conformance.schedules.enumerate import HeldSchedule, publication_variants
from conformance.schedules.iceberg_strategies import held_schedules, operations


def delta_setups(data_files: tuple[tuple[Row, ...], ...] = ()) -> st.SearchStrategy[DeltaSetup]:
    """Any isolation level, deletion vectors on or off, row tracking where vectors are on, a
    filesystem or a catalog-managed table."""
    return st.builds(
        lambda level, dv, rt, cm: DeltaSetup(level, dv, dv and rt, data_files, catalog_managed=cm),
        st.sampled_from(list(IsolationLevel)),
        st.booleans(),
        st.booleans(),
        st.booleans(),
    )


def delta_operations(ids: Sequence[str], new_ids: Sequence[str]) -> st.SearchStrategy[Operation]:
    """The Iceberg menu (UPDATE, DELETE, INSERT, compaction) plus MERGE upserts and a property change."""
    merge = st.builds(
        lambda i, c: Operation(OpKind.MERGE, i, (i, c, "M")),
        st.sampled_from([*ids, *new_ids]),
        st.sampled_from(["blue", "green"]),
    )
    return st.one_of(operations(ids, new_ids, extended=False), merge, st.just(Operation(OpKind.METADATA)))


def delta_held_schedules(
    ids: Sequence[str] = ("jack", "jill", "kim"), new_ids: Sequence[str] = ("lee", "max")
) -> st.SearchStrategy[HeldSchedule]:
    return held_schedules(ids, new_ids, ops_from=delta_operations(ids, new_ids))


def published_when(setup: DeltaSetup, schedule: HeldSchedule, lagging: bool) -> HeldSchedule:
    """On a catalog-managed table, commits published as they are ratified or only at the end."""
    if not setup.catalog_managed:
        return schedule
    return publication_variants(schedule)[1 if lagging else 0]
