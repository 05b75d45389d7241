"""Every round-11 (writer F) faulty variant misbehaves where the correct baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import MaintenancePolicy
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import ReadError, decode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r11b import variants as v

WAREHOUSE = "mem://warehouse"


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def setup(target_cls: type[DurableTarget], tmp_path: Path, name: str = "t") -> tuple[Any, Any, TargetEnv]:
    env = make_env(tmp_path / target_cls.__name__)
    target = target_cls()
    cat = target.make_catalog(env)
    client = target.make_client(cat, env)
    client.create_table(name)
    return cat, client, env


def test_variants_listed() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names)) == 6
    assert all(x.doc.startswith(x.name) for x in v.VARIANTS)


@pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (v.CreateProtocolFirstTarget, True)])
def test_create_protocol_first(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    cat, client, env = setup(target_cls, tmp_path)
    client.append("t", rows(1))
    loc = cat.resolve("t").location
    first = decode(env.storage.get(f"{loc}/_delta_log/{0:020d}.json"))
    assert ("commitInfo" not in first[0]) is faulty
    # the appended commit is right either way: a suite checking only appends misses it
    c1 = cat.get_commits(cat.resolve("t").table_id).commits[-1]
    assert "commitInfo" in decode(env.storage.get(c1.staged_uri))[0]


@pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (v.CommitNamedChunksTarget, True)])
def test_commit_named_chunks(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    cat, client, env = setup(target_cls, tmp_path)
    client.append("t", rows(1, 2, 3))
    assert [r["id"] for r in client.read("t").rows] == [1, 2, 3]  # small appends are right
    version = client.append("t", rows(*range(10, 2510)))
    c = next(c for c in cat.get_commits(cat.resolve("t").table_id).commits if c.version == version)
    paths = [a["add"]["path"] for a in decode(env.storage.get(c.staged_uri)) if "add" in a]
    assert (len(paths) != len(set(paths))) is faulty
    got = len(ResilientClient(cat, env.storage).read("t").rows)
    assert (got != 3 + 2500) is faulty


class NoCheckpointCatalog(DurableCatalog):
    """Correct catalog whose policy forbids checkpoints and allows everything else."""

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        super().maintenance_policy(table_id)
        return MaintenancePolicy(frozenset({"log_compaction", "checksum", "metadata_cleanup", "vacuum"}))


@pytest.mark.parametrize(("client_cls", "faulty"), [(ResilientClient, False), (v.CleanupMakesCheckpointClient, True)])
def test_cleanup_makes_checkpoint(tmp_path: Path, client_cls: type[ResilientClient], faulty: bool) -> None:
    env = make_env(tmp_path)
    cat = NoCheckpointCatalog(env.warehouse_uri, env.storage, tmp_path / "state")
    client = client_cls(cat, env.storage)
    client.create_table("t")
    for i in range(3):
        client.append("t", rows(i))
    client.publish("t")
    assert client.checkpoint("t") is None  # a forbidden checkpoint() is refused either way
    client.cleanup("t", 3)
    log = f"{cat.resolve('t').location}/_delta_log/"
    cps = [f.uri for f in env.storage.list(log) if f.uri.endswith(".checkpoint.parquet")]
    assert bool(cps) is faulty


@pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (v.PublishMarksOnlyNewCopiesTarget, True)])
def test_publish_marks_only_new_copies(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    cat, client, env = setup(target_cls, tmp_path)
    client.append("t", rows(1))
    client.append("t", rows(2))
    info = cat.resolve("t")
    # A publisher crashed after copying the ratified commits, before its publication mark.
    for c in cat.get_commits(info.table_id).commits:
        env.storage.put(f"{info.location}/_delta_log/{c.version:020d}.json", env.storage.get(c.staged_uri))
    client.publish("t")
    left = cat.get_commits(info.table_id).commits
    assert bool(left) is faulty


@pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (v.VersionFromNamePrefixTarget, True)])
def test_version_from_name_prefix(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    cat, client, env = setup(target_cls, tmp_path)
    for i in range(1, 5):
        client.append("t", rows(i))
    client.publish("t")
    assert [r["id"] for r in client.read("t", version=2).rows] == [1, 2]  # right without compaction
    writer = ResilientClient(cat, env.storage)
    assert writer.compact_log("t", 2, 3)
    assert [r["id"] for r in client.read("t").rows] == [1, 2, 3, 4]  # the latest read is right
    got = [r["id"] for r in client.read("t", version=2).rows]
    assert (got != [1, 2]) is faulty


@pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (v.VersionReadPublishedOnlyTarget, True)])
def test_version_read_published_only(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    cat, client, env = setup(target_cls, tmp_path)
    client.append("t", rows(1))
    client.publish("t")
    client.append("t", rows(2))  # v2: ratified, not published
    assert [r["id"] for r in client.read("t").rows] == [1, 2]  # latest read includes it either way
    assert [r["id"] for r in client.read("t", version=1).rows] == [1]
    if faulty:
        with pytest.raises(ReadError):
            client.read("t", version=2)
    else:
        assert [r["id"] for r in client.read("t", version=2).rows] == [1, 2]
