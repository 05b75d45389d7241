"""Every round-15b faulty variant (tests/cleanroom_r15b/variants.py) misbehaves where the correct baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import InvalidRequest
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import CleanClient, ReadError, RetriesExhausted, decode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant
from tests.cleanroom_r15b import variants as v

WAREHOUSE = "mem://warehouse"


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def setup(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[DurableCatalog, CleanClient, TargetEnv]:
    env = make_env(tmp_path)
    target = target_cls()
    cat = target.make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    client = target.make_client(cat, env)
    assert isinstance(client, CleanClient)
    return cat, client, env


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def log_of(cat: DurableCatalog, name: str = "t") -> str:
    return f"{cat.resolve(name).location}/_delta_log"


class Racing:
    """A catalog where a rival commits just before the first proposal it is handed arrives."""

    def __init__(self, inner: Any, rival: Callable[[], None]) -> None:
        self.inner = inner
        self.rival: Callable[[], None] | None = rival

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        if self.rival is not None:
            rival, self.rival = self.rival, None
            rival()
        self.inner.commit(table_id, version, **kwargs)


def test_variants_listed() -> None:
    assert len(v.VARIANTS) == 8
    names = [x.name for x in v.VARIANTS]
    assert len(set(names)) == len(names)
    for x in v.VARIANTS:
        assert isinstance(x, Variant)
        assert x.name.startswith("cr15b-wrt-") or x.name.startswith("cr15b-rdr-")
        assert x.target.startswith("tests.cleanroom_r15b.variants:")
        assert x.doc.startswith(x.name)
        assert x.profile == ("delta-cm-writer" if "-wrt-" in x.name else "delta-cm-reader")


# ---------------------------------------------------------------- writing clients


def _compaction_adds(target_cls: type[DurableTarget], tmp_path: Path, start: int) -> tuple[set[str], set[str]]:
    cat, client, env = setup(target_cls, tmp_path)
    client.create_table("t")
    for i in (1, 2, 3):
        client.append("t", rows(i))
    client.publish("t")
    assert client.compact_log("t", start, 3)
    log = log_of(cat)
    body = decode(env.storage.get(f"{log}/{start:020d}.{3:020d}.compacted.json"))
    got = {a["add"]["path"] for a in body if "add" in a}
    want: set[str] = set()
    for ver in range(start, 4):
        want |= {a["add"]["path"] for a in decode(env.storage.get(f"{log}/{ver:020d}.json")) if "add" in a}
    return got, want


def test_compaction_from_snapshot(tmp_path: Path) -> None:
    for cls in (DurableTarget, v.CompactionFromSnapshotTarget):  # a range from the first data commit: same
        got, want = _compaction_adds(cls, tmp_path / f"full-{cls.__name__}", 1)
        assert got == want
    got, want = _compaction_adds(DurableTarget, tmp_path / "ok", 2)
    assert got == want and len(got) == 2
    got, want = _compaction_adds(v.CompactionFromSnapshotTarget, tmp_path / "bad", 2)
    assert want < got and len(got) == 3  # the file of version 1 is in the compaction of 2..3


def test_staged_name_first_attempt(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.StagedNameFirstAttemptTarget, False)):
        cat, _, env = setup(cls, tmp_path / cls.__name__)
        ResilientClient(cat, env.storage).create_table("t")
        rival = ResilientClient(cat, env.storage)

        def win(r: ResilientClient = rival) -> None:
            r.append("t", rows(1))

        writer = cls.client_cls(Racing(cat, win), env.storage)
        if ok:
            assert writer.append("t", rows(2)) == 2
            assert ResilientClient(cat, env.storage).read("t").rows == rows(1, 2)
        else:
            with pytest.raises(InvalidRequest):
                writer.append("t", rows(2))
            staged = [f.uri.rsplit("/", 1)[1] for f in env.storage.list(f"{log_of(cat)}/_staged_commits/")]
            # rival's v1 and two attempts of the writer: the one proposed for v2 is named for v1
            assert sum(1 for n in staged if n.startswith(f"{1:020d}.")) == 3
            assert cat.get_commits(cat.resolve("t").table_id).latest_version == 1
        # without a lost race the name is right
        assert cls.client_cls(cat, env.storage).append("t", rows(3)) == (3 if ok else 2)


def test_checkpoint_one_behind(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.CheckpointOneBehindTarget, False)):
        cat, client, env = setup(cls, tmp_path / cls.__name__)
        client.create_table("t")
        client.append("t", rows(1))
        assert client.checkpoint("t") == 0  # one unpublished commit: both checkpoint version 0
        client.append("t", rows(2))
        cp = client.checkpoint("t")
        log = log_of(cat)
        assert cp is not None
        assert env.storage.exists(f"{log}/{cp:020d}.checkpoint.parquet")
        assert env.storage.exists(f"{log}/{cp:020d}.json") is ok
        assert cp == (0 if ok else 1)


def test_staged_bom_non_ascii(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.StagedBomTarget, False)):
        cat, client, env = setup(cls, tmp_path / cls.__name__)
        client.create_table("t")
        client.append("t", rows(1))  # ASCII: a plain commit either way
        client.append("t", [{"id": 2, "value": "café"}])
        tid = cat.resolve("t").table_id
        by_version = {c.version: c for c in cat.get_commits(tid).commits}
        plain, accented = (env.storage.get(str(by_version[ver].staged_uri)) for ver in (1, 2))
        decode(plain)
        if ok:
            assert decode(accented)[0].get("commitInfo") is not None
        else:
            assert accented.startswith(b"\xef\xbb\xbf")
            with pytest.raises(json.JSONDecodeError):
                decode(accented)
        # the client's own round trip works either way
        assert client.read("t").rows == [*rows(1), {"id": 2, "value": "café"}]


def test_rebase_published_only(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.RebasePublishedOnlyTarget, False)):
        for publish_winner in (True, False):
            cat, _, env = setup(cls, tmp_path / f"{cls.__name__}-{publish_winner}")
            ResilientClient(cat, env.storage).create_table("t")
            rival = ResilientClient(cat, env.storage)

            def win(r: ResilientClient = rival, publish: bool = publish_winner) -> None:
                r.append("t", rows(1))
                if publish:
                    r.publish("t")

            writer = cls.client_cls(Racing(cat, win), env.storage)
            if ok or publish_winner:
                assert writer.append("t", rows(2)) == 2
                assert ResilientClient(cat, env.storage).read("t").rows == rows(1, 2)
            else:
                with pytest.raises(RetriesExhausted):
                    writer.append("t", rows(2))
                assert ResilientClient(cat, env.storage).read("t").rows == rows(1)


def test_create_metadata_twice(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.CreateMetadataTwiceTarget, False)):
        cat, client, env = setup(cls, tmp_path / cls.__name__)
        client.create_table("t")
        client.append("t", rows(1))
        v0 = decode(env.storage.get(f"{log_of(cat)}/{0:020d}.json"))
        assert "commitInfo" in v0[0]
        metas = [a["metaData"] for a in v0 if "metaData" in a]
        assert len(metas) == (1 if ok else 2)
        assert metas[-1]["configuration"]["delta.enableInCommitTimestamps"] == "true"
        v1 = decode(env.storage.get(str(cat.get_commits(cat.resolve("t").table_id).commits[0].staged_uri)))
        assert sum(1 for a in v1 if "metaData" in a) == 0  # data commits are right
        assert client.read("t").rows == rows(1)


# ---------------------------------------------------------------- reading clients


def test_catalog_from_listing(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.CatalogFromListingTarget, False)):
        cat, reader, env = setup(cls, tmp_path / cls.__name__)
        writer = ResilientClient(cat, env.storage)
        writer.create_table("t")
        writer.append("t", rows(1))
        writer.publish("t")
        writer.append("t", rows(2))
        writer.append("t", rows(3))  # v2, v3 ratified, unpublished
        assert reader.read("t") == writer.read("t")  # no stray file: right
        log = log_of(cat)
        env.storage.put(f"{log}/{4:020d}.json", env.storage.get(f"{log}/{1:020d}.json"))  # stray above latest
        if ok:
            assert reader.read("t").version == 3
            assert reader.read("t").rows == rows(1, 2, 3)
        else:
            with pytest.raises(ReadError):
                reader.read("t")


def test_catalog_from_listing_precedence(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.CatalogFromListingTarget, False)):
        cat, reader, env = setup(cls, tmp_path / cls.__name__)
        writer = ResilientClient(cat, env.storage)
        writer.create_table("t")
        writer.append("t", rows(1))
        writer.append("t", rows(2))  # v1, v2 held by the catalog (a publication whose mark was lost)
        log = log_of(cat)
        held = cat.get_commits(cat.resolve("t").table_id).commits
        env.storage.put(f"{log}/{1:020d}.json", env.storage.get(str(held[0].staged_uri)))
        env.storage.put(f"{log}/{2:020d}.json", env.storage.get(f"{log}/{0:020d}.json"))  # a published v2 unlike v2
        got = reader.read("t")
        assert got.version == 2
        assert got.rows == (rows(1, 2) if ok else rows(1))


def test_checkpoint_files_unremovable(tmp_path: Path) -> None:
    for cls, ok in ((DurableTarget, True), (v.CheckpointFilesUnremovableTarget, False)):
        cat, reader, env = setup(cls, tmp_path / cls.__name__)
        writer = ResilientClient(cat, env.storage)
        writer.create_table("t")
        writer.append("t", [*rows(1), *rows(2)])
        writer.publish("t")
        assert writer.checkpoint("t") == 1
        writer.append("t", rows(3))  # appends after the checkpoint: right
        assert reader.read("t").rows == rows(1, 2, 3)
        writer.delete("t", [1])  # v3, ratified, unpublished: removes the checkpoint's file
        got = reader.read("t")
        assert got.version == 3
        if ok:
            assert got.rows == rows(2, 3)
        else:
            assert got.rows == [*rows(1), *rows(2), *rows(2), *rows(3)]
        writer.publish("t")  # published and forgotten by the catalog: the same
        assert reader.read("t").rows == got.rows
