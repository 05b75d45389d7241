"""Delta Kernel 4.4.0 as the Delta engine of profile delta-row-conflicts: path-based and
catalog-managed tables, each commit parked in a wrapper of the table's committer (Kernel's UC
committer on a catalog-managed table) until the schedule releases it. It builds INSERTs, property
changes and copy-on-write DELETE, UPDATE and OPTIMIZE (removes with Kernel's internal action
classes); not MERGE, and no rewrite of a row-tracking table.

One driver JVM for the in-process tests (the hold is real, Kernel's outcomes are the model's, a hold
that releases in the wrong order cannot make the suite blame Kernel, a faulty variant is caught on
the Kernel path), and one `lakecert run` of a subset of the profile end to end (its own JVM).
The observed matrix is in docs/compatibility.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.adapters.delta_kernel.engine import KernelDeltaEngine, KernelHeld
from conformance.adapters.delta_kernel.jvm import KernelProcess
from conformance.adapters.delta_kernel.serving import ServedCatalog
from conformance.checks.delta_conflicts.harness import run_check
from conformance.checks.delta_conflicts.scenarios import (
    CATALOG_MANAGED,
    CONFIGS,
    DELETE_KIM,
    MERGE_JACK,
    SET_PROPERTY,
    VERSION_PAIRS,
    WRITE_SERIALIZABLE,
    Scenario,
    race,
    serial_order,
)
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import (
    COMPACT_ALL,
    DELETE_JACK,
    DELETE_JILL,
    DELETE_RED,
    INSERT_LEE,
    INSERT_MAX,
    UPDATE_JACK_COLOR,
    UPDATE_RED_TO_BLUE,
)
from conformance.contract.delta_engine import DeltaSetup, NotSupported
from conformance.contract.iceberg import CommitResult, Operation
from conformance.history import History, check
from conformance.model.delta import DELTA_SPARK
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import Violation
from conformance.schedules.enumerate import publication_variants
from conformance.schedules.held_run import run_held
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta_conflicts import DeltaModelEngine
from reference_impl.storage.local import LocalStorage
from tests.helpers import lakecert, results

pytestmark = [pytest.mark.xdist_group("delta-kernel"), pytest.mark.slow]
WS_NODV = WRITE_SERIALIZABLE[0]
WS_DV = next(c for c in WRITE_SERIALIZABLE if c.deletion_vectors and not c.row_tracking and not c.catalog_managed)
WS_DV_RT = next(c for c in WRITE_SERIALIZABLE if c.row_tracking and not c.catalog_managed)
WS_NODV_CM = next(c for c in CATALOG_MANAGED if c.isolation is WS_NODV.isolation and not c.deletion_vectors)
# What Kernel's public write API builds: every race of two of them, both ways.
RACES = tuple(race(a, b) for a in (INSERT_LEE, SET_PROPERTY) for b in (INSERT_MAX, SET_PROPERTY))


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReferenceCatalog]:
    """The engine's own reference catalog (catalog-managed tables), as the target builds it."""
    root = tmp_path_factory.mktemp("kernel-engine-catalog")
    built = ReferenceCatalog(root / "catalog.sqlite", root.as_uri(), LocalStorage())
    yield built
    built.close()


@pytest.fixture(scope="module")
def process(catalog: ReferenceCatalog) -> Iterator[KernelProcess]:
    served = ServedCatalog(catalog, LocalStorage())
    built = KernelProcess(served.url)
    yield built
    built.close()
    served.close()


@pytest.fixture
def engine(process: KernelProcess, catalog: ReferenceCatalog, tmp_path: Path) -> KernelDeltaEngine:
    return KernelDeltaEngine(process, tmp_path, catalog=catalog)


def test_held_append_loses_its_version_and_rebases(engine: KernelDeltaEngine) -> None:
    start = engine.create_table("appends", WS_NODV).version
    first, second = engine.begin("appends", 0, INSERT_LEE), engine.begin("appends", 1, INSERT_MAX)
    assert first.start_version == second.start_version == start
    assert first.release() == CommitResult(True, start + 1, f"tried v{start + 1}")
    assert second.release().version == start + 2
    assert second.attempts == (start + 1, start + 2)  # held at the next version, found it taken, retried
    assert {r[0] for r in engine.read("appends").rows} >= {"lee", "max"}


def test_kernel_outcomes_are_the_models(engine: KernelDeltaEngine) -> None:
    """On every race Kernel can build, each writer commits (at the same version) or aborts exactly as
    the Delta model with Delta's documented checks predicts: appends rebase over appends, a property
    change over an append, and a winner's property change aborts the loser."""
    model = DeltaModelEngine(DELTA_SPARK)
    for n, schedule in enumerate(RACES):
        got = run_held(engine, f"race{n}", WS_NODV, schedule, report=False)
        want = run_held(model, f"race{n}", WS_NODV, schedule, report=False)
        # The set-up's versions differ (Kernel's table starts with a create-table commit):
        # versions are compared relative to the start, rows at the last version.
        assert _outcomes(got) == _outcomes(want), schedule.describe()
        assert sorted(got.reads[-1].rows) == sorted(want.reads[-1].rows)
    aborted = run_held(engine, "metadata_first", WS_NODV, race(SET_PROPERTY, INSERT_LEE), report=False)
    assert [o.commit_version is None for o in aborted.ops] == [False, True]


def test_copy_on_write_rewrites_are_what_connectors_build(engine: KernelDeltaEngine, tmp_path: Path) -> None:
    """DELETE and UPDATE (by id, by a non-key predicate) rewrite the files holding matched rows;
    OPTIMIZE rewrites every live file into one, its removes and add with dataChange=false; a write
    that matches no row commits nothing. On a table with deletion vectors enabled too (Kernel writes
    none: copy-on-write)."""
    start = engine.create_table("cow", WS_DV).version
    assert engine.begin("cow", 0, DELETE_JACK).release().version == start + 1
    assert sorted(r[0] for r in engine.read("cow").rows) == ["jill", "kim"]
    assert engine.begin("cow", 0, UPDATE_RED_TO_BLUE).release().version == start + 2
    assert {r[1] for r in engine.read("cow").rows} == {"blue"}
    before = engine.read("cow").rows
    assert engine.begin("cow", 0, COMPACT_ALL).release().version == start + 3
    assert engine.read("cow").rows == before
    log = tmp_path / "cow" / "_delta_log" / f"{start + 3:020d}.json"
    actions = [json.loads(line) for line in log.read_text().splitlines()]
    files = [(kind, a[kind]) for a in actions for kind in ("add", "remove") if kind in a]
    assert [k for k, _ in files].count("add") == 1 and "remove" in [k for k, _ in files]
    assert all(f["dataChange"] is False for _, f in files)
    nothing = engine.begin("cow", 0, DELETE_JACK).release()  # jack is gone already
    assert not nothing.committed and nothing.version is None
    assert engine.read("cow").version == start + 3


# Two rewrites from one snapshot: of one file (jack and jill share one) the second must not commit
# over the first; of different files both may. And a DELETE by a non-key predicate racing an append.
SAME_FILE = (race(DELETE_JACK, DELETE_JILL), race(UPDATE_JACK_COLOR, COMPACT_ALL), race(COMPACT_ALL, DELETE_KIM))
OTHER_FILES = (race(DELETE_JACK, DELETE_KIM), race(DELETE_RED, INSERT_LEE))


def test_rewrites_racing_on_one_file_are_refused(engine: KernelDeltaEngine) -> None:
    """Kernel 4.4.0 compares a winner's removes with its own (delta-io/delta#7163): the second of two
    rewrites of one file aborts; rewrites of different files both commit, as does an append after
    a DELETE (WriteSerializable places it after). No history holds an anomaly. Kernel checks removed
    files, not what the loser read, so where Delta's documented checks (the model's DELTA_SPARK
    preset) also abort a rewrite of another file of an unpartitioned table, Kernel commits it, with
    the rows of a serial order. (Kernel 4.3.1 commits both rewrites of one file and brings deleted
    rows back: docs/reproducers/kernel-7163.md.)"""
    for n, schedule in enumerate(SAME_FILE + OTHER_FILES):
        history = run_held(engine, f"rewrite{n}", WS_NODV, schedule, report=False)
        assert check(history, serial_order(WS_NODV)) == [], schedule.describe()
        second = history.ops[1].commit_version
        assert (second is None) == (schedule in SAME_FILE), schedule.describe()


def test_catalog_managed_appends_race_through_the_catalog(engine: KernelDeltaEngine, catalog: ReferenceCatalog) -> None:
    """Two INSERTs held at Kernel's UC committer on a catalog-managed table; the catalog ratifies the
    first and refuses the second's version. Winner published before the loser retries: Kernel
    rebases the loser onto the next version. Winner ratified but unpublished: Kernel 4.4.0 was
    observed to give the loser up (ConcurrentWriteException) instead of rebasing; either way the
    history is judged like a check's and must hold no anomaly."""
    # The hold is before Kernel proposes: the catalog has ratified nothing past the start meanwhile.
    start = engine.create_table("cm_hold", WS_NODV_CM).version
    held = engine.begin("cm_hold", 0, INSERT_LEE)
    table_id = catalog.resolve("cm_hold").table_id
    assert catalog.get_commits(table_id).latest_version == start
    assert held.release().version == catalog.get_commits(table_id).latest_version == start + 1

    prompt, lagging = publication_variants(race(INSERT_LEE, INSERT_MAX))
    history = run_held(engine, "cm_prompt", WS_NODV_CM, prompt, report=False)
    start = history.initial_version
    assert [o.commit_version for o in history.ops] == [start + 1, start + 2]
    assert check(history, serial_order(WS_NODV_CM)) == []
    assert {r[0] for r in history.reads[-1].rows} >= {"lee", "max"}
    published = [step.text for step in history.schedule if ": published v" in step.text]
    assert published[-1].endswith(f"published v{start + 2}")  # Kernel's publish wrote the loser's commit too

    history = run_held(engine, "cm_lagging", WS_NODV_CM, lagging, report=False)
    start = history.initial_version
    assert history.ops[0].commit_version == start + 1
    assert history.ops[1].commit_version in (None, start + 2)
    assert check(history, serial_order(WS_NODV_CM)) == []


def _outcomes(history: History) -> list[int | None]:
    """Per writer: how many versions past its start it committed at, or None when it aborted."""
    return [None if o.commit_version is None else o.commit_version - o.start_version for o in history.ops]


def test_operations_and_tables_kernel_cannot_build_are_not_supported(
    engine: KernelDeltaEngine, process: KernelProcess, tmp_path: Path
) -> None:
    assert engine.refuses(MERGE_JACK) is not None
    assert all(engine.refuses(op) is None for op in (INSERT_LEE, DELETE_JACK, UPDATE_JACK_COLOR, COMPACT_ALL))
    with pytest.raises(NotSupported):
        engine.create_table("serializable", CONFIGS[0])  # Kernel refuses delta.isolationLevel
    with pytest.raises(NotSupported):  # an engine bound to no catalog builds path-based tables only
        KernelDeltaEngine(process, tmp_path / "no-catalog").create_table("cm", WS_NODV_CM)
    # A rewrite would give a row-tracking table's surviving rows new row ids: not asked of Kernel.
    engine.create_table("tracked", WS_DV_RT)
    with pytest.raises(NotSupported, match="row ids"):
        engine.begin("tracked", 0, DELETE_JACK)
    # A schedule with an operation the engine does not build is skipped, and the one it can run is judged.
    scenario = Scenario(
        "DELTA-ONE-VERSION-PER-COMMIT",
        (race(MERGE_JACK, INSERT_LEE), race(INSERT_LEE, INSERT_MAX)),
        VERSION_PAIRS.kinds,
    )
    transcript = Transcript()
    run_check(ScheduleRunner(engine), "skips", WS_NODV, scenario, transcript)
    assert len(transcript.notes["skipped_schedules"]) == 1


class _WrongOrder:
    """A faulty hold: releasing one writer lets the OTHER held writer commit first."""

    def __init__(self, inner: KernelDeltaEngine) -> None:
        self.inner = inner
        self.pending: list[KernelHeld] = []

    def create_table(self, name: str, setup: DeltaSetup) -> object:
        return self.inner.create_table(name, setup)

    def read(self, table: str, version: int | None = None) -> object:
        return self.inner.read(table, version)

    def begin(self, table: str, writer: int, op: Operation) -> object:
        held = self.inner.begin(table, writer, op)
        self.pending.append(held)
        outer = self

        class Swapped:
            start_version = held.start_version

            def release(self) -> CommitResult:
                for other in [h for h in outer.pending if h is not held]:
                    other.release()  # the wrong one first
                return held.release()

        return Swapped()


def test_a_hold_releasing_in_the_wrong_order_cannot_make_the_suite_blame_kernel(engine: KernelDeltaEngine) -> None:
    """The checker judges the versions Kernel reports, not the order the schedule asked for: a
    misbehaving hold changes which writer wins, never the verdict on Kernel."""
    for n, schedule in enumerate(RACES):
        history = run_held(_WrongOrder(engine), f"swapped{n}", WS_NODV, schedule, report=False)  # type: ignore[arg-type]
        assert check(history, serial_order(WS_NODV)) == [], schedule.describe()
        first = history.ops[0]
        # T1 was let through first: when both committed, T0 got the later version
        if all(o.commit_version is not None for o in history.ops):
            assert first.commit_version == history.ops[1].commit_version + 1  # type: ignore[operator]


def test_a_faulty_store_that_overwrites_commit_files_is_caught_on_the_kernel_path(
    process: KernelProcess, tmp_path: Path
) -> None:
    """Kernel's commits written over a version another writer already wrote (no put-if-absent): the
    second append lands on the first's version and the first's row is gone."""
    faulty = KernelDeltaEngine(process, tmp_path, fault_overwrite_commits=True)
    with pytest.raises(Violation) as caught:
        run_check(ScheduleRunner(faulty), "overwrites", WS_NODV, VERSION_PAIRS, Transcript())
    assert caught.value.requirement == "DELTA-ONE-VERSION-PER-COMMIT"


def test_profile_runs_end_to_end(tmp_path: Path) -> None:
    """`lakecert run --target delta-kernel --profile delta-row-conflicts` on two commit-file checks:
    the abort check (UPDATE and DELETE racing) runs Kernel's copy-on-write rewrites and passes; on a
    row-tracking table, where the engine asks Kernel for no rewrite, it is NOT_APPLICABLE with
    lakecert's reason. (The whole profile: `make bench-kernel-engine`, docs/compatibility.md.)"""
    out = tmp_path / "run"
    check = "checks/delta_conflicts/test_commits.py::test_aborted_writes_leave_no_trace"
    proc = lakecert(
        "run", "--target", "delta-kernel", "--profile", "delta-row-conflicts", "--out", str(out),
        "--select", f"{check}[writeserializable-nodv]", "--select", f"{check}[writeserializable-dv-rt]",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = results(out)
    assert res["run_info"]["target_version"].startswith("Delta Kernel 4.4.0")
    status = {r["test"].rsplit("::", 1)[-1]: r["status"] for r in res["results"]}
    assert status == {
        "test_aborted_writes_leave_no_trace[writeserializable-nodv]": "PASS",
        "test_aborted_writes_leave_no_trace[writeserializable-dv-rt]": "NOT_APPLICABLE",
    }
    skipped = next(r for r in res["results"] if r["status"] == "NOT_APPLICABLE")
    assert "row ids" in skipped["message"]  # lakecert's own reason, not Kernel's text
