"""Real Spark (4.1 with Iceberg 1.11) through the reference REST catalog: lakecert finds the resurrected
row of a merge-on-read DELETE racing an UPDATE under snapshot isolation, with its reproducer, in
format v2 and v3, with tables on local disk and on S3 (moto).

Three `lakecert run`s (one SparkSession each), kept in one xdist worker so their JVMs do not compete:
the update/delete checks with every schedule run (``model_guided: false``), the same on S3 with the
model's plan, and the whole profile with ``--fail-fast``, which the plan makes stop after its first
check. `make test` stays within minutes. The full matrix is recorded in docs/compatibility.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest

from reference_impl.storage.s3 import S3Settings
from tests.helpers import lakecert, results, schedule_runs
from tests.moto_s3 import BUCKET, storage_config

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark")]

CHECK = "checks/iceberg/test_update_delete.py::test_update_then_delete_of_one_row"
NON_KEY_CHECK = "checks/iceberg/test_non_key_predicates.py::test_writes_by_non_key_predicate"
VERSION = "Spark 4.1.4, Iceberg 1.11.0"


def spark(out: Path, *args: str) -> Path:
    proc = lakecert("run", "--target", "spark-iceberg", "--profile", "iceberg-row-delta", "--out", str(out), *args)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def spark_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = tmp_path_factory.mktemp("spark") / "every-schedule.yaml"
    config.write_text("iceberg: {model_guided: false}\n")  # every configuration on a table of its own
    return spark(config.parent / "run", "--config", str(config), "--select", CHECK)


@pytest.fixture(scope="module")
def fail_fast_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return spark(tmp_path_factory.mktemp("spark-fail-fast") / "run", "--fail-fast")


@pytest.fixture(scope="module")
def s3_run(s3: S3Settings, tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = tmp_path_factory.mktemp("spark-s3") / "s3.yaml"
    config.write_text(storage_config(s3))
    cases = [f"{CHECK}[upd-mor-del-mor-snapshot-v2]", f"{CHECK}[upd-mor-del-mor-snapshot-v3]"]
    return spark(config.parent / "run", "--config", str(config), *(a for c in cases for a in ("--select", c)))


def _by_config(out: Path) -> dict[str, dict[str, Any]]:
    return {r["test"].split("[")[1].rstrip("]"): r for r in results(out)["results"]}


def test_resurrected_row_is_reported_with_a_reproducer(spark_run: Path) -> None:
    res = results(spark_run)
    assert res["run_info"]["target_version"] == VERSION
    found = _by_config(spark_run)["upd-mor-del-mor-snapshot-v2"]
    assert found["status"] == "FAIL"
    assert found["violated"] == ["ICE-NO-RESURRECTION"]
    repro = json.loads((spark_run / str(found["reproducer"])).read_text())
    assert repro["target_version"] == VERSION
    assert repro["schedule"]["schedule"], "the schedule that produced the anomaly is recorded"
    assert "--select" in repro["rerun"] and CHECK in repro["rerun"]


def test_copy_on_write_tables_stay_consistent(spark_run: Path) -> None:
    cow = _by_config(spark_run)["upd-cow-del-cow-snapshot-v2"]
    assert cow["status"] == "PASS", cow["message"]


def latest_metadata(table_dir: Path) -> dict[str, Any]:
    newest = max((table_dir / "metadata").glob("*.metadata.json"))  # names start with a zero-padded version
    document: dict[str, Any] = json.loads(newest.read_text())
    return document


def test_format_v3_runs_with_deletion_vectors(spark_run: Path) -> None:
    """v3 is judged, not skipped: Spark wrote v3 tables through the catalog, merge-on-read ones with
    deletion vectors (Puffin files) where v2 writes position-delete files."""
    v3 = {name: r for name, r in _by_config(spark_run).items() if name.endswith("-v3")}
    assert len(v3) == 4 and all(r["status"] in ("PASS", "FAIL") for r in v3.values()), v3
    tables = [d for d in (spark_run / "work" / "warehouse" / "iceberg" / "lakecert").iterdir() if d.is_dir()]
    mor_v3 = [
        d
        for d in tables
        if (m := latest_metadata(d))["format-version"] == 3 and m["properties"]["write.delete.mode"] == "merge-on-read"
    ]
    assert len(mor_v3) == 2
    assert all(any((d / "data").glob("*.puffin")) for d in mor_v3)
    assert all(latest_metadata(d)["next-row-id"] > 0 for d in mor_v3)


def test_on_s3_the_same_anomaly_is_found(s3_run: Path, s3: S3Settings) -> None:
    res = results(s3_run)
    assert res["run_info"]["warehouse"].startswith(f"s3://{BUCKET}/")
    found = _by_config(s3_run)
    assert found["upd-mor-del-mor-snapshot-v2"]["violated"] == ["ICE-NO-RESURRECTION"]
    assert found["upd-mor-del-mor-snapshot-v3"]["status"] in ("PASS", "FAIL")
    client = boto3.client(
        "s3",
        endpoint_url=s3.endpoint_url,
        region_name=s3.region,
        aws_access_key_id=s3.access_key_id,
        aws_secret_access_key=s3.secret_access_key,
    )
    prefix = res["run_info"]["warehouse"].removeprefix(f"s3://{BUCKET}/")
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=BUCKET, Prefix=prefix)["Contents"]]
    assert any(k.endswith(".parquet") for k in keys) and any(k.endswith(".puffin") for k in keys)
    assert any(k.endswith(".metadata.json") for k in keys)


def test_every_schedule_is_in_the_report_with_the_engines_reason_to_abort(spark_run: Path) -> None:
    """Passing checks show their schedule too; an abort names Iceberg's exception class, not py4j's."""
    reports = [json.loads(f.read_text()) for f in (spark_run / "allure-results").glob("*-result.json")]
    runs = schedule_runs(spark_run)
    passed = [r["name"] for r in reports if r["status"] == "passed"]
    assert passed and all(runs[name] for name in passed)
    aborts = [line for name in runs for run in runs[name] for line in run if "ABORTED (" in line]
    assert aborts and all("Py4JJavaError" not in n for n in aborts)
    assert any("ABORTED (ValidationException: " in n for n in aborts)


def test_the_model_puts_the_counterexample_first_and_fail_fast_stops_there(fail_fast_run: Path) -> None:
    """Spark's preset predicts the resurrected row in merge-on-read, snapshot isolation, format v2,
    for the directed check and for its race through a non-key predicate: the first of them in file
    order (the non-key one) runs first, fails, and the run stops there, partial and not certified."""
    res = results(fail_fast_run)
    first = res["results"][0]
    assert first["test"] == f"{NON_KEY_CHECK}[upd-mor-del-mor-snapshot-v2]"
    assert first["status"] == "FAIL" and first["violated"] == ["ICE-NON-KEY-PREDICATES"]
    assert res["run_info"]["stopped_at_first_fail"] == first["test"] and len(res["results"]) == 1
    assert res["verdict"] == "NOT_CERTIFIED" and not (fail_fast_run / "certificate.json").exists()
    assert json.loads((fail_fast_run / str(first["reproducer"])).read_text())["schedule"]["schedule"]
