"""Profile iceberg-catalog-commit through the ``iceberg-rest`` target: any Iceberg REST catalog, reached
over HTTP by URI. A reference catalog served here is certified; the same catalog with a faulty
commit path (it never checks ``assert-ref-snapshot-id``) is not, on the requirements it breaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from reference_impl.faults.registry import all_faults
from reference_impl.iceberg_rest import IcebergRestServer
from reference_impl.iceberg_rest.catalog import RestCatalogService
from tests.helpers import lakecert, results

PROFILE = "iceberg-catalog-commit"


def certify(server: IcebergRestServer, warehouse: Path, out: Path) -> int:
    config = out.parent / f"{out.name}.yaml"
    config.write_text(
        "target: iceberg-rest\ntargets:\n  iceberg-rest:\n"
        f"    options: {{uri: '{server.url}', warehouse_dir: '{warehouse}'}}\n"
    )
    proc = lakecert("run", "--config", str(config), "--profile", PROFILE, "--out", str(out))
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.returncode


@pytest.mark.parametrize("fault", [None, "iceberg-catalog-ignores-assert-ref-snapshot-id"])
def test_a_rest_catalog_by_uri(tmp_path: Path, fault: str | None) -> None:
    service = RestCatalogService if fault is None else all_faults()[fault].cls
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    with IcebergRestServer(warehouse.as_uri(), tmp_path / "c.sqlite", service_cls=service) as server:  # type: ignore[arg-type]
        code = certify(server, warehouse, tmp_path / "run")
    res = results(tmp_path / "run")
    assert res["run_info"]["target_kind"] == "third-party"
    statuses = {rid: r["status"] for rid, r in res["requirements"].items()}
    if fault is None:
        assert code == 0 and res["verdict"] == "CERTIFIED", statuses
    else:
        assert code == 1
        assert statuses["ICE-CAT-ATOMIC-REQUIREMENTS"] == "FAIL" and statuses["ICE-CAT-REQUIREMENT-TYPES"] == "FAIL"
        assert statuses["ICE-CAT-SNAPSHOTS-KEPT"] == "PASS", "only what the fault breaks fails"
