"""Every round-17 (b) faulty client (tests/cleanroom_r17b/variants.py) misbehaves where the correct
baseline does not: each scenario runs against ``DurableTarget``'s client (right) and the variant's.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.contract.target import TargetEnv
from tests.cleanroom.client import _CHECKPOINT_SCHEMA, ReadError, decode, encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r17b import variants as v

WAREHOUSE = "mem://warehouse"
HOUR_MS = 3_600_000


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def catalog_of(env: TargetEnv) -> DurableCatalog:
    cat = DurableTarget().make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    return cat


def client_of(target_cls: type[DurableTarget], cat: Any, env: TargetEnv) -> ResilientClient:
    c = target_cls().make_client(cat, env)
    assert isinstance(c, ResilientClient)
    return c


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def log_of(cat: DurableCatalog, name: str = "t") -> str:
    return f"{cat.resolve(name).location}/_delta_log"


def encode_utf8(actions: list[dict[str, Any]]) -> bytes:
    """Newline-delimited JSON with non-ASCII text as raw UTF-8, as JVM and Rust writers emit it."""
    return b"".join(json.dumps(a, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for a in actions)


def stage_commit(
    cat: DurableCatalog, env: TargetEnv, version: int, actions: list[dict[str, Any]], *, raw_utf8: bool = False
) -> bytes:
    """A peer's commit of ``version``: staged under the table and ratified through the catalog."""
    info = cat.resolve("t")
    content = encode_utf8(actions) if raw_utf8 else encode(actions)
    uri = f"{info.location}/_delta_log/_staged_commits/{version:020d}.{uuid.uuid4()}.json"
    env.storage.put(uri, content, if_absent=True)
    cat.commit(info.table_id, version, staged_uri=uri)
    return content


def peer_info(ict: int, **extra: Any) -> dict[str, Any]:
    return {"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict, "txnId": str(uuid.uuid4()), **extra}}


# ---------------------------------------------------------------- writing clients


@pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (v.PublishBatchMarksLatestTarget, True)])
def test_publish_batch_marks_latest(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    env = make_env(tmp_path)
    cat = catalog_of(env)
    setup = ResilientClient(cat, env.storage)
    setup.create_table("t")
    for i in range(1, 37):  # versions 1..36, none published
        setup.append("t", rows(i))
    client = client_of(target_cls, cat, env)
    client.publish("t")
    ict = setup.next_ict(None)
    stage_commit(cat, env, 37, [peer_info(ict, operation="WRITE")])  # a peer commits on
    client.publish("t")
    log = log_of(cat)
    tid = cat.resolve("t").table_id
    assert env.storage.exists(f"{log}/{37:020d}.json")
    missing = [n for n in range(1, 38) if not env.storage.exists(f"{log}/{n:020d}.json")]
    held = [c.version for c in cat.get_commits(tid).commits]
    if faulty:  # 37 published while 33..36 never are, and the catalog has forgotten them
        assert missing == [33, 34, 35, 36]
        assert held == []
    else:
        assert missing == []


class SlowClockClient(ResilientClient):
    """A correct client whose clock runs an hour behind (the peer that created the table)."""

    def now_ms(self) -> int:
        return super().now_ms() - HOUR_MS


class RivalFirst:
    """The catalog, with a slow-clocked rival's commit ratified just before the client's first proposal."""

    def __init__(self, inner: DurableCatalog, env: TargetEnv) -> None:
        self.inner = inner
        self.env = env
        self.done = False

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        if not self.done:
            self.done = True
            prev = self.inner.get_commits(table_id).latest_version
            assert prev == version - 1
            ict = SlowClockClient(self.inner, self.env.storage).next_ict(None)
            stage_commit(self.inner, self.env, version, [peer_info(ict, operation="WRITE")])
        self.inner.commit(table_id, version, **kwargs)


@pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (v.IctRetryWinnerPlusOneTarget, True)])
def test_ict_retry_winner_plus_one(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    env = make_env(tmp_path)
    cat = catalog_of(env)
    SlowClockClient(cat, env.storage).create_table("t")
    client = client_of(target_cls, RivalFirst(cat, env), env)
    called = client.now_ms()
    version = client.append("t", rows(1))
    assert version == 2  # lost v1 to the rival, rebased, landed at v2
    tid = cat.resolve("t").table_id
    staged = cat.get_commits(tid, 2, 2).commits[0].staged_uri
    assert staged is not None
    ict = int(decode(env.storage.get(staged))[0]["commitInfo"]["inCommitTimestamp"])
    rival = cat.get_commits(tid, 1, 1).commits[0].staged_uri
    assert rival is not None
    previous = int(decode(env.storage.get(rival))[0]["commitInfo"]["inCommitTimestamp"])
    assert ict > previous  # strictly increasing either way
    if faulty:
        assert called - ict > 5 * 60_000  # about an hour behind the writer's clock
    else:
        assert abs(ict - called) < 5 * 60_000


@pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (v.ContentAddressedDataTarget, True)])
def test_content_addressed_data(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    env = make_env(tmp_path)
    cat = catalog_of(env)
    client = client_of(target_cls, cat, env)
    client.create_table("t")
    client.append("t", [{"id": 1, "value": "a"}, {"id": 2, "value": "b"}])
    client.append("t", [{"id": 1, "value": "a"}, {"id": 3, "value": "c"}])
    version = client.delete("t", [2, 3])
    staged = cat.get_commits(cat.resolve("t").table_id, version, version).commits[0].staged_uri
    assert staged is not None
    paths = [a["add"]["path"] for a in decode(env.storage.get(staged)) if "add" in a]
    assert len(paths) == 2  # each of the two files is rewritten with row 1 kept
    if faulty:
        assert len(set(paths)) == 1  # two adds of one path in one commit
    else:
        assert len(set(paths)) == 2
        assert [r["id"] for r in client.read("t").rows] == [1, 1]


@pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (v.PublishLatin1TextTarget, True)])
def test_publish_latin1_text(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    env = make_env(tmp_path)
    cat = catalog_of(env)
    client = client_of(target_cls, cat, env)
    client.create_table("t")
    client.append("t", rows(1))
    ict = client.next_ict(None) + 10
    ratified = stage_commit(
        cat, env, 2, [peer_info(ict, operation="WRITE", operationParameters={"comment": "café für Zoë"})], raw_utf8=True
    )
    client.publish("t")
    published = env.storage.get(f"{log_of(cat)}/{2:020d}.json")
    if faulty:
        assert published != ratified
        comment = decode(published)[0]["commitInfo"]["operationParameters"]["comment"]
        assert comment != "café für Zoë"
    else:
        assert published == ratified
    assert env.storage.get(f"{log_of(cat)}/{1:020d}.json") is not None  # ASCII commits are fine either way


@pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (v.CompactionReadsPublishedTarget, True)])
def test_compaction_reads_published(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    env = make_env(tmp_path)
    cat = catalog_of(env)
    setup = ResilientClient(cat, env.storage)
    setup.create_table("t")
    setup.append("t", rows(1))
    setup.publish("t")  # v1 published, forgotten by the catalog
    setup.append("t", rows(2))  # v2 ratified, held by the catalog
    tid = cat.resolve("t").table_id
    held = cat.get_commits(tid, 2, 2).commits[0]
    assert held.staged_uri is not None
    real = [a["add"]["path"] for a in decode(env.storage.get(held.staged_uri)) if "add" in a]
    log = log_of(cat)
    # A foreign file at _delta_log/2.json that is not the ratified commit: the catalog's commit is authoritative.
    stray = encode(
        [
            peer_info(1, operation="WRITE"),
            {
                "add": {
                    "path": "part-stray.parquet",
                    "partitionValues": {},
                    "size": 1,
                    "modificationTime": 1,
                    "dataChange": True,
                }
            },
        ]
    )
    env.storage.put(f"{log}/{2:020d}.json", stray, if_absent=True)
    client = client_of(target_cls, cat, env)
    assert client.compact_log("t", 1, 2)
    body = decode(env.storage.get(f"{log}/{1:020d}.{2:020d}.compacted.json"))
    paths = {a["add"]["path"] for a in body if "add" in a}
    if faulty:
        assert "part-stray.parquet" in paths
        assert real[0] not in paths
    else:
        assert real[0] in paths
        assert "part-stray.parquet" not in paths


# ---------------------------------------------------------------- reading clients


@pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (v.ListStopsAtUnknownTarget, True)])
def test_list_stops_at_unknown(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    env = make_env(tmp_path)
    cat = catalog_of(env)
    setup = ResilientClient(cat, env.storage)
    setup.create_table("t")
    for i in range(1, 5):
        setup.append("t", rows(i))
    setup.publish("t")  # every commit published; the catalog holds none
    assert setup.compact_log("t", 2, 3)
    client = client_of(target_cls, cat, env)
    if faulty:
        with pytest.raises(ReadError):
            client.read("t")
    else:
        result = client.read("t")
        assert (result.version, [r["id"] for r in result.rows]) == (4, [1, 2, 3, 4])


def _write_two_part_checkpoint(setup: ResilientClient, env: TargetEnv, version: int) -> None:
    info = setup.catalog.resolve("t")
    view = setup.view(info)
    snap = setup.snapshot(view, version)
    adds = [{"add": {k: a.get(k) for k in _CHECKPOINT_SCHEMA.field("add").type.names}} for a in snap.files.values()]
    parts: list[list[dict[str, Any]]] = [
        [{"protocol": snap.protocol}, {"metaData": snap.metadata}, *adds[:-1]],
        adds[-1:],
    ]
    for i, part in enumerate(parts, start=1):
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(part, schema=_CHECKPOINT_SCHEMA), buf)
        uri = f"{info.location}/_delta_log/{version:020d}.checkpoint.{i:010d}.{len(parts):010d}.parquet"
        env.storage.put(uri, buf.getvalue(), if_absent=True)


@pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (v.MultipartCheckpointOnePartTarget, True)])
def test_multipart_checkpoint_one_part(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    env = make_env(tmp_path)
    cat = catalog_of(env)
    setup = ResilientClient(cat, env.storage)
    setup.create_table("t")
    for i in range(1, 4):
        setup.append("t", rows(i))
    setup.publish("t")
    _write_two_part_checkpoint(setup, env, 3)  # as an engine writes a checkpoint in parts
    client = client_of(target_cls, cat, env)
    result = client.read("t")
    assert result.version == 3
    ids = [r["id"] for r in result.rows]
    if faulty:
        assert len(ids) == 1  # only the last part's file
    else:
        assert ids == [1, 2, 3]


@pytest.mark.parametrize(("target_cls", "faulty"), [(DurableTarget, False), (v.CatalogAboveLogWatermarkTarget, True)])
def test_catalog_above_log_watermark(tmp_path: Path, target_cls: type[DurableTarget], faulty: bool) -> None:
    env = make_env(tmp_path)
    cat = catalog_of(env)
    setup = ResilientClient(cat, env.storage)
    setup.create_table("t")
    setup.append("t", rows(1))
    setup.publish("t")
    setup.append("t", rows(2))  # v2 ratified, not published
    # A version checksum file for v2 before its publication (RFC "Maintenance Operations" allows it).
    crc = {"tableSizeBytes": 0, "numFiles": 2, "numMetadata": 1, "numProtocol": 1}
    env.storage.put(f"{log_of(cat)}/{2:020d}.crc", json.dumps(crc).encode(), if_absent=True)
    client = client_of(target_cls, cat, env)
    if faulty:
        with pytest.raises(ReadError):
            client.read("t")
    else:
        result = client.read("t")
        assert (result.version, [r["id"] for r in result.rows]) == (2, [1, 2])


def test_variants_are_documented() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names)) == 8
    for x in v.VARIANTS:
        assert x.name.startswith(("cr17b-wrt-", "cr17b-rdr-"))
        assert x.side == "client"
        assert x.profile == ("delta-cm-writer" if "-wrt-" in x.name else "delta-cm-reader")
        assert x.level == "MUST"
        assert x.doc.startswith(x.name)
        for rule in x.rules:
            assert rule in x.doc
        assert x.target.startswith("tests.cleanroom_r17b.variants:")
