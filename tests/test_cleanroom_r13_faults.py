"""Every round-13 catalog variant (tests/cleanroom_r13/variants.py) misbehaves where the correct baseline
does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import CommitConflict, InvalidRequest, TableNotFound
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r13 import variants as v

WAREHOUSE = "mem://warehouse"


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def catalog_of(target_cls: type[DurableTarget], env: TargetEnv) -> DurableCatalog:
    cat = target_cls().make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    return cat


def table(cat: Any, env: TargetEnv, name: str = "t") -> str:
    ResilientClient(cat, env.storage).create_table(name)
    return str(cat.resolve(name).table_id)


def inline(version: int, pad: int = 0) -> bytes:
    ict = 1_700_000_000_000 + version
    info = {"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict, "txnId": f"x{version}", "pad": "p" * pad}}
    return encode([info])


def staged(cat: Any, env: TargetEnv, tid: str, version: int, content: bytes | None = None) -> str:
    loc = cat._by_id[tid].location
    uri = f"{loc}/_delta_log/_staged_commits/{version:020d}.{uuid.uuid4()}.json"
    env.storage.put(uri, content if content is not None else inline(version), if_absent=True)
    return uri


def versions(cat: Any, tid: str, start: int | None = None, end: int | None = None) -> list[int]:
    return [c.version for c in cat.get_commits(tid, start, end).commits]


# ---------------------------------------------------------------- cr13-cat-list-end-without-start


def _end_only(target_cls: type[DurableTarget], tmp_path: Path) -> list[int]:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    tid = table(cat, env)
    for ver in range(1, 6):
        cat.commit(tid, ver, inline_content=inline(ver))
    assert versions(cat, tid, 2, 3) == [2, 3]  # both bounds: right in both
    assert versions(cat, tid, 4) == [4, 5]  # start only: right in both
    return versions(cat, tid, None, 2)


def test_list_end_without_start(tmp_path: Path) -> None:
    assert _end_only(DurableTarget, tmp_path / "ok") == [1, 2]
    assert _end_only(v.ListEndWithoutStartTarget, tmp_path / "bad") == [1, 2, 3, 4, 5]


# ---------------------------------------------------------------- cr13-cat-name-limit-burns-staging


def _retry_shorter(target_cls: type[DurableTarget], tmp_path: Path) -> bool:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    assert issubclass(target_cls, v.NameLimitTarget)
    assert target_cls().catalog_limits().name_length == v.NAME_LIMIT
    staging = cat.create_staging_table()
    env.storage.put(f"{staging.location}/_delta_log/{0:020d}.json", inline(0))
    at_limit = "a" * v.NAME_LIMIT
    too_long = "b" * (v.NAME_LIMIT + 1)
    with pytest.raises(InvalidRequest):
        cat.register_table(too_long, staging.table_id)
    with pytest.raises(TableNotFound):
        cat.resolve(too_long)  # the refusal looks clean in both
    try:
        cat.register_table(at_limit, staging.table_id)
    except InvalidRequest:
        return False
    return cat.resolve(at_limit).location == staging.location


def test_name_limit_burns_staging(tmp_path: Path) -> None:
    assert _retry_shorter(v.NameLimitTarget, tmp_path / "ok")
    assert not _retry_shorter(v.NameLimitBurnsStagingTarget, tmp_path / "bad")


# ---------------------------------------------------------------- cr13-cat-resolve-like-wildcard


def _like_names(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[bool, bool]:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    plain = table(cat, env, "orders")
    assert cat.resolve("orders").table_id == plain  # names without "_" are right in both
    table(cat, env, "salesAeu")
    table(cat, env, "sales_eu")
    # each table's own record (the helper above resolves through the catalog under test)
    own, neighbour = cat._by_name["sales_eu"], cat._by_name["salesAeu"]
    assert own != neighbour
    own_ok = cat.resolve("sales_eu").table_id == own and cat.resolve("salesAeu").table_id == neighbour
    try:
        cat.resolve("x_y")
        absent_ok = False
    except TableNotFound:
        absent_ok = True
    table(cat, env, "xzy")
    try:
        cat.resolve("x_y")
        absent_ok2 = False
    except TableNotFound:
        absent_ok2 = True
    return own_ok, absent_ok and absent_ok2


def test_resolve_like_wildcard(tmp_path: Path) -> None:
    assert _like_names(DurableTarget, tmp_path / "ok") == (True, True)
    assert _like_names(v.ResolveLikeWildcardTarget, tmp_path / "bad") == (False, False)


# ---------------------------------------------------------------- cr13-cat-drop-reaps-staging


def _drop_during_creation(target_cls: type[DurableTarget], tmp_path: Path) -> bool:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    table(cat, env, "doomed")
    keep = table(cat, env, "keep")
    staging = cat.create_staging_table()  # another client's creation, in flight
    assert isinstance(cat, v.DroppingDurableCatalog)
    cat.drop_table("doomed")
    with pytest.raises(TableNotFound):
        cat.resolve("doomed")
    assert cat.resolve("keep").table_id == keep  # registered neighbours stay in both
    env.storage.put(f"{staging.location}/_delta_log/{0:020d}.json", inline(0))
    try:
        cat.register_table("fresh", staging.table_id)
    except InvalidRequest:
        return False
    return cat.resolve("fresh").location == staging.location


def test_drop_reaps_staging(tmp_path: Path) -> None:
    assert _drop_during_creation(v.DroppingTarget, tmp_path / "ok")
    assert not _drop_during_creation(v.DropReapsStagingTarget, tmp_path / "bad")


# ---------------------------------------------------------------- cr13-cat-forget-inline-unbounded


def _mark_over_inline(target_cls: type[DurableTarget], tmp_path: Path, inline_mode: bool) -> list[int]:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    tid = table(cat, env)
    for ver in range(1, 6):
        if inline_mode:
            cat.commit(tid, ver, inline_content=inline(ver))
        else:
            cat.commit(tid, ver, staged_uri=staged(cat, env, tid, ver))
    cat.mark_published(tid, 2)
    return versions(cat, tid)


def test_forget_inline_unbounded(tmp_path: Path) -> None:
    assert _mark_over_inline(DurableTarget, tmp_path / "ok-s", False) == [3, 4, 5]
    assert _mark_over_inline(DurableTarget, tmp_path / "ok-i", True) == [3, 4, 5]
    assert _mark_over_inline(v.ForgetInlineUnboundedTarget, tmp_path / "bad-s", False) == [3, 4, 5]
    assert _mark_over_inline(v.ForgetInlineUnboundedTarget, tmp_path / "bad-i", True) == []


# ---------------------------------------------------------------- cr13-cat-list-byte-budget


def _big_inline(target_cls: type[DurableTarget], tmp_path: Path, pad: int, n: int) -> tuple[list[int], int]:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    tid = table(cat, env)
    for ver in range(1, n + 1):
        cat.commit(tid, ver, inline_content=inline(ver, pad))
    resp = cat.get_commits(tid)
    return [c.version for c in resp.commits], resp.latest_version


def test_list_byte_budget(tmp_path: Path) -> None:
    assert _big_inline(DurableTarget, tmp_path / "ok", 900_000, 4) == ([1, 2, 3, 4], 4)
    assert _big_inline(v.ListByteBudgetTarget, tmp_path / "bad-small", 100, 40) == (list(range(1, 41)), 40)
    assert _big_inline(v.ListByteBudgetTarget, tmp_path / "bad", 900_000, 4) == ([1, 2], 4)


# ---------------------------------------------------------------- cr13-cat-upsert-then-conflict


def _contested(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[str | None, str, str]:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    tid = table(cat, env)
    winner = staged(cat, env, tid, 1)
    loser = staged(cat, env, tid, 1)
    cat.commit(tid, 1, staged_uri=winner)
    with pytest.raises(CommitConflict) as err:
        cat.commit(tid, 1, staged_uri=loser)
    assert err.value.latest_version == 1  # the conflict itself is right in both
    assert cat.get_commits(tid).latest_version == 1
    (c,) = cat.get_commits(tid, 1, 1).commits
    return c.staged_uri, winner, loser


def test_upsert_then_conflict(tmp_path: Path) -> None:
    served, winner, _ = _contested(DurableTarget, tmp_path / "ok")
    assert served == winner
    served, _, loser = _contested(v.UpsertThenConflictTarget, tmp_path / "bad")
    assert served == loser


# ---------------------------------------------------------------- cr13-cat-conflict-deletes-loser-file


def _resent(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[bool, bool]:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    tid = table(cat, env)
    mine = staged(cat, env, tid, 1)
    other = staged(cat, env, tid, 1)
    cat.commit(tid, 1, staged_uri=mine)
    with pytest.raises(CommitConflict):
        cat.commit(tid, 1, staged_uri=other)  # a real loser: its file may go
    with pytest.raises(CommitConflict):
        cat.commit(tid, 1, staged_uri=mine)  # the same proposal delivered again
    assert versions(cat, tid) == [1]  # not ratified twice, in both
    (c,) = cat.get_commits(tid).commits
    assert c.staged_uri == mine
    return env.storage.exists(mine), c.staged_uri is not None and env.storage.exists(c.staged_uri)


def test_conflict_deletes_loser_file(tmp_path: Path) -> None:
    assert _resent(DurableTarget, tmp_path / "ok") == (True, True)
    assert _resent(v.ConflictDeletesLoserFileTarget, tmp_path / "bad") == (False, False)


# ---------------------------------------------------------------- the list itself


def test_variants_list() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names)) == 8
    for x in v.VARIANTS:
        assert x.name.startswith("cr13-cat-")
        assert x.side == "catalog" and x.profile == "delta-cm-catalog"
        assert x.target.startswith("tests.cleanroom_r13.variants:")
        assert x.name in x.doc
