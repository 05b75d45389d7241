"""delta-spark 4.4.0 (Spark 4.1) as the Delta engine of profile delta-row-conflicts: writer threads of
one SparkSession, each commit-file write parked by lakecert's LogStore until the schedule releases it.

One `lakecert run` (one SparkSession, one JVM; three schedules) of one commit-file check shows the
target end to end, and that the hold really makes writers race for a version (Delta's in-JVM commit
lock would serialise them and the second begin would never reach its commit): both writers start
from one version, the first released commits the next one, and delta-spark's own checker then
rebases the second (a blind append) onto the version after, or aborts it. Its own xdist group: the
run's JVM does not queue behind the Iceberg Spark runs. The full matrix is in docs/compatibility.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import lakecert, results, schedule_runs

pytestmark = [pytest.mark.xdist_group("delta-spark"), pytest.mark.slow]
VERSION = "delta-spark 4.4.0 on Spark 4.1.4"
CHECKS = "checks/delta_conflicts/test_commits.py::test_commits_get_their_own_versions"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("delta-spark") / "run"
    proc = lakecert(
        "run", "--target", "delta-spark", "--profile", "delta-row-conflicts", "--out", str(out),
        "--select", f"{CHECKS}[serializable-nodv]", "--select", f"{CHECKS}[writeserializable-nodv]",
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def _schedules(out: Path, config: str) -> list[list[str]]:
    """The schedules the check on ``config`` ran, from its Allure result: per schedule, its lines."""
    for name, runs in schedule_runs(out).items():
        if name.endswith(f"[{config}]"):
            return runs
    raise AssertionError(f"no Allure result for [{config}]")


def test_the_profile_runs_end_to_end(run: Path) -> None:
    res = results(run)
    assert res["run_info"]["target_version"] == VERSION
    status = {r["test"].split("[")[1].rstrip("]"): r["status"] for r in res["results"]}
    # Serializable is delta-spark's only table isolation level ("delta.isolationLevel must be
    # Serializable"): the WriteSerializable table is NOT_APPLICABLE, never silently passed.
    assert status == {"serializable-nodv": "PASS", "writeserializable-nodv": "NOT_APPLICABLE"}, status


def test_held_writers_race_and_delta_spark_resolves_the_conflict(run: Path) -> None:
    appends, update_insert, delete_update = _schedules(run, "serializable-nodv")
    # INSERT lee and INSERT max both begin on v2 and are held; released in order, the second
    # finds v3 taken and rebases (blind appends never conflict).
    assert [line.rsplit("(", 1)[-1] for line in appends[1:3]] == ["starting snapshot v2)"] * 2, appends
    assert appends[3].endswith("COMMITTED v3") and appends[4].endswith("COMMITTED v4"), appends
    assert update_insert[4].endswith("COMMITTED v4"), update_insert
    # DELETE of jill then UPDATE of jack, files rewritten (no deletion vectors), jack and jill
    # share a file: delta-spark aborts the UPDATE, nothing is written for it.
    assert delete_update[3].endswith("COMMITTED v3") and "ABORTED (ConcurrentAppendException" in delete_update[4]


def test_a_pinned_version_other_than_the_set_up_one_is_a_configuration_error(tmp_path: Path) -> None:
    pinned = {"LAKECERT_DELTA_SPARK_VERSION": "0.0.1"}
    proc = lakecert("run", "--target", "delta-spark", "--out", str(tmp_path / "run"), env=pinned)
    assert proc.returncode == 2
    assert not (tmp_path / "run" / "results.json").exists()


def test_a_non_key_predicate_is_rendered_not_replaced_by_the_id() -> None:
    """The phantom check's UPDATE and DELETE ``WHERE color = 'red'`` reach Spark as written (no JVM)."""
    from conformance.adapters.delta_spark.engine import statement
    from conformance.checks.iceberg.scenarios import DELETE_RED, UPDATE_JACK_COLOR, UPDATE_RED_TO_BLUE

    table = Path("/t")
    assert statement(table, DELETE_RED) == "DELETE FROM delta.`/t` WHERE color = 'red'"
    assert statement(table, UPDATE_RED_TO_BLUE) == "UPDATE delta.`/t` SET color = 'blue' WHERE color = 'red'"
    assert statement(table, UPDATE_JACK_COLOR).endswith("WHERE id = 'jack'")
