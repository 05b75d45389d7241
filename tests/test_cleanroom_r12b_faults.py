"""Every round-12b faulty client (tests/cleanroom_r12b/variants.py) misbehaves where the correct baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import CatalogTimeout, FileInfo, MaintenancePolicy, ReadResult
from tests.cleanroom.client import ReadError, decode, encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, ResilientClient
from tests.cleanroom_r12b import variants as v

WAREHOUSE = "mem://warehouse"


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def setup(tmp_path: Path, catalog_cls: type[DurableCatalog] = DurableCatalog) -> tuple[DurableCatalog, MemoryStorage]:
    store = MemoryStorage()
    return catalog_cls(WAREHOUSE, store, tmp_path / "state"), store


def log_of(cat: DurableCatalog, name: str = "t") -> str:
    return f"{cat.resolve(name).location}/_delta_log"


def test_variants_are_listed() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names)) == 8
    for x in v.VARIANTS:
        assert x.name.startswith(("cr12b-wrt-", "cr12b-rdr-"))
        assert x.doc.startswith(x.name)
        assert x.target.startswith("tests.cleanroom_r12b.variants:")


# ---------------------------------------------------------------- writers


class NoChecksumCatalog(DurableCatalog):
    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        super().maintenance_policy(table_id)
        return MaintenancePolicy(frozenset({"checkpoint", "log_compaction", "metadata_cleanup", "vacuum"}))


@pytest.mark.parametrize(("cls", "faulty"), [(ResilientClient, False), (v.PostCommitChecksumClient, True)])
def test_postcommit_checksum(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    cat, store = setup(tmp_path, NoChecksumCatalog)
    client = cls(cat, store)
    client.create_table("t")
    client.append("t", rows(1, 2))
    client.delete("t", [1])
    crcs = [f.uri for f in store.list(f"{log_of(cat)}/") if f.uri.endswith(".crc")]
    assert bool(crcs) is faulty  # the policy forbids "checksum"


@pytest.mark.parametrize(("cls", "faulty"), [(ResilientClient, False), (v.CompactionCancelsOutClient, True)])
def test_compaction_cancels_out(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    cat, store = setup(tmp_path)
    client = cls(cat, store)
    client.create_table("t")
    client.append("t", rows(1))
    client.append("t", rows(2))  # v2 adds a file ...
    client.delete("t", [2])  # ... v3 removes it
    client.publish("t")
    assert client.compact_log("t", 2, 3)
    body = decode(store.get(f"{log_of(cat)}/{2:020d}.{3:020d}.compacted.json"))
    removes = [a for a in body if "remove" in a]
    assert (removes == []) is faulty  # the tombstone of the file born and removed in 2..3
    assert client.read("t").rows == rows(1)  # the live files are right either way


class LoseCommitThenRecovery:
    """The nemesis twice in one operation: the proposal's answer is lost, then the next listing's."""

    def __init__(self, inner: DurableCatalog) -> None:
        self.inner = inner
        self.armed = False
        self.listing_armed = False

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        self.inner.commit(table_id, version, **kwargs)
        if self.armed:
            self.armed = False
            self.listing_armed = True
            raise CatalogTimeout("answer to commit lost")

    def get_commits(self, table_id: str, start_version: int | None = None, end_version: int | None = None) -> Any:
        out = self.inner.get_commits(table_id, start_version, end_version)
        if self.listing_armed:
            self.listing_armed = False
            raise CatalogTimeout("answer to get_commits lost")
        return out

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)


@pytest.mark.parametrize(("cls", "faulty"), [(ResilientClient, False), (v.OutcomeUnknownAssumedLostClient, True)])
def test_outcome_unknown_assumed_lost(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    cat, store = setup(tmp_path)
    ResilientClient(cat, store).create_table("t")
    lossy = LoseCommitThenRecovery(cat)
    client = cls(lossy, store)
    lossy.armed = True
    version = client.append("t", rows(1))
    latest = cat.get_commits(cat.resolve("t").table_id).latest_version
    if faulty:
        assert (version, latest) == (2, 2)  # the change landed twice: v1 and v2
    else:
        assert (version, latest) == (1, 1)


@pytest.mark.parametrize(("cls", "faulty"), [(ResilientClient, False), (v.CleanupPartialMultipartClient, True)])
def test_cleanup_partial_multipart(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    cat, store = setup(tmp_path)
    client = cls(cat, store)
    client.create_table("t")
    for i in range(1, 5):
        client.append("t", rows(i))
    client.publish("t")
    log = log_of(cat)
    # Part 1 of a 2-part checkpoint of v3 whose writer died before part 2: no checkpoint.
    store.put(f"{log}/{3:020d}.checkpoint.{1:010d}.{2:010d}.parquet", b"PAR1 part one of two")
    client.cleanup("t", 4)
    assert store.exists(f"{log}/{0:020d}.json") is not faulty
    if faulty:
        with pytest.raises(ReadError):
            ResilientClient(cat, store).read("t", version=1)
    else:
        assert ResilientClient(cat, store).read("t", version=1).rows == rows(1)


class SlowPutStorage(MemoryStorage):
    """A store whose PUT of one published version is slow; records the order published files land in."""

    def __init__(self, inner: MemoryStorage, slow: str) -> None:
        super().__init__()
        self.inner = inner
        self.slow = slow
        self.landed: list[str] = []
        self.order_lock = threading.Lock()

    def put(self, uri: str, data: bytes, *, if_absent: bool = False) -> None:
        if uri.endswith(self.slow):
            time.sleep(0.3)
        self.inner.put(uri, data, if_absent=if_absent)
        if "_staged_commits" not in uri and uri.endswith(".json"):
            with self.order_lock:
                self.landed.append(uri.rsplit("/", 1)[1])

    def get(self, uri: str) -> bytes:
        return self.inner.get(uri)

    def list(self, prefix_uri: str) -> list[FileInfo]:
        return self.inner.list(prefix_uri)

    def delete(self, uri: str) -> None:
        self.inner.delete(uri)

    def exists(self, uri: str) -> bool:
        return self.inner.exists(uri)


@pytest.mark.parametrize(("cls", "faulty"), [(ResilientClient, False), (v.ParallelPublishClient, True)])
def test_parallel_publish(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    cat, store = setup(tmp_path)
    writer = ResilientClient(cat, store)
    writer.create_table("t")
    for i in range(1, 5):
        writer.append("t", rows(i))
    slow = SlowPutStorage(store, f"/_delta_log/{2:020d}.json")
    cls(cat, slow).publish("t")
    assert sorted(slow.landed) == [f"{i:020d}.json" for i in range(1, 5)]  # complete in the end
    assert (slow.landed != sorted(slow.landed)) is faulty  # v3 landed before v2


# ---------------------------------------------------------------- readers


@pytest.mark.parametrize(("cls", "faulty"), [(ResilientClient, False), (v.PublishedListingCacheClient, True)])
def test_listing_cache_by_latest(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    cat, store = setup(tmp_path)
    writer = ResilientClient(cat, store)
    writer.create_table("t")
    for i in range(1, 4):
        writer.append("t", rows(i))
    reader = cls(cat, store)
    assert reader.read("t").rows == rows(1, 2, 3)
    writer.publish("t")  # the catalog drops v1-v3; the latest version stays 3
    if faulty:
        with pytest.raises(ReadError):
            reader.read("t")
    else:
        assert reader.read("t") == cls(cat, store).read("t")


@pytest.mark.parametrize(("cls", "faulty"), [(ResilientClient, False), (v.CompactionOverCatalogClient, True)])
def test_compaction_over_catalog(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    cat, store = setup(tmp_path)
    writer = ResilientClient(cat, store)
    writer.create_table("t")
    writer.append("t", rows(1))
    writer.append("t", rows(2))  # v1, v2 ratified, unpublished: the catalog serves them
    location = cat.resolve("t").location
    log = log_of(cat)
    rogue_add = writer.write_data(location, rows(99))
    ci = {"commitInfo": {"inCommitTimestamp": 1, "timestamp": 1, "txnId": "rogue", "operation": "WRITE"}}
    for ver in (1, 2):  # a rogue filesystem writer's versions 1-2, and their compaction
        store.put(f"{log}/{ver:020d}.json", encode([ci, rogue_add]))
    store.put(f"{log}/{1:020d}.{2:020d}.compacted.json", encode([rogue_add]))
    got = cls(cat, store).read("t")
    assert got.version == 2
    assert (got.rows == rows(99)) is faulty
    if not faulty:
        assert got.rows == rows(1, 2)


@pytest.mark.parametrize(("cls", "faulty"), [(ResilientClient, False), (v.TimelineUnboundedListingClient, True)])
def test_timeline_unbounded_listing(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    cat, store = setup(tmp_path)
    writer = ResilientClient(cat, store)
    writer.create_table("t")
    writer.append("t", rows(1))
    writer.publish("t")
    now = writer.now_ms()
    ci = {"commitInfo": {"inCommitTimestamp": now, "timestamp": now, "txnId": "rogue", "operation": "WRITE"}}
    store.put(f"{log_of(cat)}/{2:020d}.json", encode([ci]))  # above the catalog's latest (1)
    reader = cls(cat, store)
    assert reader.read("t").version == 1  # the latest snapshot ignores it either way
    if faulty:
        with pytest.raises(ReadError):
            reader.read("t", timestamp_ms=now + 60_000)
    else:
        assert reader.read("t", timestamp_ms=now + 60_000) == ReadResult(1, rows(1))
