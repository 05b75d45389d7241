"""The recording object-store proxy in front of moto's S3 server: every request forwarded and
recorded in order, chosen requests held until released, refusals passed through."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from conformance.observe.object_proxy import RecordingProxy, curl
from reference_impl.storage.s3 import S3Settings
from tests.moto_s3 import BUCKET, moto_s3


@pytest.fixture(scope="module")
def store() -> Iterator[S3Settings]:
    with moto_s3() as s3:
        yield s3


def client(url: str, s3: S3Settings) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=url,
        region_name=s3.region,
        aws_access_key_id=s3.access_key_id,
        aws_secret_access_key=s3.secret_access_key,
    )


def test_requests_are_forwarded_and_recorded_in_order(store: S3Settings) -> None:
    with RecordingProxy(store.endpoint_url) as proxy:
        s3 = client(proxy.url, store)
        s3.put_object(Bucket=BUCKET, Key="t/_delta_log/0.json", Body=b"v0")
        s3.put_object(Bucket=BUCKET, Key="t/_delta_log/1.json", Body=b"v1", IfNoneMatch="*")
        with pytest.raises(ClientError) as taken:
            s3.put_object(Bucket=BUCKET, Key="t/_delta_log/1.json", Body=b"other", IfNoneMatch="*")
        assert s3.get_object(Bucket=BUCKET, Key="t/_delta_log/0.json")["Body"].read() == b"v0"
        listed = s3.list_objects_v2(Bucket=BUCKET, Prefix="t/")
        s3.delete_object(Bucket=BUCKET, Key="t/_delta_log/0.json")
        events = proxy.events()
    assert taken.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412  # the store's answer, untouched
    assert [o["Key"] for o in listed["Contents"]] == ["t/_delta_log/0.json", "t/_delta_log/1.json"]
    seen = [(e.method, e.path, e.status) for e in events]
    assert seen == [
        ("PUT", f"/{BUCKET}/t/_delta_log/0.json", 200),
        ("PUT", f"/{BUCKET}/t/_delta_log/1.json", 200),
        ("PUT", f"/{BUCKET}/t/_delta_log/1.json", 412),
        ("GET", f"/{BUCKET}/t/_delta_log/0.json", 200),
        ("GET", f"/{BUCKET}", 200),
        ("DELETE", f"/{BUCKET}/t/_delta_log/0.json", 204),
    ]
    assert [e.seq for e in events] == list(range(6))
    assert events[0].body_sha256 == hashlib.sha256(b"v0").hexdigest() and events[0].body_size == 2
    assert events[0].uri == f"s3://{BUCKET}/t/_delta_log/0.json"
    assert "list-type=2" in events[4].query
    assert curl("http://store", events[5]) == f"curl -X DELETE http://store/{BUCKET}/t/_delta_log/0.json"


def test_a_held_request_reaches_the_store_only_when_released(store: S3Settings) -> None:
    direct = client(store.endpoint_url, store)
    with RecordingProxy(store.endpoint_url) as proxy:
        gate = proxy.hold(lambda method, path: method == "PUT" and path.endswith("/held.json"))
        s3 = client(proxy.url, store)
        writer = threading.Thread(target=lambda: s3.put_object(Bucket=BUCKET, Key="h/held.json", Body=b"x"))
        writer.start()
        assert gate.arrived.wait(60), "the held request never arrived"
        s3.put_object(Bucket=BUCKET, Key="h/other.json", Body=b"y")  # others pass meanwhile
        with pytest.raises(ClientError):
            direct.head_object(Bucket=BUCKET, Key="h/held.json")
        gate.release()
        writer.join(60)
        assert not writer.is_alive()
        assert direct.get_object(Bucket=BUCKET, Key="h/held.json")["Body"].read() == b"x"
        paths = [e.path for e in proxy.events()]
    assert paths == [f"/{BUCKET}/h/other.json", f"/{BUCKET}/h/held.json"]  # recorded when the store answered


def test_observers_see_each_event_once_in_order(store: S3Settings) -> None:
    seen: list[int] = []
    with RecordingProxy(store.endpoint_url) as proxy:
        proxy.observers.append(lambda e: seen.append(e.seq))
        s3 = client(proxy.url, store)
        for i in range(3):
            s3.put_object(Bucket=BUCKET, Key=f"o/{i}", Body=b"z")
    assert seen == [0, 1, 2]


def test_only_http_upstreams() -> None:
    with pytest.raises(ValueError):
        RecordingProxy("ftp://127.0.0.1:1")
