"""Every round-16 faulty catalog (tests/cleanroom_r16/variants.py) misbehaves where the correct baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import CommitConflict, CommitRejected, InvalidRequest, TableNotFound
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant
from tests.cleanroom_r16 import variants as v

WAREHOUSE = "mem://warehouse"
UUID_LOW = "00000000-0000-4000-8000-000000000001"
UUID_HIGH = "ffffffff-ffff-4fff-bfff-ffffffffffff"


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


def inline(version: int, adds: int = 0) -> bytes:
    ict = 1_700_000_000_000 + version
    actions: list[dict[str, Any]] = [
        {"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict, "txnId": f"x{version}"}}
    ]
    actions += [
        {"add": {"path": f"part-{version:05d}-{i:06d}.parquet", "size": 100 + i, "dataChange": True}}
        for i in range(adds)
    ]
    return encode(actions)


def staged(cat: Any, name: str, version: int, uid: str, sep: str = ".", suffix: str = ".json") -> str:
    return f"{cat.resolve(name).location}/_delta_log/_staged_commits/{version:020d}{sep}{uid}{suffix}"


def pairs(variant_target: type[DurableTarget]) -> list[tuple[type[DurableTarget], bool]]:
    return [(DurableTarget, True), (variant_target, False)]


# ---------------------------------------------------------------- 1. inline chunks in text order


def test_inline_chunks_text_order(tmp_path: Path) -> None:
    small = inline(1, adds=600)  # about 60 KiB: four chunks
    big = inline(2, adds=2500)  # above 160 KiB: more than ten chunks
    assert len(small) < 10 * v.INLINE_CHUNK < 11 * v.INLINE_CHUNK < len(big)
    for cls, ok in pairs(v.InlineChunksTextOrderTarget):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        cat.commit(tid, 1, inline_content=small, in_commit_timestamp=1)
        cat.commit(tid, 2, inline_content=big, in_commit_timestamp=2)
        served = {c.version: c.inline_content for c in cat.get_commits(tid).commits}
        assert served[1] == small  # small commits round-trip in both
        got = served[2]
        assert got is not None and len(got) == len(big)
        assert (got == big) is ok
        # the same after a restart: the shuffled bytes are what the store holds
        cat2 = cls().restart_catalog(cat, env)
        assert ({c.version: c.inline_content for c in cat2.get_commits(tid).commits}[2] == big) is ok


# ---------------------------------------------------------------- 2. conflict's latest from the first page


def test_conflict_latest_first_page(tmp_path: Path) -> None:
    for cls, ok in pairs(v.ConflictLatestFirstPageTarget):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        for ver in range(1, 9):
            cat.commit(tid, ver, inline_content=inline(ver))
        with pytest.raises(CommitConflict) as few:
            cat.commit(tid, 3, inline_content=inline(3))
        assert few.value.latest_version == 8  # up to a page unpublished: right in both
        for ver in range(9, 11):
            cat.commit(tid, ver, inline_content=inline(ver))
        with pytest.raises(CommitConflict) as many:
            cat.commit(tid, 10, inline_content=inline(10))
        assert cat.get_commits(tid).latest_version == 10
        assert (many.value.latest_version == 10) is ok
        if not ok:
            assert many.value.latest_version == 8


# ---------------------------------------------------------------- 3. resend shortcut skips the version


def test_resend_shortcut_any_version(tmp_path: Path) -> None:
    for cls, ok in pairs(v.ResendShortcutAnyVersionTarget):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        uri = staged(cat, "t", 1, UUID_LOW)
        env.storage.put(uri, inline(1))
        cat.commit(tid, 1, staged_uri=uri)
        # a fresh file named for another version is refused by both
        other = staged(cat, "t", 1, UUID_HIGH)
        env.storage.put(other, inline(1))
        with pytest.raises(InvalidRequest):
            cat.commit(tid, 2, staged_uri=other)
        # the ratified file proposed for version 2
        if ok:
            with pytest.raises(InvalidRequest):
                cat.commit(tid, 2, staged_uri=uri)
        else:
            cat.commit(tid, 2, staged_uri=uri)  # acknowledged: "ratified" at v2
        resp = cat.get_commits(tid)
        assert resp.latest_version == 1  # nothing holds version 2
        assert [c.staged_uri for c in resp.commits] == [uri]


# ---------------------------------------------------------------- 4. restart finds staged files by listing


def test_restart_staged_from_listing(tmp_path: Path) -> None:
    for cls, ok in pairs(v.RestartStagedFromListingTarget):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        w1 = staged(cat, "t", 1, UUID_HIGH)
        env.storage.put(w1, inline(1))
        cat.commit(tid, 1, staged_uri=w1)
        # version 2: the loser's file sorts before the winner's
        loser, winner = staged(cat, "t", 2, UUID_LOW), staged(cat, "t", 2, UUID_HIGH)
        env.storage.put(loser, inline(2) + b"\n")
        env.storage.put(winner, inline(2))
        cat.commit(tid, 2, staged_uri=winner)
        with pytest.raises(CommitConflict):
            cat.commit(tid, 2, staged_uri=loser)
        before = {c.version: c.staged_uri for c in cat.get_commits(tid).commits}
        assert before == {1: w1, 2: winner}
        cat2 = cls().restart_catalog(cat, env)
        after = {c.version: c.staged_uri for c in cat2.get_commits(tid).commits}
        assert after[1] == w1  # one file per version: right in both
        assert (after[2] == winner) is ok
        if not ok:
            assert after[2] == loser  # the rejected proposal, listed as ratified


# ---------------------------------------------------------------- 5. inline rows ignore the start bound


def test_list_inline_ignores_start(tmp_path: Path) -> None:
    for cls, ok in pairs(v.ListInlineIgnoresStartTarget):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        for ver in (1, 2):
            uri = staged(cat, "t", ver, UUID_LOW)
            env.storage.put(uri, inline(ver))
            cat.commit(tid, ver, staged_uri=uri)
        assert [c.version for c in cat.get_commits(tid, 2).commits] == [2]  # staged only: right in both
        for ver in (3, 4, 5):
            cat.commit(tid, ver, inline_content=inline(ver))
        listed = [c.version for c in cat.get_commits(tid, 5).commits]
        news = cat.get_commits(tid, 6)  # "anything new?"
        assert news.latest_version == 5
        if ok:
            assert listed == [5]
            assert news.commits == []
        else:
            assert listed == [3, 4, 5]
            assert [c.version for c in news.commits] == [3, 4, 5]


# ---------------------------------------------------------------- 6. registration renames a named table


def test_register_renames_by_id(tmp_path: Path) -> None:
    for cls, ok in pairs(v.RegisterRenamesByIdTarget):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        ResilientClient(cat, env.storage).append("t", rows(1))
        location = cat.resolve("t").location
        with pytest.raises(InvalidRequest):
            cat.register_table("t", tid)  # its own name again: refused by both
        if ok:
            with pytest.raises(InvalidRequest):
                cat.register_table("u", tid)
            assert cat.resolve("t").location == location
            with pytest.raises(TableNotFound):
                cat.resolve("u")
        else:
            cat.register_table("u", tid)
            with pytest.raises(TableNotFound):
                cat.resolve("t")  # never dropped, no longer found
            assert cat.resolve("u").location == location
            assert ResilientClient(cat, env.storage).read("u").rows == rows(1)


# ---------------------------------------------------------------- 7. staged name with unescaped dots


def test_staged_name_unescaped_dot(tmp_path: Path) -> None:
    for cls, ok in pairs(v.StagedNameUnescapedDotTarget):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        refused_by_both = [
            f"{cat.resolve('t').location}/_delta_log/_staged_commits/{1:020d}.json",
            staged(cat, "t", 1, UUID_LOW[:-1]),
            staged(cat, "t", 1, UUID_LOW, suffix=".json.tmp"),
        ]
        for uri in refused_by_both:
            env.storage.put(uri, inline(1))
            with pytest.raises(InvalidRequest):
                cat.commit(tid, 1, staged_uri=uri)
        odd = staged(cat, "t", 1, UUID_LOW, sep="_")
        env.storage.put(odd, inline(1))
        if ok:
            with pytest.raises(InvalidRequest):
                cat.commit(tid, 1, staged_uri=odd)
            assert cat.get_commits(tid).latest_version == 0
        else:
            cat.commit(tid, 1, staged_uri=odd)
            assert [c.staged_uri for c in cat.get_commits(tid).commits] == [odd]


# ---------------------------------------------------------------- 8. a carried mark vouches for a gap


def test_mark_vouches_for_gap(tmp_path: Path) -> None:
    for cls, ok in pairs(v.MarkVouchesForGapTarget):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        tid = table(cat, env)
        cat.commit(tid, 1, inline_content=inline(1))
        with pytest.raises(CommitRejected):
            cat.commit(tid, 5, inline_content=inline(5))  # a gap without a mark: refused by both
        cat.commit(tid, 2, inline_content=inline(2), latest_published_version=0)  # a valid mark: right in both
        if ok:
            with pytest.raises(CommitRejected):
                cat.commit(tid, 6, inline_content=inline(6), latest_published_version=5)
            resp = cat.get_commits(tid)
            assert resp.latest_version == 2
            assert [c.version for c in resp.commits] == [1, 2]
        else:
            cat.commit(tid, 6, inline_content=inline(6), latest_published_version=5)
            resp = cat.get_commits(tid)
            assert resp.latest_version == 6  # v3-v5 were never ratified
            assert [c.version for c in resp.commits] == [6]  # v1, v2 forgotten unpublished


# ---------------------------------------------------------------- the list


def test_variants_listed() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names)) == 8
    for x in v.VARIANTS:
        assert isinstance(x, Variant)
        assert x.name.startswith("cr16-cat-")
        assert x.side == "catalog" and x.profile == "delta-cm-catalog"
        assert x.target.startswith("tests.cleanroom_r16.variants:")
        assert x.name in x.doc and all(rule in x.doc for rule in x.rules)
        assert x.level in x.doc
