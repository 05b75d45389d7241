"""Every round-13 (b) faulty client variant (tests/cleanroom_r13b/variants.py) misbehaves where the correct
baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import CatalogTimeout, DeltaClient, MaintenancePolicy
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import ReadError, decode, encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r13b import variants as v

WAREHOUSE = "mem://warehouse"
ORPHAN_UUID = "00000000-0000-4000-8000-000000000000"


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def setup(target_cls: type[DurableTarget], tmp_path: Path, catalog: Any = None) -> tuple[Any, DeltaClient, TargetEnv]:
    """A durable catalog with table ``t`` created by the correct client, and the target's client."""
    env = make_env(tmp_path)
    cat = DurableTarget().make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    ResilientClient(cat, env.storage).create_table("t")
    client = target_cls().make_client(cat if catalog is None else catalog(cat, env), env)
    return cat, client, env


def ratified_bytes(cat: Any, env: TargetEnv, version: int) -> bytes:
    tid = cat.resolve("t").table_id
    (c,) = [c for c in cat.get_commits(tid, version, version).commits if c.version == version]
    if c.inline_content is not None:
        return bytes(c.inline_content)
    return env.storage.get(c.staged_uri)


def log_of(cat: Any) -> str:
    return f"{cat.resolve('t').location}/_delta_log"


# ---------------------------------------------------------------- writing clients


def _publish_beside_orphan(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[bytes, bytes]:
    cat, client, env = setup(target_cls, tmp_path)
    log = log_of(cat)
    # A losing writer's staged proposal for version 1, never ratified, whose UUID sorts first.
    orphan = encode([{"commitInfo": {"inCommitTimestamp": 1, "txnId": "loser"}}, {"add": {"path": "ghost.parquet"}}])
    env.storage.put(f"{log}/_staged_commits/{1:020d}.{ORPHAN_UUID}.json", orphan)
    assert client.append("t", rows(1)) == 1
    ratified = ratified_bytes(cat, env, 1)
    client.publish("t")
    return ratified, env.storage.get(f"{log}/{1:020d}.json")


def test_publish_staged_by_listing(tmp_path: Path) -> None:
    ratified, published = _publish_beside_orphan(DurableTarget, tmp_path / "base")
    assert published == ratified
    ratified, published = _publish_beside_orphan(v.PublishStagedByListingTarget, tmp_path / "bad")
    assert published != ratified
    assert b"ghost.parquet" in published  # the rejected proposal was published as version 1


def _noop_delete_commit_info(target_cls: type[DurableTarget], tmp_path: Path) -> dict[str, Any]:
    cat, client, env = setup(target_cls, tmp_path)
    client.append("t", rows(1))
    version = client.delete("t", [99])  # matches no row: a commit that changes no file
    first = decode(ratified_bytes(cat, env, version))[0]
    assert "commitInfo" in first
    info: dict[str, Any] = first["commitInfo"]
    return info


def test_noop_commit_no_txnid(tmp_path: Path) -> None:
    assert _noop_delete_commit_info(DurableTarget, tmp_path / "base").get("txnId")
    assert not _noop_delete_commit_info(v.NoopCommitNoTxnIdTarget, tmp_path / "bad").get("txnId")


class Racing:
    """The catalog, where another writer commits just before this client's first proposal arrives."""

    def __init__(self, inner: Any, env: TargetEnv) -> None:
        self.inner = inner
        self.env = env
        self.raced = False

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        if not self.raced:
            self.raced = True
            ResilientClient(self.inner, self.env.storage).append("t", rows(100))
        self.inner.commit(table_id, version, **kwargs)


def _rebased_commit(target_cls: type[DurableTarget], tmp_path: Path) -> list[dict[str, Any]]:
    cat, client, env = setup(target_cls, tmp_path, Racing)
    version = client.append("t", rows(1))
    assert version == 2  # lost version 1 to the other writer, landed at 2
    assert [r["id"] for r in client.read("t").rows] == [1, 100]
    return decode(ratified_bytes(cat, env, version))


def test_rebase_commitinfo_appended(tmp_path: Path) -> None:
    assert "commitInfo" in _rebased_commit(DurableTarget, tmp_path / "base")[0]
    actions = _rebased_commit(v.RebaseCommitInfoAppendedTarget, tmp_path / "bad")
    assert "commitInfo" not in actions[0]
    assert "commitInfo" in actions[-1]


def _publish_after_crash(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[bool, int]:
    cat, client, env = setup(target_cls, tmp_path)
    client.append("t", rows(1))
    client.append("t", rows(2))
    log = log_of(cat)
    # A publisher crashed after copying version 1 and before copying 2 or sending its mark.
    env.storage.put(f"{log}/{1:020d}.json", ratified_bytes(cat, env, 1), if_absent=True)
    client.publish("t")
    client.publish("t")  # and again: still nothing
    tid = cat.resolve("t").table_id
    return env.storage.exists(f"{log}/{2:020d}.json"), len(cat.get_commits(tid).commits)


def test_publish_backs_off_inflight(tmp_path: Path) -> None:
    assert _publish_after_crash(DurableTarget, tmp_path / "base") == (True, 0)
    assert _publish_after_crash(v.PublishBacksOffInflightTarget, tmp_path / "bad") == (False, 2)


# ---------------------------------------------------------------- reading clients


def test_version_read_point_listing(tmp_path: Path) -> None:
    for target_cls in (DurableTarget, v.VersionReadPointListingTarget):
        _cat, client, _env = setup(target_cls, tmp_path / target_cls.__name__)
        writer = ResilientClient(_cat, _env.storage)
        writer.append("t", rows(1))
        writer.publish("t")
        writer.append("t", rows(2))  # unpublished
        assert client.read("t", version=2).version == 2  # one unpublished commit: right either way
        writer.append("t", rows(3))  # unpublished
        assert [r["id"] for r in client.read("t").rows] == [1, 2, 3]
        if target_cls is DurableTarget:
            assert [r["id"] for r in client.read("t", version=3).rows] == [1, 2, 3]
        else:
            with pytest.raises(ReadError):
                client.read("t", version=3)


def test_variants_listed() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names))
    assert all(n.startswith(("cr13b-wrt-", "cr13b-rdr-", "cr13b-cat-")) for n in names)
    for x in v.VARIANTS:
        assert x.doc.startswith(x.name)


class ForbidsMaintenance(DurableCatalog):
    """A correct catalog whose policy forbids checkpoints and metadata cleanup on every table."""

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        super().maintenance_policy(table_id)
        return MaintenancePolicy(frozenset({"log_compaction", "checksum", "vacuum"}))


class LosesPolicyAnswer:
    """The catalog, where the answer to the next maintenance-policy call is lost (after it was served)."""

    def __init__(self, inner: Any, _env: TargetEnv) -> None:
        self.inner = inner
        self.lose = True

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        policy: MaintenancePolicy = self.inner.maintenance_policy(table_id)
        if self.lose:
            self.lose = False
            raise CatalogTimeout("answer to maintenance_policy lost")
        return policy


def _checkpoint_with_lost_policy(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[int | None, bool]:
    env = make_env(tmp_path)
    cat = ForbidsMaintenance(env.warehouse_uri, env.storage, tmp_path / "state")
    writer = ResilientClient(cat, env.storage)
    writer.create_table("t")
    writer.append("t", rows(1))
    writer.publish("t")
    client = target_cls().make_client(LosesPolicyAnswer(cat, env), env)
    made = client.checkpoint("t")
    log = log_of(cat)
    return made, any(".checkpoint." in f.uri for f in env.storage.list(f"{log}/"))


def test_policy_fail_open(tmp_path: Path) -> None:
    assert _checkpoint_with_lost_policy(DurableTarget, tmp_path / "base") == (None, False)
    assert _checkpoint_with_lost_policy(v.PolicyFailOpenTarget, tmp_path / "bad") == (1, True)


def test_listing_keyed_catalog_cache(tmp_path: Path) -> None:
    for target_cls in (DurableTarget, v.ListingKeyedCatalogCacheTarget):
        cat, reader, env = setup(target_cls, tmp_path / target_cls.__name__)
        writer = ResilientClient(cat, env.storage)
        writer.append("t", rows(1))
        assert reader.read("t").version == 1
        writer.append("t", rows(2))  # staged: the log's listing changes
        assert [r["id"] for r in reader.read("t").rows] == [1, 2]
        # Another engine commits version 3 inline: it removes the first data file.
        tid = cat.resolve("t").table_id
        first_file = [a for a in decode(ratified_bytes(cat, env, 1)) if "add" in a][0]["add"]["path"]
        ict = 4_102_444_800_000
        content = encode(
            [
                {"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict, "operation": "DELETE", "txnId": "i-3"}},
                {"remove": {"path": first_file, "deletionTimestamp": ict, "dataChange": True}},
            ]
        )
        cat.commit(tid, 3, inline_content=content, in_commit_timestamp=ict)
        got = reader.read("t")
        if target_cls is DurableTarget:
            assert (got.version, [r["id"] for r in got.rows]) == (3, [2])
        else:
            assert (got.version, [r["id"] for r in got.rows]) == (2, [1, 2])


def test_torn_log_check(tmp_path: Path) -> None:
    for target_cls in (DurableTarget, v.TornLogCheckTarget):
        cat, reader, env = setup(target_cls, tmp_path / target_cls.__name__)
        writer = ResilientClient(cat, env.storage)
        writer.append("t", rows(1))
        writer.append("t", rows(2))
        log = log_of(cat)
        # Above the latest ratified version, as in the RFC's worked example: both read right.
        env.storage.put(f"{log}/_staged_commits/{3:020d}.{ORPHAN_UUID}.json", b'{"commitInfo":{"inCommitTi')
        assert [r["id"] for r in reader.read("t").rows] == [1, 2]
        # A writer that lost version 2 crashed while staging its proposal: a partial, rejected file.
        env.storage.put(f"{log}/_staged_commits/{2:020d}.{ORPHAN_UUID}.json", b'{"commitInfo":{"inCommitTi')
        if target_cls is DurableTarget:
            assert [r["id"] for r in reader.read("t").rows] == [1, 2]
        else:
            with pytest.raises(ReadError):
                reader.read("t")
