"""Real Spark (4.1 with Iceberg 1.11) through the reference REST catalog: lakecert finds the resurrected
row of a merge-on-read DELETE racing an UPDATE under snapshot isolation, with its reproducer.

One `lakecert run` (one SparkSession) for the module; it only runs the update/delete checks, so
`make test` stays within minutes. The full matrix is recorded in docs/compatibility.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import lakecert, results

CHECK = "checks/iceberg/test_update_delete.py::test_update_then_delete_of_one_row"


@pytest.fixture(scope="module")
def spark_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("spark") / "run"
    proc = lakecert(
        "run", "--target", "spark-iceberg", "--profile", "iceberg-row-delta", "--select", CHECK, "--out", str(out)
    )
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def _by_config(out: Path) -> dict[str, dict[str, object]]:
    return {r["test"].split("[")[1].rstrip("]"): r for r in results(out)["results"]}


def test_resurrected_row_is_reported_with_a_reproducer(spark_run: Path) -> None:
    res = results(spark_run)
    assert res["run_info"]["target_version"] == "Spark 4.1.4, Iceberg 1.11.0"
    found = _by_config(spark_run)["upd-mor-del-mor-snapshot-v2"]
    assert found["status"] == "FAIL"
    assert found["violated"] == ["ICE-NO-RESURRECTION"]
    repro = json.loads((spark_run / str(found["reproducer"])).read_text())
    assert repro["target_version"] == "Spark 4.1.4, Iceberg 1.11.0"
    assert repro["schedule"]["schedule"], "the schedule that produced the anomaly is recorded"
    assert "--select" in repro["rerun"] and CHECK in repro["rerun"]


def test_format_v3_is_not_applicable_through_the_reference_catalog(spark_run: Path) -> None:
    v3 = [r for name, r in _by_config(spark_run).items() if name.endswith("-v3")]
    assert v3 and all(r["status"] == "NOT_APPLICABLE" for r in v3)


def test_copy_on_write_tables_stay_consistent(spark_run: Path) -> None:
    cow = _by_config(spark_run)["upd-cow-del-cow-snapshot-v2"]
    assert cow["status"] == "PASS", cow["message"]
