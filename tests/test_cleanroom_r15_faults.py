"""Every round-15 faulty variant (tests/cleanroom_r15/variants.py) misbehaves where the correct baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import InvalidRequest
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant
from tests.cleanroom_r15 import variants as v

WAREHOUSE = "mem://warehouse"
ICT = 1_700_000_000_000


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def catalog_of(target_cls: type[DurableTarget], env: TargetEnv) -> DurableCatalog:
    cat = target_cls().make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    return cat


def table(cat: Any, env: TargetEnv, name: str = "t") -> str:
    """Create and register a table as the creation flow does: staging, version 0, registration."""
    staging = cat.create_staging_table()
    env.storage.put(f"{staging.location}/_delta_log/{0:020d}.json", inline(0))
    cat.register_table(name, staging.table_id)
    return str(cat.resolve(name).table_id)


def inline(version: int, extra: str = "") -> bytes:
    ict = ICT + version
    info = {"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict, "txnId": f"x{version}", "note": extra}}
    return encode([info])


def staged(cat: Any, env: TargetEnv, tid: str, version: int, file_uuid: str) -> str:
    location = next(t.location for t in cat._by_id.values() if t.table_id == tid)
    uri = f"{location}/_delta_log/_staged_commits/{version:020d}.{file_uuid}.json"
    env.storage.put(uri, inline(version))
    return uri


def pair(tmp_path: Path, bad: type[DurableTarget], good: type[DurableTarget] = DurableTarget) -> list[Any]:
    out = []
    for cls in (good, bad):
        env = make_env(tmp_path / cls.__name__)
        out.append((cls, env, catalog_of(cls, env)))
    return out


# ---------------------------------------------------------------- the variants' records


def test_variants_are_recorded() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == 8 and len(set(names)) == 8
    for x in v.VARIANTS:
        assert isinstance(x, Variant)
        assert x.name.startswith("cr15-cat-") and x.side == "catalog" and x.profile == "delta-cm-catalog"
        assert x.target.startswith("tests.cleanroom_r15.variants:")
        assert x.doc.startswith(x.name) and all(r in x.doc for r in x.rules) and f"({x.level})" in x.doc


# ---------------------------------------------------------------- catalog variants


def test_name_limit_utf16_units(tmp_path: Path) -> None:
    limit = v.UnicodeNamesCatalog.NAME_LENGTH
    for cls, env, cat in pair(tmp_path, v.NameLimitUtf16Target, v.UnicodeNamesTarget):
        assert cls().catalog_limits().name_length == limit
        # BMP letters at the limit: both accept; one past it: both refuse
        for letter in ("a", "é", "表"):
            table(cat, env, letter * limit)
            assert cat.resolve(letter * limit).name == letter * limit
            with pytest.raises(InvalidRequest):
                table(cat, env, letter * (limit + 1))
        astral = "𝔘" * limit  # a letter outside the BMP, 64 characters
        if cls is v.UnicodeNamesTarget:
            table(cat, env, astral)
            assert cat.resolve(astral).name == astral
        else:
            with pytest.raises(InvalidRequest):
                table(cat, env, astral)  # refused at the declared limit


def test_staged_uuid_column_lowercase(tmp_path: Path) -> None:
    for cls, env, cat in pair(tmp_path, v.StagedUuidColumnTarget):
        tid = table(cat, env)
        lower = staged(cat, env, tid, 1, str(uuid.uuid4()))
        cat.commit(tid, 1, staged_uri=lower, in_commit_timestamp=ICT + 1)
        upper = staged(cat, env, tid, 2, str(uuid.uuid4()).upper())
        cat.commit(tid, 2, staged_uri=upper, in_commit_timestamp=ICT + 2)
        served = {c.version: c.staged_uri for c in cat.get_commits(tid).commits}
        assert served[1] == lower  # lower-case UUIDs: right in both
        if cls is DurableTarget:
            assert served[2] == upper
        else:
            folder, file_name = upper.rsplit("/", 1)
            assert served[2] == f"{folder}/{file_name.lower()}" and served[2] != upper
            assert served[2] is not None and not env.storage.exists(served[2])


def raw_utf8(version: int, note: str) -> bytes:
    """A one-action commit written as writers write it: raw UTF-8, not ASCII-escaped."""
    ict = ICT + version
    info = {"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict, "txnId": f"x{version}", "note": note}}
    return (json.dumps(info, ensure_ascii=False) + "\n").encode("utf-8")


def test_inline_nfc_text(tmp_path: Path) -> None:
    nfd = raw_utf8(2, "cafe\u0301")
    assert "e\u0301".encode() in nfd
    for cls, env, cat in pair(tmp_path, v.InlineNfcTextTarget):
        tid = table(cat, env)
        cat.commit(tid, 1, inline_content=raw_utf8(1, "café"), in_commit_timestamp=ICT + 1)
        cat.commit(tid, 2, inline_content=nfd, in_commit_timestamp=ICT + 2)
        served = {c.version: c.inline_content for c in cat.get_commits(tid).commits}
        assert served[1] == raw_utf8(1, "café")  # precomposed text: right in both
        assert (served[2] == nfd) is (cls is DurableTarget)


def test_ict_bumped_monotonic(tmp_path: Path) -> None:
    for cls, env, cat in pair(tmp_path, v.IctBumpedMonotonicTarget):
        tid = table(cat, env)
        cat.commit(tid, 1, inline_content=inline(1), in_commit_timestamp=ICT + 100)
        cat.commit(tid, 2, inline_content=inline(2), in_commit_timestamp=ICT + 200)  # rising: right in both
        cat.commit(tid, 3, inline_content=inline(3), in_commit_timestamp=ICT + 150)  # not rising
        served = {c.version: c.in_commit_timestamp for c in cat.get_commits(tid).commits}
        assert served[1] == ICT + 100 and served[2] == ICT + 200
        assert served[3] == (ICT + 150 if cls is DurableTarget else ICT + 201)


def test_restart_inline_empty_staged_uri(tmp_path: Path) -> None:
    for cls, env, cat in pair(tmp_path, v.RestartInlineEmptyUriTarget):
        tid = table(cat, env)
        uri = staged(cat, env, tid, 1, str(uuid.uuid4()))
        cat.commit(tid, 1, staged_uri=uri, in_commit_timestamp=ICT + 1)
        cat.commit(tid, 2, inline_content=inline(2), in_commit_timestamp=ICT + 2)
        before = cat.get_commits(tid).commits
        assert before[1].staged_uri is None  # in memory: right in both
        cat2 = cls().restart_catalog(cat, env)
        after = cat2.get_commits(tid)
        assert after.latest_version == 2 and after.commits[0] == before[0]
        assert after.commits[1].inline_content == inline(2)
        assert (after.commits[1] == before[1]) is (cls is DurableTarget)
        if cls is not DurableTarget:
            assert after.commits[1].staged_uri == ""


def test_staged_uuid_parsed_lenient(tmp_path: Path) -> None:
    good_uuid = str(uuid.uuid4())
    odd_names = (uuid.UUID(good_uuid).hex, "{" + good_uuid + "}", "urn:uuid:" + good_uuid)
    for cls, env, cat in pair(tmp_path, v.StagedUuidParsedTarget):
        tid = table(cat, env)
        for bad in ("not-a-uuid", "0"):  # what a shallow suite tries: refused by both
            with pytest.raises(InvalidRequest):
                cat.commit(tid, 1, staged_uri=staged(cat, env, tid, 1, bad), in_commit_timestamp=ICT + 1)
        ratified = 0
        for odd in odd_names:
            uri = staged(cat, env, tid, ratified + 1, odd)
            try:
                cat.commit(tid, ratified + 1, staged_uri=uri, in_commit_timestamp=ICT + 1)
                ratified += 1
            except InvalidRequest:
                pass
        assert cat.get_commits(tid).latest_version == ratified
        assert ratified == (0 if cls is DurableTarget else len(odd_names))


def test_location_from_table_count(tmp_path: Path) -> None:
    for cls, env, cat in pair(tmp_path, v.LocationFromTableCountTarget, v.DroppingDurableTarget):
        table(cat, env, "a")
        table(cat, env, "b")
        ResilientClient(cat, env.storage).append("b", [{"id": 1, "value": "x"}])
        seen = {cat.resolve("a").location, cat.resolve("b").location}
        assert len(seen) == 2
        cat = cls().restart_catalog(cat, env)  # unique across a restart: right in both
        fresh = cat.create_staging_table().location
        assert fresh not in seen
        seen.add(fresh)
        assert isinstance(cat, v.DroppingDurableCatalog)
        cat.drop_table("a")
        after_drop = cat.create_staging_table().location
        assert (after_drop in seen) is (cls is v.LocationFromTableCountTarget)
        if cls is v.LocationFromTableCountTarget:
            assert after_drop == fresh  # the newest record's location, a creation in flight


def test_mark_zero_falsy(tmp_path: Path) -> None:
    for cls, env, cat in pair(tmp_path, v.MarkZeroFalsyTarget):
        tid = table(cat, env)
        for ver in (1, 2, 3):
            cat.commit(tid, ver, inline_content=inline(ver), in_commit_timestamp=ICT + ver)
        cat.mark_published(tid, 1)  # a mark above 0: right in both
        assert [c.version for c in cat.get_commits(tid).commits] == [2, 3]
        tid2 = table(cat, env, "u")
        cat.commit(tid2, 1, inline_content=inline(1), in_commit_timestamp=ICT + 1)
        # a proposal carrying the mark 0 (only version 0 is published)
        cat.commit(tid2, 2, inline_content=inline(2), in_commit_timestamp=ICT + 2, latest_published_version=0)
        listed = [c.version for c in cat.get_commits(tid2).commits]
        assert listed == ([1, 2] if cls is DurableTarget else [2])
        cat.commit(tid2, 3, inline_content=inline(3), in_commit_timestamp=ICT + 3)
        cat.mark_published(tid2, 0)  # the same mark, reported on its own
        resp = cat.get_commits(tid2)
        assert resp.latest_version == 3
        assert [c.version for c in resp.commits] == ([1, 2, 3] if cls is DurableTarget else [])
