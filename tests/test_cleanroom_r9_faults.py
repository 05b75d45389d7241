"""Every round-9 faulty catalog variant (tests/cleanroom_r9/variants.py) misbehaves where the correct
baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import CommitRejected, InvalidRequest, TableNotFound
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r9 import variants as v

WAREHOUSE = "mem://warehouse"


def make_env(tmp_path: Path, warehouse: str = WAREHOUSE) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=warehouse, storage=MemoryStorage())


def catalog_of(target_cls: type[DurableTarget], env: TargetEnv) -> DurableCatalog:
    cat = target_cls().make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    return cat


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def table(cat: Any, env: TargetEnv, name: str = "t") -> str:
    ResilientClient(cat, env.storage).create_table(name)
    return str(cat.resolve(name).table_id)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def inline(version: int, ict: int | None = None) -> bytes:
    stamp = now_ms() + version if ict is None else ict
    return encode([{"commitInfo": {"inCommitTimestamp": stamp, "timestamp": stamp, "txnId": f"x{version}"}}])


def stored(cat: Any, tid: str, start: int | None = None, end: int | None = None) -> dict[int, Any]:
    return {c.version: c for c in cat.get_commits(tid, start, end).commits}


# ---------------------------------------------------------------- tests


def test_inline_canonical_json(tmp_path: Path) -> None:
    spaced = json.dumps({"commitInfo": {"inCommitTimestamp": now_ms(), "txnId": "a/b", "op": "WRITE"}}).encode()
    for cls, ok in ((DurableTarget, True), (v.InlineCanonicalJsonTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        compact = inline(1)
        cat.commit(tid, 1, inline_content=compact)
        cat.commit(tid, 2, inline_content=spaced)  # valid NDJSON, spaces, no final newline
        got = stored(cat, tid)
        assert got[1].inline_content == compact  # what a compact writer sends round-trips in both
        assert (got[2].inline_content == spaced) is ok


def test_staged_location_prefix(tmp_path: Path) -> None:
    for cls, ok in ((v.SequentialLocationTarget, True), (v.StagedLocationPrefixTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        ids = [table(cat, env, f"a{i}") for i in range(1, 11)]
        loc = {i: cat.resolve(f"a{i}").location for i in (1, 2, 10)}
        assert loc[1].endswith("/t1") and loc[10].endswith("/t10")
        name = f"{1:020d}.{uuid.uuid4()}.json"
        other = f"{loc[10]}/_delta_log/_staged_commits/{name}"
        env.storage.put(other, inline(1))
        with pytest.raises(InvalidRequest):  # shallow probe: a non-prefix sibling is refused by both
            cat.commit(ids[1], 1, staged_uri=other)
        dotted = f"{loc[1]}/_delta_log/../_delta_log/_staged_commits/{name}"
        env.storage.put(dotted, inline(1))
        with pytest.raises(InvalidRequest):  # shallow probe: ``..`` is refused by both
            cat.commit(ids[0], 1, staged_uri=dotted)
        if ok:
            with pytest.raises(InvalidRequest):
                cat.commit(ids[0], 1, staged_uri=other)
            assert cat.get_commits(ids[0]).latest_version == 0
        else:
            cat.commit(ids[0], 1, staged_uri=other)  # table t1 ratified a staged file of table t10
            assert stored(cat, ids[0])[1].staged_uri == other


def test_expire_by_ict(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.ExpireByIctTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        cat.commit(tid, 1, inline_content=inline(1), in_commit_timestamp=now_ms())
        assert set(stored(cat, tid)) == {1}  # a wall-clock stamp is kept by both
        old = 1_700_000_000_000
        cat.commit(tid, 2, inline_content=inline(2, old), in_commit_timestamp=old)
        resp = cat.get_commits(tid)
        assert resp.latest_version == 2
        assert (set(stored(cat, tid)) == {1, 2}) is ok


def test_restart_staged_urljoin(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.RestartStagedUrljoinTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        table(cat, env)
        client = ResilientClient(cat, env.storage)
        client.append("t", rows(1))
        client.append("t", rows(2))
        tid = cat.resolve("t").table_id
        before = {k: c.staged_uri for k, c in stored(cat, tid).items()}
        assert set(before) == {1, 2} and all(before.values())
        cat2 = cls().restart_catalog(cat, env)
        after = {k: c.staged_uri for k, c in stored(cat2, tid).items()}
        assert cat2.get_commits(tid).latest_version == 2
        assert (after == before) is ok
        assert all(env.storage.exists(str(u)) for u in after.values()) is ok


def test_state_doc_tail(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.StateDocTailTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        for ver in range(1, 61):
            cat.commit(tid, ver, inline_content=inline(ver))
        assert set(stored(cat, tid)) == set(range(1, 61))  # right while the process lives
        cat2 = cls().restart_catalog(cat, env)
        assert cat2.get_commits(tid).latest_version == 60
        assert (set(stored(cat2, tid)) == set(range(1, 61))) is ok


def test_inline_limit_chars(tmp_path: Path) -> None:
    limit = v.InlineLimitCatalog.INLINE_BYTES

    def sized(text: str) -> bytes:
        action = {"commitInfo": {"inCommitTimestamp": now_ms(), "txnId": "x", "note": text}}
        return json.dumps(action, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"

    base = len(sized(""))
    ascii_over = sized("a" * (limit + 1 - base))
    accented_over = sized("é" * ((limit + 1 - base) // 2 + 1))  # 2 bytes a character
    assert len(ascii_over) == limit + 1
    assert len(accented_over) > limit >= len(accented_over.decode())
    for cls, ok in ((v.InlineLimitTarget, True), (v.InlineLimitCharsTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        with pytest.raises(CommitRejected):  # shallow probe: ASCII one past the limit
            cat.commit(tid, 1, inline_content=ascii_over)
        if ok:
            with pytest.raises(CommitRejected):
                cat.commit(tid, 1, inline_content=accented_over)
            assert cat.get_commits(tid).latest_version == 0
        else:
            cat.commit(tid, 1, inline_content=accented_over)
            assert cat.get_commits(tid).latest_version == 1


def test_mark_regresses_watermark(tmp_path: Path) -> None:
    cap = v.CappedCatalog.CAP
    for cls, ok in ((v.CappedTarget, True), (v.MarkRegressesWatermarkTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        for ver in range(1, cap + 1):
            cat.commit(tid, ver, inline_content=inline(ver))
        cat.mark_published(tid, cap)
        cat.mark_published(tid, 2)  # a late retry of an earlier publication mark
        accepted = 0
        for ver in range(cap + 1, 2 * cap + 2):
            try:
                cat.commit(tid, ver, inline_content=inline(ver))
            except CommitRejected:
                break
            accepted += 1
        assert (accepted == cap) is ok  # the declared cap: 10 unpublished, the 11th refused
        if not ok:
            assert accepted == 2


def test_drop_casefold(tmp_path: Path) -> None:
    for cls, ok in ((v.DroppingTarget, True), (v.DropCasefoldTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        assert isinstance(cat, v.DroppingCatalog)
        table(cat, env, "orders")
        table(cat, env, "Orders")
        table(cat, env, "items")
        cat.drop_table("items")  # shallow probe: no case twin, right in both
        with pytest.raises(TableNotFound):
            cat.resolve("items")
        cat.drop_table("Orders")
        if ok:
            assert cat.resolve("orders").name == "orders"
            with pytest.raises(TableNotFound):
                cat.resolve("Orders")
        else:
            with pytest.raises(TableNotFound):
                cat.resolve("orders")  # the other table lost its name
            assert cat.resolve("Orders").name == "Orders"  # the dropped one is still there


def test_resolve_quoted_location(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.ResolveQuotedLocationTarget, False)):
        plain = make_env(tmp_path / cls.__name__ / "plain")
        cat = catalog_of(cls, plain)
        table(cat, plain, "p")
        location = cat.resolve("p").location  # shallow probe: a plain warehouse path, right in both
        assert plain.storage.exists(f"{location}/_delta_log/{0:020d}.json")
        env = make_env(tmp_path / cls.__name__ / "spaced", "mem://team data/warehouse")
        cat = catalog_of(cls, env)
        client = ResilientClient(cat, env.storage)
        client.create_table("t")
        location = cat.resolve("t").location
        assert env.storage.exists(f"{location}/_delta_log/{0:020d}.json") is ok
        if ok:
            assert client.append("t", rows(1)) == 1
            assert client.read("t").rows == rows(1)
        else:
            with pytest.raises(Exception):  # noqa: B017 - any failure: the client is sent elsewhere
                client.append("t", rows(1))


def test_staging_pool_recycle(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.StagingPoolRecycleTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        table(cat, env, "t")
        first, second = cat.create_staging_table(), cat.create_staging_table()
        assert first.location != second.location  # shallow probe: distinct in both
        env.storage.put(f"{second.location}/_delta_log/{0:020d}.json", inline(0))
        with pytest.raises(InvalidRequest):
            cat.register_table("t", second.table_id)  # the name is taken
        third = cat.create_staging_table()
        assert (third.location not in {first.location, second.location}) is ok
        if not ok:
            assert third.location == second.location
            assert env.storage.exists(f"{third.location}/_delta_log/{0:020d}.json")


def test_registry() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names)) == 10
    for x in v.VARIANTS:
        assert x.name.startswith("cr9-cat-") and x.profile == "delta-cm-catalog" and x.side == "catalog"
        assert x.target.startswith("tests.cleanroom_r9.variants:") and x.name in x.doc
        assert hasattr(v, x.target.split(":")[1])
