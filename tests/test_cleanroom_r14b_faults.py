"""Every round-14b faulty client variant (tests/cleanroom_r14b/variants.py) misbehaves where the correct
baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from conformance.contract.delta import DeltaClient, MaintenancePolicy
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import ReadError, decode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget
from tests.cleanroom_r14b import variants as v

WAREHOUSE = "mem://warehouse"


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def setup(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[TargetEnv, DurableCatalog, DeltaClient]:
    env = make_env(tmp_path)
    target = target_cls()
    cat = target.make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    return env, cat, target.make_client(cat, env)


def log_of(cat: DurableCatalog, name: str = "t") -> str:
    return f"{cat.resolve(name).location}/_delta_log"


def both(faulty: type[DurableTarget]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (faulty, True)])


class RaceOnce:
    """The catalog, but the first proposal sent through it is preceded by a rival's commit."""

    def __init__(self, inner: Any, rival: Callable[[], object]) -> None:
        self.inner = inner
        self.rival: Callable[[], object] | None = rival

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        if self.rival is not None:
            rival, self.rival = self.rival, None
            rival()
        self.inner.commit(table_id, version, **kwargs)


# ---------------------------------------------------------------- writing clients


@both(v.CheckpointReaderFeaturesTarget)
def test_checkpoint_reader_features(target_cls: type[DurableTarget], faulty: bool, tmp_path: Path) -> None:
    env, cat, client = setup(target_cls, tmp_path)
    client.create_table("t")
    client.append("t", rows(1))
    client.publish("t")
    assert client.checkpoint("t") == 1
    table = pq.read_table(io.BytesIO(env.storage.get(f"{log_of(cat)}/{1:020d}.checkpoint.parquet")))
    protocol = next(r["protocol"] for r in table.to_pylist() if r.get("protocol"))
    assert protocol["minReaderVersion"] == 3 and protocol["minWriterVersion"] == 7
    assert "catalogManaged" in protocol["writerFeatures"]
    assert ("catalogManaged" in protocol["readerFeatures"]) is not faulty
    # every commit still states the right protocol, and reads are right
    v0 = decode(env.storage.get(f"{log_of(cat)}/{0:020d}.json"))
    assert "catalogManaged" in next(a["protocol"] for a in v0 if "protocol" in a)["readerFeatures"]
    assert client.read("t").rows == rows(1)


@both(v.PublishUploadCacheTarget)
def test_publish_upload_cache(target_cls: type[DurableTarget], faulty: bool, tmp_path: Path) -> None:
    env = make_env(tmp_path)
    target = target_cls()
    cat = target.make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    DurableTarget().make_client(cat, env).create_table("t")
    rival = DurableTarget().make_client(cat, env)
    client = target.make_client(RaceOnce(cat, lambda: rival.append("t", rows(99))), env)
    assert client.append("t", rows(1)) == 2  # lost v1 to the rival, rebased
    tid = cat.resolve("t").table_id
    staged = cat.get_commits(tid, 1, 1).commits[0].staged_uri
    assert staged is not None
    ratified = env.storage.get(staged)
    client.publish("t")
    published = env.storage.get(f"{log_of(cat)}/{1:020d}.json")
    assert (published == ratified) is not faulty
    # the log alone (the catalog forgot both commits) loses the rival's row
    reader = DurableTarget().make_client(cat, env)
    assert reader.read("t").rows == (rows(1) if faulty else rows(1, 99))


@both(v.DataFilesJoinedTarget)
def test_data_files_joined(target_cls: type[DurableTarget], faulty: bool, tmp_path: Path) -> None:
    env, cat, client = setup(target_cls, tmp_path)
    client.create_table("t")
    client.append("t", rows(1, 2))
    location = cat.resolve("t").location
    inside = [f.uri for f in env.storage.list(f"{location}/") if f.uri.endswith(".parquet")]
    anywhere = [f.uri for f in env.storage.list(f"{WAREHOUSE}/") if f.uri.endswith(".parquet")]
    assert len(anywhere) == 1
    assert (inside == []) is faulty
    assert client.read("t").rows == rows(1, 2)
    assert DurableTarget().make_client(cat, env).read("t").rows == rows(1, 2)


@both(v.NumericTxnIdTarget)
def test_txnid_numeric(target_cls: type[DurableTarget], faulty: bool, tmp_path: Path) -> None:
    env, cat, client = setup(target_cls, tmp_path)
    client.create_table("t")
    client.append("t", rows(1))
    client.append("t", rows(2))
    client.publish("t")
    ids = []
    for version in range(3):
        info = decode(env.storage.get(f"{log_of(cat)}/{version:020d}.json"))[0]["commitInfo"]
        assert info.get("txnId")  # present and non-empty: what a shallow check looks at
        ids.append(info["txnId"])
    assert len(set(ids)) == 3
    assert all(isinstance(i, str) for i in ids) is not faulty


@both(v.CleanupBeforeCutoffTarget)
def test_cleanup_checkpoint_before_cutoff(target_cls: type[DurableTarget], faulty: bool, tmp_path: Path) -> None:
    env, cat, client = setup(target_cls, tmp_path)
    client.create_table("t")
    client.append("t", rows(1))
    client.append("t", rows(2))
    client.publish("t")
    assert client.checkpoint("t") == 2
    assert client.compact_log("t", 1, 2) is True
    client.cleanup("t", 2)
    log = log_of(cat)
    staged = [f.uri for f in env.storage.list(f"{log}/_staged_commits/")]
    compaction = env.storage.exists(f"{log}/{1:020d}.{2:020d}.compacted.json")
    assert (len(staged) == 2) is faulty and (staged == []) is not faulty
    assert compaction is faulty
    # what must be kept is kept either way
    assert env.storage.exists(f"{log}/{2:020d}.checkpoint.parquet")
    assert env.storage.exists(f"{log}/{2:020d}.json")
    assert client.read("t").rows == rows(1, 2)


class CheckpointOnlyCatalog(DurableCatalog):
    """Correct helper: a catalog whose policy allows checkpoints only."""

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        super().maintenance_policy(table_id)
        return MaintenancePolicy(frozenset({"checkpoint"}))


class NothingAllowedCatalog(DurableCatalog):
    """Correct helper: a catalog whose policy allows no maintenance at all."""

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        super().maintenance_policy(table_id)
        return MaintenancePolicy(frozenset())


@both(v.PolicyAfterJobTarget)
def test_policy_after_job(target_cls: type[DurableTarget], faulty: bool, tmp_path: Path) -> None:
    # the usual probe: a forbidden checkpoint and compaction leave the log as it was
    env = make_env(tmp_path / "none")
    cat = NothingAllowedCatalog(env.warehouse_uri, env.storage, tmp_path / "none-state")
    client = target_cls().make_client(cat, env)
    client.create_table("t")
    client.append("t", rows(1))
    client.publish("t")
    before = [f.uri for f in env.storage.list(f"{log_of(cat)}/")]
    assert client.checkpoint("t") is None
    assert client.compact_log("t", 1, 1) is False
    assert [f.uri for f in env.storage.list(f"{log_of(cat)}/")] == before
    # a cleanup the policy forbids
    env = make_env(tmp_path / "cp")
    cat2 = CheckpointOnlyCatalog(env.warehouse_uri, env.storage, tmp_path / "cp-state")
    client = target_cls().make_client(cat2, env)
    client.create_table("t")
    client.append("t", rows(1))
    client.append("t", rows(2))
    client.publish("t")
    assert client.checkpoint("t") == 2
    before = [f.uri for f in env.storage.list(f"{log_of(cat2)}/")]
    client.cleanup("t", 2)
    after = [f.uri for f in env.storage.list(f"{log_of(cat2)}/")]
    assert (after == before) is not faulty
    assert env.storage.exists(f"{log_of(cat2)}/{0:020d}.json") is not faulty


# ---------------------------------------------------------------- reading clients


@both(v.CheckpointDistrustTarget)
def test_checkpoint_distrust(target_cls: type[DurableTarget], faulty: bool, tmp_path: Path) -> None:
    env, cat, client = setup(target_cls, tmp_path)
    client.create_table("t")
    client.append("t", rows(1))
    client.publish("t")  # v1 published and marked: the catalog forgets it
    client.append("t", rows(2))
    client.append("t", rows(3))
    tid = cat.resolve("t").table_id
    log = log_of(cat)
    # v2 copied to the log by a publisher whose mark never arrived (the RFC's worked example, version 7)
    staged = cat.get_commits(tid, 2, 2).commits[0].staged_uri
    assert staged is not None
    env.storage.put(f"{log}/{2:020d}.json", env.storage.get(staged), if_absent=True)
    assert client.checkpoint("t") == 2
    client.cleanup("t", 2)
    assert [c.version for c in cat.get_commits(tid).commits] == [2, 3]
    assert not env.storage.exists(f"{log}/{1:020d}.json")
    if faulty:
        with pytest.raises(ReadError):
            client.read("t")
    else:
        assert client.read("t").rows == rows(1, 2, 3)


@both(v.CompactionTimelineTarget)
def test_timeline_skips_compacted(target_cls: type[DurableTarget], faulty: bool, tmp_path: Path) -> None:
    env, cat, client = setup(target_cls, tmp_path)
    client.create_table("t")
    for i in (1, 2, 3):
        client.append("t", rows(i))
    client.publish("t")
    log = log_of(cat)
    ict2 = decode(env.storage.get(f"{log}/{2:020d}.json"))[0]["commitInfo"]["inCommitTimestamp"]
    assert client.read("t", timestamp_ms=ict2).version == 2  # right before any compaction
    assert client.compact_log("t", 1, 2) is True
    got = client.read("t", timestamp_ms=ict2)
    assert (got.version, got.rows) == ((0, []) if faulty else (2, rows(1, 2)))
    assert client.read("t", timestamp_ms=ict2 + 10**9).version == 3  # after the range: right either way
