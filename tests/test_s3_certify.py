"""The reference certifies with its tables on S3: moto's server, over real HTTP on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer

from tests.helpers import lakecert, results


@pytest.fixture
def s3_endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test"
    ).create_bucket(Bucket="lake")
    yield endpoint
    server.stop()


def test_reference_certified_on_s3(s3_endpoint: str, tmp_path: Path, out: Path) -> None:
    cfg = tmp_path / "s3.yaml"
    cfg.write_text(
        f"storage: {{kind: s3, endpoint_url: '{s3_endpoint}', bucket: lake, region: us-east-1,"
        " access_key_id: test, secret_access_key: test}\nmodel: {examples: 5, steps: 10}\n"
    )
    proc = lakecert("run", "--config", str(cfg), "--out", str(out))
    res = results(out)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert res["verdict"] == "CERTIFIED"
    assert res["run_info"]["warehouse"].startswith("s3://lake/")
    assert res["run_info"]["config"]["storage"]["secret_access_key"] == "***"
