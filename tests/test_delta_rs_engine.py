"""delta-rs (deltalake) as the Delta engine of profile delta-row-conflicts: writers in their own
processes on moto's S3, each commit PUT held by the recording proxy until the schedule releases it.

One in-process engine shows the hold really makes writers race for a version; one `lakecert run`
of the isolation-level checks shows the target end to end. Both stay in one xdist worker so that
their moto servers and delta-rs processes do not compete. The full matrix is recorded in
docs/compatibility.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from importlib.metadata import version as dist_version
from pathlib import Path

import pytest

from conformance.adapters.delta_rs_engine import DeltaRsEngine
from conformance.checks.delta_conflicts.scenarios import CONFIGS
from conformance.checks.iceberg.scenarios import DELETE_JACK, DELETE_RED, INSERT_LEE, INSERT_MAX, UPDATE_JACK_COLOR
from conformance.contract.delta_engine import NotSupported
from tests.helpers import lakecert, results

pytestmark = [pytest.mark.xdist_group("delta-rs"), pytest.mark.slow]
NO_DV = CONFIGS[0]  # Serializable, deletion vectors off


@pytest.fixture(scope="module")
def engine() -> Iterator[DeltaRsEngine]:
    built = DeltaRsEngine(hold_timeout_s=300)
    yield built
    built.close()


def test_held_writer_loses_its_version_and_rebases(engine: DeltaRsEngine) -> None:
    start = engine.create_table("appends", NO_DV).version
    first, second = engine.begin("appends", 0, INSERT_LEE), engine.begin("appends", 1, INSERT_MAX)
    assert first.start_version == second.start_version == start
    assert first.release().version == start + 1
    assert second.release().version == start + 2  # blind appends never conflict: it rebased
    tried = [(r.commit_version, r.status, r.conditional) for r in engine.proxy.events("writer1") if r.commit_version]
    assert tried == [(start + 1, 412, True), (start + 2, 200, True)]  # refused by the store, then the next version
    assert {r[0] for r in engine.read("appends").rows} >= {"lee", "max"}


def test_conflict_is_an_abort_with_no_version(engine: DeltaRsEngine) -> None:
    start = engine.create_table("conflict", NO_DV).version
    update, delete = engine.begin("conflict", 0, UPDATE_JACK_COLOR), engine.begin("conflict", 1, DELETE_JACK)
    assert update.release().committed
    outcome = delete.release()
    assert not outcome.committed and outcome.version is None
    assert engine.read("conflict").version == start + 1


def test_a_non_key_predicate_deletes_the_rows_it_matches(engine: DeltaRsEngine) -> None:
    """``DELETE WHERE color = 'red'`` after jack turned blue: only jack is left (an id predicate
    rendered in its place would delete nothing)."""
    engine.create_table("nonkey", NO_DV)
    assert engine.begin("nonkey", 0, UPDATE_JACK_COLOR).release().committed
    assert engine.begin("nonkey", 0, DELETE_RED).release().committed
    assert engine.read("nonkey").rows == (("jack", "blue", "A"),)


def test_deletion_vector_tables_are_not_supported(engine: DeltaRsEngine) -> None:
    with pytest.raises(NotSupported):
        engine.create_table("dv", next(c for c in CONFIGS if c.deletion_vectors))


def test_catalog_managed_tables_are_not_supported(engine: DeltaRsEngine) -> None:
    """delta-rs 1.6 refuses the catalogManaged feature (the DELTA_RS_1_6 preset says so): NOT_APPLICABLE."""
    with pytest.raises(NotSupported):
        engine.create_table("cm", next(c for c in CONFIGS if c.catalog_managed and not c.deletion_vectors))


OPTIMIZE_CHECK = "checks/delta_conflicts/test_optimize.py::test_optimize_racing_row_writes[writeserializable-nodv]"
EXHAUSTIVE_CHECK = "checks/delta_conflicts/test_schedules.py::test_every_two_operation_schedule"


def _config(test: str) -> str:
    """The table configuration of a check id, without the part of a check cut into parts (``-2of4``)."""
    return re.sub(r"-\d+of\d+$", "", test.split("[")[1].rstrip("]"))


def test_profile_runs_end_to_end_and_finds_the_duplicating_optimizes(tmp_path: Path) -> None:
    """The isolation-level checks run (tables with deletion vectors, and catalog-managed tables, are
    NOT_APPLICABLE), and the compaction check fails on its first schedule: two OPTIMIZEs from one
    version both commit and every row is there twice (docs/reproducers/delta_rs_concurrent_optimize.py
    shows it without lakecert). With the model's plan (preset delta-rs-1.6) the exhaustive check of
    every configuration comes almost free: predicted to fail, it is judged on the run of the two
    OPTIMIZEs (one more run for the configuration it has not met yet), its other schedules dropped;
    the configurations delta-rs refuses are refused like the others."""
    out = tmp_path / "run"
    config = tmp_path / "lakecert.yaml"
    config.write_text("targets: {delta-rs-engine: {options: {exhaustive: true}}}\n")
    proc = lakecert(
        "run", "--target", "delta-rs-engine", "--profile", "delta-row-conflicts", "--out", str(out),
        "--config", str(config), "--select", "checks/delta_conflicts/test_isolation_levels.py",
        "--select", OPTIMIZE_CHECK, "--select", EXHAUSTIVE_CHECK,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    res = results(out)
    assert res["run_info"]["target_version"] == f"deltalake {dist_version('deltalake')}"
    status = {r["test"]: r["status"] for r in res["results"]}
    for test, st in status.items():
        setup = _config(test)
        refused = "-dv" in setup or setup.endswith("-cm")
        assert st == "NOT_APPLICABLE" if refused else st in ("PASS", "FAIL"), (test, st)
    optimize = next(r for r in res["results"] if r["test"] == OPTIMIZE_CHECK)
    assert optimize["status"] == "FAIL" and optimize["violated"] == ["DELTA-COMPACTION-PRESERVES-ROWS"]
    notes = json.loads((out / optimize["reproducer"]).read_text())["transcript"]["notes"]["schedule"]
    assert [o["op"] for o in notes["operations"]] == ["COMPACT", "COMPACT"]
    assert all(o["commit"] is not None for o in notes["operations"])  # both compactions committed
    last = notes["versions"][str(max(int(v) for v in notes["versions"]))]
    assert sorted(r[0] for r in last) == ["jack", "jack", "jill", "jill", "kim", "kim"]
    exhaustive: dict[str, set[str]] = {}  # configuration -> the statuses of its parts
    for t, st in status.items():
        if EXHAUSTIVE_CHECK in t:
            exhaustive.setdefault(_config(t), set()).add(st)
    written = {c: sts for c, sts in exhaustive.items() if "-dv" not in c and not c.endswith("-cm")}
    assert set(written) == {"serializable-nodv", "writeserializable-nodv"}, written
    assert all("FAIL" in sts for sts in written.values()), written  # the part holding the OPTIMIZE race
    held = res["run_info"]["held_schedules"]["delta"]
    # 14 directed schedules on the two configurations written, two OPTIMIZE races, first runs of
    # the refused configurations; never the 432 exhaustive schedules of the tables delta-rs writes
    assert held["plan"] == "delta-rs-1.6" and held["engine_runs"] < 40, held


def test_a_pinned_version_other_than_the_installed_one_is_a_configuration_error(tmp_path: Path) -> None:
    pinned = {"LAKECERT_DELTALAKE_VERSION": "0.0.1"}
    proc = lakecert("run", "--target", "delta-rs-engine", "--out", str(tmp_path / "run"), env=pinned)
    assert proc.returncode == 2
    assert not (tmp_path / "run" / "results.json").exists()
