"""Every round-3 faulty variant (tests/cleanroom_r3/variants.py) misbehaves where the correct baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
Client variants are bound to the correct durable catalog, catalog variants are driven by the correct
resilient client or by direct catalog calls, as a certification run would.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import (
    Catalog,
    CatalogTimeout,
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    MaintenancePolicy,
    ReadResult,
    Storage,
    TableInfo,
)
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import ReadError, decode, encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3 import variants as v
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient

WAREHOUSE = "mem://warehouse"
BASE = v.CORRECT_DURABLE


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def catalog_of(target_cls: type[DurableTarget], env: TargetEnv) -> DurableCatalog:
    cat = target_cls().make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    return cat


def client_of(target_cls: type[DurableTarget], cat: Catalog, env: TargetEnv) -> ResilientClient:
    client = target_cls().make_client(cat, env)
    assert isinstance(client, ResilientClient)
    return client


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def ids_of(result: ReadResult) -> list[object]:
    return [r["id"] for r in result.rows]


def inline(tag: str, size: int = 0) -> bytes:
    actions: list[dict[str, Any]] = [{"commitInfo": {"txnId": tag, "inCommitTimestamp": 1}}]
    actions.append({"add": {"path": f"{tag}.parquet", "size": 1, "dataChange": True, "pad": "x" * size}})
    return encode(actions)


def commit_infos(cat: Catalog, storage: Storage, name: str) -> dict[int, dict[str, Any]]:
    """The commitInfo of every readable version, as a correct reader sees them."""
    reader = ResilientClient(cat, storage)
    view = reader.view(reader._info(name))
    out: dict[int, dict[str, Any]] = {}
    for version, source in reader.commit_sources(view).items():
        for a in decode(reader.content(source)):
            if "commitInfo" in a:
                out[version] = a["commitInfo"]
    return out


def delta_file(info: TableInfo, version: int) -> str:
    return f"{info.location}/_delta_log/{version:020d}.json"


def listed_versions(cat: Catalog, table_id: str) -> tuple[list[int], int]:
    resp = cat.get_commits(table_id)
    return [c.version for c in resp.commits], resp.latest_version


# ==================================================================== registry


def test_registry_is_complete_and_spread() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names)) >= 16
    assert sum(x.side == "catalog" for x in v.VARIANTS) >= 6
    assert sum(x.side == "client" for x in v.VARIANTS) >= 6
    assert len({d for x in v.VARIANTS for d in x.dimensions}) >= 6
    rules = Path("/tmp/rules.txt").read_text() if Path("/tmp/rules.txt").exists() else None
    for x in v.VARIANTS:
        module, cls_name = x.target.split(":")
        cls = getattr(importlib.import_module(module), cls_name)
        assert issubclass(cls, DurableTarget) and x.doc
        assert (cls.catalog_cls is not BASE.catalog_cls) == (x.side == "catalog")
        assert (cls.client_cls is not BASE.client_cls) == (x.side == "client")
        for rule in x.rules:
            assert rule.startswith("NEW ") or rules is None or f"{rule} [" in rules
    assert set(names) == DEMONSTRATED


DEMONSTRATED: set[str] = set()


def demonstrates(target: type[DurableTarget]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    DEMONSTRATED.add(target.name)
    return lambda f: f


# ==================================================================== baselines


def test_durable_baseline_survives_restart(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    target = BASE()
    cat = target.make_catalog(env)
    writer = client_of(BASE, cat, env)
    writer.create_table("t")
    writer.append("t", rows(1))
    writer.append("t", rows(2))
    writer.publish("t")
    writer.append("t", rows(3))
    cat2 = target.restart_catalog(cat, env)
    info = cat2.resolve("t")
    assert listed_versions(cat2, info.table_id) == ([3], 3)
    with pytest.raises(CommitConflict):
        cat2.commit(info.table_id, 3, inline_content=inline("x"))
    assert ids_of(client_of(BASE, cat2, env).read("t")) == [1, 2, 3]


def test_capped_baseline_refuses_cleanly(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    cat = catalog_of(v.CORRECT_DURABLE_LIMITS, env)
    ResilientClient(cat, env.storage).create_table("t")
    tid = cat.resolve("t").table_id
    for n in range(1, v.UNPUBLISHED_CAP + 1):
        cat.commit(tid, n, inline_content=inline(f"c{n}"))
    with pytest.raises(CommitRejected):
        cat.commit(tid, v.UNPUBLISHED_CAP + 1, inline_content=inline("over"))
    assert listed_versions(cat, tid) == (list(range(1, v.UNPUBLISHED_CAP + 1)), v.UNPUBLISHED_CAP)


# ==================================================================== catalog faults


def _locations_after_restart(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[str, str]:
    env = make_env(tmp_path)
    target = target_cls()
    cat = target.make_catalog(env)
    ResilientClient(cat, env.storage).create_table("first")
    old = cat.resolve("first").location
    cat2 = target.restart_catalog(cat, env)
    assert cat2.resolve("first").location == old
    return old, cat2.create_staging_table().location


@demonstrates(v.CounterLocationAfterRestart)
def test_counter_location_after_restart(tmp_path: Path) -> None:
    old, new = _locations_after_restart(BASE, tmp_path / "base")
    assert old != new
    old, new = _locations_after_restart(v.CounterLocationAfterRestart, tmp_path / "faulty")
    assert old == new  # a new table handed the location of an existing one


def _long_history(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[list[int], int]:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    ResilientClient(cat, env.storage).create_table("t")
    tid = cat.resolve("t").table_id
    for n in range(1, 111):
        cat.commit(tid, n, inline_content=inline(f"c{n}"))
        if n == 105:
            cat.mark_published(tid, 105)
    return listed_versions(cat, tid)


@demonstrates(v.HistoryListingLimit)
def test_history_listing_limit(tmp_path: Path) -> None:
    listed, latest = _long_history(BASE, tmp_path / "base")
    assert latest == 110 and listed == [106, 107, 108, 109, 110]
    listed, latest = _long_history(v.HistoryListingLimit, tmp_path / "faulty")
    assert latest == 110 and listed[-1] == 100  # unpublished 106..110 are not served


def _many_unpublished(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[list[int], int]:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    ResilientClient(cat, env.storage).create_table("t")
    tid = cat.resolve("t").table_id
    for n in range(1, 71):
        cat.commit(tid, n, inline_content=inline(f"c{n}"))  # accepted: no clean refusal
    return listed_versions(cat, tid)


@demonstrates(v.EvictingUnpublishedCap)
def test_evicting_unpublished_cap(tmp_path: Path) -> None:
    assert _many_unpublished(BASE, tmp_path / "base") == (list(range(1, 71)), 70)
    listed, latest = _many_unpublished(v.EvictingUnpublishedCap, tmp_path / "faulty")
    assert latest == 70 and listed == list(range(7, 71))  # 1..6 ratified, unpublished, gone
    assert v.EvictingUnpublishedCap().catalog_limits().unpublished == v.UNPUBLISHED_CAP


def _restart_after_commits(
    target_cls: type[DurableTarget], tmp_path: Path, *, publish: bool
) -> tuple[Catalog, str, tuple[list[int], int]]:
    env = make_env(tmp_path)
    target = target_cls()
    cat = target.make_catalog(env)
    writer = ResilientClient(cat, env.storage)
    writer.create_table("t")
    for i in (1, 2, 3):
        writer.append("t", rows(i))
    if publish:
        writer.publish("t")
    cat2 = target.restart_catalog(cat, env)
    tid = cat2.resolve("t").table_id
    return cat2, tid, listed_versions(cat2, tid)


@demonstrates(v.WriteBehindState)
def test_write_behind_state(tmp_path: Path) -> None:
    cat, tid, listing = _restart_after_commits(BASE, tmp_path / "base", publish=False)
    assert listing == ([1, 2, 3], 3)
    with pytest.raises(CommitConflict):
        cat.commit(tid, 2, inline_content=inline("rival"))
    cat, tid, listing = _restart_after_commits(v.WriteBehindState, tmp_path / "faulty", publish=False)
    assert listing == ([], 0)  # three ratified, unpublished commits forgotten
    cat.commit(tid, 1, inline_content=inline("rival"))  # version 1 ratified a second time


@demonstrates(v.RecoverLatestFromStored)
def test_recover_latest_from_stored(tmp_path: Path) -> None:
    cat, tid, listing = _restart_after_commits(BASE, tmp_path / "base", publish=True)
    assert listing == ([], 3)
    with pytest.raises(CommitConflict):
        cat.commit(tid, 1, inline_content=inline("rival"))
    cat, tid, listing = _restart_after_commits(v.RecoverLatestFromStored, tmp_path / "faulty", publish=True)
    assert listing == ([], 0)
    cat.commit(tid, 1, inline_content=inline("rival"))  # over the published 1.json


def _duplicate_inline(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[bool, int]:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    ResilientClient(cat, env.storage).create_table("t")
    tid = cat.resolve("t").table_id
    proposal = inline("once")
    cat.commit(tid, 1, inline_content=proposal)
    try:
        cat.commit(tid, 1, inline_content=proposal)  # the same proposal, delivered again
        conflict = False
    except CommitConflict:
        conflict = True
    return conflict, cat.get_commits(tid).latest_version


@demonstrates(v.InlineServerRebase)
def test_inline_server_rebase(tmp_path: Path) -> None:
    assert _duplicate_inline(BASE, tmp_path / "base") == (True, 1)
    assert _duplicate_inline(v.InlineServerRebase, tmp_path / "faulty") == (False, 2)  # ratified twice


def _long_names(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[str, str]:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    writer = ResilientClient(cat, env.storage)
    first, second = "n" * 64 + "_first", "n" * 64 + "_second"
    writer.create_table(first)
    writer.create_table(second)
    return cat.resolve(first).location, cat.resolve(second).location


@demonstrates(v.NameKeyTruncation)
def test_name_key_truncation(tmp_path: Path) -> None:
    first, second = _long_names(BASE, tmp_path / "base")
    assert first != second
    first, second = _long_names(v.NameKeyTruncation, tmp_path / "faulty")
    assert first == second  # the first name now resolves to the second table


def _large_inline(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[bytes, bytes]:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    ResilientClient(cat, env.storage).create_table("t")
    tid = cat.resolve("t").table_id
    big = inline("big", size=100_000)
    cat.commit(tid, 1, inline_content=big)
    served = cat.get_commits(tid).commits[0].inline_content
    assert served is not None
    return big, served


@demonstrates(v.InlineTruncation)
def test_inline_truncation(tmp_path: Path) -> None:
    big, served = _large_inline(BASE, tmp_path / "base")
    assert served == big
    big, served = _large_inline(v.InlineTruncation, tmp_path / "faulty")
    assert len(served) == 65_535 < len(big)


def _two_listings(target_cls: type[DurableTarget], tmp_path: Path) -> bytes | None:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    writer = ResilientClient(cat, env.storage)
    writer.create_table("a")
    writer.create_table("b")
    a, b = cat.resolve("a").table_id, cat.resolve("b").table_id
    cat.commit(a, 1, inline_content=inline("of-a"))
    cat.commit(b, 1, inline_content=inline("of-b"))
    cat.get_commits(a)
    return cat.get_commits(b).commits[0].inline_content


@demonstrates(v.GlobalListingCache)
def test_global_listing_cache(tmp_path: Path) -> None:
    assert _two_listings(BASE, tmp_path / "base") == inline("of-b")
    assert _two_listings(v.GlobalListingCache, tmp_path / "faulty") == inline("of-a")  # table a's commit


# ==================================================================== client faults


def _two_writers_txn(target_cls: type[DurableTarget], tmp_path: Path) -> dict[int, dict[str, Any]]:
    env = make_env(tmp_path)
    cat = catalog_of(BASE, env)
    ResilientClient(cat, env.storage).create_table("t")
    one, two = client_of(target_cls, cat, env), client_of(target_cls, cat, env)
    one.append("t", rows(1))
    two.append("t", rows(2))
    return commit_infos(cat, env.storage, "t")


@demonstrates(v.TxnIdPerClientCounter)
def test_txnid_per_client_counter(tmp_path: Path) -> None:
    infos = _two_writers_txn(BASE, tmp_path / "base")
    assert infos[1]["txnId"] != infos[2]["txnId"]
    infos = _two_writers_txn(v.TxnIdPerClientCounter, tmp_path / "faulty")
    assert infos[1]["txnId"] == infos[2]["txnId"]  # two transactions, one id, one table


def _two_tables_txn(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[str, str]:
    env = make_env(tmp_path)
    cat = catalog_of(BASE, env)
    client = client_of(target_cls, cat, env)
    client.create_table("a")
    client.create_table("b")
    client.append("a", rows(1))
    client.append("b", rows(2))
    a, b = commit_infos(cat, env.storage, "a"), commit_infos(cat, env.storage, "b")
    assert a[1]["txnId"] != a[0]["txnId"]
    return a[1]["txnId"], b[1]["txnId"]


@demonstrates(v.TxnIdPerVersion)
def test_txnid_per_version(tmp_path: Path) -> None:
    a, b = _two_tables_txn(BASE, tmp_path / "base")
    assert a != b
    a, b = _two_tables_txn(v.TxnIdPerVersion, tmp_path / "faulty")
    assert a == b


class LosingCatalog(DurableCatalog):
    """Acts on the next proposal, then loses the answer (the nemesis's lost answer). ``rival`` runs first."""

    lose_next = False
    rival: Callable[[], object] | None = None

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        if not self.lose_next:
            super().commit(table_id, version, **kwargs)
            return
        self.lose_next = False
        rival, self.rival = self.rival, None
        if rival is not None:
            rival()
        with contextlib.suppress(CommitConflict):  # a refusal's answer is lost all the same
            super().commit(table_id, version, **kwargs)
        raise CatalogTimeout("answer lost")


def _lost_success(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[int, list[object]]:
    env = make_env(tmp_path)
    cat = LosingCatalog(WAREHOUSE, env.storage, tmp_path / "state")
    client = client_of(target_cls, cat, env)
    client.create_table("t")
    cat.lose_next = True
    version = client.append("t", rows(1))
    return version, ids_of(ResilientClient(cat, env.storage).read("t"))


@demonstrates(v.BlindRetryOnTimeout)
def test_blind_retry_on_timeout(tmp_path: Path) -> None:
    assert _lost_success(BASE, tmp_path / "base") == (1, [1])
    assert _lost_success(v.BlindRetryOnTimeout, tmp_path / "faulty") == (2, [1, 1])  # committed twice


def _lost_conflict(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[int, list[object]]:
    env = make_env(tmp_path)
    cat = LosingCatalog(WAREHOUSE, env.storage, tmp_path / "state")
    client = client_of(target_cls, cat, env)
    client.create_table("t")
    rival = ResilientClient(cat, env.storage)
    cat.rival = lambda: rival.append("t", rows(2))
    cat.lose_next = True
    version = client.append("t", rows(1))
    return version, ids_of(ResilientClient(cat, env.storage).read("t"))


@demonstrates(v.TrustLatestOnTimeout)
def test_trust_latest_on_timeout(tmp_path: Path) -> None:
    assert _lost_conflict(BASE, tmp_path / "base") == (2, [1, 2])
    assert _lost_conflict(v.TrustLatestOnTimeout, tmp_path / "faulty") == (1, [2])  # acknowledged, lost


def _cleanup_during_proposal(target_cls: type[DurableTarget], tmp_path: Path) -> str:
    env = make_env(tmp_path)
    cat = catalog_of(BASE, env)
    cleaner = client_of(target_cls, cat, env)
    cleaner.create_table("t")
    for i in (1, 2, 3):
        cleaner.append("t", rows(i))
    cleaner.publish("t")
    assert cleaner.checkpoint("t") == 3

    class SlowWriter(ResilientClient):
        def before_propose(self, log: str, version: int, content: bytes) -> None:
            cleaner.cleanup("t", 3)  # runs while this writer's commit is staged, not yet proposed

    try:
        return f"ratified {SlowWriter(cat, env.storage).append('t', rows(4))}"
    except InvalidRequest:
        return "refused: staged file deleted"


@demonstrates(v.OrphanStagedGc)
def test_orphan_staged_gc(tmp_path: Path) -> None:
    assert _cleanup_during_proposal(BASE, tmp_path / "base") == "ratified 4"
    assert _cleanup_during_proposal(v.OrphanStagedGc, tmp_path / "faulty") == "refused: staged file deleted"


class PolicyCatalog(DurableCatalog):
    """A correct catalog whose per-table maintenance policies the test sets."""

    policies: dict[str, MaintenancePolicy]

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        super().maintenance_policy(table_id)
        return self.policies.get(table_id, MaintenancePolicy())


def _policy_narrowed(target_cls: type[DurableTarget], tmp_path: Path) -> int | None:
    env = make_env(tmp_path)
    cat = PolicyCatalog(WAREHOUSE, env.storage, tmp_path / "state")
    cat.policies = {}
    client = client_of(target_cls, cat, env)
    client.create_table("t")
    client.append("t", rows(1))
    client.publish("t")
    assert client.checkpoint("t") == 1
    cat.policies[cat.resolve("t").table_id] = MaintenancePolicy(frozenset({"log_compaction", "checksum"}))
    client.append("t", rows(2))
    client.publish("t")
    return client.checkpoint("t")


@demonstrates(v.CachedMaintenancePolicy)
def test_cached_maintenance_policy(tmp_path: Path) -> None:
    assert _policy_narrowed(BASE, tmp_path / "base") is None
    assert _policy_narrowed(v.CachedMaintenancePolicy, tmp_path / "faulty") == 2  # forbidden checkpoint


def _partial_policy(target_cls: type[DurableTarget], tmp_path: Path) -> list[str]:
    env = make_env(tmp_path)
    cat = PolicyCatalog(WAREHOUSE, env.storage, tmp_path / "state")
    cat.policies = {}
    client = client_of(target_cls, cat, env)
    client.create_table("t")
    info = cat.resolve("t")
    cat.policies[info.table_id] = MaintenancePolicy(frozenset({"checkpoint", "log_compaction", "metadata_cleanup"}))
    client.append("t", rows(1))
    client.publish("t")
    assert client.checkpoint("t") == 1
    return [f.uri for f in env.storage.list(f"{info.location}/_delta_log/") if f.uri.endswith(".crc")]


@demonstrates(v.ChecksumBesideCheckpoint)
def test_checksum_beside_checkpoint(tmp_path: Path) -> None:
    assert _partial_policy(BASE, tmp_path / "base") == []
    assert len(_partial_policy(v.ChecksumBesideCheckpoint, tmp_path / "faulty")) == 1  # forbidden checksum


def _time_travel_after_cleanup(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[int, str]:
    env = make_env(tmp_path)
    cat = catalog_of(BASE, env)
    client = client_of(target_cls, cat, env)
    client.create_table("t")
    for i in (1, 2, 3, 4):
        client.append("t", rows(i))
    client.publish("t")
    assert client.checkpoint("t") == 4
    for i in (5, 6, 7):
        client.append("t", rows(i))
    client.publish("t")
    client.cleanup("t", 4)
    ict6 = int(commit_infos(cat, env.storage, "t")[6]["inCommitTimestamp"])
    assert client.read("t", version=6).version == 6  # reads by version are fine
    try:
        return ict6, str(client.read("t", timestamp_ms=ict6).version)
    except ReadError:
        return ict6, "error"


@demonstrates(v.TimeTravelIndexAfterCleanup)
def test_time_travel_index_after_cleanup(tmp_path: Path) -> None:
    assert _time_travel_after_cleanup(BASE, tmp_path / "base")[1] == "6"
    assert _time_travel_after_cleanup(v.TimeTravelIndexAfterCleanup, tmp_path / "faulty")[1] != "6"


@pytest.fixture
def tokyo() -> Iterator[None]:
    old = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()


def _ict_skew(target_cls: type[DurableTarget], tmp_path: Path) -> int:
    env = make_env(tmp_path)
    cat = catalog_of(BASE, env)
    client = client_of(target_cls, cat, env)
    client.create_table("t")
    client.append("t", rows(1))
    return int(commit_infos(cat, env.storage, "t")[1]["inCommitTimestamp"]) - time.time_ns() // 1_000_000


@demonstrates(v.LocalTimeAsUtc)
def test_local_time_as_utc(tmp_path: Path, tokyo: None) -> None:
    assert abs(_ict_skew(BASE, tmp_path / "base")) < 60_000
    assert abs(_ict_skew(v.LocalTimeAsUtc, tmp_path / "faulty") - 9 * 3_600_000) < 60_000  # 9 hours ahead


class AheadClient(ResilientClient):
    """A correct writer whose clock runs an hour ahead."""

    def now_ms(self) -> int:
        return super().now_ms() + 3_600_000


def _skewed_writers(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[int, int]:
    env = make_env(tmp_path)
    cat = catalog_of(BASE, env)
    under_test = client_of(target_cls, cat, env)
    under_test.create_table("t")
    AheadClient(cat, env.storage).append("t", rows(1))
    under_test.append("t", rows(2))
    infos = commit_infos(cat, env.storage, "t")
    return int(infos[1]["inCommitTimestamp"]), int(infos[2]["inCommitTimestamp"])


@demonstrates(v.IctMonotonicPerClient)
def test_ict_monotonic_per_client(tmp_path: Path) -> None:
    first, second = _skewed_writers(BASE, tmp_path / "base")
    assert second > first
    first, second = _skewed_writers(v.IctMonotonicPerClient, tmp_path / "faulty")
    assert second < first  # in-commit timestamps go backwards


def _publish_after_crash(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[bool, str]:
    env = make_env(tmp_path)
    cat = catalog_of(BASE, env)
    crashed = ResilientClient(cat, env.storage)
    crashed.create_table("t")
    crashed.append("t", rows(1))  # ... and crashes before publishing
    publisher = client_of(target_cls, cat, env)
    publisher.append("t", rows(2))
    publisher.publish("t")
    info = cat.resolve("t")
    try:
        read = str(ids_of(ResilientClient(cat, env.storage).read("t")))
    except ReadError:
        read = "error"
    return env.storage.exists(delta_file(info, 1)), read


@demonstrates(v.PublishOwnCommitsOnly)
def test_publish_own_commits_only(tmp_path: Path) -> None:
    assert _publish_after_crash(BASE, tmp_path / "base") == (True, "[1, 2]")
    assert _publish_after_crash(v.PublishOwnCommitsOnly, tmp_path / "faulty") == (False, "error")  # v1 lost


def _many_unpublished_read(target_cls: type[DurableTarget], tmp_path: Path) -> str:
    env = make_env(tmp_path)
    cat = catalog_of(BASE, env)
    writer = ResilientClient(cat, env.storage)
    writer.create_table("t")
    for i in range(1, 61):
        writer.append("t", rows(i))
    try:
        result = client_of(target_cls, cat, env).read("t")
    except ReadError:
        return "error"
    return f"{result.version}:{len(result.rows)}"


@demonstrates(v.UnpublishedWindow)
def test_unpublished_window(tmp_path: Path) -> None:
    assert _many_unpublished_read(BASE, tmp_path / "base") == "60:60"
    assert _many_unpublished_read(v.UnpublishedWindow, tmp_path / "faulty") == "error"


def _old_version_after_compaction(target_cls: type[DurableTarget], tmp_path: Path) -> list[object]:
    env = make_env(tmp_path)
    cat = catalog_of(BASE, env)
    client = client_of(target_cls, cat, env)
    client.create_table("t")
    for i in (1, 2, 3, 4):
        client.append("t", rows(i))
    client.publish("t")
    assert client.compact_log("t", 1, 4)
    assert ids_of(client.read("t")) == [1, 2, 3, 4]
    return ids_of(client.read("t", version=2))


@demonstrates(v.CompactionOvershoot)
def test_compaction_overshoot(tmp_path: Path) -> None:
    assert _old_version_after_compaction(BASE, tmp_path / "base") == [1, 2]
    assert _old_version_after_compaction(v.CompactionOvershoot, tmp_path / "faulty") == [1, 2, 3, 4]


def _two_tables_read(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[str, str]:
    env = make_env(tmp_path)
    cat = catalog_of(BASE, env)
    writer = ResilientClient(cat, env.storage)
    for name, i in (("a", 1), ("b", 2)):
        writer.create_table(name)
        writer.append(name, rows(i))
        writer.publish(name)
    reader = client_of(target_cls, cat, env)
    first = str(ids_of(reader.read("a")))
    try:
        return first, str(ids_of(reader.read("b")))
    except FileNotFoundError:  # table a's commit names a data file that table b does not have
        return first, "error"


@demonstrates(v.ContentCacheByFileName)
def test_content_cache_by_file_name(tmp_path: Path) -> None:
    assert _two_tables_read(BASE, tmp_path / "base") == ("[1]", "[2]")
    assert _two_tables_read(v.ContentCacheByFileName, tmp_path / "faulty") == ("[1]", "error")  # read a's log


def test_variants_docs_name_a_section() -> None:
    for x in v.VARIANTS:
        assert "RFC" in x.doc or "PROTOCOL" in x.doc, x.name
        assert json.dumps(x.rules)
