"""Every round-14 faulty variant (tests/cleanroom_r14/variants.py) misbehaves where the correct baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import CatalogError, CommitConflict, CommitRejected
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r14 import variants as v

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


def inline(version: int, pad: str = "") -> bytes:
    ict = 1_700_000_000_000 + version
    info = {"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict, "txnId": f"x{version}", "pad": pad}}
    return encode([info])


def staged(cat: DurableCatalog, env: TargetEnv, tid: str, version: int, name: str | None = None) -> str:
    location = cat._table(tid, CatalogError).location
    uri = f"{location}/_delta_log/_staged_commits/{name or f'{version:020d}.{uuid.uuid4()}.json'}"
    env.storage.put(uri, inline(version))
    return uri


def versions(cat: DurableCatalog, tid: str) -> list[int]:
    return [c.version for c in cat.get_commits(tid).commits]


# ---------------------------------------------------------------- 1. closed-range listing cache


def test_closed_range_listing_cache(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.ClosedRangeCacheTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        cat.commit(tid, 1, inline_content=inline(1))
        first = cat.get_commits(tid, 1, 3)
        assert first.latest_version == 1 and [c.version for c in first.commits] == [1]
        cat.commit(tid, 2, inline_content=inline(2))
        cat.commit(tid, 3, inline_content=inline(3))
        again = cat.get_commits(tid, 1, 3)
        assert cat.get_commits(tid).latest_version == 3  # open-ended listings are right either way
        if ok:
            assert again.latest_version == 3 and [c.version for c in again.commits] == [1, 2, 3]
        else:
            assert again.latest_version == 1 and [c.version for c in again.commits] == [1]


# ---------------------------------------------------------------- 2. lease lapses under a slow write


class SlowDurableCatalog(DurableCatalog):
    """The baseline with a slow state write (a large state file on a slow disk)."""

    def persist(self, t: Any) -> None:
        if t.latest >= 1:
            time.sleep(2.0)
        super().persist(t)


class SlowLeaseLapseCatalog(v.LeaseLapseCatalog):
    """The variant with the same slow state write."""

    def persist(self, t: Any) -> None:
        if t.latest >= 1:
            time.sleep(2.0)
        super().persist(t)


def _race_one_version(cat: DurableCatalog, env: TargetEnv, tid: str) -> list[str]:
    uris = [staged(cat, env, tid, 1) for _ in range(2)]
    outcomes: list[str] = []
    lock = threading.Lock()

    def propose(uri: str) -> None:
        try:
            cat.commit(tid, 1, staged_uri=uri)
            result = "ratified"
        except CommitConflict:
            result = "conflict"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=propose, args=(u,)) for u in uris]
    for th in threads:
        th.start()
        time.sleep(0.05)
    for th in threads:
        th.join(5)
    return sorted(outcomes)


def test_ratify_lease_lapses(tmp_path: Path) -> None:
    slow: tuple[tuple[type[DurableCatalog], bool], ...] = ((SlowDurableCatalog, True), (SlowLeaseLapseCatalog, False))
    for cls, ok in slow:
        env = make_env(tmp_path / cls.__name__)
        cat = cls(env.warehouse_uri, env.storage, tmp_path / cls.__name__ / "state")
        tid = table(cat, env)
        outcomes = _race_one_version(cat, env, tid)
        if ok:
            assert outcomes == ["conflict", "ratified"]
        else:
            assert outcomes == ["ratified", "ratified"]  # two winners for version 1
    # with a fast disk the variant serialises the race correctly
    env = make_env(tmp_path / "fast")
    cat = catalog_of(v.LeaseLapseTarget, env)
    tid = table(cat, env)
    assert _race_one_version(cat, env, tid) == ["conflict", "ratified"]


# ---------------------------------------------------------------- 3. staged name, `$` before a newline


def test_staged_name_dollar_newline(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.StagedNameDollarTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        # names a suite writes by hand are refused by both
        for bad in (f"{1:020d}.json", f"{1:020d}.{uuid.uuid4()}.json.tmp", f"x{1:020d}.{uuid.uuid4()}.json"):
            with pytest.raises(CatalogError):
                cat.commit(tid, 1, staged_uri=staged(cat, env, tid, 1, bad))
        uri = staged(cat, env, tid, 1, f"{1:020d}.{uuid.uuid4()}.json\n")
        if ok:
            with pytest.raises(CatalogError):
                cat.commit(tid, 1, staged_uri=uri)
            assert cat.get_commits(tid).latest_version == 0
        else:
            cat.commit(tid, 1, staged_uri=uri)
            assert cat.get_commits(tid).commits[0].staged_uri == uri


# ---------------------------------------------------------------- 4. declared action cap skips commitInfo


def _actions(n_files: int) -> bytes:
    ict = 1_700_000_000_000
    lines: list[dict[str, Any]] = [{"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict, "txnId": "a"}}]
    for i in range(n_files):
        lines.append({"add": {"path": f"f{i}.parquet", "size": 1, "modificationTime": ict, "dataChange": True}})
    return encode(lines)


def test_action_cap_skips_commitinfo(tmp_path: Path) -> None:
    cap = v.ActionCapCatalog.ACTIONS
    for cls, ok in ((v.ActionCapTarget, True), (v.ActionCapSkipsCommitInfoTarget, False)):
        assert cls().catalog_limits().commit_actions == cap
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        cat.commit(tid, 1, inline_content=_actions(cap - 1))  # at the limit: commitInfo + 7 adds
        with pytest.raises(CommitRejected):
            cat.commit(tid, 2, inline_content=_actions(cap + 1))  # two past it
        one_past = _actions(cap)  # commitInfo + 8 adds: 9 actions
        if ok:
            with pytest.raises(CommitRejected):
                cat.commit(tid, 2, inline_content=one_past)
            assert cat.get_commits(tid).latest_version == 1
        else:
            cat.commit(tid, 2, inline_content=one_past)
            assert cat.get_commits(tid).latest_version == 2


# ---------------------------------------------------------------- 5. state written after the lock


@pytest.fixture
def held_first_replace(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[threading.Event, threading.Event, list[bool]]]:
    """Once armed, the first state-file replace waits (up to 1 s) for ``go``: a slow disk for one writer."""
    real = os.replace
    entered, go = threading.Event(), threading.Event()
    armed = [False]

    def replace(src: Any, dst: Any) -> None:
        if armed[0]:
            armed[0] = False
            entered.set()
            go.wait(1.0)
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    yield entered, go, armed


def test_persist_after_unlock(
    tmp_path: Path, held_first_replace: tuple[threading.Event, threading.Event, list[bool]]
) -> None:
    entered, go, armed = held_first_replace
    for cls, ok in ((DurableTarget, True), (v.PersistOutsideLockTarget, False)):
        entered.clear()
        go.clear()
        env = make_env(tmp_path / cls.__name__)
        target = cls()
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        armed[0] = True
        first = threading.Thread(target=cat.commit, args=(tid, 1), kwargs={"inline_content": inline(1)})
        first.start()
        assert entered.wait(60)
        cat.commit(tid, 2, inline_content=inline(2))  # the baseline waits for the first write's lock
        go.set()
        first.join(5)
        assert cat.get_commits(tid).latest_version == 2
        restarted = target.restart_catalog(cat, env)
        assert isinstance(restarted, DurableCatalog)
        if ok:
            assert versions(restarted, tid) == [1, 2]
            assert restarted.get_commits(tid).latest_version == 2
        else:
            assert versions(restarted, tid) == [1]  # the later ratification is lost
            restarted.commit(tid, 2, inline_content=inline(22))  # and version 2 is ratified again


# ---------------------------------------------------------------- 6. in-commit timestamp as local wall time


@pytest.fixture
def dst_zone() -> Iterator[None]:
    old = os.environ.get("TZ")
    os.environ["TZ"] = "EST5EDT,M3.2.0,M11.1.0"
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()


def test_ict_local_walltime_fold(tmp_path: Path, dst_zone: None) -> None:
    plain = 1_730_500_000_123  # 2024-11-01, no fold
    repeated = 1_730_615_400_123  # 2024-11-03 06:30:00.123 UTC = 01:30 EST, the second 01:30 that night
    for cls, ok in ((DurableTarget, True), (v.IctLocalWallTimeTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        cat.commit(tid, 1, inline_content=inline(1), in_commit_timestamp=plain)
        cat.commit(tid, 2, inline_content=inline(2), in_commit_timestamp=repeated)
        served = {c.version: c.in_commit_timestamp for c in cat.get_commits(tid).commits}
        assert served[1] == plain
        if ok:
            assert served[2] == repeated
        else:
            assert served[2] == repeated - 3_600_000


# ---------------------------------------------------------------- 7. state write refused, memory kept


def test_state_write_refused_kept(tmp_path: Path) -> None:
    pad = "p" * (100 * 1024)
    for cls, ok in ((DurableTarget, True), (v.StateWriteRefusedTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        cat.commit(tid, 1, inline_content=inline(1, pad))
        try:
            cat.commit(tid, 2, inline_content=inline(2, pad))
            refused = False
        except CommitRejected:
            refused = True
        listed = versions(cat, tid)
        if ok:
            assert not refused and listed == [1, 2]
        else:
            assert refused and listed == [1, 2]  # refused, yet listed as ratified
            assert cat.get_commits(tid).latest_version == 2


# ---------------------------------------------------------------- 8. inline commits kept as lines


def test_inline_rows_splitlines(tmp_path: Path) -> None:
    ict = 1_700_000_000_000
    info = {"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict, "txnId": "u", "note": "a\u2028b"}}
    raw = (json.dumps(info, ensure_ascii=False) + "\n").encode("utf-8")  # U+2028 unescaped, as Jackson writes it
    plain = inline(1, "é表😀")
    for cls, ok in ((DurableTarget, True), (v.InlineSplitlinesTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        cat.commit(tid, 1, inline_content=plain)
        cat.commit(tid, 2, inline_content=raw)
        served = {c.version: c.inline_content for c in cat.get_commits(tid).commits}
        assert served[1] == plain
        if ok:
            assert served[2] == raw
        else:
            assert served[2] != raw
            assert served[2] is not None and served[2].count(b"\n") == 2  # one action cut into two lines
