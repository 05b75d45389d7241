"""Every round-10 (writer C) faulty variant (tests/cleanroom_r10/variants.py) misbehaves where the correct
baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

import base64
import importlib
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.contract.delta import CommitConflict, CommitRejected, InvalidRequest
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r10 import variants as v

WAREHOUSE = "mem://warehouse"


class HookStorage(MemoryStorage):
    """``MemoryStorage`` that runs a callback (once) when a given object's existence is asked."""

    def __init__(self) -> None:
        super().__init__()
        self.hooks: dict[str, Callable[[], None]] = {}

    def exists(self, uri: str) -> bool:
        hook = self.hooks.pop(uri, None)
        if hook is not None:
            hook()
        return super().exists(uri)


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=HookStorage())


def catalog_of(target_cls: type[DurableTarget], env: TargetEnv) -> DurableCatalog:
    cat = target_cls().make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    return cat


def table(cat: DurableCatalog, env: TargetEnv, name: str = "t") -> tuple[str, str]:
    ResilientClient(cat, env.storage).create_table(name)
    info = cat.resolve(name)
    return info.table_id, info.location


def inline(version: int) -> bytes:
    ict = 1_700_000_000_000 + version
    return encode([{"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict, "txnId": f"x{version}"}}])


def staged(location: str, version: int, suffix: str = ".json", sep: str = "/") -> str:
    return f"{location}/_delta_log/_staged_commits{sep}{version:020d}.{uuid.uuid4()}{suffix}"


def versions(cat: DurableCatalog, tid: str) -> list[int]:
    return sorted(c.version for c in cat.get_commits(tid).commits)


# ---------------------------------------------------------------- the list


def test_variants_listed() -> None:
    assert len(v.VARIANTS) == 10
    assert len({x.name for x in v.VARIANTS}) == 10
    for x in v.VARIANTS:
        assert x.name.startswith("cr10-cat-")
        assert x.side == "catalog" and x.profile == "delta-cm-catalog"
        assert x.name in x.doc and x.rules[0] in x.doc and x.level in x.doc
        module, cls = x.target.split(":")
        target = getattr(importlib.import_module(module), cls)
        assert issubclass(target, DurableTarget)


# ---------------------------------------------------------------- the faults


def test_ict_proto_timestamp(tmp_path: Path) -> None:
    ict = 1_700_000_000_001
    for cls, ok in ((DurableTarget, True), (v.IctProtoTimestampTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid, _ = table(cat, env)
        cat.commit(tid, 1, inline_content=inline(1), in_commit_timestamp=ict)
        cat.commit(tid, 2, inline_content=inline(2), in_commit_timestamp=1_700_000_001_000)
        served = {c.version: c.in_commit_timestamp for c in cat.get_commits(tid).commits}
        assert served[2] == 1_700_000_001_000  # whole seconds survive either way
        assert served[1] == (ict if ok else ict - 1)


def test_staged_name_any_case(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.StagedNameAnyCaseTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid, loc = table(cat, env)
        bad_ext = staged(loc, 1, ".JSON")
        env.storage.put(bad_ext, inline(1))
        missing_uuid = f"{loc}/_delta_log/_staged_commits/{1:020d}.json"
        env.storage.put(missing_uuid, inline(1))
        with pytest.raises(InvalidRequest):  # both refuse an ordinary malformed name
            cat.commit(tid, 1, staged_uri=missing_uuid)
        if ok:
            with pytest.raises(InvalidRequest):
                cat.commit(tid, 1, staged_uri=bad_ext)
            assert cat.get_commits(tid).latest_version == 0
        else:
            cat.commit(tid, 1, staged_uri=bad_ext)
            resp = cat.get_commits(tid)
            assert resp.latest_version == 1 and resp.commits[0].staged_uri == bad_ext


def test_exists_check_after_store(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.ExistsCheckAfterStoreTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid, loc = table(cat, env)
        never_written = staged(loc, 1)
        with pytest.raises(InvalidRequest):  # both say "refused"
            cat.commit(tid, 1, staged_uri=never_written)
        resp = cat.get_commits(tid)
        if ok:
            assert resp.latest_version == 0 and resp.commits == []
        else:
            assert resp.latest_version == 1
            assert [c.staged_uri for c in resp.commits] == [never_written]
            with pytest.raises(CommitConflict):  # the refused proposal holds the version
                cat.commit(tid, 1, inline_content=inline(1))


def test_staging_location_seconds(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.StagingLocationSecondsTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        made = [cat.create_staging_table() for _ in range(3)]
        assert len({s.table_id for s in made}) == 3
        # three calls within a millisecond span at most one second boundary
        assert (len({s.location for s in made}) == 3) is ok


def test_conflict_latest_loaded_row(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.ConflictLatestLoadedRowTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        storage = env.storage
        assert isinstance(storage, HookStorage)
        cat = catalog_of(cls, env)
        tid, loc = table(cat, env)
        cat.commit(tid, 1, inline_content=inline(1))
        mine = staged(loc, 2)
        storage.put(mine, inline(2))

        def rival(cat: DurableCatalog = cat, tid: str = tid) -> None:  # a rival ratifies v2, v3 meanwhile
            cat.commit(tid, 2, inline_content=inline(20))
            cat.commit(tid, 3, inline_content=inline(30))

        storage.hooks[mine] = rival
        with pytest.raises(CommitConflict) as info:
            cat.commit(tid, 2, staged_uri=mine)
        assert cat.get_commits(tid).latest_version == 3
        assert info.value.latest_version == (3 if ok else 1)
        # a sequential conflict states the true latest version in both
        with pytest.raises(CommitConflict) as again:
            cat.commit(tid, 2, inline_content=inline(2))
        assert again.value.latest_version == 3


def test_inline_path_no_gap_check(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.InlinePathNoGapCheckTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid, loc = table(cat, env)
        gap = staged(loc, 3)
        env.storage.put(gap, inline(3))
        with pytest.raises(CommitRejected):  # both refuse a staged gap
            cat.commit(tid, 3, staged_uri=gap)
        if ok:
            with pytest.raises(CommitRejected):
                cat.commit(tid, 3, inline_content=inline(3))
            assert cat.get_commits(tid).latest_version == 0
        else:
            cat.commit(tid, 3, inline_content=inline(3))
            resp = cat.get_commits(tid)
            assert resp.latest_version == 3 and versions(cat, tid) == [3]


def test_staged_uri_unquoted(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.StagedUriUnquotedTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid, loc = table(cat, env)
        encoded = staged(loc, 1, sep="%2F")  # an object directly in _delta_log/
        env.storage.put(encoded, inline(1))
        assert encoded.startswith(f"{loc}/_delta_log/_staged_commits%2F")
        dotdot = f"{loc}/_delta_log/_staged_commits/../{1:020d}.{uuid.uuid4()}.json"
        env.storage.put(dotdot, inline(1))
        with pytest.raises(InvalidRequest):  # both refuse an unencoded escape
            cat.commit(tid, 1, staged_uri=dotdot)
        if ok:
            with pytest.raises(InvalidRequest):
                cat.commit(tid, 1, staged_uri=encoded)
        else:
            cat.commit(tid, 1, staged_uri=encoded)
            assert [c.staged_uri for c in cat.get_commits(tid).commits] == [encoded]


def test_mark_unchecked_when_caught_up(tmp_path: Path) -> None:
    for cls, ok in ((v.LazyForgetTarget, True), (v.MarkUncheckedWhenCaughtUpTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid, _ = table(cat, env)
        for ver in (1, 2):
            cat.commit(tid, ver, inline_content=inline(ver))
        with pytest.raises(InvalidRequest):  # both refuse it while a commit is unpublished
            cat.mark_published(tid, 5)
        cat.mark_published(tid, 2)
        if ok:
            with pytest.raises(InvalidRequest):
                cat.mark_published(tid, 5)
        else:
            cat.mark_published(tid, 5)
        cat.commit(tid, 3, inline_content=inline(3))
        resp = cat.get_commits(tid)
        assert resp.latest_version == 3
        assert versions(cat, tid) == ([3] if ok else [])


def test_reversed_range_swapped(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.ReversedRangeSwappedTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid, _ = table(cat, env)
        for ver in (1, 2, 3):
            cat.commit(tid, ver, inline_content=inline(ver))
        assert [c.version for c in cat.get_commits(tid, 1, 3).commits] == [1, 2, 3]
        if ok:
            with pytest.raises(InvalidRequest):
                cat.get_commits(tid, 3, 1)
        else:
            listed = cat.get_commits(tid, 3, 1).commits
            assert sorted(c.version for c in listed) == [1, 2, 3]  # none is in the empty range [3, 1]


def test_state_urlsafe_base64(tmp_path: Path) -> None:
    content = encode([{"commitInfo": {"inCommitTimestamp": 1_700_000_000_001, "txnId": "a~b?c>d", "note": "~~~???"}}])
    assert set(base64.urlsafe_b64encode(content).decode()) & {"-", "_"}
    plain = inline(1)
    for cls, ok in ((DurableTarget, True), (v.StateUrlsafeBase64Target, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid, _ = table(cat, env)
        cat.commit(tid, 1, inline_content=plain)
        cat.commit(tid, 2, inline_content=content)
        served = {c.version: c.inline_content for c in cat.get_commits(tid).commits}
        assert served == {1: plain, 2: content}  # right before the restart
        if ok:
            cat2 = cls().restart_catalog(cat, env)
            assert {c.version: c.inline_content for c in cat2.get_commits(tid).commits} == {1: plain, 2: content}
        else:
            try:
                cat2 = cls().restart_catalog(cat, env)
            except ValueError:  # binascii.Error: the state no longer loads at all
                continue
            after = {c.version: c.inline_content for c in cat2.get_commits(tid).commits}
            assert after[2] != content
