"""Every round-12 faulty catalog variant (tests/cleanroom_r12/variants.py) misbehaves where the correct
baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import (
    CatalogError,
    CatalogLimits,
    CommitConflict,
    TableNotFound,
)
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r12 import variants as v

WAREHOUSE = "mem://warehouse"
KNOWN_OPS = {"checkpoint", "log_compaction", "checksum", "metadata_cleanup", "vacuum"}


class GateStorage(MemoryStorage):
    """``MemoryStorage`` whose ``exists`` on URIs containing ``gate`` waits for a second caller (at most
    ``timeout`` seconds): it holds two overlapping calls at the same instant, if the catalog lets them."""

    def __init__(self) -> None:
        super().__init__()
        self.gate: str | None = None
        self.barrier = threading.Barrier(2)
        self.timeout = 0.5

    def exists(self, uri: str) -> bool:
        if self.gate is not None and self.gate in uri:
            with contextlib.suppress(threading.BrokenBarrierError):
                self.barrier.wait(timeout=self.timeout)
        return super().exists(uri)


def make_env(tmp_path: Path, storage: MemoryStorage | None = None) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=storage or MemoryStorage())


def catalog_of(target_cls: type[DurableTarget], env: TargetEnv) -> DurableCatalog:
    cat = target_cls().make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    return cat


def table(cat: Any, env: TargetEnv, name: str = "t") -> str:
    ResilientClient(cat, env.storage).create_table(name)
    return str(cat.resolve(name).table_id)


def inline(version: int, pad: str = "") -> bytes:
    ict = 1_700_000_000_000 + version
    return encode([{"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict, "txnId": f"x{version}{pad}"}}])


def staged(cat: Any, env: TargetEnv, version: int, content: bytes, name: str = "t") -> str:
    """Write a well-named staged file for ``version`` in the table's own ``_staged_commits/``."""
    loc = cat.resolve(name).location
    uri = f"{loc}/_delta_log/_staged_commits/{version:020d}.{uuid.uuid4()}.json"
    env.storage.put(uri, content)
    return uri


def run_threads(*calls: Any) -> list[object]:
    """Run the calls at once; each outcome is ``None`` (returned) or the exception raised."""
    out: list[object] = [None] * len(calls)

    def go(i: int) -> None:
        try:
            calls[i]()
        except Exception as exc:  # noqa: BLE001 - the outcome is what we look at
            out[i] = exc

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(calls))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    return out


# ---------------------------------------------------------------- 1. stateless lost update


def _race_one_version(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[list[object], Any, str]:
    storage = GateStorage()
    env = make_env(tmp_path, storage)
    cat = catalog_of(target_cls, env)
    tid = table(cat, env)
    uris = [staged(cat, env, 1, inline(1, f"-{i}")) for i in range(2)]
    storage.gate = "_staged_commits/"
    out = run_threads(*(lambda u=u: cat.commit(tid, 1, staged_uri=u, in_commit_timestamp=1) for u in uris))
    storage.gate = None
    return out, cat, tid


def test_stateless_lost_update(tmp_path: Path) -> None:
    out, cat, tid = _race_one_version(DurableTarget, tmp_path / "ok")
    assert sum(isinstance(o, CommitConflict) for o in out) == 1 and None in out
    out, cat, tid = _race_one_version(v.StatelessLostUpdateTarget, tmp_path / "bad")
    assert out == [None, None]  # both proposals for version 1 were acknowledged as ratified
    assert len(cat.get_commits(tid).commits) == 1  # and one of them is gone


# ---------------------------------------------------------------- 2. listing read skew


def _list_during_commit(target_cls: type[DurableTarget], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    tid = table(cat, env)
    cat.commit(tid, 1, inline_content=inline(1))
    orig = cat.latest_of
    rival: list[threading.Thread] = []

    def hooked(t: Any) -> int:
        out = orig(t)
        if not rival:  # a concurrent ratification right after the head was read
            rival.append(threading.Thread(target=lambda: cat.commit(tid, 2, inline_content=inline(2))))
            rival[0].start()
            rival[0].join(0.3)
        return out

    monkeypatch.setattr(cat, "latest_of", hooked)
    resp = cat.get_commits(tid)
    rival[0].join(5)
    return resp


def test_list_read_skew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ok = _list_during_commit(DurableTarget, tmp_path / "ok", monkeypatch)
    assert max(c.version for c in ok.commits) == ok.latest_version
    bad = _list_during_commit(v.ListReadSkewTarget, tmp_path / "bad", monkeypatch)
    assert bad.latest_version == 1
    assert [c.version for c in bad.commits] == [1, 2]  # a commit above the listing's own latest version


# ---------------------------------------------------------------- 3. limits together overflow the state item


def sized_inline(version: int, size: int) -> bytes:
    """An inline commit of exactly ``size`` bytes."""
    base = inline(version, "-")
    out = inline(version, "-" + "p" * (size - len(base)))
    assert len(out) == size
    return out


def _large_inline_run(target_cls: type[DurableTarget], tmp_path: Path) -> list[object]:
    env = make_env(tmp_path)
    target = target_cls()
    limits = target.catalog_limits()  # type: ignore[attr-defined]
    assert isinstance(limits, CatalogLimits) and limits.inline_bytes and limits.unpublished
    cat = target.make_catalog(env)
    tid = table(cat, env)
    out: list[object] = []
    for ver in range(1, limits.unpublished + 1):  # at both limits: every proposal must be ratified
        try:
            cat.commit(tid, ver, inline_content=sized_inline(ver, limits.inline_bytes), in_commit_timestamp=ver)
            out.append(None)
        except Exception as exc:  # noqa: BLE001 - the outcome is what we look at
            out.append(exc)
    with pytest.raises(CatalogError):  # one past the inline limit: refused cleanly
        cat.commit(tid, 99, inline_content=sized_inline(99, limits.inline_bytes + 1))
    assert cat.get_commits(tid).latest_version == len(out)
    return out


def test_state_item_size(tmp_path: Path) -> None:
    assert _large_inline_run(v.LimitedTarget, tmp_path / "ok") == [None] * 10
    out = _large_inline_run(v.StateItemSizeTarget, tmp_path / "bad")
    assert out[:4] == [None] * 4
    assert all(isinstance(o, RuntimeError) for o in out[4:])  # within both limits, not ratified cleanly


# ---------------------------------------------------------------- 4. content binding checked by size


def _tamper(target_cls: type[DurableTarget], tmp_path: Path, rewrite: bytes) -> Any:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    tid = table(cat, env)
    ratified = inline(1, "a")
    uri = staged(cat, env, 1, ratified)
    cat.commit(tid, 1, staged_uri=uri, in_commit_timestamp=1)
    env.storage.put(uri, rewrite)  # the staged file is rewritten after ratification
    (c,) = cat.get_commits(tid).commits
    if c.inline_content is not None:
        return bool(c.inline_content == ratified)
    assert c.staged_uri is not None
    served = env.storage.get(c.staged_uri)
    return served == ratified


def test_bound_size_check(tmp_path: Path) -> None:
    same_size, longer = inline(1, "b"), inline(1, "bb")
    assert len(same_size) == len(inline(1, "a"))
    assert _tamper(v.BindingTarget, tmp_path / "ok1", same_size)
    assert _tamper(v.BindingTarget, tmp_path / "ok2", longer)
    assert _tamper(v.BoundSizeCheckTarget, tmp_path / "bad2", longer)  # a shallow tamper test passes
    assert not _tamper(v.BoundSizeCheckTarget, tmp_path / "bad1", same_size)  # readers get the rewrite


# ---------------------------------------------------------------- 5. drop makes a commit


def _drop(target_cls: type[DurableTarget], tmp_path: Path) -> list[str]:
    env = make_env(tmp_path)
    cat = catalog_of(target_cls, env)
    tid = table(cat, env)
    other = table(cat, env, "other")
    loc = cat.resolve("t").location
    cat.commit(tid, 1, inline_content=inline(1))
    env.storage.put(f"{loc}/_delta_log/{1:020d}.json", inline(1))
    cat.mark_published(tid, 1)
    before = [f.uri for f in env.storage.list(f"{loc}/_delta_log/")]
    cat.drop_table("t")  # type: ignore[attr-defined]
    with pytest.raises(TableNotFound):
        cat.resolve("t")
    assert cat.resolve("other").table_id == other
    return [f.uri for f in env.storage.list(f"{loc}/_delta_log/") if f.uri not in before]


def test_drop_detach_commit(tmp_path: Path) -> None:
    assert _drop(v.DroppingTarget, tmp_path / "ok") == []
    new = _drop(v.DropDetachCommitTarget, tmp_path / "bad")
    assert [u.rsplit("/", 1)[1] for u in new] == [f"{2:020d}.json"]  # a commit to the dropped table


# ---------------------------------------------------------------- 6. maintenance policy after restart


def _policy_after_restart(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[set[str], set[str]]:
    env = make_env(tmp_path)
    target = target_cls()
    cat = target.make_catalog(env)
    tid = table(cat, env)
    before = set(cat.maintenance_policy(tid).allowed)
    cat = target.restart_catalog(cat, env)
    return before, set(cat.maintenance_policy(tid).allowed)


def test_policy_restart_keys(tmp_path: Path) -> None:
    assert _policy_after_restart(DurableTarget, tmp_path / "ok") == (KNOWN_OPS, KNOWN_OPS)
    before, after = _policy_after_restart(v.PolicyRestartKeysTarget, tmp_path / "bad")
    assert before == KNOWN_OPS
    assert after - KNOWN_OPS == {"logCompaction", "metadataCleanup"}
    assert "log_compaction" not in after


# ---------------------------------------------------------------- 7. one state file for the catalog


def _two_tables_then_restart(target_cls: type[DurableTarget], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    env = make_env(tmp_path)
    target = target_cls()
    cat = target.make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    tid_a, tid_b = table(cat, env, "a"), table(cat, env, "b")
    orig = cat.encode_table
    main = threading.current_thread()
    done: list[bool] = []

    def hooked(t: Any) -> dict[str, Any]:
        out = orig(t)
        if not done and t.table_id == tid_b and threading.current_thread() is main:
            done.append(True)  # table b's ratification lands while a's snapshot is being written
            th = threading.Thread(target=lambda: cat.commit(tid_b, 1, inline_content=inline(1)))
            th.start()
            th.join(5)
        return out

    monkeypatch.setattr(cat, "encode_table", hooked)
    cat.commit(tid_a, 1, inline_content=inline(1))
    if not done:  # the snapshot held one table only: b commits after a, as it would anyway
        done.append(True)
        cat.commit(tid_b, 1, inline_content=inline(1))
    assert cat.get_commits(tid_b).latest_version == 1  # acknowledged
    cat = target.restart_catalog(cat, env)
    assert cat.get_commits(tid_a).latest_version == 1
    return cat.get_commits(tid_b).latest_version


def test_single_state_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _two_tables_then_restart(DurableTarget, tmp_path / "ok", monkeypatch) == 1
    assert _two_tables_then_restart(v.SingleStateFileTarget, tmp_path / "bad", monkeypatch) == 0


# ---------------------------------------------------------------- 8. registration race


def _register_twice(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[list[object], set[str], str]:
    storage = GateStorage()
    env = make_env(tmp_path, storage)
    cat = catalog_of(target_cls, env)
    ids = []
    for _ in range(2):
        staging = cat.create_staging_table()
        storage.put(f"{staging.location}/_delta_log/{0:020d}.json", inline(0))
        ids.append(staging.table_id)
    storage.gate = f"/_delta_log/{0:020d}.json"
    out = run_threads(*(lambda i=i: cat.register_table("t", i) for i in ids))
    storage.gate = None
    told = {i for i, o in zip(ids, out, strict=True) if o is None}
    return out, told, cat.resolve("t").table_id


def test_register_name_race(tmp_path: Path) -> None:
    out, told, resolved = _register_twice(DurableTarget, tmp_path / "ok")
    assert sum(isinstance(o, CatalogError) for o in out) == 1
    assert told == {resolved}
    out, told, resolved = _register_twice(v.RegisterNameRaceTarget, tmp_path / "bad")
    assert out == [None, None]  # both creators were told the name is theirs
    assert len(told - {resolved}) == 1  # and one of them resolves to the other's table


def test_variants_listed() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names)) == 8
    for x in v.VARIANTS:
        assert x.name.startswith("cr12-cat-") and x.profile == "delta-cm-catalog" and x.side == "catalog"
        assert x.doc.startswith(x.name)
        assert x.rules[0] in x.doc and x.level in x.doc
