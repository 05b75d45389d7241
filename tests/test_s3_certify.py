"""The reference certifies with its tables on S3: moto's server, over real HTTP on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from reference_impl.storage.s3 import S3Settings
from tests.helpers import lakecert, results
from tests.moto_s3 import BUCKET, storage_config


@pytest.mark.slow(seconds=200)
def test_reference_certified_on_s3(s3: S3Settings, tmp_path: Path, out: Path) -> None:
    cfg = tmp_path / "s3.yaml"
    # The quick budget: every history step is several S3 round trips through moto (the default
    # budget's histories took 113 s of a 171 s run here); tests/test_selftest.py judges the default.
    cfg.write_text(storage_config(s3) + "model: {examples: 5, steps: 10}\ndelta: {budget: quick}\n")
    proc = lakecert("run", "--config", str(cfg), "--out", str(out))
    res = results(out)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert res["verdict"] == "CERTIFIED"
    assert res["run_info"]["warehouse"].startswith(f"s3://{BUCKET}/")
    assert res["run_info"]["config"]["storage"]["secret_access_key"] == "***"
