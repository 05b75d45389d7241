"""moto's S3 server over real HTTP on loopback, with one bucket: the object store of the S3 tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import boto3
from moto.server import ThreadedMotoServer

from reference_impl.storage.s3 import S3Settings

BUCKET = "lakecert-test"


@contextmanager
def moto_s3(bucket: str = BUCKET) -> Iterator[S3Settings]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        s3 = S3Settings(f"http://{host}:{port}", "us-east-1", "testing", "testing")
        boto3.client(
            "s3",
            endpoint_url=s3.endpoint_url,
            region_name=s3.region,
            aws_access_key_id=s3.access_key_id,
            aws_secret_access_key=s3.secret_access_key,
        ).create_bucket(Bucket=bucket)
        yield s3
    finally:
        server.stop()


def storage_config(s3: S3Settings, bucket: str = BUCKET) -> str:
    """The ``storage:`` line of a lakecert configuration that puts the run's tables in ``bucket``."""
    return (
        f"storage: {{kind: s3, endpoint_url: '{s3.endpoint_url}', bucket: {bucket}, region: {s3.region},"
        f" access_key_id: {s3.access_key_id}, secret_access_key: {s3.secret_access_key}}}\n"
    )
