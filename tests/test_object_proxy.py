"""The recording object-store proxy in front of moto's S3 server: every request forwarded and
recorded in order (per client, by the access key id of its signature), chosen requests held until
released, a writer's commit-file PUT held until released, conditional writes kept conditional,
refusals passed through, and bad input answered without changing anything."""

from __future__ import annotations

import hashlib
import http.client
import threading
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from conformance.observe.object_proxy import RecordingProxy, curl
from reference_impl.storage.s3 import S3Settings
from tests.moto_s3 import BUCKET, moto_s3

COMMIT = "c/_delta_log/00000000000000000003.json"


@pytest.fixture(scope="module")
def store() -> Iterator[S3Settings]:
    with moto_s3() as s3:
        yield s3


@pytest.fixture(scope="module")
def proxy(store: S3Settings) -> Iterator[RecordingProxy]:
    """One proxy for the tests of writers told apart by their access key ids (keys outside ``t/``)."""
    with RecordingProxy(store.endpoint_url) as p:
        yield p


def client(url: str, s3: S3Settings) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=url,
        region_name=s3.region,
        aws_access_key_id=s3.access_key_id,
        aws_secret_access_key=s3.secret_access_key,
    )


def signed_as(proxy: RecordingProxy, key_id: str) -> Any:
    return boto3.client(
        "s3", endpoint_url=proxy.url, region_name="us-east-1", aws_access_key_id=key_id, aws_secret_access_key="x"
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
    assert {e.client for e in events} == {store.access_key_id}
    assert [e.conditional for e in events] == [False, True, True, False, False, False]
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


def test_records_each_client_in_order(proxy: RecordingProxy) -> None:
    s3 = signed_as(proxy, "alice")
    s3.put_object(Bucket=BUCKET, Key="c/a.parquet", Body=b"abc")
    assert s3.get_object(Bucket=BUCKET, Key="c/a.parquet")["Body"].read() == b"abc"
    assert s3.head_object(Bucket=BUCKET, Key="c/a.parquet")["ContentLength"] == 3
    mine = [(e.method, e.path, e.status) for e in proxy.events("alice")]
    assert mine == [
        ("PUT", f"/{BUCKET}/c/a.parquet", 200),
        ("GET", f"/{BUCKET}/c/a.parquet", 200),
        ("HEAD", f"/{BUCKET}/c/a.parquet", 200),
    ]
    assert [e.seq for e in proxy.events()] == sorted(e.seq for e in proxy.events())


def test_holds_the_armed_commit_put_until_released(proxy: RecordingProxy) -> None:
    held, other = signed_as(proxy, "w0"), signed_as(proxy, "w1")
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
    loser = [e for e in proxy.events("w0") if e.commit_version == 3]
    assert [(e.status, e.conditional) for e in loser] == [(412, True)]


def test_an_armed_hold_takes_only_the_next_commit_put(proxy: RecordingProxy) -> None:
    """Re-arming withdraws an unreached hold; once a PUT is held, the client's later ones pass."""
    s3 = signed_as(proxy, "erin")
    proxy.arm("erin")
    proxy.arm("erin")  # the first arm never took a PUT
    key = "e/_delta_log/00000000000000000001.json"
    first = threading.Thread(target=lambda: s3.put_object(Bucket=BUCKET, Key=key, Body=b"{}"))
    first.start()
    assert proxy.wait_held("erin", 60)
    s3.put_object(Bucket=BUCKET, Key="e/_delta_log/00000000000000000002.json", Body=b"{}")  # passes
    proxy.release("erin")
    first.join(60)
    assert not first.is_alive()
    assert [e.commit_version for e in proxy.events("erin")] == [2, 1]  # the held one answered last
    assert not proxy.wait_held("erin", 0) and proxy.held_key("erin") == ""  # nothing armed any more


def test_conditional_put_refused_when_the_version_exists(proxy: RecordingProxy) -> None:
    s3 = signed_as(proxy, "carol")
    key = "u/_delta_log/00000000000000000000.json"
    s3.put_object(Bucket=BUCKET, Key=key, Body=b"{}", IfNoneMatch="*")
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=BUCKET, Key=key, Body=b"{}", IfNoneMatch="*")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412


def test_unarmed_commit_puts_pass(proxy: RecordingProxy) -> None:
    s3 = signed_as(proxy, "dave")
    s3.put_object(Bucket=BUCKET, Key="v/_delta_log/00000000000000000000.json", Body=b"{}")
    assert proxy.events("dave")[-1].commit_version == 0


def test_garbage_request_gets_an_answer_and_changes_nothing(proxy: RecordingProxy) -> None:
    before = len(proxy.events())
    host, port = proxy.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("BREW", "/%%%", body=b"\x00" * 10)
    assert conn.getresponse().status == 405
    conn.close()
    assert [e.status for e in proxy.events()[before:]] == [405]  # recorded, not forwarded
