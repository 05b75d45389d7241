"""A vendor adapter written from docs/certify.md alone (tests/adapters/memory_catalog.py) plugs in
by ``module:Class``, by config file with options, and by the ``lakecert.targets`` entry-point group."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import REPO, lakecert, results

ADAPTERS = str(REPO / "tests" / "adapters")


def test_module_class_target_is_certified(out: Path) -> None:
    proc = lakecert(
        "run", "--target", "memory_catalog:MemoryCatalogTarget", "--out", str(out), env={"PYTHONPATH": ADAPTERS}
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
    res = results(out)
    assert res["run_info"]["target_kind"] == "third-party"
    assert res["run_info"]["profiles"] == ["delta-cm-catalog"]
    assert res["verdict"] == "CERTIFIED"


def test_config_options_reach_the_adapter(tmp_path: Path, out: Path) -> None:
    cfg = tmp_path / "vendor.yaml"
    cfg.write_text(
        "target: mem\ntargets:\n  mem:\n    adapter: memory_catalog:MemoryCatalogTarget\n"
        "    options: {max_unpublished: 2}\n"
    )
    proc = lakecert("run", "--config", str(cfg), "--out", str(out), env={"PYTHONPATH": ADAPTERS})
    # Refusing a third unpublished commit (a cap, as UC has at ten) breaks no retention rule, but the
    # checks that need more commits cannot judge theirs: their premise is broken, so no certificate,
    # and no FAIL either (exit 2: lakecert could not judge, it found no defect).
    assert proc.returncode == 2, proc.stdout[-2000:]
    res = results(out)
    assert res["verdict"] == "NOT_CERTIFIED"
    assert any(r["message"].startswith("premise broken") for r in res["results"] if r["status"] == "ERROR")
    assert not [r for r in res["results"] if r["premise_broken"] and r["status"] == "FAIL"]
    # The console says which rules went unjudged, never a rule line that reads as a defect.
    assert "not judged: " in proc.stdout and "rule:       CAT-RETAIN-UNPUBLISHED" not in proc.stdout
    assert res["requirements"]["CAT-RETAIN-UNPUBLISHED"]["status"] != "FAIL"


def test_entry_point_target(tmp_path: Path, out: Path) -> None:
    dist = tmp_path / "vendor_adapter-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: vendor-adapter\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[lakecert.targets]\nvendor-mem = memory_catalog:MemoryCatalogTarget\n")
    env = {"PYTHONPATH": f"{ADAPTERS}:{tmp_path}"}
    listed = lakecert("targets", env=env).stdout
    assert "vendor-mem" in listed
    proc = lakecert("run", "--target", "vendor-mem", "--out", str(out), env=env)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert results(out)["run_info"]["target"] == "vendor-mem"
