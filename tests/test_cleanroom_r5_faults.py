"""Each round-5 variant misbehaves, in process, where the correct durable baseline does not.

Every demonstration builds the baseline (``DurableTarget``) and the variant the same way, sets up the
variant's condition, and asserts that the baseline keeps the rule and the variant breaks it. No sleeps,
no wall-clock limits: the conditions are set up by hand (hooks, wrappers around the catalog).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from conformance.contract.delta import (
    Catalog,
    CatalogLimits,
    CatalogTimeout,
    CommitConflict,
    CommitRejected,
    DeltaClient,
    GetCommitsResponse,
    InvalidRequest,
    TableInfo,
)
from conformance.contract.target import TargetEnv, declared_limits
from tests.cleanroom.catalog import TableState
from tests.cleanroom.client import CleanClient, ReadError, decode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r5 import variants as v

WAREHOUSE = "mem://warehouse"


# ---------------------------------------------------------------- helpers


def make_env(tmp_path: Path, tag: str) -> TargetEnv:
    workdir = tmp_path / tag
    workdir.mkdir(parents=True, exist_ok=True)
    return TargetEnv(workdir=workdir, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def build(target_cls: type[DurableTarget], tmp_path: Path, tag: str) -> tuple[DurableTarget, TargetEnv, Catalog]:
    target = target_cls()
    env = make_env(tmp_path, tag)
    return target, env, target.make_catalog(env)


def new_table(catalog: Catalog, env: TargetEnv, name: str = "t") -> TableInfo:
    ResilientClient(catalog, env.storage).create_table(name)
    return catalog.resolve(name)


def stage(env: TargetEnv, info: TableInfo, version: int, content: bytes | None = None, *, name: str = "") -> str:
    name = name or f"{version:020d}.{uuid.uuid4()}.json"
    uri = f"{info.location}/_delta_log/_staged_commits/{name}"
    if content is None:
        action = {"commitInfo": {"inCommitTimestamp": 1000 + version, "txnId": str(uuid.uuid4())}}
        content = json.dumps(action).encode() + b"\n"
    env.storage.put(uri, content)
    return uri


def commit_bytes(catalog: Catalog, env: TargetEnv, info: TableInfo, version: int) -> bytes:
    for c in catalog.get_commits(info.table_id, version, version).commits:
        if c.version == version:
            return c.inline_content if c.inline_content is not None else env.storage.get(str(c.staged_uri))
    return env.storage.get(f"{info.location}/_delta_log/{version:020d}.json")


def commit_info(catalog: Catalog, env: TargetEnv, info: TableInfo, version: int) -> dict[str, Any]:
    for a in decode(commit_bytes(catalog, env, info, version)):
        if "commitInfo" in a:
            return dict(a["commitInfo"])
    raise AssertionError(f"no commitInfo in v{version}")


def rows(n: int, start: int = 0) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in range(start, start + n)]


def delta_uri(info: TableInfo, version: int) -> str:
    return f"{info.location}/_delta_log/{version:020d}.json"


def limits_of(target: DurableTarget) -> CatalogLimits:
    """The limits lakecert reads from the target (``declared_limits``)."""
    return declared_limits(cast(Any, target))


def baseline_and(variant: type[DurableTarget]) -> list[Any]:
    return [pytest.param(DurableTarget, False, id="baseline"), pytest.param(variant, True, id="variant")]


# ---------------------------------------------------------------- catalog faults


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.ListStartClampedTarget))
def test_list_start_clamped(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    _, env, cat = build(target_cls, tmp_path, "c")
    info = new_table(cat, env)
    for version in (1, 2):
        cat.commit(info.table_id, version, staged_uri=stage(env, info, version), in_commit_timestamp=version)
    assert [c.version for c in cat.get_commits(info.table_id, 1, 2).commits] == [1, 2]  # inside: both agree
    resp = cat.get_commits(info.table_id, 3)  # "anything new since v2?"
    assert resp.latest_version == 2
    assert [c.version for c in resp.commits] == ([2] if faulty else [])


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.RestartInlineNewlineTarget))
def test_restart_inline_newline(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    target, env, cat = build(target_cls, tmp_path, "c")
    info = new_table(cat, env)
    content = b'{"commitInfo":{"inCommitTimestamp":7,"txnId":"a"}}\n{"add":{"path":"p.parquet"}}\n'
    cat.commit(info.table_id, 1, inline_content=content, in_commit_timestamp=7)
    cat.commit(info.table_id, 2, staged_uri=stage(env, info, 2), in_commit_timestamp=8)
    assert commit_bytes(cat, env, info, 1) == content  # before the restart: exact
    cat = target.restart_catalog(cat, env)
    assert cat.get_commits(info.table_id).latest_version == 2
    assert (commit_bytes(cat, env, info, 1) == content) is not faulty


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.DedupeByTimestampTarget))
def test_dedupe_by_timestamp(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    _, env, cat = build(target_cls, tmp_path, "c")
    info = new_table(cat, env)
    first, second = stage(env, info, 1), stage(env, info, 1)
    cat.commit(info.table_id, 1, staged_uri=first, in_commit_timestamp=5000)
    # A different writer's proposal of the same version with a different timestamp: both refuse it.
    with pytest.raises(CommitConflict):
        cat.commit(info.table_id, 1, staged_uri=stage(env, info, 1), in_commit_timestamp=5001)
    # The same version, the same timestamp, another writer's file: the variant says it won.
    if faulty:
        cat.commit(info.table_id, 1, staged_uri=second, in_commit_timestamp=5000)
    else:
        with pytest.raises(CommitConflict):
            cat.commit(info.table_id, 1, staged_uri=second, in_commit_timestamp=5000)
    held = cat.get_commits(info.table_id, 1, 1).commits
    assert [c.staged_uri for c in held] == [first]  # the acknowledged second proposal is nowhere


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.ConflictStatesProposedTarget))
def test_conflict_states_proposed(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    _, env, cat = build(target_cls, tmp_path, "c")
    info = new_table(cat, env)
    for version in (1, 2, 3):
        cat.commit(info.table_id, version, staged_uri=stage(env, info, version), in_commit_timestamp=version)
    with pytest.raises(CommitConflict) as at_latest:
        cat.commit(info.table_id, 3, staged_uri=stage(env, info, 3), in_commit_timestamp=9)
    assert at_latest.value.latest_version == 3  # the usual lost race: both right
    with pytest.raises(CommitConflict) as stale:
        cat.commit(info.table_id, 1, staged_uri=stage(env, info, 1), in_commit_timestamp=9)
    assert stale.value.latest_version == (1 if faulty else 3)


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.StagedVersionParsedTarget))
def test_staged_version_parsed(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    _, env, cat = build(target_cls, tmp_path, "c")
    info = new_table(cat, env)
    u = uuid.uuid4()
    for bad in (f"{1:020d}.json", f"{1:020d}.not-a-uuid.json", f"{2:020d}.{u}.json"):  # what both refuse
        with pytest.raises(InvalidRequest):
            cat.commit(info.table_id, 1, staged_uri=stage(env, info, 1, name=bad), in_commit_timestamp=1)
    for odd, version in ((f"1.{u}.json", 1), (f"{2:021d}.{u.hex}.json", 2)):
        uri = stage(env, info, version, name=odd)
        if faulty:
            cat.commit(info.table_id, version, staged_uri=uri, in_commit_timestamp=version)
        else:
            with pytest.raises(InvalidRequest):
                cat.commit(info.table_id, version, staged_uri=uri, in_commit_timestamp=version)
    assert cat.get_commits(info.table_id).latest_version == (2 if faulty else 0)


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.StagedNestedDirTarget))
def test_staged_nested_dir(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    _, env, cat = build(target_cls, tmp_path, "c")
    info = new_table(cat, env)
    other = new_table(cat, env, "other")
    name = f"{1:020d}.{uuid.uuid4()}.json"
    refused = [
        f"{info.location}/_delta_log/{name}",
        f"{info.location}/_delta_log/_staged_commits/../{name}",
        stage(env, other, 1),
    ]
    for uri in refused:
        env.storage.put(uri, b'{"commitInfo":{}}\n')
        with pytest.raises(InvalidRequest):
            cat.commit(info.table_id, 1, staged_uri=uri, in_commit_timestamp=1)
    nested = stage(env, info, 1, name=f"retry/{name}")
    if faulty:
        cat.commit(info.table_id, 1, staged_uri=nested, in_commit_timestamp=1)
    else:
        with pytest.raises(InvalidRequest):
            cat.commit(info.table_id, 1, staged_uri=nested, in_commit_timestamp=1)
    assert cat.get_commits(info.table_id).latest_version == (1 if faulty else 0)


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.InlineAsciiEscapeTarget))
def test_inline_ascii_escape(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    _, env, cat = build(target_cls, tmp_path, "c")
    info = new_table(cat, env)
    ascii_body = b'{"commitInfo":{"inCommitTimestamp":1,"txnId":"a"}}\n'
    cat.commit(info.table_id, 1, inline_content=ascii_body, in_commit_timestamp=1)
    assert commit_bytes(cat, env, info, 1) == ascii_body  # ASCII: both exact
    utf8_body = '{"commitInfo":{"inCommitTimestamp":2,"txnId":"b","engineInfo":"café 東京"}}\n'.encode()
    cat.commit(info.table_id, 2, inline_content=utf8_body, in_commit_timestamp=2)
    served = commit_bytes(cat, env, info, 2)
    assert decode(served) == decode(utf8_body)  # the same JSON ...
    assert (served == utf8_body) is not faulty  # ... but not the ratified bytes


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.CommitActionsTruncateTarget))
def test_commit_actions_truncate(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    _, env, cat = build(target_cls, tmp_path, "c")
    info = new_table(cat, env)

    def body(n: int) -> bytes:
        lines = [{"commitInfo": {"inCommitTimestamp": n, "txnId": str(uuid.uuid4())}}]
        lines += [{"add": {"path": f"f{i}.parquet", "size": 1}} for i in range(n - 1)]
        return b"".join(json.dumps(a).encode() + b"\n" for a in lines)

    at_limit, past_limit = body(256), body(300)
    cat.commit(info.table_id, 1, inline_content=at_limit, in_commit_timestamp=1)
    assert commit_bytes(cat, env, info, 1) == at_limit
    cat.commit(info.table_id, 2, inline_content=past_limit, in_commit_timestamp=2)  # neither refuses it
    served = commit_bytes(cat, env, info, 2)
    assert len(served.splitlines()) == (256 if faulty else 300)
    if faulty:
        assert limits_of(v.CommitActionsTruncateTarget()).commit_actions == 256


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.NameLimitBytesTarget))
def test_name_limit_bytes(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    target, env, cat = build(target_cls, tmp_path, "c")
    client = ResilientClient(cat, env.storage)
    client.create_table("a" * 64)  # ASCII at 64 characters: both accept
    assert cat.resolve("a" * 64).name == "a" * 64
    accented = "café_" + "x" * 59  # 64 characters, 65 UTF-8 bytes
    assert len(accented) == 64
    if faulty:
        assert limits_of(target).name_length == 64
        with pytest.raises(InvalidRequest):
            client.create_table("b" * 65)  # one past: refused, as declared
        with pytest.raises(InvalidRequest):
            client.create_table(accented)  # at the declared limit, yet refused
    else:
        assert limits_of(target).name_length is None  # the baseline declares nothing it breaks
        client.create_table("b" * 65)


# ---------------------------------------------------------------- client faults


def client_pair(
    target_cls: type[DurableTarget], tmp_path: Path, tag: str = "c"
) -> tuple[DurableTarget, TargetEnv, Catalog, DeltaClient]:
    target, env, cat = build(DurableTarget, tmp_path, tag)  # client faults: always the correct catalog
    return target, env, cat, target_cls().make_client(cat, env)


def client_variant(faulty: bool, cls: type[CleanClient]) -> type[CleanClient]:
    return cls if faulty else ResilientClient


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.TxnIdContentHashTarget))
def test_txnid_content_hash(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    target = target_cls()
    env = make_env(tmp_path, "c")
    cat = DurableTarget().make_catalog(env)
    first, second = target.make_client(cat, env), target.make_client(cat, env)
    first.create_table("t1")
    second.create_table("t2")
    first.append("t1", rows(2))
    second.append("t2", rows(2))
    ids = {commit_info(cat, env, cat.resolve(n), 1)["txnId"] for n in ("t1", "t2")}
    assert len(ids) == 2  # commits that change rows: unique either way
    first.delete("t1", [999])  # matches nothing
    second.delete("t2", [999])
    ids = {commit_info(cat, env, cat.resolve(n), 2)["txnId"] for n in ("t1", "t2")}
    assert len(ids) == (1 if faulty else 2)


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.CommitInfoLastLargeTarget))
def test_commitinfo_last_large(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    _, env, cat, client = client_pair(target_cls, tmp_path)
    client.create_table("t")
    info = cat.resolve("t")
    for i in range(4):
        client.append("t", rows(2, start=10 * i))  # four files of two rows
    small = client.delete("t", [0])  # rewrites one file: a remove and an add
    assert "commitInfo" in decode(commit_bytes(cat, env, info, small))[0]
    for i in range(4, 8):
        client.append("t", rows(2, start=10 * i))
    huge = client.delete("t", [40, 50, 60, 70])  # rewrites four files: 8 actions
    first = decode(commit_bytes(cat, env, info, huge))[0]
    assert ("commitInfo" in first) is not faulty


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.IctFixedAcrossRetriesTarget))
def test_ict_fixed_across_retries(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    env = make_env(tmp_path, "c")
    cat = DurableTarget().make_catalog(env)
    day = 86_400_000

    class AheadPeer(ResilientClient):
        def now_ms(self) -> int:
            return super().now_ms() + day

    peer = AheadPeer(cat, env.storage)
    base = client_variant(faulty, v.IctFixedAcrossRetriesClient)

    class RacedOnce(base):  # type: ignore[valid-type,misc]
        fired = False

        def before_propose(self, log: str, version: int, content: bytes) -> None:
            if not self.fired:
                self.fired = True
                peer.append("t", rows(1, start=100))  # the peer wins this version, stamped a day ahead

    client = RacedOnce(cat, env.storage)
    client.create_table("t")
    assert client.append("t", rows(1)) == 2
    info = cat.resolve("t")
    peer_ict = commit_info(cat, env, info, 1)["inCommitTimestamp"]
    own_ict = commit_info(cat, env, info, 2)["inCommitTimestamp"]
    assert (own_ict > peer_ict) is not faulty


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.PublishReencodesTarget))
def test_publish_reencodes(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    _, env, cat, client = client_pair(target_cls, tmp_path)
    client.create_table("t")
    info = cat.resolve("t")
    client.append("t", rows(2))  # v1, the client's own
    foreign = b'{"commitInfo": {"inCommitTimestamp": 99999999999999, "txnId": "peer", "operation": "WRITE"}}\n'
    cat.commit(info.table_id, 2, inline_content=foreign, in_commit_timestamp=99999999999999)  # another writer
    ratified = {n: commit_bytes(cat, env, info, n) for n in (1, 2)}
    client.publish("t")
    assert env.storage.get(delta_uri(info, 1)) == ratified[1]  # its own commit: exact either way
    assert (env.storage.get(delta_uri(info, 2)) == ratified[2]) is not faulty


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.CheckpointStagedTarget))
def test_checkpoint_staged(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    _, env, cat, client = client_pair(target_cls, tmp_path)
    client.create_table("t")
    info = cat.resolve("t")
    client.append("t", rows(1))
    client.publish("t")
    assert client.checkpoint("t") == 1  # everything published: both agree
    client.append("t", rows(1, start=1))
    client.append("t", rows(1, start=2))  # v2, v3 ratified, unpublished
    version = client.checkpoint("t")
    assert version == (3 if faulty else 1)
    assert env.storage.exists(delta_uri(info, version)) is not faulty


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.CleanupCompactionByEndTarget))
def test_cleanup_compaction_by_end(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    _, env, cat, client = client_pair(target_cls, tmp_path)
    client.create_table("t")
    info = cat.resolve("t")
    for i in range(2):
        client.append("t", rows(1, start=i))
    client.publish("t")
    assert client.checkpoint("t") == 2
    for i in range(2, 4):
        client.append("t", rows(1, start=i))
    client.publish("t")
    assert client.compact_log("t", 0, 1) and client.compact_log("t", 1, 3)
    log = f"{info.location}/_delta_log"
    before, spanning = f"{log}/{0:020d}.{1:020d}.compacted.json", f"{log}/{1:020d}.{3:020d}.compacted.json"
    client.cleanup("t", 2)
    assert not env.storage.exists(before)  # ends before the checkpoint: deleted by both
    assert env.storage.exists(spanning) is faulty  # starts at or before it: the baseline deletes it too
    assert client.read("t").rows == rows(4)


class DupThenRival:
    """The catalog as a client sees it when its proposal is delivered twice and a rival's commit of the
    next version reaches the catalog between the two deliveries; the client gets the second answer."""

    def __init__(self, inner: Catalog, env: TargetEnv) -> None:
        self.inner = inner
        self.env = env
        self.armed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        self.inner.commit(table_id, version, **kwargs)
        if self.armed:
            self.armed = False
            location = next(t.location for t in self.inner._by_id.values() if t.table_id == table_id)  # type: ignore[attr-defined]
            rival = TableInfo(table_id, "t", location, True)
            ict = int(kwargs.get("in_commit_timestamp") or 0) + 1
            body = json.dumps({"commitInfo": {"inCommitTimestamp": ict, "txnId": "rival", "operation": "WRITE"}})
            uri = stage(self.env, rival, version + 1, body.encode() + b"\n")
            self.inner.commit(table_id, version + 1, staged_uri=uri, in_commit_timestamp=ict)
            self.inner.commit(table_id, version, **kwargs)  # the duplicate: its conflict is the answer


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.ConflictLatestShortcutTarget))
def test_conflict_latest_shortcut(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    env = make_env(tmp_path, "c")
    cat = DurableTarget().make_catalog(env)
    wire = DupThenRival(cat, env)
    client = target_cls().make_client(wire, env)
    client.create_table("t")
    info = cat.resolve("t")
    wire.armed = True
    version = client.append("t", rows(1))
    latest = cat.get_commits(info.table_id).latest_version
    adds = [n for n in range(1, latest + 1) if any("add" in a for a in decode(commit_bytes(cat, env, info, n)))]
    assert version == (3 if faulty else 1)
    assert adds == ([1, 3] if faulty else [1])  # the change committed twice


class CappedCatalog(DurableCatalog):
    """A correct catalog with a cap of two unpublished commits (a policy the RFC allows)."""

    cap = 2

    def check_sequence(self, t: TableState, version: int) -> None:
        super().check_sequence(t, version)
        if t.latest - t.published >= self.cap:
            raise CommitRejected("too many unpublished commits")


@pytest.mark.parametrize("faulty", [False, True], ids=["baseline", "variant"])
def test_cap_filesystem_fallback(tmp_path: Path, faulty: bool) -> None:
    env = make_env(tmp_path, "c")
    cat = CappedCatalog(env.warehouse_uri, env.storage, env.workdir / "state")
    client = client_variant(faulty, v.CapFilesystemFallbackClient)(cat, env.storage)
    client.create_table("t")
    info = cat.resolve("t")
    client.append("t", rows(1))
    client.append("t", rows(1, start=1))  # at the cap
    if faulty:
        assert client.append("t", rows(1, start=2)) == 3
    else:
        with pytest.raises(CommitRejected):
            client.append("t", rows(1, start=2))
    assert cat.get_commits(info.table_id).latest_version == 2
    assert env.storage.exists(delta_uri(info, 3)) is faulty  # a commit the catalog never ratified


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.TimeTravelExclusiveTarget))
def test_time_travel_exclusive(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    _, env, cat, client = client_pair(target_cls, tmp_path)
    client.create_table("t")
    info = cat.resolve("t")
    client.append("t", rows(1))
    client.append("t", rows(1, start=1))
    ict2 = int(commit_info(cat, env, info, 2)["inCommitTimestamp"])
    assert client.read("t", timestamp_ms=ict2 + 1).version == 2  # between commits: both right
    assert client.read("t", timestamp_ms=ict2).version == (1 if faulty else 2)


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.LastCheckpointOnlyTarget))
def test_last_checkpoint_only(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    _, env, cat, client = client_pair(target_cls, tmp_path)
    client.create_table("t")
    for i in range(2):
        client.append("t", rows(1, start=i))
    client.publish("t")
    assert client.checkpoint("t") == 2
    for i in range(2, 4):
        client.append("t", rows(1, start=i))
    client.publish("t")
    assert client.checkpoint("t") == 4
    assert client.read("t", version=3).rows == rows(3)  # before cleanup: both read it
    client.cleanup("t", 2)  # drops v0 and v1: v2-v4 stay readable from the checkpoint at 2
    assert client.read("t").rows == rows(4)
    if faulty:
        with pytest.raises(ReadError):
            client.read("t", version=3)
    else:
        assert client.read("t", version=3).rows == rows(3)


class LoseListing:
    """Forwards every call; ``armed`` loses the answer of the next listing after the catalog answered."""

    def __init__(self, inner: Catalog) -> None:
        self.inner = inner
        self.armed = False
        self.lost = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        resp = self.inner.get_commits(table_id, start_version, end_version)
        if self.armed:
            self.armed = False
            self.lost += 1
            raise CatalogTimeout("answer lost")
        return resp


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.StaleViewOnLostListingTarget))
def test_stale_view_on_lost_listing(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    env = make_env(tmp_path, "c")
    cat = DurableTarget().make_catalog(env)
    wire = LoseListing(cat)
    client = target_cls().make_client(wire, env)
    client.create_table("t")
    client.append("t", rows(1))
    wire.armed = True  # a first read whose listing is lost: raising is allowed, a guess is not
    try:
        first = client.read("t")
    except CatalogTimeout:
        assert faulty
    else:
        assert not faulty and first.version == 1
    assert client.read("t").version == 1
    client.append("t", rows(1, start=1))  # v2, the client's own
    wire.armed = True
    result = client.read("t")
    assert wire.lost == 2
    assert (result.version, result.rows) == ((1, rows(1)) if faulty else (2, rows(2)))


@pytest.fixture
def tz_india() -> Iterator[Callable[[], None]]:
    old = os.environ.get("TZ")
    os.environ["TZ"] = "IST-5:30"
    time.tzset()
    try:
        yield time.tzset
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


@pytest.mark.parametrize(("target_cls", "faulty"), baseline_and(v.TimeTravelLocalZoneTarget))
def test_time_travel_local_zone(
    tmp_path: Path, target_cls: type[DurableTarget], faulty: bool, tz_india: Callable[[], None]
) -> None:
    _, env, cat, client = client_pair(target_cls, tmp_path)
    client.create_table("t")
    info = cat.resolve("t")
    client.append("t", rows(1))
    client.append("t", rows(1, start=1))
    ict1 = int(commit_info(cat, env, info, 1)["inCommitTimestamp"])
    assert client.read("t", timestamp_ms=ict1).version == (2 if faulty else 1)


# ---------------------------------------------------------------- the list itself


def test_variants_list() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names)) >= 17
    sides = [x.side for x in v.VARIANTS]
    assert sides.count("catalog") >= 7 and sides.count("client") >= 7
    assert len({d for x in v.VARIANTS for d in x.dimensions}) >= 7
    for x in v.VARIANTS:
        assert x.name.startswith("cr5-") and x.level in ("MUST", "SHOULD") and x.rules and x.doc
        module, _, cls = x.target.partition(":")
        target = getattr(v, cls)
        assert module == v.__name__ and issubclass(target, DurableTarget) and target.name == x.name
        swapped = target.catalog_cls if x.side == "catalog" else target.client_cls
        kept = target.client_cls if x.side == "catalog" else target.catalog_cls
        assert kept in (ResilientClient, DurableCatalog)
        assert issubclass(swapped, DurableCatalog if x.side == "catalog" else ResilientClient)
        assert x.profile == {"catalog": "delta-cm-catalog"}.get(x.side, x.profile)
