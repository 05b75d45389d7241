"""Every round-9 (writer B) faulty variant misbehaves where the correct baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import MaintenancePolicy
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import ReadError, decode, encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r9b import variants as v

WAREHOUSE = "mem://warehouse"


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def setup(target_cls: type[DurableTarget], tmp_path: Path, name: str = "t") -> tuple[Any, Any, TargetEnv]:
    """A catalog, a client of ``target_cls`` and a created table ``name``."""
    env = make_env(tmp_path)
    target = target_cls()
    cat = target.make_catalog(env)
    client = target.make_client(cat, env)
    client.create_table(name)
    return cat, client, env


def delta(env: TargetEnv, cat: Any, version: int, name: str = "t") -> str:
    return f"{cat.resolve(name).location}/_delta_log/{version:020d}.json"


def ict_now() -> int:
    return time.time_ns() // 1_000_000 + 1_000


# ---------------------------------------------------------------- writers


@pytest.mark.parametrize("target_cls", [DurableTarget, v.PublishSkipsInlineTarget])
def test_publish_skips_inline(target_cls: type[DurableTarget], tmp_path: Path) -> None:
    cat, client, env = setup(target_cls, tmp_path)
    client.append("t", rows(1))  # v1 staged
    tid = cat.resolve("t").table_id
    foreign = encode([{"commitInfo": {"inCommitTimestamp": ict_now(), "txnId": "foreign-2"}}])
    cat.commit(tid, 2, inline_content=foreign)  # another writer's inline commit
    time.sleep(0.002)
    client.append("t", rows(3))  # v3 staged
    client.publish("t")
    exists = [env.storage.exists(delta(env, cat, ver)) for ver in range(4)]
    if target_cls is DurableTarget:
        assert exists == [True, True, True, True]
        assert client.read("t").rows == rows(1, 3)
    else:
        assert exists == [True, True, False, True]  # v3 published before v2; v2 never
        with pytest.raises(ReadError):
            client.read("t")


@pytest.mark.parametrize("target_cls", [DurableTarget, v.PublishFinalNewlineTarget])
def test_publish_final_newline(target_cls: type[DurableTarget], tmp_path: Path) -> None:
    cat, client, env = setup(target_cls, tmp_path)
    tid = cat.resolve("t").table_id
    foreign = encode([{"commitInfo": {"inCommitTimestamp": ict_now(), "txnId": "foreign-1"}}]).rstrip(b"\n")
    cat.commit(tid, 1, inline_content=foreign)
    client.publish("t")
    published = env.storage.get(delta(env, cat, 1))
    if target_cls is DurableTarget:
        assert published == foreign
    else:
        assert published == foreign + b"\n"


def _txn_ids(client: Any, cat: Any, env: TargetEnv, name: str) -> list[str]:
    loc = cat.resolve(name).location
    out = []
    for ver in (0, 1):
        commits = cat.get_commits(cat.resolve(name).table_id, ver, ver).commits
        content = client.content(commits[0]) if commits else env.storage.get(f"{loc}/_delta_log/{ver:020d}.json")
        out.append(decode(content)[0]["commitInfo"]["txnId"])
    return out


@pytest.mark.parametrize("target_cls", [DurableTarget, v.TxnIdSeededRngTarget])
def test_txnid_seeded_rng(target_cls: type[DurableTarget], tmp_path: Path) -> None:
    env = make_env(tmp_path)
    target = target_cls()
    cat = target.make_catalog(env)
    for _ in range(50):  # two clients built in the same second
        a, b = target.make_client(cat, env), target.make_client(cat, env)
        if getattr(a, "txn_seed", 0) == getattr(b, "txn_seed", 0):
            break
    a.create_table("ta")
    b.create_table("tb")
    a.append("ta", rows(1))
    b.append("tb", rows(2))
    ids = _txn_ids(a, cat, env, "ta") + _txn_ids(b, cat, env, "tb")
    if target_cls is DurableTarget:
        assert len(set(ids)) == 4
    else:
        assert len(set(ids)) == 2  # each of a's commits shares its txnId with b's


@pytest.mark.parametrize("target_cls", [DurableTarget, v.CleanupSupersededCheckpointsTarget])
def test_cleanup_superseded_checkpoints(target_cls: type[DurableTarget], tmp_path: Path) -> None:
    cat, client, env = setup(target_cls, tmp_path)
    client.append("t", rows(1))
    client.publish("t")
    assert client.checkpoint("t") == 1
    client.append("t", rows(2))
    client.append("t", rows(3))
    client.publish("t")
    assert client.checkpoint("t") == 3
    client.cleanup("t", 2)  # cut-off checkpoint: 1
    loc = cat.resolve("t").location
    kept = env.storage.exists(f"{loc}/_delta_log/{1:020d}.checkpoint.parquet")
    if target_cls is DurableTarget:
        assert kept
        assert client.read("t", version=2).rows == rows(1, 2)
    else:
        assert not kept
        with pytest.raises(ReadError):
            client.read("t", version=2)


class NoCleanupCatalog(DurableCatalog):
    """Test helper: a catalog whose policy forbids metadata cleanup."""

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        return MaintenancePolicy(frozenset({"checkpoint", "log_compaction", "checksum", "vacuum"}))


@pytest.mark.parametrize("client_cls", [ResilientClient, v.CheckpointTidiesStagedClient])
def test_checkpoint_tidies_staged(client_cls: type[ResilientClient], tmp_path: Path) -> None:
    env = make_env(tmp_path)
    cat = NoCleanupCatalog(WAREHOUSE, env.storage, tmp_path / "state")
    client = client_cls(cat, env.storage)
    client.create_table("t")
    client.append("t", rows(1))
    client.publish("t")
    staged = f"{cat.resolve('t').location}/_delta_log/_staged_commits/"
    assert len(env.storage.list(staged)) == 1
    client.cleanup("t", 1)
    assert len(env.storage.list(staged)) == 1  # cleanup honours the policy in both
    assert client.checkpoint("t") == 1
    left = len(env.storage.list(staged))
    assert left == (1 if client_cls is ResilientClient else 0)


@pytest.mark.parametrize("target_cls", [DurableTarget, v.CleanupStagedByMtimeTarget])
def test_cleanup_staged_by_mtime(target_cls: type[DurableTarget], tmp_path: Path) -> None:
    cat, client, env = setup(target_cls, tmp_path)
    client.append("t", rows(1))
    client.publish("t")
    client.append("t", rows(2))  # v2: ratified, unpublished, staged before the checkpoint
    time.sleep(0.005)
    assert client.checkpoint("t") == 1
    client.cleanup("t", 1)
    if target_cls is DurableTarget:
        assert client.read("t").rows == rows(1, 2)
    else:
        with pytest.raises(FileNotFoundError):
            client.read("t")


# ---------------------------------------------------------------- readers


@pytest.mark.parametrize("target_cls", [DurableTarget, v.InlineReplayedFirstTarget])
def test_inline_replayed_first(target_cls: type[DurableTarget], tmp_path: Path) -> None:
    cat, client, env = setup(target_cls, tmp_path)
    client.append("t", rows(1))  # v1 staged, unpublished
    tid = cat.resolve("t").table_id
    add = next(a for a in decode(client.content(cat.get_commits(tid, 1, 1).commits[0])) if "add" in a)["add"]
    remove = {"remove": {"path": add["path"], "deletionTimestamp": ict_now(), "dataChange": True}}
    foreign = encode([{"commitInfo": {"inCommitTimestamp": ict_now(), "txnId": "foreign-2"}}, remove])
    cat.commit(tid, 2, inline_content=foreign)  # another writer deletes v1's file, inline
    time.sleep(0.002)
    client.append("t", rows(3))  # v3 staged
    got = client.read("t").rows
    assert got == (rows(3) if target_cls is DurableTarget else rows(1, 3))


@pytest.mark.parametrize("target_cls", [DurableTarget, v.TimestampMemoTarget])
def test_timestamp_memo(target_cls: type[DurableTarget], tmp_path: Path) -> None:
    cat, client, env = setup(target_cls, tmp_path)
    client.append("t", rows(1))
    later = time.time_ns() // 1_000_000 + 60_000  # a minute ahead
    assert client.read("t", timestamp_ms=later).version == 1
    client.append("t", rows(2))  # its in-commit timestamp is before ``later``
    got = client.read("t", timestamp_ms=later)
    if target_cls is DurableTarget:
        assert (got.version, got.rows) == (2, rows(1, 2))
    else:
        assert (got.version, got.rows) == (1, rows(1))


@pytest.mark.parametrize("target_cls", [DurableTarget, v.TimestampZeroFalsyTarget])
def test_timestamp_zero(target_cls: type[DurableTarget], tmp_path: Path) -> None:
    cat, client, env = setup(target_cls, tmp_path)
    client.append("t", rows(1))
    with pytest.raises(ReadError):
        client.read("t", timestamp_ms=1)  # both refuse a time just after the epoch
    if target_cls is DurableTarget:
        with pytest.raises(ReadError):
            client.read("t", timestamp_ms=0)
    else:
        assert client.read("t", timestamp_ms=0).version == 1


@pytest.mark.parametrize("target_cls", [DurableTarget, v.LastCheckpointPointerTarget])
def test_last_checkpoint_pointer(target_cls: type[DurableTarget], tmp_path: Path) -> None:
    cat, client, env = setup(target_cls, tmp_path)
    client.create_table("other")
    client.append("other", rows(1))
    client.append("other", rows(2))
    client.publish("other")
    assert client.checkpoint("other") == 2
    client.append("t", rows(1))
    client.publish("t")
    assert client.checkpoint("t") == 1
    # A checkpoint above t's latest ratified version (1), with its pointer, as a rogue writer leaves it.
    src = f"{cat.resolve('other').location}/_delta_log/{2:020d}.checkpoint.parquet"
    log = f"{cat.resolve('t').location}/_delta_log"
    env.storage.put(f"{log}/{2:020d}.checkpoint.parquet", env.storage.get(src))
    env.storage.put(f"{log}/_last_checkpoint", json.dumps({"version": 2, "size": 4}).encode())
    other = cat.resolve("other").location
    for f in env.storage.list(f"{other}/"):  # its data files too, so that the planted state is readable
        rel = f.uri[len(other) + 1 :]
        if "/" not in rel and rel.endswith(".parquet"):
            env.storage.put(f"{cat.resolve('t').location}/{rel}", env.storage.get(f.uri))
    got = client.read("t")
    assert client.read("t", version=0).rows == []  # older versions take the LIST path in both
    if target_cls is DurableTarget:
        assert (got.version, got.rows) == (1, rows(1))
    else:
        assert (got.version, got.rows) == (1, rows(1, 2))


def test_variants_listed() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names)) == 10
    for x in v.VARIANTS:
        assert x.name.startswith(("cr9b-wrt-", "cr9b-rdr-"))
        assert x.doc.startswith(x.name)
        assert x.target.startswith("tests.cleanroom_r9b.variants:")
