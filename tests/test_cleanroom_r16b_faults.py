"""Every round-16 (b) faulty client (tests/cleanroom_r16b/variants.py) misbehaves where the correct baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any, cast

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.contract.delta import Catalog, CatalogError, CatalogTimeout
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import _CHECKPOINT_SCHEMA, CleanClient, ReadError, decode, encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r16b import variants as v

WAREHOUSE = "mem://warehouse"
HOUR_MS = 3_600_000
FIVE_MIN_MS = 300_000


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def catalog_of(env: TargetEnv) -> DurableCatalog:
    cat = DurableTarget().make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    return cat


def client_of(target_cls: type[DurableTarget], cat: Any, env: TargetEnv) -> CleanClient:
    client = target_cls().make_client(cat, env)
    assert isinstance(client, CleanClient)
    return client


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def log_of(cat: DurableCatalog, name: str = "t") -> str:
    return f"{cat.resolve(name).location}/_delta_log"


def commit_bytes(cat: DurableCatalog, env: TargetEnv, version: int, name: str = "t") -> bytes:
    """The ratified commit of ``version``: the catalog's if it still stores it, else the published file."""
    info = cat.resolve(name)
    for c in cat.get_commits(info.table_id, version, version).commits:
        if c.inline_content is not None:
            return c.inline_content
        assert c.staged_uri is not None
        return env.storage.get(c.staged_uri)
    return env.storage.get(f"{info.location}/_delta_log/{version:020d}.json")


def commit_info(content: bytes) -> dict[str, Any]:
    first = decode(content)[0]
    assert "commitInfo" in first
    info: dict[str, Any] = first["commitInfo"]
    return info


class SlowClockClient(ResilientClient):
    """A correct client whose clock runs an hour behind (a peer with a skewed clock, or a table created
    an hour ago)."""

    def now_ms(self) -> int:
        return super().now_ms() - HOUR_MS


# ---------------------------------------------------------------- writing clients


def test_ict_logical_clock(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.IctLogicalClockTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(env)
        SlowClockClient(cat, env.storage).create_table("t")
        created = int(commit_info(commit_bytes(cat, env, 0))["inCommitTimestamp"])
        before = time.time_ns() // 1_000_000
        assert client_of(cls, cat, env).append("t", rows(1)) == 1
        ict = int(commit_info(commit_bytes(cat, env, 1))["inCommitTimestamp"])
        assert ict > created  # monotonic either way
        assert (abs(ict - before) < FIVE_MIN_MS) is ok


def test_ict_logical_clock_fresh_table_looks_right(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    cat = catalog_of(env)
    client = client_of(v.IctLogicalClockTarget, cat, env)
    client.create_table("t")
    client.append("t", rows(1))
    ict = int(commit_info(commit_bytes(cat, env, 1))["inCommitTimestamp"])
    assert abs(ict - time.time_ns() // 1_000_000) < FIVE_MIN_MS


def test_txnid_create_not_rotated(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.TxnIdCreateNotRotatedTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(env)
        client = client_of(cls, cat, env)
        client.create_table("t")
        client.append("t", rows(1))
        client.append("t", rows(2))
        ids = [commit_info(commit_bytes(cat, env, ver))["txnId"] for ver in (0, 1, 2)]
        assert all(isinstance(i, str) and i for i in ids)
        assert ids[1] != ids[2]  # appends never repeat an id
        assert (len(set(ids)) == 3) is ok


def _compaction_paths(cls: type[DurableTarget], tmp_path: Path) -> tuple[set[str], set[str], list[int]]:
    env = make_env(tmp_path / cls.__name__)
    cat = catalog_of(env)
    client = client_of(cls, cat, env)
    client.create_table("t")
    client.append("t", rows(1))
    client.append("t", rows(2))
    client.delete("t", [1])
    client.publish("t")
    assert client.compact_log("t", 1, 3)
    body = env.storage.get(f"{log_of(cat)}/{1:020d}.{3:020d}.compacted.json")
    actions = decode(body)
    adds = {a["add"]["path"] for a in actions if "add" in a}
    removes = {a["remove"]["path"] for a in actions if "remove" in a}
    return adds, removes, [int(r["id"]) for r in client.read("t").rows]  # type: ignore[call-overload]


def test_compaction_keeps_cancelled_adds(tmp_path: Path) -> None:
    adds, removes, ids = _compaction_paths(DurableTarget, tmp_path)
    assert ids == [2] and len(removes) == 1 and not adds & removes
    adds, removes, ids = _compaction_paths(v.CompactionKeepsCancelledAddsTarget, tmp_path)
    assert ids == [2] and len(removes) == 1
    assert adds & removes  # the removed file is also added in the same compaction file


def test_autopublish_own_commit(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.AutopublishOwnCommitTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(env)
        peer = ResilientClient(cat, env.storage)
        peer.create_table("t")
        assert peer.append("t", rows(1)) == 1  # ratified, not published
        assert client_of(cls, cat, env).append("t", rows(2)) == 2
        log = log_of(cat)
        one, two = (env.storage.exists(f"{log}/{ver:020d}.json") for ver in (1, 2))
        assert not one
        assert two is not ok  # version 2 published while version 1 is not


def test_autopublish_own_commit_alone_is_in_order(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    cat = catalog_of(env)
    client = client_of(v.AutopublishOwnCommitTarget, cat, env)
    client.create_table("t")
    for i in range(1, 4):
        client.append("t", rows(i))
    log = log_of(cat)
    assert all(env.storage.exists(f"{log}/{ver:020d}.json") for ver in range(4))


class RivalThenLose:
    """The catalog seen by the client under test: before its first proposal is delivered a rival commits
    the same version, and the answer to that proposal (a conflict) is lost."""

    def __init__(self, inner: DurableCatalog, rival: ResilientClient) -> None:
        self.inner = inner
        self.rival = rival
        self.armed = True

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        if not self.armed:
            self.inner.commit(table_id, version, **kwargs)
            return
        self.armed = False
        self.rival.append("t", rows(100))
        try:
            self.inner.commit(table_id, version, **kwargs)
        except CatalogError as e:
            raise CatalogTimeout("answer lost") from e


def test_publish_on_lost_answer(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.PublishOnLostAnswerTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(env)
        rival = ResilientClient(cat, env.storage)
        rival.create_table("t")
        client = client_of(cls, cast(Catalog, RivalThenLose(cat, rival)), env)
        assert client.append("t", rows(1)) == 2  # lost v1 to the rival, landed at v2
        ratified_v1 = commit_bytes(cat, env, 1)
        rival.publish("t")
        published_v1 = env.storage.get(f"{log_of(cat)}/{1:020d}.json")
        assert (published_v1 == ratified_v1) is ok
        after = sorted(int(r["id"]) for r in rival.read("t").rows)  # type: ignore[call-overload]
        assert (after == [1, 100]) is ok  # with the wrong file published, the rival's row is lost


# ---------------------------------------------------------------- reading clients


def test_latest_zero_falsy(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.LatestZeroFalsyTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(env)
        writer = ResilientClient(cat, env.storage)
        writer.create_table("t")
        info = cat.resolve("t")
        add = writer.write_data(info.location, rows(7))
        stray = encode([{"commitInfo": {"inCommitTimestamp": 1, "txnId": "stray"}}, add])
        env.storage.put(f"{info.location}/_delta_log/{1:020d}.json", stray)  # above the latest (0)
        got = client_of(cls, cat, env).read("t")
        assert (got.version == 0 and got.rows == []) is ok


def test_latest_zero_falsy_obeys_positive_latest(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    cat = catalog_of(env)
    writer = ResilientClient(cat, env.storage)
    writer.create_table("t")
    writer.append("t", rows(1))
    info = cat.resolve("t")
    add = writer.write_data(info.location, rows(7))
    stray = encode([{"commitInfo": {"inCommitTimestamp": 1, "txnId": "stray"}}, add])
    env.storage.put(f"{info.location}/_delta_log/{2:020d}.json", stray)
    got = client_of(v.LatestZeroFalsyTarget, cat, env).read("t")
    assert got.version == 1 and [r["id"] for r in got.rows] == [1]


def _engine_style_checkpoint(env: TargetEnv, uri: str) -> None:
    """Rewrite a checkpoint as Delta engines write them: every add row with ``dataChange: false``."""
    table = pq.read_table(io.BytesIO(env.storage.get(uri)))
    out = []
    for row in table.to_pylist():
        if row.get("add") is not None:
            row["add"]["dataChange"] = False
        out.append(row)
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(out, schema=_CHECKPOINT_SCHEMA), buf)
    env.storage.put(uri, buf.getvalue())


def test_skip_no_data_change_adds(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.SkipNoDataChangeAddsTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(env)
        writer = ResilientClient(cat, env.storage)
        writer.create_table("t")
        writer.append("t", rows(1))
        writer.append("t", rows(2))
        writer.publish("t")
        assert writer.checkpoint("t") == 2
        reader = client_of(cls, cat, env)
        assert [r["id"] for r in reader.read("t").rows] == [1, 2]  # its own kind of checkpoint: right
        _engine_style_checkpoint(env, f"{log_of(cat)}/{2:020d}.checkpoint.parquet")
        got = reader.read("t")
        assert got.version == 2
        assert ([r["id"] for r in got.rows] == [1, 2]) is ok


def test_ict_enablement_by_mtime(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.IctEnablementByMtimeTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(env)
        SlowClockClient(cat, env.storage).create_table("t")
        created = int(commit_info(commit_bytes(cat, env, 0))["inCommitTimestamp"])
        ResilientClient(cat, env.storage).append("t", rows(1))
        reader = client_of(cls, cat, env)
        # version 1 is dated right by both
        assert reader.read("t", timestamp_ms=time.time_ns() // 1_000_000 + 1000).version == 1
        if ok:
            assert reader.read("t", timestamp_ms=created + 10).version == 0
        else:
            with pytest.raises(ReadError):
                reader.read("t", timestamp_ms=created + 10)


def test_variants_are_documented() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names)) == 8
    for x in v.VARIANTS:
        assert x.name.startswith("cr16b-") and x.name in x.doc
        assert x.target.startswith("tests.cleanroom_r16b.variants:")
        assert all(rule in x.doc for rule in x.rules) and x.level in x.doc
