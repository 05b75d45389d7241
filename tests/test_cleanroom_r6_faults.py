"""Every round-6 faulty variant (tests/cleanroom_r6/variants.py) misbehaves where the correct baseline
(tests/cleanroom_r3/base.py) does not.

In-process and fast: an in-memory storage, the durable catalog's state under ``tmp_path``, no lakecert
and no sleeps. Catalog variants are driven by direct catalog calls or by the correct client; client
variants are bound to the correct durable catalog, with rivals and lost answers played by small
proxies that act at a chosen call, as a conformance suite would through the public contract.
"""

from __future__ import annotations

import importlib
import io
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from conformance.contract.delta import (
    Catalog,
    CatalogError,
    CatalogTimeout,
    CommitConflict,
    CommitRejected,
    FileInfo,
    GetCommitsResponse,
    InvalidRequest,
    TableNotFound,
)
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import ReadError, _as_dict, decode, encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant
from tests.cleanroom_r6 import variants as v6

WAREHOUSE = "mem://warehouse"
DAY_MS = 86_400_000


# ---------------------------------------------------------------- harness


class HookStorage(MemoryStorage):
    """Memory storage that runs a one-shot hook right after a LIST of a given prefix."""

    def __init__(self) -> None:
        super().__init__()
        self.after_list: tuple[str, Callable[[], None]] | None = None

    def list(self, prefix_uri: str) -> list[FileInfo]:
        found = super().list(prefix_uri)
        if self.after_list is not None and prefix_uri.endswith(self.after_list[0]):
            _, hook = self.after_list
            self.after_list = None
            hook()
        return found


class Proxy:
    """The catalog a client under test is bound to: forwards every call; can run a rival just before a
    proposal is delivered, and lose the answer of the next proposal after the catalog acted."""

    def __init__(self, inner: Catalog) -> None:
        self.inner = inner
        self.before_commit: Callable[[], None] | None = None
        self.lose_next_commit = False
        self.duplicate_next_commit = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        if self.before_commit is not None:
            hook, self.before_commit = self.before_commit, None
            hook()
        try:
            self.inner.commit(table_id, version, **kwargs)
            if self.duplicate_next_commit:  # the network delivers it again; the second answer is handed over
                self.duplicate_next_commit = False
                self.inner.commit(table_id, version, **kwargs)
        except CatalogError:
            if self.lose_next_commit:  # the refusal is lost as well: the client hears nothing
                self.lose_next_commit = False
                raise CatalogTimeout("the answer was lost after the catalog acted") from None
            raise
        if self.lose_next_commit:
            self.lose_next_commit = False
            raise CatalogTimeout("the answer was lost after the catalog acted")


class DroppingDurableCatalog(DurableCatalog):
    """A correct catalog that also drops tables (a soft drop: the name goes, the table stays)."""

    def drop_table(self, name: str) -> None:
        with self._lock:
            if name not in self._by_name:
                raise TableNotFound(name)
            del self._by_name[name]


class Setup:
    def __init__(self, target: DurableTarget, tmp_path: Path, storage: MemoryStorage | None = None) -> None:
        self.target = target
        self.storage = storage or MemoryStorage()
        self.env = TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=self.storage)
        self.catalog = target.make_catalog(self.env)

    def client(self, catalog: Any = None) -> ResilientClient:
        made = self.target.make_client(catalog if catalog is not None else self.catalog, self.env)
        assert isinstance(made, ResilientClient)
        return made

    def correct_client(self, catalog: Any = None) -> ResilientClient:
        return ResilientClient(catalog if catalog is not None else self.catalog, self.storage)

    def restart(self) -> None:
        self.catalog = self.target.restart_catalog(self.catalog, self.env)


def setup(cls: type[DurableTarget], tmp_path: Path, storage: MemoryStorage | None = None) -> Setup:
    where = tmp_path / cls.__name__
    where.mkdir(parents=True, exist_ok=True)
    return Setup(cls(), where, storage)


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def ids(result_rows: list[dict[str, object]]) -> list[object]:
    return [r["id"] for r in result_rows]


def staged(s: Setup, version: int, *, name: str = "t", write: bool = True) -> str:
    """A staged file of table ``name`` for ``version`` (written, unless ``write`` is false)."""
    location = s.catalog.resolve(name).location
    uri = f"{location}/_delta_log/_staged_commits/{version:020d}.{uuid.uuid4()}.json"
    if write:
        content = encode([{"commitInfo": {"inCommitTimestamp": version, "txnId": str(uuid.uuid4())}}])
        s.storage.put(uri, content, if_absent=True)
    return uri


def new_table(s: Setup, name: str = "t") -> str:
    s.correct_client().create_table(name)
    return s.catalog.resolve(name).table_id


def versions(resp: GetCommitsResponse) -> list[int]:
    return sorted(c.version for c in resp.commits)


def commit_ict(s: Setup, client: ResilientClient, name: str, version: int) -> int:
    info = s.catalog.resolve(name)
    view = client.view(info)
    source = client.commit_sources(view)[version]
    ict = client.ict_of(decode(client.content(source)))
    assert ict is not None
    return ict


# ---------------------------------------------------------------- every variant is otherwise a working target


@pytest.mark.parametrize("variant", v6.VARIANTS, ids=lambda v: v.name)
def test_variant_record_and_happy_path(variant: Variant, tmp_path: Path) -> None:
    module, cls_name = variant.target.split(":")
    cls = getattr(importlib.import_module(module), cls_name)
    assert issubclass(cls, DurableTarget) and cls.name == variant.name and variant.name.startswith("cr6-")
    faulty = cls.catalog_cls if variant.side == "catalog" else cls.client_cls
    assert faulty is not (DurableCatalog if variant.side == "catalog" else ResilientClient)
    assert (cls.client_cls is ResilientClient) == (variant.side == "catalog")
    assert variant.doc == faulty.__doc__ and variant.level in ("MUST", "SHOULD") and variant.rules
    s = setup(cls, tmp_path)
    client = s.client()
    client.create_table("happy")
    assert client.append("happy", rows(1, 2)) == 1
    assert client.append("happy", rows(3)) == 2
    assert client.delete("happy", [2]) == 3
    client.publish("happy")
    assert client.read("happy").version == 3
    assert ids(client.read("happy").rows) == [1, 3]
    assert ids(client.read("happy", version=1).rows) == [1, 2]


def test_variant_list_spread() -> None:
    assert len(v6.VARIANTS) >= 17
    assert len({v.name for v in v6.VARIANTS}) == len(v6.VARIANTS)
    assert sum(v.side == "catalog" for v in v6.VARIANTS) >= 7
    assert sum(v.side == "client" for v in v6.VARIANTS) >= 7
    assert {v.profile for v in v6.VARIANTS if v.side == "client"} == {"delta-cm-writer", "delta-cm-reader"}
    assert len({d for v in v6.VARIANTS for d in v.dimensions}) >= 7


# ---------------------------------------------------------------- catalog faults


def test_list_end_exclusive(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.ListEndExclusiveTarget, True)):
        s = setup(cls, tmp_path)
        table_id = new_table(s)
        client = s.correct_client()
        client.append("t", rows(1))
        client.append("t", rows(2))
        assert versions(s.catalog.get_commits(table_id)) == [1, 2]  # unbounded: right either way
        assert versions(s.catalog.get_commits(table_id, 1, 9)) == [1, 2]  # clamped: right either way
        assert versions(s.catalog.get_commits(table_id, 2, 2)) == ([] if faulty else [2])
        # A writer whose answer is lost asks for [v, v]: the faulty catalog makes it commit twice.
        proxy = Proxy(s.catalog)
        writer = s.correct_client(proxy)
        proxy.lose_next_commit = True
        assert writer.append("t", rows(3)) == (4 if faulty else 3)
        # The faulty case: the one append is committed twice (v3 and v4 add the same data file).
        assert client.read("t").version == (4 if faulty else 3)
        info = s.catalog.resolve("t")
        adds = [
            [a["add"]["path"] for a in decode(client.content(c)) if "add" in a]
            for c in client.commit_sources(client.view(info)).values()
            if not isinstance(c, str) and c.version >= 3
        ]
        assert len(adds) == (2 if faulty else 1) and all(a == adds[0] for a in adds)


def test_list_end_zero(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.ListEndZeroTarget, True)):
        s = setup(cls, tmp_path)
        table_id = new_table(s)
        client = s.correct_client()
        client.append("t", rows(1))
        client.append("t", rows(2))
        assert versions(s.catalog.get_commits(table_id, 1, 1)) == [1]
        assert versions(s.catalog.get_commits(table_id, 0, 1)) == [1]
        assert versions(s.catalog.get_commits(table_id, 0, 0)) == ([1, 2] if faulty else [])
        assert versions(s.catalog.get_commits(table_id, None, 0)) == ([1, 2] if faulty else [])


def test_mark_before_judging(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.MarkBeforeJudgingTarget, True)):
        s = setup(cls, tmp_path)
        table_id = new_table(s)
        client = s.correct_client()
        client.append("t", rows(1))
        client.append("t", rows(2))  # v1, v2 ratified, unpublished
        uri = staged(s, 5)
        with pytest.raises(CommitRejected):  # a gap: refused by both
            s.catalog.commit(table_id, 5, staged_uri=uri, in_commit_timestamp=5, latest_published_version=3)
        with pytest.raises(CommitRejected):  # a mark at the proposed version: no harm in either
            s.catalog.commit(table_id, 5, staged_uri=uri, in_commit_timestamp=5, latest_published_version=5)
        resp = s.catalog.get_commits(table_id)
        assert resp.latest_version == 2
        assert versions(resp) == ([] if faulty else [1, 2])  # the refused proposal dropped v1 and v2
        if faulty:
            with pytest.raises(ReadError):  # nothing published: the ratified commits are gone
                client.read("t")
        else:
            assert ids(client.read("t").rows) == [1, 2]


def test_cap_ignores_piggyback_mark(tmp_path: Path) -> None:
    assert v6.CapIgnoresPiggybackMarkTarget().catalog_limits().unpublished == 10
    for cls, faulty in ((DurableTarget, False), (v6.CapIgnoresPiggybackMarkTarget, True)):
        s = setup(cls, tmp_path)
        table_id = new_table(s)
        location = s.catalog.resolve("t").location
        refused_at = None
        for version in range(1, 16):
            uri = staged(s, version)
            if version > 1:  # the writer published v-1 and says so in its proposal, as UC clients do
                prev = s.catalog.get_commits(table_id, version - 1, version - 1).commits[0]
                assert prev.staged_uri is not None
                s.storage.put(f"{location}/_delta_log/{version - 1:020d}.json", s.storage.get(prev.staged_uri))
            try:
                s.catalog.commit(
                    table_id, version, staged_uri=uri, in_commit_timestamp=version, latest_published_version=version - 1
                )
            except CommitRejected:
                refused_at = version
                break
        unpublished = versions(s.catalog.get_commits(table_id))
        if faulty:
            assert refused_at == 11 and unpublished == [10]  # one unpublished commit, refused "at the cap"
        else:
            assert refused_at is None and unpublished == [15]
    # The same catalog, told by mark_published, is exact: ten unpublished go in, the eleventh is refused.
    s = setup(v6.CapIgnoresPiggybackMarkTarget, tmp_path / "exact")
    table_id = new_table(s)
    for version in range(1, 11):
        s.catalog.commit(table_id, version, staged_uri=staged(s, version), in_commit_timestamp=version)
    with pytest.raises(CommitRejected):
        s.catalog.commit(table_id, 11, staged_uri=staged(s, 11), in_commit_timestamp=11)
    s.catalog.mark_published(table_id, 10)
    s.catalog.commit(table_id, 11, staged_uri=staged(s, 11), in_commit_timestamp=11)


def test_managed_flag_from_log(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.ManagedFlagFromLogTarget, True)):
        s = setup(cls, tmp_path)
        new_table(s)
        client = s.correct_client()
        assert s.catalog.resolve("t").catalog_managed  # fresh table: right either way
        client.append("t", rows(1))
        assert s.catalog.resolve("t").catalog_managed
        client.publish("t")  # v1 (no protocol action) published and marked
        assert s.catalog.resolve("t").catalog_managed is (not faulty)


def test_resolve_prefix(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.ResolvePrefixTarget, True)):
        s = setup(cls, tmp_path)
        client = s.correct_client()
        client.create_table("orders_2024")
        client.append("orders_2024", rows(7))
        with pytest.raises(TableNotFound):
            s.catalog.resolve("zzz")  # no name starts with it: right either way
        assert s.catalog.resolve("orders_2024").name == "orders_2024"
        if faulty:
            other = s.catalog.resolve("orders")  # never registered
            assert other.location == s.catalog.resolve("orders_2024").location
            assert ids(client.read("orders").rows) == [7]
        else:
            with pytest.raises(TableNotFound):
                s.catalog.resolve("orders")


def test_reservation_leak(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.ReservationLeakTarget, True)):
        s = setup(cls, tmp_path)
        table_id = new_table(s)
        # The refusals decided by name, folder or version change nothing in either catalog.
        with pytest.raises(InvalidRequest):
            s.catalog.commit(table_id, 1, staged_uri=staged(s, 2), in_commit_timestamp=1)
        missing = staged(s, 1, write=False)
        with pytest.raises(InvalidRequest):  # the staged file does not exist: refused by both
            s.catalog.commit(table_id, 1, staged_uri=missing, in_commit_timestamp=1)
        assert s.catalog.get_commits(table_id).latest_version == 0
        if faulty:
            with pytest.raises(CommitConflict):  # v1 is not ratified, yet "taken"
                s.catalog.commit(table_id, 1, staged_uri=staged(s, 1), in_commit_timestamp=1)
            s.catalog.commit(table_id, 2, staged_uri=staged(s, 2), in_commit_timestamp=2)
            resp = s.catalog.get_commits(table_id)
            assert resp.latest_version == 2 and versions(resp) == [2]  # v2 ratified with v1 missing
        else:
            with pytest.raises(CommitRejected):  # a gap
                s.catalog.commit(table_id, 2, staged_uri=staged(s, 2), in_commit_timestamp=2)
            s.catalog.commit(table_id, 1, staged_uri=staged(s, 1), in_commit_timestamp=1)
            assert versions(s.catalog.get_commits(table_id)) == [1]


def test_restart_drops_ict(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.RestartDropsIctTarget, True)):
        s = setup(cls, tmp_path)
        table_id = new_table(s)
        client = s.correct_client()
        client.append("t", rows(1))
        client.append("t", rows(2))
        before = s.catalog.get_commits(table_id)
        assert all(c.in_commit_timestamp is not None for c in before.commits)
        s.restart()
        after = s.catalog.get_commits(table_id)
        assert after.latest_version == 2
        assert [(c.version, c.staged_uri) for c in after.commits] == [(c.version, c.staged_uri) for c in before.commits]
        assert (after.commits == before.commits) is (not faulty)
        if faulty:
            assert all(c.in_commit_timestamp is None for c in after.commits)


def test_mark_advances_to_listed(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.MarkAdvancesToListedTarget, True)):
        s = setup(cls, tmp_path)
        table_id = new_table(s)
        client = s.correct_client()
        for i in (1, 2, 3):
            client.append("t", rows(i))
        client.publish("t")  # files 1-3 are the ratified commits: dropping them is harmless
        assert s.catalog.get_commits(table_id).latest_version == 3
        for i in (4, 5):
            client.append("t", rows(i))
        location = s.catalog.resolve("t").location
        # A stray file at v5 (not the ratified commit), and v4 published by a writer that then marks 4.
        v4 = s.catalog.get_commits(table_id, 4, 4).commits[0]
        assert v4.staged_uri is not None
        s.storage.put(f"{location}/_delta_log/{4:020d}.json", s.storage.get(v4.staged_uri))
        stray = encode([{"commitInfo": {"inCommitTimestamp": 1, "txnId": "stray"}}])
        s.storage.put(f"{location}/_delta_log/{5:020d}.json", stray)
        s.catalog.mark_published(table_id, 4)
        assert versions(s.catalog.get_commits(table_id)) == ([] if faulty else [5])
        assert ids(client.read("t").rows) == ([1, 2, 3, 4] if faulty else [1, 2, 3, 4, 5])


# ---------------------------------------------------------------- writer faults


def test_conflict_tidies_staged(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.ConflictTidiesStagedTarget, True)):
        s = setup(cls, tmp_path)
        proxy = Proxy(s.catalog)
        writer = s.client(proxy)
        writer.create_table("t")
        assert writer.append("t", rows(1)) == 1
        # A lost race: the rival's commit stands, the writer rebases (and tidies its own file).
        rival = s.correct_client()
        proxy.before_commit = lambda r=rival: r.append("t", rows(2))
        assert writer.append("t", rows(3)) == 3
        assert ids(s.correct_client().read("t").rows) == [1, 2, 3]
        # A duplicate delivery: the second answer is a conflict, the version is the writer's own.
        proxy.duplicate_next_commit = True
        assert writer.append("t", rows(4)) == 4
        reader = s.correct_client()
        if faulty:
            with pytest.raises(FileNotFoundError):  # the ratified staged file is gone
                reader.read("t")
            with pytest.raises(FileNotFoundError):
                writer.publish("t")
        else:
            assert ids(reader.read("t").rows) == [1, 2, 3, 4]
            writer.publish("t")


class AheadClient(ResilientClient):
    """A correct peer whose clock runs 400 days ahead."""

    def now_ms(self) -> int:
        return super().now_ms() + 400 * DAY_MS


def test_ict_lost_at_checkpoint(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.IctLostAtCheckpointTarget, True)):
        s = setup(cls, tmp_path)
        writer = s.client()
        writer.create_table("t")
        writer.append("t", rows(1))
        # Without a checkpoint the skewed peer is honoured by both.
        AheadClient(s.catalog, s.storage).append("t", rows(2))
        writer.append("t", rows(3))
        assert commit_ict(s, writer, "t", 3) > commit_ict(s, writer, "t", 2)
        # Right after a checkpoint of the latest version, the faulty writer undercuts the peer.
        AheadClient(s.catalog, s.storage).append("t", rows(4))
        writer.publish("t")
        assert writer.checkpoint("t") == 4
        writer.append("t", rows(5))
        reader = s.correct_client()
        assert (commit_ict(s, reader, "t", 5) > commit_ict(s, reader, "t", 4)) is (not faulty)


def test_checkpoint_drops_configuration(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.CheckpointDropsConfigurationTarget, True)):
        s = setup(cls, tmp_path)
        writer = s.client()
        writer.create_table("t")
        writer.append("t", rows(1))
        writer.append("t", rows(2))
        writer.publish("t")
        assert writer.checkpoint("t") == 2
        location = s.catalog.resolve("t").location
        table = pq.read_table(io.BytesIO(s.storage.get(f"{location}/_delta_log/{2:020d}.checkpoint.parquet")))
        metadata = next(r["metaData"] for r in table.to_pylist() if r.get("metaData"))
        config = _as_dict(metadata["configuration"])
        assert (config.get("delta.enableInCommitTimestamps") == "true") is (not faulty)
        # After cleanup the table, replayed by a correct reader from the checkpoint, says the same.
        writer.cleanup("t", 2)
        reader = s.correct_client()
        view = reader.view(s.catalog.resolve("t"))
        snap = reader.snapshot(view, view.latest)
        assert (_as_dict(snap.metadata.get("configuration")).get("delta.enableInCommitTimestamps") == "true") is (
            not faulty
        )
        assert ids(reader.read("t").rows) == [1, 2]  # the data is right either way


def test_ict_config_bool(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.IctConfigBoolTarget, True)):
        s = setup(cls, tmp_path)
        writer = s.client()
        writer.create_table("t")
        location = s.catalog.resolve("t").location
        v0 = decode(s.storage.get(f"{location}/_delta_log/{0:020d}.json"))
        protocol = next(a["protocol"] for a in v0 if "protocol" in a)
        assert "inCommitTimestamp" in protocol["writerFeatures"]
        value = next(a["metaData"] for a in v0 if "metaData" in a)["configuration"]["delta.enableInCommitTimestamps"]
        assert str(value).lower() == "true"  # a lenient check passes either way
        assert (value == "true") is (not faulty)  # the map holds strings: JSON true is not "true"
        writer.append("t", rows(1))
        writer.publish("t")
        assert writer.checkpoint("t") == 1
        assert ids(writer.read("t").rows) == [1]


def test_cleanup_deletes_checkpoint_commit(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.CleanupDeletesCheckpointCommitTarget, True)):
        s = setup(cls, tmp_path)
        writer = s.client()
        writer.create_table("t")
        for i in (1, 2, 3):
            writer.append("t", rows(i))
        writer.publish("t")
        assert writer.checkpoint("t") == 3
        writer.append("t", rows(4))
        writer.publish("t")
        reader = s.correct_client()
        ict3 = commit_ict(s, reader, "t", 3)
        writer.cleanup("t", 3)
        location = s.catalog.resolve("t").location
        assert not s.storage.exists(f"{location}/_delta_log/{2:020d}.json")  # before the checkpoint: gone
        assert s.storage.exists(f"{location}/_delta_log/{4:020d}.json")
        assert s.storage.exists(f"{location}/_delta_log/{3:020d}.json") is (not faulty)
        assert reader.read("t", version=3).version == 3  # by version: from the checkpoint either way
        if faulty:
            with pytest.raises(ReadError):
                reader.read("t", timestamp_ms=ict3)
        else:
            assert reader.read("t", timestamp_ms=ict3).version == 3


def test_cached_resolution(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.CachedResolutionTarget, True)):
        s = setup(cls, tmp_path)
        catalog = DroppingDurableCatalog(WAREHOUSE, s.storage, tmp_path / cls.__name__ / "dropping")
        writer = s.client(catalog)
        writer.create_table("t")
        assert writer.append("t", rows(1)) == 1
        catalog.drop_table("t")
        other = s.correct_client(catalog)
        other.create_table("t")  # a new table under the same name
        assert writer.append("t", rows(2)) == (2 if faulty else 1)
        assert ids(other.read("t").rows) == ([] if faulty else [2])  # the acknowledged append is invisible


def test_inline_none_matches(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.InlineNoneMatchesTarget, True)):
        s = setup(cls, tmp_path)
        proxy = Proxy(s.catalog)
        writer = s.client(proxy)
        writer.create_table("t")
        assert writer.append("t", rows(1)) == 1
        # A rival's staged commit wins v2 just before the writer's proposal: both rebase.
        staged_rival = s.correct_client()
        proxy.before_commit = lambda rival=staged_rival: rival.append("t", rows(2))
        assert writer.append("t", rows(3)) == 3
        # A rival's inline commit wins v4 just before the writer's proposal.
        inline_rival = v6.InlineNoneMatchesClient(s.catalog, s.storage)
        proxy.before_commit = lambda rival=inline_rival: rival.append("t", rows(4))
        assert writer.append("t", rows(5)) == (4 if faulty else 5)
        assert ids(s.correct_client().read("t").rows) == ([1, 2, 3, 4] if faulty else [1, 2, 3, 4, 5])
        # The same with the conflict's answer lost (the nemesis's "rival just before, conflict lost").
        latest = s.catalog.resolve("t")
        before = s.catalog.get_commits(latest.table_id).latest_version
        proxy.before_commit = lambda rival=inline_rival: rival.append("t", rows(6))
        proxy.lose_next_commit = True
        assert writer.append("t", rows(7)) == (before + 1 if faulty else before + 2)
        seen = ids(s.correct_client().read("t").rows)
        assert (7 in seen) is (not faulty) and 6 in seen


def test_staged_gzip_large(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.StagedGzipLargeTarget, True)):
        s = setup(cls, tmp_path)
        writer = s.client()
        writer.create_table("t")
        for i in range(1, 61):
            writer.append("t", rows(i))
        info = s.catalog.resolve("t")
        small = s.catalog.get_commits(info.table_id, 60, 60).commits[0].staged_uri
        assert small is not None and decode(s.storage.get(small))  # small commits: plain either way
        writer.publish("t")
        version = writer.delete("t", list(range(1, 61)))  # 60 removes in one commit
        large = s.catalog.get_commits(info.table_id, version, version).commits[0].staged_uri
        assert large is not None
        data = s.storage.get(large)
        assert len(data) > 0
        if faulty:
            assert data[:2] == b"\x1f\x8b"
            with pytest.raises(UnicodeDecodeError):
                decode(data)
            with pytest.raises(UnicodeDecodeError):  # a correct reader of the unpublished commit fails
                s.correct_client().read("t")
        else:
            assert len(decode(data)) == 61
            assert s.correct_client().read("t").rows == []
        assert writer.read("t").rows == []  # the writer's own reader copes either way
        writer.publish("t")
        assert s.correct_client().read("t").rows == []  # what it publishes is right either way


# ---------------------------------------------------------------- reader faults


def test_time_travel_clamp(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.TimeTravelClampTarget, True)):
        s = setup(cls, tmp_path)
        writer = s.correct_client()
        writer.create_table("t")
        writer.append("t", rows(1))
        reader = s.client()
        ict0 = commit_ict(s, reader, "t", 0)
        ict1 = commit_ict(s, reader, "t", 1)
        assert reader.read("t", timestamp_ms=ict0).version == 0
        assert reader.read("t", timestamp_ms=ict1).version == 1
        if faulty:
            assert reader.read("t", timestamp_ms=ict0 - 1).version == 0  # before the table existed
        else:
            with pytest.raises(ReadError):
                reader.read("t", timestamp_ms=ict0 - 1)


def test_old_version_from_later_checkpoint(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.OldVersionFromLaterCheckpointTarget, True)):
        s = setup(cls, tmp_path)
        writer = s.correct_client()
        writer.create_table("t")
        for i in (1, 2, 3):
            writer.append("t", rows(i))
        writer.publish("t")
        assert writer.checkpoint("t") == 3
        writer.append("t", rows(4))
        writer.publish("t")
        reader = s.client()
        assert ids(reader.read("t", version=1).rows) == [1]  # before cleanup: right either way
        writer.cleanup("t", 3)
        assert ids(reader.read("t", version=3).rows) == [1, 2, 3]
        assert ids(reader.read("t").rows) == [1, 2, 3, 4]
        if faulty:
            result = reader.read("t", version=1)
            assert result.version == 1 and ids(result.rows) == [1, 2, 3]  # version 3's rows, labelled 1
        else:
            with pytest.raises(ReadError):
                reader.read("t", version=1)


def test_list_before_catalog(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.ListBeforeCatalogTarget, True)):
        storage = HookStorage()
        s = setup(cls, tmp_path, storage)
        writer = s.correct_client()
        writer.create_table("t")
        for i in (1, 2, 3):
            writer.append("t", rows(i))
        reader = s.client()
        assert ids(reader.read("t").rows) == [1, 2, 3]  # no concurrent publication: right either way
        writer.append("t", rows(4))
        # Another client publishes and marks right after the reader's LIST of _delta_log.
        publisher = s.correct_client()
        storage.after_list = ("/_delta_log/", lambda p=publisher: p.publish("t"))
        if faulty:
            with pytest.raises(ReadError):
                reader.read("t")
        else:
            assert ids(reader.read("t").rows) == [1, 2, 3, 4]
        assert storage.after_list is None  # the publication did happen


def test_list_from_checkpoint_prefix(tmp_path: Path) -> None:
    for cls, faulty in ((DurableTarget, False), (v6.ListFromCheckpointPrefixTarget, True)):
        s = setup(cls, tmp_path)
        writer = s.correct_client()
        writer.create_table("t")
        for i in range(1, 96):
            writer.append("t", rows(i))
            if i % 20 == 0:
                writer.publish("t")
                writer.checkpoint("t")
        writer.publish("t")
        assert writer.checkpoint("t") == 95
        reader = s.client()
        for i in range(96, 100):
            writer.append("t", rows(i))
        writer.publish("t")
        assert ids(reader.read("t").rows) == list(range(1, 100))  # within the hundred: right either way
        for i in range(100, 106):
            writer.append("t", rows(i))
        assert ids(reader.read("t").rows) == list(range(1, 106))  # unpublished: from the catalog either way
        writer.publish("t")
        if faulty:
            with pytest.raises(ReadError):
                reader.read("t")
        else:
            assert ids(reader.read("t").rows) == list(range(1, 106))
