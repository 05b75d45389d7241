"""The executable Delta conflict model: log replay, the documented Delta-on-Spark checks, the
corrected preset's row-level resolution, and every faulty preset caught by a Delta scenario."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.checks.delta_conflicts.harness import first_finding
from conformance.checks.delta_conflicts.scenarios import (
    ALL_SCENARIOS,
    CONFIGS,
    DELETE_KIM,
    MERGE_LEE,
    Scenario,
    config_id,
    race,
)
from conformance.checks.iceberg.scenarios import DATA_FILES, DELETE_JACK, DELETE_JILL, INSERT_LEE, UPDATE_JACK_COLOR
from conformance.contract.delta_engine import DeltaSetup, IsolationLevel, NotSupported
from conformance.history import AnomalyKind
from conformance.model.delta import CORRECTED, DELTA_KERNEL_BEFORE_7163, DELTA_RS_1_6, DELTA_SPARK, DeltaModel, Preset
from conformance.schedules.enumerate import publication_variants
from reference_impl.delta_conflicts import DeltaModelEngine
from reference_impl.faults.registry import all_faults

ROW_LEVEL = DeltaSetup(IsolationLevel.WRITE_SERIALIZABLE, True, True, DATA_FILES)
FILE_LEVEL_DV = DeltaSetup(IsolationLevel.WRITE_SERIALIZABLE, True, False, DATA_FILES)


def _anomalies(preset: Preset) -> list[tuple[str, str, str]]:
    engine = DeltaModelEngine(preset)
    found = []
    for n, (scenario, setups) in enumerate(ALL_SCENARIOS):
        for setup in setups:
            try:
                f = first_finding(engine, f"t{n}_{config_id(setup)}", setup, scenario)
            except NotSupported:
                assert setup.catalog_managed and not preset.catalog_managed
                continue
            if f is not None:
                found.append((scenario.requirement, config_id(setup), f.anomaly.kind.value))
    return found


@pytest.mark.parametrize("preset", [CORRECTED, DELTA_SPARK], ids=lambda p: p.name)
def test_documented_and_corrected_checks_pass_every_scenario(preset: Preset) -> None:
    assert _anomalies(preset) == []


@pytest.mark.parametrize("name", sorted(n for n in all_faults() if n.startswith("delta-")))
def test_every_delta_variant_breaks_what_it_names(name: str) -> None:
    fault = all_faults()[name]
    engine = fault.cls(None)
    assert isinstance(engine, DeltaModelEngine)
    assert _first_breaks(engine, set(fault.breaks)) == set(fault.breaks)


def _first_breaks(engine: DeltaModelEngine, named: set[str]) -> set[str]:
    """The named requirements ``engine`` breaks, each scenario of one run until its first finding
    (the full sweep of every scenario is for the presets above)."""
    broken = set()
    for n, (scenario, setups) in enumerate(ALL_SCENARIOS):
        if scenario.requirement not in named:
            continue
        for setup in setups:
            if first_finding(engine, f"t{n}_{config_id(setup)}", setup, scenario) is not None:
                broken.add(scenario.requirement)
                break
    return broken


def test_deletion_vector_update_replaces_the_logical_file() -> None:
    model = DeltaModel(FILE_LEVEL_DV)
    result = model.commit(model.begin("T0", DELETE_JACK))
    assert result.committed and result.version == 2
    snap = model.table.snapshot()
    assert snap.files["setup-0.parquet"].dv == frozenset({0})  # same path, a vector marking jack
    assert {r[0] for r in model.read().rows} == {"jill", "kim"}
    assert {r[0] for r in model.read(1).rows} == {"jack", "jill", "kim"}  # time travel


def test_file_level_checks_abort_disjoint_deletes_in_one_file() -> None:
    model = DeltaModel(FILE_LEVEL_DV, DELTA_SPARK)
    t0, t1 = model.begin("T0", DELETE_JACK), model.begin("T1", DELETE_JILL)
    assert model.commit(t0).committed
    assert not model.commit(t1).committed  # the winner's vector update is an added file


def test_row_level_resolution_merges_the_winners_vector() -> None:
    model = DeltaModel(ROW_LEVEL, CORRECTED)
    t0, t1 = model.begin("T0", DELETE_JACK), model.begin("T1", DELETE_JILL)
    assert model.commit(t0).committed and model.commit(t1).version == 3
    assert {r[0] for r in model.read().rows} == {"kim"}


def test_dropping_the_winners_vector_resurrects_its_row() -> None:
    model = DeltaModel(ROW_LEVEL, replace(CORRECTED, merge_winner_dvs=False))
    t0, t1 = model.begin("T0", DELETE_JACK), model.begin("T1", DELETE_JILL)
    model.commit(t0)
    model.commit(t1)
    assert {r[0] for r in model.read().rows} == {"jack", "kim"}


def test_a_write_that_changes_nothing_commits_nothing() -> None:
    model = DeltaModel(ROW_LEVEL)
    result = model.commit(model.begin("T0", replace(DELETE_KIM, id="nobody")))
    assert not result.committed and model.table.latest == 1


def test_write_serializable_lets_a_blind_append_pass_a_merge() -> None:
    """Documented WriteSerializable: the MERGE skips the concurrent blind append and inserts too."""
    setup = DeltaSetup(IsolationLevel.WRITE_SERIALIZABLE, False, False, DATA_FILES)
    engine = DeltaModelEngine(DELTA_SPARK)
    scenario = Scenario("DELTA-ISOLATION-LEVEL", (race(INSERT_LEE, MERGE_LEE),), frozenset(AnomalyKind))
    assert first_finding(engine, "ws", setup, scenario) is None
    assert [r[0] for r in engine.read("ws_0").rows].count("lee") == 2


def test_configurations_cover_isolation_and_features() -> None:
    assert {(c.isolation, c.deletion_vectors, c.row_tracking, c.catalog_managed) for c in CONFIGS} == {
        (level, dv, rt, False) for level in IsolationLevel for dv, rt in ((False, False), (True, False), (True, True))
    } | {(level, dv, dv, True) for level in IsolationLevel for dv in (False, True)}


def test_a_txn_of_an_application_it_read_is_a_conflict() -> None:
    """Idempotent writers (PROTOCOL.md "Transaction Identifiers"): no operation of the menu writes a
    ``txn`` action, so the check is exercised here directly."""
    from conformance.model.delta import check
    from conformance.model.delta.actions import Commit, Txn

    model = DeltaModel(FILE_LEVEL_DV)
    loser = replace(model.begin("T1", INSERT_LEE), read_app_ids=frozenset({"stream-1"}))
    winner = Commit(2, (Txn("stream-1", 7),), "T0")
    assert str(check(CORRECTED, FILE_LEVEL_DV, model.table, loser, winner)).startswith("ConcurrentTransactionException")
    other = Commit(2, (Txn("stream-2", 1),), "T0")
    assert check(CORRECTED, FILE_LEVEL_DV, model.table, loser, other) == loser


def test_kernel_without_file_checks_resurrects_and_duplicates_rows() -> None:
    """The model predicts what delta-io/delta#7163 reports for Kernel's checker before the fix."""
    broken = {req for req, _, _ in _anomalies(DELTA_KERNEL_BEFORE_7163)}
    assert {"DELTA-NO-RESURRECTION", "DELTA-NO-DUPLICATE-ROW", "DELTA-COMPACTION-PRESERVES-ROWS"} <= broken


def test_delta_rs_preset_duplicates_rows_with_two_optimizes_only() -> None:
    """The delta-rs 1.6 preset gives what real delta-rs did: only concurrent compactions break."""
    # every row twice while no committed write touched it: named by what the read shows
    assert {(req, kind) for req, _, kind in _anomalies(DELTA_RS_1_6)} == {
        ("DELTA-COMPACTION-PRESERVES-ROWS", "duplicate-row"),
        ("DELTA-ISOLATION-LEVEL", "duplicate-row"),
    }


# ---------------------------------------------------------------- catalog-managed tables

CATALOG_MANAGED = DeltaSetup(IsolationLevel.WRITE_SERIALIZABLE, True, True, DATA_FILES, catalog_managed=True)


@pytest.mark.parametrize(("winners_from_catalog", "publish_first"), [(True, False), (False, True), (False, False)])
def test_a_loser_checks_the_winner_the_catalog_ratified(winners_from_catalog: bool, publish_first: bool) -> None:
    """The winner is ratified at v2; unless it is published before the loser retries, only the
    catalog knows it: a loser that lists _delta_log only commits over it and jack comes back."""
    model = DeltaModel(CATALOG_MANAGED, replace(CORRECTED, winners_from_catalog=winners_from_catalog))
    t0, t1 = model.begin("T0", DELETE_JACK), model.begin("T1", UPDATE_JACK_COLOR)
    assert model.commit(t0).version == 2
    assert (model.table.latest, model.table.published) == (2, 1)  # ratified, staged, unpublished
    if publish_first:
        assert model.publish(2) == [2]
    result = model.commit(t1)
    if winners_from_catalog or publish_first:
        assert not result.committed
        assert "jack" not in {r[0] for r in model.read().rows}
    else:
        assert result.version == 3 and "jack" in {r[0] for r in model.read().rows}  # resurrected


def test_a_loser_that_reproposes_unchecked_loses_the_winners_update() -> None:
    model = DeltaModel(CATALOG_MANAGED, replace(CORRECTED, recheck_before_repropose=False))
    t0, t1 = model.begin("T0", UPDATE_JACK_COLOR), model.begin("T1", DELETE_JACK)
    assert model.commit(t0).version == 2 and model.publish(2) == [2]
    assert model.commit(t1).version == 3  # over a published winner it never looked at
    assert model.table.latest == 3 and len(model.table.staged) == 4  # set-up, T0, T1 twice


def test_a_catalog_that_ratifies_twice_gives_two_writes_one_version() -> None:
    model = DeltaModel(CATALOG_MANAGED, replace(CORRECTED, catalog_ratifies_once=False))
    t0, t1 = model.begin("T0", INSERT_LEE), model.begin("T1", DELETE_KIM)
    assert model.commit(t0).version == model.commit(t1).version == 2
    assert "lee" not in {r[0] for r in model.read().rows}  # the catalog serves T1's commit as v2


def test_reference_engine_ratifies_through_the_reference_catalog() -> None:
    """Two writers race on a catalog-managed table of the reference engine: the reference catalog
    ratifies v2, the loser rebases onto it (rows apart) and gets v3; publication is in order."""
    engine = DeltaModelEngine()
    engine.create_table("cm", CATALOG_MANAGED)
    first, second = engine.begin("cm", 0, DELETE_JACK), engine.begin("cm", 1, DELETE_JILL)
    assert first.release().version == 2 and second.release().version == 3
    assert second.publish() == [2, 3] and first.publish() == []
    assert {r[0] for r in engine.read("cm").rows} == {"kim"}
    engine.close()


def test_engines_without_catalog_managed_tables_are_not_applicable() -> None:
    for preset in (DELTA_SPARK, DELTA_RS_1_6):
        with pytest.raises(NotSupported):
            DeltaModelEngine(preset).create_table("cm", CATALOG_MANAGED)


def test_publication_variants_publish_at_once_or_after_the_last_release() -> None:
    prompt, lagging = publication_variants(race(DELETE_JACK, DELETE_JILL))
    assert prompt.events == (("begin", 0), ("begin", 1), ("release", 0), ("publish", 0), ("release", 1), ("publish", 1))
    assert lagging.events == (
        ("begin", 0),
        ("begin", 1),
        ("release", 0),
        ("release", 1),
        ("publish", 0),
        ("publish", 1),
    )
