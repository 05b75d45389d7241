"""Delta Kernel 4.4.0 as the Delta engine of profile delta-row-conflicts: path-based and
catalog-managed tables, each commit parked in a wrapper of the table's committer (Kernel's UC
committer on a catalog-managed table) until the schedule releases it.

One driver JVM for the in-process tests (the hold is real, Kernel's outcomes are the model's, a hold
that releases in the wrong order cannot make the suite blame Kernel, a faulty variant is caught on
the Kernel path), and one `lakecert run` of a subset of the profile end to end (its own JVM).
The observed matrix is in docs/compatibility.md.
"""

from __future__ import annotations

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
    SET_PROPERTY,
    VERSION_PAIRS,
    WRITE_SERIALIZABLE,
    Scenario,
    race,
    serial_order,
)
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.checks.iceberg.scenarios import DELETE_JACK, INSERT_LEE, INSERT_MAX
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
        # The set-up differs (Kernel commits one version per initial data file, the model one in
        # all): versions are compared relative to the start, rows at the last version.
        assert _outcomes(got) == _outcomes(want), schedule.describe()
        assert sorted(got.reads[-1].rows) == sorted(want.reads[-1].rows)
    aborted = run_held(engine, "metadata_first", WS_NODV, race(SET_PROPERTY, INSERT_LEE), report=False)
    assert [o.commit_version is None for o in aborted.ops] == [False, True]


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
    assert engine.refuses(DELETE_JACK) is not None and engine.refuses(INSERT_LEE) is None
    with pytest.raises(NotSupported):
        engine.create_table("serializable", CONFIGS[0])  # Kernel refuses delta.isolationLevel
    with pytest.raises(NotSupported):  # an engine bound to no catalog builds path-based tables only
        KernelDeltaEngine(process, tmp_path / "no-catalog").create_table("cm", WS_NODV_CM)
    # A schedule with an operation Kernel has no API for is skipped, and the one it can run is judged.
    scenario = Scenario(
        "DELTA-ONE-VERSION-PER-COMMIT",
        (race(DELETE_JACK, INSERT_LEE), race(INSERT_LEE, INSERT_MAX)),
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
    """`lakecert run --target delta-kernel --profile delta-row-conflicts` on two commit-file checks of
    one configuration: the abort check (UPDATE and DELETE only) is NOT_APPLICABLE, the
    version-per-commit check runs its two-append schedule and passes. (The whole profile: `make
    bench-kernel-engine`, docs/compatibility.md.)"""
    out = tmp_path / "run"
    checks = "checks/delta_conflicts/test_commits.py::"
    proc = lakecert(
        "run", "--target", "delta-kernel", "--profile", "delta-row-conflicts", "--out", str(out),
        "--select", f"{checks}test_aborted_writes_leave_no_trace[writeserializable-nodv]",
        "--select", f"{checks}test_commits_get_their_own_versions[writeserializable-nodv]",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = results(out)
    assert res["run_info"]["target_version"].startswith("Delta Kernel 4.4.0")
    status = {r["test"].rsplit("::", 1)[-1]: r["status"] for r in res["results"]}
    assert status == {
        "test_aborted_writes_leave_no_trace[writeserializable-nodv]": "NOT_APPLICABLE",
        "test_commits_get_their_own_versions[writeserializable-nodv]": "PASS",
    }
    skipped = next(r for r in res["results"] if r["status"] == "NOT_APPLICABLE")
    assert "UPDATE" in skipped["message"]  # lakecert's own reason (which operation), not Kernel's text
