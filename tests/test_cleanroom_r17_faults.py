"""Every round-17 catalog variant (tests/cleanroom_r17/variants.py) misbehaves where the correct baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert, no thread.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from conformance.contract.delta import (
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    TableNotFound,
)
from conformance.contract.target import TargetEnv
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r17 import variants as v

WAREHOUSE = "mem://warehouse"


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def catalog_of(target_cls: type[DurableTarget], env: TargetEnv) -> DurableCatalog:
    cat = target_cls().make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    return cat


def setup(target_cls: type[DurableTarget], tmp_path: Path, name: str = "t") -> tuple[DurableCatalog, str, TargetEnv]:
    env = make_env(tmp_path / target_cls.__name__)
    cat = catalog_of(target_cls, env)
    ResilientClient(cat, env.storage).create_table(name)
    return cat, str(cat.resolve(name).table_id), env


def inline(version: int, text: str = "") -> bytes:
    """A one-action commit; ``text`` is written as raw UTF-8 (not as JSON escapes)."""
    ict = 1_700_000_000_000 + version
    info = {"inCommitTimestamp": ict, "timestamp": ict, "txnId": str(uuid.uuid4()), "note": text}
    return json.dumps({"commitInfo": info}, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def staged(env: TargetEnv, cat: DurableCatalog, version: int, *, folder: str | None = None) -> str:
    location = cat.resolve("t").location
    base = folder if folder is not None else f"{location}/_delta_log/_staged_commits/"
    uri = f"{base}{version:020d}.{uuid.uuid4()}.json"
    env.storage.put(uri, inline(version), if_absent=True)
    return uri


# ---------------------------------------------------------------- cr17-cat-staged-path-normalised


def test_staged_path_normalised(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.StagedPathNormalisedTarget, False)):
        cat, tid, env = setup(cls, tmp_path)
        loc = cat.resolve("t").location
        # what a shallow suite tries: refused by both
        for bad in (
            f"{loc}/_delta_log/_staged_commits/../",
            f"{loc}/_delta_log/",
            f"{loc}/_delta_log/x/_staged_commits/",
        ):
            with pytest.raises(InvalidRequest):
                cat.commit(tid, 1, staged_uri=staged(env, cat, 1, folder=bad))
        # detours that come back into the folder: literal object keys outside it
        other = ResilientClient(cat, env.storage)
        other.create_table("other")
        other_loc = cat.resolve("other").location
        own_dir = loc.rsplit("/", 1)[1]
        detours = [
            f"{other_loc}/../{own_dir}/_delta_log/_staged_commits/",
            f"{loc}/_delta_log/_staged_commits//",
            f"{loc}/_delta_log/_staged_commits/./",
            f"{loc}/_delta_log/tmp/../_staged_commits/",
        ]
        for i, folder in enumerate(detours, start=1):
            uri = staged(env, cat, i, folder=folder)
            if ok:
                with pytest.raises(InvalidRequest):
                    cat.commit(tid, i, staged_uri=uri)
                assert cat.get_commits(tid).latest_version == 0
            else:
                cat.commit(tid, i, staged_uri=uri)
                listed = cat.get_commits(tid).commits
                assert listed[-1].staged_uri == uri and not uri.startswith(f"{loc}/_delta_log/_staged_commits/0")
                folder_ = f"{loc}/_delta_log/_staged_commits/"
                direct = {f.uri for f in env.storage.list(folder_) if "/" not in f.uri[len(folder_) :]}
                assert uri not in direct  # the ratified file is no object directly in the staging folder
        if ok:  # a well-formed proposal is ratified by both
            cat.commit(tid, 1, staged_uri=staged(env, cat, 1))


# ---------------------------------------------------------------- cr17-cat-cap-counts-inline-only


def test_cap_counts_inline_only(tmp_path: Path) -> None:
    for cls, ok in ((v.CappedTarget, True), (v.CapCountsInlineOnlyTarget, False)):
        assert cls().catalog_limits().unpublished == v.UNPUBLISHED_CAP
        # the shallow check: inline commits up to the cap, one more refused cleanly
        cat, tid, env = setup(cls, tmp_path / "inline")
        for ver in range(1, v.UNPUBLISHED_CAP + 1):
            cat.commit(tid, ver, inline_content=inline(ver))
        with pytest.raises(CommitRejected):
            cat.commit(tid, v.UNPUBLISHED_CAP + 1, inline_content=inline(v.UNPUBLISHED_CAP + 1))
        assert cat.get_commits(tid).latest_version == v.UNPUBLISHED_CAP
        # publication reported in the proposals only (certify.md "Limits"): never refused, in both
        cat, tid, env = setup(cls, tmp_path / "marks")
        for ver in range(1, 3 * v.UNPUBLISHED_CAP + 1):
            mark = max(ver - v.UNPUBLISHED_CAP + 1, 0)
            cat.commit(tid, ver, inline_content=inline(ver), latest_published_version=mark)
        assert cat.get_commits(tid).latest_version == 3 * v.UNPUBLISHED_CAP
        # one past the declared cap with staged proposals
        cat, tid, env = setup(cls, tmp_path / "staged")
        for ver in range(1, v.UNPUBLISHED_CAP + 1):
            cat.commit(tid, ver, staged_uri=staged(env, cat, ver))
        past = v.UNPUBLISHED_CAP + 1
        if ok:
            with pytest.raises(CommitRejected):
                cat.commit(tid, past, staged_uri=staged(env, cat, past))
            assert cat.get_commits(tid).latest_version == v.UNPUBLISHED_CAP
        else:
            cat.commit(tid, past, staged_uri=staged(env, cat, past))
            assert len(cat.get_commits(tid).commits) == past  # more unpublished than declared


# ---------------------------------------------------------------- cr17-cat-conflict-latest-same-kind


def conflict_latest(cat: DurableCatalog, tid: str, version: int, **proposal: object) -> int | None:
    with pytest.raises(CommitConflict) as conflict:
        cat.commit(tid, version, **proposal)  # type: ignore[arg-type]
    return conflict.value.latest_version


def test_conflict_latest_same_kind(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.ConflictLatestSameKindTarget, False)):
        # one kind only: right in both
        cat, tid, env = setup(cls, tmp_path / "one")
        for ver in (1, 2):
            cat.commit(tid, ver, staged_uri=staged(env, cat, ver))
        assert conflict_latest(cat, tid, 2, staged_uri=staged(env, cat, 2)) == 2
        # mixed kinds: staged v1-v2, inline v3-v4
        cat, tid, env = setup(cls, tmp_path / "mixed")
        for ver in (1, 2):
            cat.commit(tid, ver, staged_uri=staged(env, cat, ver))
        for ver in (3, 4):
            cat.commit(tid, ver, inline_content=inline(ver))
        stated_staged = conflict_latest(cat, tid, 4, staged_uri=staged(env, cat, 4))
        stated_inline = conflict_latest(cat, tid, 2, inline_content=inline(2))
        assert cat.get_commits(tid).latest_version == 4
        assert (stated_staged, stated_inline) == ((4, 4) if ok else (2, 4))
        cat.commit(tid, 5, staged_uri=staged(env, cat, 5))
        stated_inline = conflict_latest(cat, tid, 5, inline_content=inline(5))
        assert stated_inline == (5 if ok else 4)


# ---------------------------------------------------------------- cr17-cat-state-file-per-folded-name


def test_state_file_per_folded_name(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.StateFilePerFoldedNameTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        client = ResilientClient(cat, env.storage)
        for name in ("Caps", "caps", "orders"):
            client.create_table(name)
        client.append("Caps", [{"id": 1, "value": "upper"}])
        client.append("caps", [{"id": 2, "value": "lower"}])
        lower = cat.resolve("caps").table_id
        cat.commit(lower, 2, inline_content=inline(2))  # ratified, unpublished
        cat.commit(cat.resolve("Caps").table_id, 2, inline_content=inline(2))  # Caps is written last
        # while the catalog runs, each name is its own table
        assert cat.resolve("Caps").location != cat.resolve("caps").location
        before = {n: cat.resolve(n).location for n in ("Caps", "caps", "orders")}
        cat2 = cls().restart_catalog(cat, env)
        assert cat2.resolve("orders").location == before["orders"]  # what a shallow restart check sees
        assert cat2.resolve("Caps").location == before["Caps"]
        if ok:
            assert cat2.resolve("caps").location == before["caps"]
            assert cat2.get_commits(lower).latest_version == 2
            assert [c.version for c in cat2.get_commits(lower).commits][-1] == 2
        else:
            with pytest.raises(TableNotFound):
                cat2.resolve("caps")
            with pytest.raises(TableNotFound):
                cat2.get_commits(lower)  # its ratified, unpublished v2 is gone


# ---------------------------------------------------------------- cr17-cat-name-hash-index


def test_name_hash_index(tmp_path: Path) -> None:
    assert v.java_hash("Aa") == v.java_hash("BB") and v.java_hash("Ab") == v.java_hash("BC")
    for cls, ok in ((DurableTarget, True), (v.NameHashIndexTarget, False)):
        env = make_env(tmp_path / cls.__name__)
        cat = catalog_of(cls, env)
        client = ResilientClient(cat, env.storage)
        for name in ("t1", "t2", "orders", "Caps", "caps", "Aa", "BB"):
            client.create_table(name)
        # distinct ordinary names resolve to their own tables
        assert len({cat.resolve(n).location for n in ("t1", "t2", "orders", "Caps", "caps")}) == 5
        assert (cat.resolve("Aa").location != cat.resolve("BB").location) is ok
        cat2 = cls().restart_catalog(cat, env)
        assert (cat2.resolve("Aa").table_id != cat2.resolve("BB").table_id) is ok
        if not ok:  # Aa's readers and writers are sent to BB's table
            client.append("Aa", [{"id": 1, "value": "a"}])
            assert client.read("BB").rows == [{"id": 1, "value": "a"}]


# ---------------------------------------------------------------- cr17-cat-inline-cp1252-column


def test_inline_cp1252_column(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.InlineCp1252ColumnTarget, False)):
        cat, tid, _ = setup(cls, tmp_path)
        shallow = inline(1, "ascii é ü 表 𠀀 😀")
        cat.commit(tid, 1, inline_content=shallow)
        deep = inline(2, "Ádám ぁ Ýmir")
        cat.commit(tid, 2, inline_content=deep)
        served = {c.version: c.inline_content for c in cat.get_commits(tid).commits}
        assert b"\xe8\xa1\xa8" in shallow and b"\xe3\x81\x81" in deep  # raw UTF-8, not escapes
        assert served[1] == shallow
        assert (served[2] == deep) is ok


# ---------------------------------------------------------------- cr17-cat-forget-by-timestamp


def test_forget_by_timestamp(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.ForgetByTimestampTarget, False)):
        cat, tid, _ = setup(cls, tmp_path)
        # rising timestamps: marks drop exactly the published commits
        for ver in (1, 2, 3):
            cat.commit(tid, ver, inline_content=inline(ver), in_commit_timestamp=1_000 + ver)
        cat.mark_published(tid, 1)
        assert [c.version for c in cat.get_commits(tid).commits] == [2, 3]
        # v4 equal to v3's timestamp, v5 below it: the contract lets the catalog ratify them
        cat.commit(tid, 4, inline_content=inline(4), in_commit_timestamp=1_003)
        cat.commit(tid, 5, inline_content=inline(5), in_commit_timestamp=1_002)
        assert [c.version for c in cat.get_commits(tid).commits] == [2, 3, 4, 5]
        cat.mark_published(tid, 3)
        listed = [c.version for c in cat.get_commits(tid).commits]
        assert cat.get_commits(tid).latest_version == 5
        assert (listed == [4, 5]) is ok
        if not ok:
            assert listed == []  # v4 and v5 ratified, unpublished, no longer served


# ---------------------------------------------------------------- cr17-cat-list-by-position


def test_list_by_position(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.ListByPositionTarget, False)):
        cat, tid, _ = setup(cls, tmp_path)
        for ver in range(1, 11):
            cat.commit(tid, ver, inline_content=inline(ver))
        # fresh table: bounded listings are right in both
        assert [c.version for c in cat.get_commits(tid, 3, 5).commits] == [3, 4, 5]
        cat.mark_published(tid, 5)
        # unbounded listing right in both
        assert [c.version for c in cat.get_commits(tid).commits] == [6, 7, 8, 9, 10]
        low = [c.version for c in cat.get_commits(tid, 1, 2).commits]
        point = [c.version for c in cat.get_commits(tid, 7, 7).commits]
        end_only = [c.version for c in cat.get_commits(tid, None, 7).commits]
        if ok:
            assert low == [] and point == [7] and end_only == [6, 7]
        else:
            assert low == [6, 7]  # outside [1, 2]
            assert point == []  # v7 stored, unpublished, not listed
            assert end_only == [6, 7, 8, 9, 10]  # above end 7


def test_variants_are_documented() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names)) == 8
    for x in v.VARIANTS:
        assert x.name.startswith("cr17-cat-") and x.profile == "delta-cm-catalog" and x.side == "catalog"
        assert x.doc.startswith(x.name) and x.level in ("MUST", "SHOULD")
        assert x.target.startswith("tests.cleanroom_r17.variants:")
