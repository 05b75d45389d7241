"""Real bugs of real releases as ground truth: lakecert must FAIL a release that has the bug and
PASS the release that fixed it, the versions being run settings and recorded as observed.

- Iceberg 1.11.0 and 1.12.0 (Spark 4.1): a merge-on-read DELETE committed after a concurrent UPDATE
  of the same row under snapshot isolation leaves the row in the table (docs/reproducers/
  iceberg_mor_delete_resurrection.py). Both releases have it. (1.11.0's run is tests/test_spark_iceberg.py.)
- Delta Kernel 4.3.1 (before delta-io/delta#7163): two copy-on-write DELETEs from one snapshot
  remove the same file and both commit; 4.4.0 refuses the second (docs/reproducers/kernel-7163.md).
- Delta Kernel 4.3.1, 4.4.0 and 4.4.1: a log compaction made from published files is read in place of
  the catalog's commits it covers (docs/reproducers/kernel-compaction-precedence.md). All three have it.
- delta-rs 1.6.6: two OPTIMIZEs from one version both commit and duplicate every row
  (docs/reproducers/delta_rs_concurrent_optimize.py; tests/test_delta_rs_engine.py).

Each release other than the set-up's is fetched on first use into the version cache (seconds for
Iceberg; Kernel's jars and driver build once, about a minute).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import lakecert, results

pytestmark = pytest.mark.slow  # minutes: started first (tests/conftest.py)

SEED_CELL = "checks/iceberg/test_update_delete.py::test_update_then_delete_of_one_row[upd-mor-del-mor-snapshot-v2]"


@pytest.mark.xdist_group("spark")  # one SparkSession at a time on the machine
def test_iceberg_1_12_0_still_resurrects_the_deleted_row_and_says_which_release_ran(tmp_path: Path) -> None:
    env = {"LAKECERT__targets__spark_iceberg__options__version": "1.12.0"}
    out = tmp_path / "run"
    proc = lakecert("run", "--target", "spark-iceberg", "--select", SEED_CELL, "--out", str(out), env=env)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = results(out)
    (row,) = res["results"]
    assert row["status"] == "FAIL" and row["requirements"] == ["ICE-NO-RESURRECTION"]
    ran = res["run_info"]["target_versions"]
    assert ran["iceberg"] == "1.12.0", "the version is asked of the running JVM, not taken from the setting"
    assert ran["spark"].startswith("4.1")
    assert "Iceberg 1.12.0" in res["run_info"]["target_version"]


DELTA_RS_OPTIMIZE = "checks/delta_conflicts/test_optimize.py::test_optimize_racing_row_writes[writeserializable-nodv]"


def _delta_rs(version: str, out: Path) -> Path:
    env = {"LAKECERT__targets__delta_rs_engine__options__version": version}
    args = ("run", "--target", "delta-rs-engine", "--select", DELTA_RS_OPTIMIZE, "--out", str(out))
    proc = lakecert(*args, env=env)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    assert results(out)["run_info"]["target_versions"] == {"deltalake": version}, "observed in the engine's process"
    return out


def test_delta_rs_1_6_6_duplicates_rows_with_two_optimizes_where_1_6_3_refused_the_second(tmp_path: Path) -> None:
    """Found by lakecert (2026-11-28): deltalake 1.6.3 refuses the second of two compactions from one
    version; 1.6.6 commits both and every row is there twice (1.6.4 and 1.6.5 are yanked)."""
    before, after = _delta_rs("1.6.3", tmp_path / "1.6.3"), _delta_rs("1.6.6", tmp_path / "1.6.6")
    diff = lakecert("diff", str(before), str(after), "--json")
    assert diff.returncode == 1, diff.stdout + diff.stderr  # a regression
    changes = json.loads(diff.stdout)
    assert changes["rules"] == {"DELTA-COMPACTION-PRESERVES-ROWS": {"before": "PASS", "after": "FAIL"}}


KERNEL_REMOVES = (
    "checks/delta_conflicts/test_resurrection.py::test_deletes_racing_writes_to_their_file[writeserializable-nodv]"
)
KERNEL_COMPACTIONS = (
    "checks/delta/reader/test_stray_files.py::test_catalog_commits_win_over_compactions_of_their_versions"
)
KERNEL_RELEASES = ("4.3.1", "4.4.0", "4.4.1")


def _kernel(version: str, out: Path) -> dict[str, Any]:
    env = {"LAKECERT__targets__delta_kernel__options__version": version}
    checks = ("--select", KERNEL_REMOVES, "--select", KERNEL_COMPACTIONS)
    proc = lakecert("run", "--target", "delta-kernel", *checks, "--out", str(out), env=env)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    return results(out)


@pytest.fixture(scope="module")
def kernel_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, Any]]]:
    """One run (one JVM) per release for both Kernel bugs."""
    out = tmp_path_factory.mktemp("kernel-releases")
    return {v: (out / v, _kernel(v, out / v)) for v in KERNEL_RELEASES}


def _status(res: dict[str, Any], check: str) -> str:
    (row,) = [r for r in res["results"] if r["test"] == check]
    status: str = row["status"]
    return status


@pytest.mark.xdist_group("kernel-releases")
def test_kernel_4_3_1_loses_concurrent_deletes_and_4_4_x_refuses_the_second(
    kernel_runs: dict[str, tuple[Path, dict[str, Any]]],
) -> None:
    """delta-io/delta#7163: two copy-on-write DELETEs from one snapshot removing the same file both
    committed on Kernel 4.3.1 (docs/reproducers/kernel-7163.md); 4.4.0 and 4.4.1 refuse the second.
    4.4.1 runs its API jar with 4.4.0's other modules (only delta-kernel-api 4.4.1 is on Maven Central),
    and the record says so."""
    runs = {v: res for v, (_, res) in kernel_runs.items()}
    for version, res in runs.items():
        ran = res["run_info"]["target_versions"]
        assert ran["delta-kernel-api"] == version, "the API jar the JVM loaded is the release asked for"
    assert runs["4.4.1"]["run_info"]["target_versions"]["delta-kernel-defaults"] == "4.4.0"
    diff = lakecert("diff", str(kernel_runs["4.3.1"][0]), str(kernel_runs["4.4.0"][0]), "--json")
    assert diff.returncode == 0, diff.stdout + diff.stderr  # a fix, not a regression
    assert json.loads(diff.stdout)["rules"] == {"DELTA-NO-RESURRECTION": {"before": "FAIL", "after": "PASS"}}
    assert _status(runs["4.4.1"], KERNEL_REMOVES) == "PASS"


@pytest.mark.xdist_group("kernel-releases")
def test_every_kernel_release_reads_a_compaction_over_the_catalogs_commits(
    kernel_runs: dict[str, tuple[Path, dict[str, Any]]],
) -> None:
    """Found by lakecert (2026-11-29): the same on 4.3.1, 4.4.0 and 4.4.1, so not in the diff above."""
    for version, (_, res) in kernel_runs.items():
        assert _status(res, KERNEL_COMPACTIONS) == "WARN", version
        assert res["requirements"]["RDR-COMPACTION-PRECEDENCE"]["status"] == "WARN", version
        assert res["requirements"]["RDR-CATALOG-PRECEDENCE"]["status"] == "PASS", version
