"""Round 8b: every faulty variant misbehaves where the correct durable baseline does not.

In-process, on the thread-safe memory storage; no lakecert, no sleeps.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import (
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    MaintenancePolicy,
    TableNotFound,
)
from tests.cleanroom.client import Action, decode, encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r8b import variants as V

WH = "mem://wh"


class Env:
    def __init__(
        self,
        tmp_path: Path,
        catalog_cls: type[DurableCatalog] = DurableCatalog,
        client_cls: type[Any] = ResilientClient,
    ) -> None:
        self.storage = MemoryStorage()
        self.state = tmp_path / "state"
        self.catalog_cls = catalog_cls
        self.catalog = catalog_cls(WH, self.storage, self.state)
        self.client = client_cls(self.catalog, self.storage)

    def restart(self) -> None:
        self.catalog = self.catalog_cls(WH, self.storage, self.state)

    def client_of(self, cls: type[Any]) -> Any:
        return cls(self.catalog, self.storage)

    def stage(self, name: str, version: int, content: bytes = b'{"commitInfo":{}}\n') -> str:
        loc = self.catalog.resolve(name).location
        uri = f"{loc}/_delta_log/_staged_commits/{version:020d}.{uuid.uuid4()}.json"
        self.storage.put(uri, content, if_absent=True)
        return uri

    def listed(self, name: str) -> list[int]:
        info = self.catalog.resolve(name)
        return [c.version for c in self.catalog.get_commits(info.table_id).commits]

    def content_of(self, name: str, version: int) -> bytes:
        info = self.catalog.resolve(name)
        for c in self.catalog.get_commits(info.table_id, version, version).commits:
            if c.inline_content is not None:
                return c.inline_content
            assert c.staged_uri is not None
            return self.storage.get(c.staged_uri)
        return self.storage.get(f"{info.location}/_delta_log/{version:020d}.json")


def ict(content: bytes) -> int:
    for a in decode(content):
        if "commitInfo" in a:
            return int(a["commitInfo"]["inCommitTimestamp"])
    raise AssertionError("no commitInfo")


def row(i: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"}]


def test_variant_records() -> None:
    assert len(V.VARIANTS) >= 16
    assert len({v.name for v in V.VARIANTS}) == len(V.VARIANTS)
    sides = [v.side for v in V.VARIANTS]
    assert sides.count("catalog") >= 7 and sides.count("client") >= 7
    for v in V.VARIANTS:
        assert v.name.startswith("cr8b-") and v.doc
        module, cls_name = v.target.split(":")
        assert module == "tests.cleanroom_r8b.variants"
        target = getattr(V, cls_name)
        assert issubclass(target, DurableTarget)
        swapped = (target.catalog_cls is not DurableCatalog) + (target.client_cls is not ResilientClient)
        assert swapped == 1
        assert (v.side == "catalog") == (target.catalog_cls is not DurableCatalog)


# ---------------------------------------------------------------- catalog faults


@pytest.mark.parametrize("cls,faulty", [(DurableCatalog, False), (V.GlobalWatermarkCatalog, True)])
def test_global_watermark(tmp_path: Path, cls: type[DurableCatalog], faulty: bool) -> None:
    env = Env(tmp_path, cls)
    env.client.create_table("a")
    for i in range(3):
        env.client.append("a", row(i))
    env.client.publish("a")
    env.client.create_table("b")
    env.client.append("b", row(10))
    assert (env.listed("b") == [1]) != faulty  # v1 of b is ratified and unpublished


@pytest.mark.parametrize("cls,faulty", [(DurableCatalog, False), (V.SharedConflictLatestCatalog, True)])
def test_conflict_latest_catalog_wide(tmp_path: Path, cls: type[DurableCatalog], faulty: bool) -> None:
    env = Env(tmp_path, cls)
    env.client.create_table("a")
    for i in range(3):
        env.client.append("a", row(i))
    env.client.create_table("b")
    env.client.append("b", row(9))
    uri = env.stage("a", 2)
    with pytest.raises(CommitConflict) as err:
        env.catalog.commit(env.catalog.resolve("a").table_id, 2, staged_uri=uri)
    assert (err.value.latest_version == 3) != faulty


@pytest.mark.parametrize("cls,faulty", [(DurableCatalog, False), (V.NameReservedFirstCatalog, True)])
def test_name_reserved_before_check(tmp_path: Path, cls: type[DurableCatalog], faulty: bool) -> None:
    env = Env(tmp_path, cls)
    staging = env.catalog.create_staging_table()
    with pytest.raises(InvalidRequest):
        env.catalog.register_table("t", staging.table_id)  # version 0 not written
    try:
        env.catalog.resolve("t")
        resolved = True
    except TableNotFound:
        resolved = False
    assert resolved == faulty
    if faulty:
        with pytest.raises(InvalidRequest):
            env.client.create_table("t")
    else:
        env.client.create_table("t")


@pytest.mark.parametrize("cls,faulty", [(DurableCatalog, False), (V.PiggybackAfterStoreCatalog, True)])
def test_piggyback_mark_after_store(tmp_path: Path, cls: type[DurableCatalog], faulty: bool) -> None:
    env = Env(tmp_path, cls)
    env.client.create_table("t")
    uri = env.stage("t", 1)
    env.catalog.commit(env.catalog.resolve("t").table_id, 1, staged_uri=uri, latest_published_version=1)
    assert (env.listed("t") == [1]) != faulty  # v1 is ratified and unpublished


@pytest.mark.parametrize("cls,faulty", [(DurableCatalog, False), (V.RestartForgetsManagedCatalog, True)])
def test_restart_forgets_managed(tmp_path: Path, cls: type[DurableCatalog], faulty: bool) -> None:
    env = Env(tmp_path, cls)
    env.client.create_table("t")
    assert env.catalog.resolve("t").catalog_managed
    env.restart()
    assert env.catalog.resolve("t").catalog_managed != faulty


@pytest.mark.parametrize("cls,faulty", [(DurableCatalog, False), (V.StagedVersionSuffixCatalog, True)])
def test_staged_version_suffix(tmp_path: Path, cls: type[DurableCatalog], faulty: bool) -> None:
    env = Env(tmp_path, cls)
    env.client.create_table("t")
    table_id = env.catalog.resolve("t").table_id
    wrong = env.stage("t", 2)
    with pytest.raises(InvalidRequest):  # the shallow check: v2's file for v1
        env.catalog.commit(table_id, 1, staged_uri=wrong)
    eleven = env.stage("t", 11)
    try:
        env.catalog.commit(table_id, 1, staged_uri=eleven)
        accepted = True
    except InvalidRequest:
        accepted = False
    assert accepted == faulty
    assert (env.catalog.get_commits(table_id).latest_version == 0) != faulty


@pytest.mark.parametrize("cls,faulty", [(DurableCatalog, False), (V.CapOffByOneCatalog, True)])
def test_cap_off_by_one(tmp_path: Path, cls: type[DurableCatalog], faulty: bool) -> None:
    assert V.CapOffByOneTarget().catalog_limits().unpublished == V.UNPUBLISHED_CAP
    env = Env(tmp_path, cls)
    env.client.create_table("t")
    for i in range(V.UNPUBLISHED_CAP - 1):
        env.client.append("t", row(i))
    try:  # the declared cap-th unpublished commit must succeed
        env.client.append("t", row(99))
        ok = True
    except CommitRejected:
        ok = False
    assert ok != faulty


# ---------------------------------------------------------------- client faults


@pytest.mark.parametrize("cls,faulty", [(ResilientClient, False), (V.ResumeOrphanClient, True)])
def test_resume_orphan_staged(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    env = Env(tmp_path, client_cls=cls)
    env.client.create_table("t")
    env.client.append("t", row(1))
    # A writer crashed between staging v2 and proposing it.
    dead = env.client_of(ResilientClient)
    loc = env.catalog.resolve("t").location
    add = dead.write_data(loc, row(99))
    env.stage("t", 2, encode([dead.commit_info("WRITE", 1), add]))
    env.client.append("t", row(2))
    ids = [r["id"] for r in env.client_of(ResilientClient).read("t").rows]
    assert (ids == [1, 2]) != faulty


@pytest.mark.parametrize("cls,faulty", [(ResilientClient, False), (V.DeleteProtocolTemplateClient, True)])
def test_delete_protocol_template(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    env = Env(tmp_path, client_cls=cls)
    env.client.create_table("t")
    env.client.append("t", [*row(1), *row(2)])
    v = env.client.delete("t", [1])
    protocols = [a["protocol"] for a in decode(env.content_of("t", v)) if "protocol" in a]
    reader = ResilientClient(env.catalog, env.storage)
    info = env.catalog.resolve("t")
    view = reader.view(info)
    snap = reader.snapshot(view, view.latest)
    ok = "catalogManaged" in snap.protocol.get("readerFeatures", []) and all(
        "catalogManaged" in p.get("readerFeatures", []) for p in protocols
    )
    assert ok != faulty


@pytest.mark.parametrize("cls,faulty", [(ResilientClient, False), (V.CompactionEndExclusiveClient, True)])
def test_compaction_end_exclusive(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    env = Env(tmp_path, client_cls=cls)
    env.client.create_table("t")
    for i in range(3):
        env.client.append("t", row(i))
    env.client.publish("t")
    assert env.client.compact_log("t", 1, 3)
    loc = env.catalog.resolve("t").location
    body = decode(env.storage.get(f"{loc}/_delta_log/{1:020d}.{3:020d}.compacted.json"))
    adds = [a for a in body if "add" in a]
    assert (len(adds) == 3) != faulty


@pytest.mark.parametrize("cls,faulty", [(ResilientClient, False), (V.CleanupByCutoffClient, True)])
def test_cleanup_deltas_below_cutoff(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    env = Env(tmp_path, client_cls=cls)
    env.client.create_table("t")
    for i in range(3):
        env.client.append("t", row(i))
    env.client.publish("t")
    assert env.client.checkpoint("t") == 3
    env.client.append("t", row(3))
    env.client.append("t", row(4))
    env.client.publish("t")
    env.client.cleanup("t", 5)
    loc = env.catalog.resolve("t").location
    assert env.storage.exists(f"{loc}/_delta_log/{4:020d}.json") != faulty
    assert env.storage.exists(f"{loc}/_delta_log/{3:020d}.checkpoint.parquet")


class NoCompactionCatalog(DurableCatalog):
    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        super().maintenance_policy(table_id)
        return MaintenancePolicy(frozenset({"checkpoint", "checksum", "metadata_cleanup", "vacuum"}))


@pytest.mark.parametrize("cls,faulty", [(ResilientClient, False), (V.PolicyAliasClient, True)])
def test_policy_op_alias(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    env = Env(tmp_path, NoCompactionCatalog, cls)
    env.client.create_table("t")
    env.client.append("t", row(1))
    env.client.append("t", row(2))
    env.client.publish("t")
    assert env.client.checkpoint("t") == 2  # allowed jobs run in both
    assert env.client.compact_log("t", 1, 2) == faulty
    loc = env.catalog.resolve("t").location
    assert env.storage.exists(f"{loc}/_delta_log/{1:020d}.{2:020d}.compacted.json") == faulty


class ClockClient(ResilientClient):
    """A correct writer with a settable clock whose commitInfo.timestamp is its wall clock."""

    clock = 0

    def now_ms(self) -> int:
        return self.clock

    def commit_info(self, operation: str, ict: int, *, first: bool = False) -> Action:
        action = super().commit_info(operation, ict, first=first)
        action["commitInfo"]["timestamp"] = self.now_ms()
        return action


@pytest.mark.parametrize("cls,faulty", [(ResilientClient, False), (V.CommitInfoTimestampClient, True)])
def test_tt_commitinfo_timestamp(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    env = Env(tmp_path, client_cls=cls)
    a = env.client_of(ClockClient)
    a.clock = 100_000
    a.create_table("t")
    a.clock = 1_000_000  # ahead
    a.append("t", row(1))
    b = env.client_of(ClockClient)
    b.clock = 500_000  # behind: its ICT is pushed to 1_000_001, its timestamp stays 500_000
    b.append("t", row(2))
    assert ict(env.content_of("t", 2)) == 1_000_001
    assert (env.client.read("t", timestamp_ms=600_000).version == 0) != faulty
    assert env.client.read("t", timestamp_ms=1_000_001).version == 2


@pytest.mark.parametrize("cls,faulty", [(ResilientClient, False), (V.CatalogIctTimelineClient, True)])
def test_tt_catalog_recorded_ict(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    env = Env(tmp_path, client_cls=cls)
    w = env.client_of(ResilientClient)
    w.create_table("t")
    info = env.catalog.resolve("t")
    t0 = ict(env.storage.get(f"{info.location}/_delta_log/{0:020d}.json"))
    add = w.write_data(info.location, row(1))
    content = encode([w.commit_info("WRITE", t0 + 1000), add])
    env.catalog.commit(info.table_id, 1, inline_content=content)  # in-commit timestamp not sent (optional)
    assert env.client.read("t").version == 1
    assert (env.client.read("t", timestamp_ms=t0 + 1000).version == 1) != faulty


@pytest.mark.parametrize("cls,faulty", [(ResilientClient, False), (V.LowercaseReadNameClient, True)])
def test_lowercase_read_name(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    env = Env(tmp_path, client_cls=cls)
    env.client.create_table("Sales")
    env.client.create_table("sales")
    env.client.append("Sales", row(1))
    env.client.append("sales", row(2))
    ids = [r["id"] for r in env.client.read("Sales").rows]
    assert (ids == [1]) != faulty


class AheadClient(ResilientClient):
    def now_ms(self) -> int:
        return super().now_ms() + 86_400_000  # a day ahead


@pytest.mark.parametrize("cls,faulty", [(ResilientClient, False), (V.IctFromCatalogOnlyClient, True)])
def test_ict_from_catalog_only(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    env = Env(tmp_path, client_cls=cls)
    env.client.create_table("t")
    peer = env.client_of(AheadClient)
    peer.append("t", row(1))
    peer.publish("t")  # the catalog drops v1
    env.client.append("t", row(2))
    assert (ict(env.content_of("t", 2)) > ict(env.content_of("t", 1))) != faulty


@pytest.mark.parametrize("cls,faulty", [(DurableCatalog, False), (V.BufferedGapCatalog, True)])
def test_buffered_gap_proposal(tmp_path: Path, cls: type[DurableCatalog], faulty: bool) -> None:
    env = Env(tmp_path, cls)
    env.client.create_table("t")
    table_id = env.catalog.resolve("t").table_id
    early = env.stage("t", 2)
    with pytest.raises(CommitRejected):
        env.catalog.commit(table_id, 2, staged_uri=early)
    assert env.listed("t") == []
    env.catalog.commit(table_id, 1, staged_uri=env.stage("t", 1))
    assert (env.listed("t") == [1]) != faulty
    assert (env.catalog.get_commits(table_id).latest_version == 1) != faulty


@pytest.mark.parametrize("cls,faulty", [(ResilientClient, False), (V.CompactionAsCutoffClient, True)])
def test_cleanup_compaction_as_cutoff(tmp_path: Path, cls: type[ResilientClient], faulty: bool) -> None:
    env = Env(tmp_path, client_cls=cls)
    env.client.create_table("t")
    for i in range(3):
        env.client.append("t", row(i))
    env.client.publish("t")
    assert env.client.compact_log("t", 1, 3)
    env.client.cleanup("t", 3)  # no checkpoint at or before v3: nothing may go
    loc = env.catalog.resolve("t").location
    assert env.storage.exists(f"{loc}/_delta_log/{0:020d}.json") != faulty
