"""The holding object-store proxy in front of moto's S3: it forwards and records every request in
order, holds a writer's commit-file PUT until released, keeps conditional writes conditional,
and survives bad input."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from conformance.observe.holding_proxy import HoldingProxy
from tests.moto_s3 import BUCKET, moto_s3

COMMIT = "t/_delta_log/00000000000000000003.json"


@pytest.fixture(scope="module")
def proxy() -> Iterator[HoldingProxy]:
    with moto_s3() as s3, HoldingProxy(s3.endpoint_url) as p:
        yield p


def _s3(proxy: HoldingProxy, client: str) -> Any:
    return boto3.client(
        "s3", endpoint_url=proxy.url, region_name="us-east-1", aws_access_key_id=client, aws_secret_access_key="x"
    )


def test_forwards_and_records_in_order(proxy: HoldingProxy) -> None:
    s3 = _s3(proxy, "alice")
    s3.put_object(Bucket=BUCKET, Key="t/a.parquet", Body=b"abc")
    assert s3.get_object(Bucket=BUCKET, Key="t/a.parquet")["Body"].read() == b"abc"
    assert s3.head_object(Bucket=BUCKET, Key="t/a.parquet")["ContentLength"] == 3
    mine = [(r.method, r.key, r.status) for r in proxy.log("alice")]
    assert mine == [
        ("PUT", f"/{BUCKET}/t/a.parquet", 200),
        ("GET", f"/{BUCKET}/t/a.parquet", 200),
        ("HEAD", f"/{BUCKET}/t/a.parquet", 200),
    ]
    assert [r.seq for r in proxy.log()] == sorted(r.seq for r in proxy.log())


def test_holds_the_armed_commit_put_until_released(proxy: HoldingProxy) -> None:
    held, other = _s3(proxy, "w0"), _s3(proxy, "w1")
    proxy.arm("w0")
    result: dict[str, object] = {}

    def put() -> None:
        try:
            result["r"] = held.put_object(Bucket=BUCKET, Key=COMMIT, Body=b"{}", IfNoneMatch="*")
        except ClientError as e:
            result["error"] = e.response["ResponseMetadata"]["HTTPStatusCode"]

    thread = threading.Thread(target=put)
    thread.start()
    assert proxy.wait_held("w0", 60)
    assert proxy.held_key("w0").endswith(COMMIT)
    other.put_object(Bucket=BUCKET, Key=COMMIT, Body=b"{}", IfNoneMatch="*")  # the other writer wins the version
    assert "r" not in result
    proxy.release("w0")
    thread.join(60)
    assert not thread.is_alive() and result == {"error": 412}  # the held PUT lost the version
    loser = [r for r in proxy.log("w0") if r.commit_version == 3]
    assert [(r.status, r.conditional) for r in loser] == [(412, True)]


def test_conditional_put_refused_when_the_version_exists(proxy: HoldingProxy) -> None:
    s3 = _s3(proxy, "carol")
    key = "u/_delta_log/00000000000000000000.json"
    s3.put_object(Bucket=BUCKET, Key=key, Body=b"{}", IfNoneMatch="*")
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=BUCKET, Key=key, Body=b"{}", IfNoneMatch="*")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412


def test_unarmed_commit_puts_pass(proxy: HoldingProxy) -> None:
    s3 = _s3(proxy, "dave")
    s3.put_object(Bucket=BUCKET, Key="v/_delta_log/00000000000000000000.json", Body=b"{}")
    assert proxy.log("dave")[-1].commit_version == 0


def test_garbage_request_gets_an_answer_and_changes_nothing(proxy: HoldingProxy) -> None:
    before = len(proxy.log())
    host, port = proxy.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("BREW", "/%%%", body=b"\x00" * 10)
    assert conn.getresponse().status == 405
    conn.close()
    assert [r.status for r in proxy.log()[before:]] == [405]  # recorded, not forwarded


def test_rejects_a_non_http_upstream() -> None:
    with pytest.raises(ValueError):
        HoldingProxy("ftp://127.0.0.1:21")
