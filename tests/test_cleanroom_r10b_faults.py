"""Every round-10 (writer D) faulty client (tests/cleanroom_r10b/variants.py) misbehaves where the correct
baseline does not. In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``;
no lakecert."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import CatalogTimeout
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import ReadError, decode, encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r10b import variants as v

WAREHOUSE = "mem://warehouse"
HOUR = 3_600_000


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def setup(cls: type[DurableTarget], tmp_path: Path) -> tuple[DurableCatalog, TargetEnv, ResilientClient]:
    env = make_env(tmp_path / cls.__name__)
    target = cls()
    cat = target.make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    client = target.make_client(cat, env)
    assert isinstance(client, ResilientClient)
    return cat, env, client


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def log_of(cat: DurableCatalog, name: str = "t") -> str:
    return f"{cat.resolve(name).location}/_delta_log"


def delta(version: int) -> str:
    return f"{version:020d}.json"


def commit_infos(env: TargetEnv, cat: DurableCatalog, name: str = "t") -> list[dict[str, Any]]:
    """The commitInfo of every version, read as a correct reader does (catalog first, then published)."""
    reader = ResilientClient(cat, env.storage)
    view = reader.view(reader._info(name))
    sources = reader.commit_sources(view)
    out = []
    for ver in range(view.latest + 1):
        infos = [a["commitInfo"] for a in decode(reader.content(sources[ver])) if "commitInfo" in a]
        out.append(infos[0])
    return out


class Losing:
    """A catalog whose next answer to ``commit`` is lost after the catalog acted; ``meanwhile`` runs
    between the catalog's action and the lost answer (another writer committing, say)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.lose_next = False
        self.meanwhile: Callable[[], object] | None = None

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def commit(self, *args: Any, **kwargs: Any) -> None:
        self.inner.commit(*args, **kwargs)
        if self.lose_next:
            self.lose_next = False
            if self.meanwhile is not None:
                self.meanwhile()
            raise CatalogTimeout("answer to commit lost")


class Skewed(ResilientClient):
    """A correct peer whose clock runs an hour ahead."""

    def now_ms(self) -> int:
        return super().now_ms() + HOUR


# ---------------------------------------------------------------- writing clients


def test_ict_prev_from_timestamp(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.IctPrevFromTimestampTarget, False)):
        cat, env, client = setup(cls, tmp_path)
        client.create_table("t")
        client.append("t", rows(1))
        Skewed(cat, env.storage).append("t", rows(2))
        client.append("t", rows(3))  # one commit after the skewed peer: right either way
        icts = [int(i["inCommitTimestamp"]) for i in commit_infos(env, cat)]
        assert icts[3] > icts[2]
        client.append("t", rows(4))
        icts = [int(i["inCommitTimestamp"]) for i in commit_infos(env, cat)]
        assert (icts[4] > icts[3]) is ok
        assert client.read("t").rows == rows(1, 2, 3, 4)


def test_checkpoint_publishes_target_only(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.CheckpointPublishesTargetOnlyTarget, False)):
        cat, env, client = setup(cls, tmp_path)
        client.create_table("t")
        client.append("t", rows(1))
        client.publish("t")
        # shallow: one unpublished commit, its predecessor published: in order either way
        client.append("t", rows(2))
        client.checkpoint("t")
        log = log_of(cat)
        published = {ver for ver in range(4) if env.storage.exists(f"{log}/{delta(ver)}")}
        assert published in ({0, 1}, {0, 1, 2})
        client.append("t", rows(3))
        client.append("t", rows(4))
        client.checkpoint("t")
        published = {ver for ver in range(6) if env.storage.exists(f"{log}/{delta(ver)}")}
        # publication in order: every published version's predecessor is published
        assert all(ver - 1 in published for ver in published if ver > 0) is ok
        if not ok:
            assert 4 in published and 3 not in published
        assert ResilientClient(cat, env.storage).read("t").rows == rows(1, 2, 3, 4)


def test_compaction_file_actions_only(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.CompactionFileActionsOnlyTarget, False)):
        cat, env, client = setup(cls, tmp_path)
        client.create_table("t")
        client.append("t", rows(1))
        client.append("t", rows(2))
        client.delete("t", [1])
        client.publish("t")
        log = log_of(cat)
        # shallow: a range of appends and deletes holds only file actions: the same either way
        assert client.compact_log("t", 1, 3)
        shallow = decode(env.storage.get(f"{log}/{1:020d}.{3:020d}.compacted.json"))
        assert sorted(k for a in shallow for k in a) == ["add", "remove"]
        assert client.compact_log("t", 0, 2)
        body = decode(env.storage.get(f"{log}/{0:020d}.{2:020d}.compacted.json"))
        kinds = {k for a in body for k in a}
        assert ({"protocol", "metaData"} <= kinds) is ok
        assert "add" in kinds


def test_lost_answer_checks_head(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.LostAnswerChecksHeadTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = cls().make_catalog(env)
        losing = Losing(cat)
        client = cls().make_client(losing, env)
        client.create_table("t")
        # shallow: one writer, a lost answer: the newest commit is this writer's
        losing.lose_next = True
        assert client.append("t", rows(1)) == 1
        assert client.read("t").rows == rows(1)
        # another writer commits between the lost answer and the question
        other = ResilientClient(cat, env.storage)
        losing.lose_next = True
        losing.meanwhile = functools.partial(other.append, "t", rows(3))
        got = client.append("t", rows(2))
        reader = ResilientClient(cat, env.storage)
        assert reader.read("t").rows == rows(1, 2, 3)  # the data file is reused: rows hide the double commit
        view = reader.view(reader._info("t"))
        adds = [
            a["add"]["path"]
            for ver in range(1, view.latest + 1)
            for a in decode(reader.content(reader.commit_sources(view)[ver]))
            if "add" in a
        ]
        assert (got, view.latest, len(adds) == len(set(adds))) == ((2, 3, True) if ok else (4, 4, False))


def test_lost_answer_returns_latest(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.LostAnswerReturnsLatestTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = cls().make_catalog(env)
        losing = Losing(cat)
        client = cls().make_client(losing, env)
        client.create_table("t")
        losing.lose_next = True
        assert client.append("t", rows(1)) == 1  # shallow: one writer
        other = ResilientClient(cat, env.storage)
        losing.lose_next = True
        losing.meanwhile = functools.partial(other.append, "t", rows(3))
        got = client.append("t", rows(2))
        assert (got == 2) is ok
        reader = ResilientClient(cat, env.storage)
        assert reader.read("t", version=2).rows == rows(1, 2)
        if not ok:
            assert got == 3
        assert reader.read("t").rows == rows(1, 2, 3)


def test_txnid_from_ict(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.TxnIdFromIctTarget, False)):
        cat, env, client = setup(cls, tmp_path)
        client.create_table("a")
        client.create_table("b")
        for i in range(3):
            client.append("a", rows(i))
        ids_a = [i["txnId"] for i in commit_infos(env, cat, "a")]
        assert len(set(ids_a)) == len(ids_a)  # shallow: unique within a table
        frozen = client.now_ms()
        client.now_ms = functools.partial(int, frozen + HOUR)  # type: ignore[method-assign]
        client.append("a", rows(10))  # the same millisecond on two tables (a fast client, or a fixed clock)
        client.append("b", rows(10))
        last_a = commit_infos(env, cat, "a")[-1]["txnId"]
        last_b = commit_infos(env, cat, "b")[-1]["txnId"]
        assert (last_a != last_b) is ok


# ---------------------------------------------------------------- reading clients


def stray_commit(env: TargetEnv, cat: DurableCatalog, version: int, ids: list[int], ict: int) -> None:
    """A filesystem-based writer's commit written straight to ``_delta_log/<version>.json``."""
    peer = ResilientClient(cat, env.storage)
    add = peer.write_data(cat.resolve("t").location, rows(*ids))
    info = {"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict, "txnId": "stray", "operation": "WRITE"}}
    env.storage.put(f"{log_of(cat)}/{delta(version)}", encode([info, add]))


def test_version_read_trusts_file(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.VersionReadTrustsFileTarget, False)):
        cat, env, client = setup(cls, tmp_path)
        writer = ResilientClient(cat, env.storage)
        writer.create_table("t")
        writer.append("t", rows(1))
        writer.publish("t")
        stray_commit(env, cat, 2, [99], 1)
        latest = client.read("t")  # shallow: the latest read ignores the stray file
        assert (latest.version, latest.rows) == (1, rows(1))
        if ok:
            with pytest.raises(ReadError):
                client.read("t", version=2)
        else:
            assert client.read("t", version=2).rows == rows(1, 99)


def test_incremental_catalog_only(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.IncrementalCatalogOnlyTarget, False)):
        cat, env, client = setup(cls, tmp_path)
        writer = ResilientClient(cat, env.storage)
        writer.create_table("t")
        writer.append("t", rows(1))
        assert client.read("t").rows == rows(1)
        writer.append("t", rows(2))
        assert client.read("t").rows == rows(1, 2)  # shallow: only unpublished commits since
        writer.append("t", rows(3))
        writer.publish("t")  # the catalog forgets 1..3
        writer.append("t", rows(4))
        got = client.read("t")
        assert got.version == 4
        assert (got.rows == rows(1, 2, 3, 4)) is ok
        if not ok:
            assert got.rows == rows(1, 2, 4)


def test_timeline_published_first(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.TimelinePublishedFirstTarget, False)):
        cat, env, client = setup(cls, tmp_path)
        writer = ResilientClient(cat, env.storage)
        writer.create_table("t")
        stray_commit(env, cat, 1, [99], writer.now_ms() + 10 * HOUR)  # above the latest: ignored, for now
        writer.append("t", rows(1))  # the catalog ratifies version 1: its own commit, staged
        ict1 = int(commit_infos(env, cat)[1]["inCommitTimestamp"])
        # shallow: precedence by latest and by version is right
        assert client.read("t").rows == rows(1)
        assert client.read("t", version=1).rows == rows(1)
        got = client.read("t", timestamp_ms=ict1 + 1)
        assert (got.version == 1) is ok
        if not ok:
            assert got.version == 0


def test_recursive_list_basename(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.RecursiveListBasenameTarget, False)):
        cat, env, client = setup(cls, tmp_path)
        writer = ResilientClient(cat, env.storage)
        writer.create_table("t")
        loser = ResilientClient(cat, env.storage)
        add = loser.write_data(cat.resolve("t").location, rows(99))
        info = {"commitInfo": {"inCommitTimestamp": 5, "timestamp": 5, "txnId": "loser", "operation": "WRITE"}}
        rejected = f"{log_of(cat)}/_staged_commits/{1:020d}.ffffffff-ffff-4fff-bfff-ffffffffffff.json"
        env.storage.put(rejected, encode([info, add]))  # a losing proposal's leftover staged file
        writer.append("t", rows(1))
        assert client.read("t").rows == rows(1)  # shallow: the catalog holds version 1
        writer.publish("t")  # published and forgotten by the catalog
        assert json.loads(env.storage.get(f"{log_of(cat)}/{delta(1)}").splitlines()[0])["commitInfo"]["txnId"]
        got = client.read("t")
        assert (got.rows == rows(1)) is ok
        if not ok:
            assert got.rows == rows(99)
