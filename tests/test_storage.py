"""LocalStorage and S3Storage (against moto's server over real HTTP)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.contract.delta import Storage
from reference_impl.storage import LocalStorage, RoutingStorage, S3Storage, make_storage
from reference_impl.storage.local import path_to_uri, uri_to_path
from reference_impl.storage.s3 import S3Settings
from tests.moto_s3 import BUCKET


def s3_storage(s3: S3Settings) -> S3Storage:
    return S3Storage(
        endpoint_url=s3.endpoint_url,
        aws_access_key_id=s3.access_key_id,
        aws_secret_access_key=s3.secret_access_key,
        region_name=s3.region,
    )


@pytest.fixture(params=["file", "s3"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Storage, str]:
    """A storage and a fresh root URI in it."""
    if request.param == "file":
        return LocalStorage(), path_to_uri(tmp_path / "root")
    return s3_storage(request.getfixturevalue("s3")), f"s3://{BUCKET}/{tmp_path.name}"


def race(n: int, attempt: Callable[[int], None]) -> list[int]:
    """Run ``attempt(i)`` on n threads released together; the indexes that did not raise."""
    barrier = threading.Barrier(n)
    winners: list[int] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            attempt(i)
        except FileExistsError:
            return
        winners.append(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return winners


def test_put_get_overwrite(root: tuple[Storage, str]) -> None:
    storage, base = root
    storage.put(f"{base}/a/b.json", b"one")
    storage.put(f"{base}/a/b.json", b"two")
    assert storage.get(f"{base}/a/b.json") == b"two"
    assert storage.exists(f"{base}/a/b.json")
    assert not storage.exists(f"{base}/a/c.json")


def test_get_missing(root: tuple[Storage, str]) -> None:
    storage, base = root
    with pytest.raises(FileNotFoundError):
        storage.get(f"{base}/missing.json")


def test_put_if_absent_refuses_existing(root: tuple[Storage, str]) -> None:
    storage, base = root
    storage.put(f"{base}/x.json", b"first", if_absent=True)
    with pytest.raises(FileExistsError):
        storage.put(f"{base}/x.json", b"second", if_absent=True)
    assert storage.get(f"{base}/x.json") == b"first"


def test_put_if_absent_race_has_one_winner(root: tuple[Storage, str]) -> None:
    storage, base = root
    for key in range(3):
        uri = f"{base}/race/{key}.json"

        def put(i: int, uri: str = uri) -> None:
            storage.put(uri, f"writer {i}".encode() * 100, if_absent=True)

        winners = race(8, put)
        assert len(winners) == 1
        assert storage.get(uri) == f"writer {winners[0]}".encode() * 100


def test_list_recursive_sorted(root: tuple[Storage, str]) -> None:
    storage, base = root
    for name in ["t/_delta_log/b.json", "t/_delta_log/a.json", "t/data/p.parquet", "t2/z.json"]:
        storage.put(f"{base}/{name}", b"12345")
    listed = storage.list(f"{base}/t")
    assert [f.uri for f in listed] == [
        f"{base}/t/_delta_log/a.json",
        f"{base}/t/_delta_log/b.json",
        f"{base}/t/data/p.parquet",
    ]
    assert [f.size for f in listed] == [5, 5, 5]
    assert all(f.mtime_ms > 1_600_000_000_000 for f in listed)
    assert [f.uri for f in storage.list(f"{base}/t/")] == [f.uri for f in listed]


def test_list_missing_prefix_is_empty(root: tuple[Storage, str]) -> None:
    storage, base = root
    assert storage.list(f"{base}/nothing/here") == []


def test_delete_ignores_missing(root: tuple[Storage, str]) -> None:
    storage, base = root
    storage.put(f"{base}/d.json", b"x")
    storage.delete(f"{base}/d.json")
    storage.delete(f"{base}/d.json")
    assert not storage.exists(f"{base}/d.json")
    assert storage.list(base) == []


def test_local_uri_helpers(tmp_path: Path) -> None:
    assert uri_to_path("file:///tmp/x/y") == Path("/tmp/x/y")
    assert path_to_uri("/tmp/x/y") == "file:///tmp/x/y"
    assert uri_to_path(path_to_uri(tmp_path)) == tmp_path
    for bad in ["/tmp/x", "file://host/x", "s3://b/k", "file:relative"]:
        with pytest.raises(ValueError):
            uri_to_path(bad)
    with pytest.raises(ValueError):
        path_to_uri("relative/path")


def test_local_temp_files_are_never_listed(tmp_path: Path) -> None:
    storage = LocalStorage()
    base = path_to_uri(tmp_path)
    storage.put(f"{base}/log/0.json", b"x")
    (tmp_path / "log" / ".tmp-leftover").write_bytes(b"half")
    assert [f.uri for f in storage.list(base)] == [f"{base}/log/0.json"]
    assert sorted(p.name for p in (tmp_path / "log").iterdir()) == [".tmp-leftover", "0.json"]


def test_local_put_if_absent_leaves_no_temp_files(tmp_path: Path) -> None:
    storage = LocalStorage(fsync=True)
    uri = path_to_uri(tmp_path / "k.json")
    storage.put(uri, b"a", if_absent=True)
    with pytest.raises(FileExistsError):
        storage.put(uri, b"b", if_absent=True)
    assert [p.name for p in tmp_path.iterdir()] == ["k.json"]


def test_s3_missing_bucket_lists_empty(s3: S3Settings) -> None:
    storage = s3_storage(s3)
    assert storage.list("s3://no-such-bucket-here/x") == []


def test_routing_by_scheme(s3: S3Settings, tmp_path: Path) -> None:
    storage = make_storage(
        s3.endpoint_url,
        aws_access_key_id=s3.access_key_id,
        aws_secret_access_key=s3.secret_access_key,
        region_name=s3.region,
    )
    local_uri = path_to_uri(tmp_path / "a.json")
    s3_uri = f"s3://{BUCKET}/routing/a.json"
    storage.put(local_uri, b"local")
    storage.put(s3_uri, b"remote")
    assert storage.get(local_uri) == b"local"
    assert storage.get(s3_uri) == b"remote"
    assert (tmp_path / "a.json").read_bytes() == b"local"
    assert [f.uri for f in storage.list(f"s3://{BUCKET}/routing")] == [s3_uri]
    assert isinstance(storage, Storage)
    with pytest.raises(ValueError):
        storage.get("gs://bucket/key")
    with pytest.raises(ValueError):
        RoutingStorage({"file": LocalStorage()}).get(s3_uri)
