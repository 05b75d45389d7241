"""Every round-8 faulty variant (tests/cleanroom_r8/variants.py) misbehaves where the correct baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import (
    CatalogTimeout,
    CommitRejected,
    InvalidRequest,
    MaintenancePolicy,
    TableNotFound,
)
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import ReadError, RetriesExhausted, decode, encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r8 import variants as v

WAREHOUSE = "mem://warehouse"


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def catalog_of(target_cls: type[DurableTarget], env: TargetEnv) -> DurableCatalog:
    cat = target_cls().make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    return cat


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def table(cat: Any, env: TargetEnv, name: str = "t") -> str:
    ResilientClient(cat, env.storage).create_table(name)
    return str(cat.resolve(name).table_id)


def inline(version: int) -> bytes:
    ict = 1_700_000_000_000 + version
    return encode([{"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict, "txnId": f"x{version}"}}])


class Losing:
    """A catalog whose next answer to a named call is lost after the catalog acted (the nemesis)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.lose: set[str] = set()

    def __getattr__(self, attr: str) -> Any:
        call = getattr(self.inner, attr)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            out = call(*args, **kwargs)
            if attr in self.lose:
                self.lose.discard(attr)
                raise CatalogTimeout(f"answer to {attr} lost")
            return out

        return wrapped


# ---------------------------------------------------------------- catalog variants


def _publish_many(target_cls: type[DurableTarget], tmp_path: Path, n: int) -> tuple[Any, str, TargetEnv]:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    tid = table(cat, env)
    for ver in range(1, n + 1):
        cat.commit(tid, ver, inline_content=inline(ver))
        cat.mark_published(tid, ver)
    return cat, tid, env


def test_cap_counts_history(tmp_path: Path) -> None:
    cat, tid, _ = _publish_many(v.CappedTarget, tmp_path / "ok", 20)
    assert cat.get_commits(tid).latest_version == 20
    with pytest.raises(CommitRejected):
        _publish_many(v.CapCountsHistoryTarget, tmp_path / "bad", 20)
    # both refuse one past the cap of unpublished commits
    env = make_env(tmp_path / "cap")
    good = catalog_of(v.CappedTarget, env)
    gid = table(good, env)
    for ver in range(1, 17):
        good.commit(gid, ver, inline_content=inline(ver))
    with pytest.raises(CommitRejected):
        good.commit(gid, 17, inline_content=inline(17))


def test_restart_published_recomputed(tmp_path: Path) -> None:
    for cls, ok in ((v.CappedTarget, True), (v.RestartPublishedRecomputedTarget, False)):
        cat, tid, env = _publish_many(cls, tmp_path / cls.__name__, 20)
        cat2 = cls().restart_catalog(cat, env)
        assert cat2.get_commits(tid).latest_version == 20
        if ok:
            cat2.commit(tid, 21, inline_content=inline(21))
        else:
            with pytest.raises(CommitRejected):
                cat2.commit(tid, 21, inline_content=inline(21))


def test_restart_location_normalised(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.RestartLocationNormalisedTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        table(cat, env)
        ResilientClient(cat, env.storage).append("t", rows(1))
        before = cat.resolve("t").location
        cat2 = cls().restart_catalog(cat, env)
        after = cat2.resolve("t").location
        reader = ResilientClient(cat2, env.storage)
        if ok:
            assert after == before
            assert reader.read("t").rows == rows(1)
        else:
            assert after != before
            with pytest.raises(ReadError):
                reader.read("t")


def test_mark_after_store(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.MarkAfterStoreTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        cat.commit(tid, 1, inline_content=inline(1), latest_published_version=1)
        resp = cat.get_commits(tid)
        assert resp.latest_version == 1
        assert [c.version for c in resp.commits] == ([1] if ok else [])


def test_restart_managed_flag(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.RestartManagedFlagTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        table(cat, env)
        assert cat.resolve("t").catalog_managed
        cat2 = cls().restart_catalog(cat, env)
        assert cat2.resolve("t").catalog_managed is ok


def test_staged_uuid_loose(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.StagedUuidLooseTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        loc = cat.resolve("t").location
        uri = f"{loc}/_delta_log/_staged_commits/{1:020d}.{'a' * 36}.json"
        env.storage.put(uri, inline(1))
        if ok:
            with pytest.raises(InvalidRequest):
                cat.commit(tid, 1, staged_uri=uri)
            assert cat.get_commits(tid).latest_version == 0
        else:
            cat.commit(tid, 1, staged_uri=uri)
            assert cat.get_commits(tid).latest_version == 1


def test_register_upsert(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.RegisterUpsertTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        first = table(cat, env)
        ResilientClient(cat, env.storage).append("t", rows(1))
        staging = cat.create_staging_table()
        env.storage.put(f"{staging.location}/_delta_log/{0:020d}.json", inline(0))
        if ok:
            with pytest.raises(InvalidRequest):
                cat.register_table("t", staging.table_id)
            assert cat.resolve("t").table_id == first
        else:
            cat.register_table("t", staging.table_id)
            assert cat.resolve("t").table_id != first
            assert ResilientClient(cat, env.storage).read("t").rows == []


def test_staged_version_previous(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.StagedVersionPreviousTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        log = f"{cat.resolve('t').location}/_delta_log/_staged_commits"
        winner = f"{log}/{1:020d}.00000000-0000-4000-8000-000000000001.json"
        loser = f"{log}/{1:020d}.00000000-0000-4000-8000-000000000002.json"
        env.storage.put(winner, inline(1))
        env.storage.put(loser, inline(1))
        cat.commit(tid, 1, staged_uri=winner)
        if ok:
            with pytest.raises(InvalidRequest):
                cat.commit(tid, 2, staged_uri=loser)
            assert cat.get_commits(tid).latest_version == 1
        else:
            cat.commit(tid, 2, staged_uri=loser)
            assert cat.get_commits(tid).latest_version == 2


# ---------------------------------------------------------------- client variants


class CrashBeforePropose(ResilientClient):
    def before_propose(self, log: str, version: int, content: bytes) -> None:
        raise RuntimeError("crashed between staging and proposing")


def test_adopt_orphan_staged(tmp_path: Path) -> None:
    for cls, ok in ((ResilientClient, True), (v.AdoptOrphanStagedClient, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(DurableTarget, env)
        table(cat, env)
        with pytest.raises(RuntimeError):
            CrashBeforePropose(cat, env.storage).append("t", rows(99))
        cls(cat, env.storage).append("t", rows(1))
        got = ResilientClient(cat, env.storage).read("t").rows
        assert got == (rows(1) if ok else rows(1, 99))


def test_mark_before_copy(tmp_path: Path) -> None:
    for cls, ok in ((ResilientClient, True), (v.MarkBeforeCopyClient, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(DurableTarget, env)
        table(cat, env)
        lossy = Losing(cat)
        client = cls(lossy, env.storage)
        client.append("t", rows(1))
        lossy.lose.add("mark_published")
        if ok:
            client.publish("t")
            assert ResilientClient(cat, env.storage).read("t").rows == rows(1)
        else:
            with pytest.raises(RetriesExhausted):
                client.publish("t")
            with pytest.raises(ReadError):
                ResilientClient(cat, env.storage).read("t")


def test_name_truncated_lookup(tmp_path: Path) -> None:
    name = "t" * 70
    for cls, ok in ((ResilientClient, True), (v.NameTruncatedLookupClient, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(DurableTarget, env)
        client = cls(cat, env.storage)
        client.create_table(name)
        if ok:
            assert client.append(name, rows(1)) == 1
        else:
            with pytest.raises(TableNotFound):
                client.append(name, rows(1))
            # and with a table named after the first 64 characters, it writes to that one
            client.create_table(name[:64])
            client.append(name, rows(2))
            assert ResilientClient(cat, env.storage).read(name[:64]).rows == rows(2)


def test_session_cached_listing(tmp_path: Path) -> None:
    for cls, ok in ((ResilientClient, True), (v.SessionCachedListingClient, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(DurableTarget, env)
        table(cat, env)
        writer = ResilientClient(cat, env.storage)
        reader = cls(cat, env.storage)
        writer.append("t", rows(1))
        assert reader.read("t").version == 1
        writer.append("t", rows(2))
        got = reader.read("t")
        assert (got.version, got.rows) == ((2, rows(1, 2)) if ok else (1, rows(1)))


def _txn_ids(cat: DurableCatalog, env: TargetEnv) -> list[str]:
    info = cat.resolve("t")
    out = []
    for c in cat.get_commits(info.table_id).commits:
        assert c.staged_uri is not None
        actions = decode(env.storage.get(c.staged_uri))
        out.append(str(actions[0]["commitInfo"]["txnId"]))
    return out


def test_txnid_kept_after_lost_answer(tmp_path: Path) -> None:
    for cls, ok in ((ResilientClient, True), (v.TxnIdKeptAfterLostAnswerClient, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(DurableTarget, env)
        table(cat, env)
        lossy = Losing(cat)
        client = cls(lossy, env.storage)
        lossy.lose.add("commit")
        assert client.append("t", rows(1)) == 1
        assert client.append("t", rows(2)) == 2
        ids = _txn_ids(cat, env)
        assert len(ids) == 2
        assert (len(set(ids)) == 2) is ok


def test_publish_skips_on_lost_listing(tmp_path: Path) -> None:
    for cls, ok in ((ResilientClient, True), (v.PublishSkipsOnLostListingClient, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(DurableTarget, env)
        table(cat, env)
        lossy = Losing(cat)
        client = cls(lossy, env.storage)
        client.append("t", rows(1))
        lossy.lose.add("get_commits")
        client.publish("t")
        published = env.storage.exists(f"{cat.resolve('t').location}/_delta_log/{1:020d}.json")
        assert published is ok


def test_short_page_stop(tmp_path: Path) -> None:
    for cls, ok in ((ResilientClient, True), (v.ShortPageStopClient, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(DurableTarget, env)
        tid = table(cat, env)
        ResilientClient(cat, env.storage).append("t", rows(1))
        for ver in range(2, 106):
            cat.commit(tid, ver, inline_content=inline(ver))
        reader = cls(cat, env.storage)
        if ok:
            got = reader.read("t")
            assert (got.version, got.rows) == (105, rows(1))
        else:
            assert reader.read("t", version=99).rows == rows(1)
            with pytest.raises(ReadError):
                reader.read("t")


class SteppingClock(ResilientClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ticks = itertools.count(1_700_000_000_000, 10)

    def now_ms(self) -> int:
        return next(self._ticks)


def test_time_travel_seconds(tmp_path: Path) -> None:
    for cls, ok in ((ResilientClient, True), (v.TimeTravelSecondsClient, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(DurableTarget, env)
        table(cat, env)
        writer = SteppingClock(cat, env.storage)
        writer.append("t", rows(1))
        writer.append("t", rows(2))
        reader = cls(cat, env.storage)
        info = cat.resolve("t")
        timeline = dict(reader.timeline(reader.view(info)))
        assert timeline[1] // 1000 == timeline[2] // 1000 and timeline[1] < timeline[2]
        got = reader.read("t", timestamp_ms=timeline[1])
        assert got.version == (1 if ok else 2)


class PolicyCatalog(DurableCatalog):
    """Correct catalog whose policy allows only the operations in ``ALLOWED``."""

    ALLOWED: frozenset[str] = frozenset()

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        super().maintenance_policy(table_id)
        return MaintenancePolicy(self.ALLOWED)


class CleanupOnly(PolicyCatalog):
    ALLOWED = frozenset({"metadata_cleanup", "checksum"})


class AllButVacuum(PolicyCatalog):
    ALLOWED = frozenset({"checkpoint", "log_compaction", "checksum", "metadata_cleanup"})


def test_compaction_fallback_checkpoint(tmp_path: Path) -> None:
    for cls, ok in ((ResilientClient, True), (v.CompactionFallbackCheckpointClient, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = CleanupOnly(WAREHOUSE, env.storage, tmp_path / cls.__name__ / "state")
        table(cat, env)
        client = cls(cat, env.storage)
        client.append("t", rows(1))
        client.append("t", rows(2))
        client.publish("t")
        assert client.compact_log("t", 1, 2) is False
        log = f"{cat.resolve('t').location}/_delta_log/"
        checkpoints = [f.uri for f in env.storage.list(log) if f.uri.endswith(".checkpoint.parquet")]
        assert (checkpoints == []) is ok


def test_cleanup_also_vacuums(tmp_path: Path) -> None:
    for cls, ok in ((ResilientClient, True), (v.CleanupAlsoVacuumsClient, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = AllButVacuum(WAREHOUSE, env.storage, tmp_path / cls.__name__ / "state")
        table(cat, env)
        client = cls(cat, env.storage)
        client.append("t", rows(1))
        loc = cat.resolve("t").location
        data = [f.uri for f in env.storage.list(f"{loc}/") if f.uri.endswith(".parquet")]
        assert len(data) == 1
        client.delete("t", [1])
        client.append("t", rows(2))
        client.publish("t")
        assert client.checkpoint("t") == 3
        client.cleanup("t", 3)
        assert env.storage.exists(data[0]) is ok
        assert ResilientClient(cat, env.storage).read("t").rows == rows(2)


def test_variant_list() -> None:
    assert len(v.VARIANTS) >= 16
    assert len({x.name for x in v.VARIANTS}) == len(v.VARIANTS)
    assert sum(x.side == "catalog" for x in v.VARIANTS) >= 7
    assert sum(x.side == "client" for x in v.VARIANTS) >= 7
    listed = Path("/tmp/rules8.txt")
    text = listed.read_text() if listed.exists() else ""
    rules = {line.split(" | ")[0] for line in text.splitlines() if " | " in line}
    for x in v.VARIANTS:
        assert x.name.startswith("cr8-") and x.doc
        mod, _, cls = x.target.partition(":")
        assert mod == "tests.cleanroom_r8.variants"
        target = getattr(v, cls)
        assert issubclass(target, DurableTarget)
        if rules:
            assert set(x.rules) <= rules, x
