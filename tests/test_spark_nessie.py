"""Spark's resurrected-row cell (MOR UPDATE then MOR DELETE, snapshot isolation, v2) through Nessie
0.99, behind lakecert's holding proxy: one ``lakecert run`` with ``spark-iceberg`` and option
``catalog: nessie`` (one Nessie, one SparkSession).

Through the reference catalog this cell FAILs on ICE-NO-RESURRECTION (tests/test_spark_iceberg.py).
Through Nessie it does not: the DELETE's commit, held and released second, is refused with 409 as
through the reference, but Nessie serves only the table's current snapshot, so when Spark refreshes
to revalidate it cannot find its starting snapshot among the new one's ancestors and aborts
(IllegalArgumentException) instead of retrying. No row comes back because no second commit lands:
the engine's fault is masked by the catalog's truncated history (docs/compatibility.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters.nessie.java import has_java
from conformance.adapters.nessie.server import jar_path
from tests.helpers import lakecert, results, schedule_runs

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("nessie"),
    pytest.mark.skipif(not jar_path().is_file(), reason="the Nessie runner jar is fetched by `make setup`"),
    pytest.mark.skipif(not has_java(), reason="Nessie needs a Java 21+ (none found)"),
]
CELL = "checks/iceberg/test_update_delete.py::test_update_then_delete_of_one_row[upd-mor-del-mor-snapshot-v2]"


@pytest.fixture(scope="module")
def nessie_cell(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("spark-nessie") / "run"
    config = out.parent / "spark-nessie.yaml"
    config.write_text("target: spark-iceberg\ntargets:\n  spark-iceberg:\n    options: {catalog: nessie}\n")
    args = ("run", "--config", str(config), "--profile", "iceberg-row-delta", "--out", str(out), "--select", CELL)
    proc = lakecert(*args)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def steps(out: Path) -> list[str]:
    """The schedule's steps as the Allure results give them (what each writer did)."""
    return [line for runs in schedule_runs(out).values() for run in runs for line in run]


def test_the_cell_runs_through_nessie_behind_the_proxy(nessie_cell: Path) -> None:
    res = results(nessie_cell)
    assert res["run_info"]["target_version"].endswith("through Nessie 0.99.0")
    (cell,) = res["results"]
    assert cell["test"] == CELL
    log = (nessie_cell / "work" / "nessie" / "nessie.log").read_text()
    assert "/iceberg/v1/main/namespaces/lakecert/tables/" in log, "Spark's requests reached Nessie"


def test_nessie_masks_the_resurrection_the_second_writer_aborts(nessie_cell: Path) -> None:
    (cell,) = results(nessie_cell)["results"]
    assert cell["status"] == "PASS", cell["message"]
    released = [s for s in steps(nessie_cell) if s.startswith("release ")]
    assert len(released) == 2, released
    assert "COMMITTED" in released[0]
    assert "ABORTED (IllegalArgumentException" in released[1], "refused, then unable to revalidate: no retry"
