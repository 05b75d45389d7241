"""Every round-4 clean-room variant misbehaves where the correct baseline does not.

Each scenario runs in process, on ``MemoryStorage`` and a tmp_path for the catalog's state, against a
target: it returns True when the target behaved as the RFC asks. The baseline ``DurableTarget`` must
give True and the variant False, on the same scenario. No lakecert, no network.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import (
    CatalogError,
    CatalogTimeout,
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    MaintenancePolicy,
    TableInfo,
)
from conformance.contract.target import TargetEnv, declared_limits
from tests.cleanroom.client import decode, encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant
from tests.cleanroom_r4.variants import VARIANTS

WAREHOUSE = "mem://wh"
DAY_MS = 86_400_000
ALL_OPS = frozenset({"checkpoint", "log_compaction", "checksum", "metadata_cleanup", "vacuum"})
_PUBLISHED = re.compile(r"/_delta_log/(\d{20})\.json$")
_STAGED_NAME = re.compile(r"/_delta_log/_staged_commits/(\d{20})\.[^/]+\.json$")


# ---------------------------------------------------------------- helpers


def env_for(tmp: Path, storage: MemoryStorage | None = None) -> TargetEnv:
    tmp.mkdir(parents=True, exist_ok=True)
    return TargetEnv(workdir=tmp, warehouse_uri=WAREHOUSE, storage=storage or MemoryStorage())


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def row(i: int) -> dict[str, object]:
    return {"id": i, "value": f"v{i}"}


def ids(rows: list[dict[str, object]]) -> list[object]:
    return [r["id"] for r in rows]


def body(ict: int, *actions: dict[str, Any]) -> bytes:
    info = {"inCommitTimestamp": ict, "timestamp": ict, "operation": "WRITE", "txnId": str(uuid.uuid4())}
    return encode([{"commitInfo": info}, *actions])


def fake_add(path: str) -> dict[str, Any]:
    return {"add": {"path": path, "partitionValues": {}, "size": 1, "modificationTime": 0, "dataChange": True}}


def stage(storage: MemoryStorage, location: str, version: int, content: bytes, uid: str | None = None) -> str:
    uri = f"{location}/_delta_log/_staged_commits/{version:020d}.{uid or uuid.uuid4()}.json"
    storage.put(uri, content, if_absent=True)
    return uri


def raw_commit(
    cat: Any, storage: MemoryStorage, info: TableInfo, version: int, content: bytes | None = None, **kw: Any
) -> str:
    """A rival's (or lakecert's) proposal: a staged file written directly and proposed."""
    content = content if content is not None else body(now_ms())
    uri = stage(storage, info.location, version, content)
    cat.commit(
        info.table_id,
        version,
        staged_uri=uri,
        in_commit_timestamp=decode(content)[0]["commitInfo"]["inCommitTimestamp"],
        **kw,
    )
    return uri


def new_table(cat: Any, storage: MemoryStorage, name: str = "t") -> TableInfo:
    ResilientClient(cat, storage).create_table(name)
    info: TableInfo = cat.resolve(name)
    return info


def commit_bytes(cat: Any, storage: MemoryStorage, info: TableInfo, version: int) -> bytes:
    """The ratified commit of ``version``: from the catalog while it stores it, else the published file."""
    for c in cat.get_commits(info.table_id, version, version).commits:
        if c.version == version:
            return c.inline_content if c.inline_content is not None else storage.get(c.staged_uri)
    return storage.get(f"{info.location}/_delta_log/{version:020d}.json")


def commit_info(cat: Any, storage: MemoryStorage, info: TableInfo, version: int) -> dict[str, Any]:
    first: dict[str, Any] = decode(commit_bytes(cat, storage, info, version))[0]["commitInfo"]
    return first


def listed(cat: Any, info: TableInfo, start: int | None = None, end: int | None = None) -> list[int]:
    return [c.version for c in cat.get_commits(info.table_id, start, end).commits]


def log_files(storage: MemoryStorage, info: TableInfo) -> list[str]:
    return [f.uri for f in storage.list(f"{info.location}/_delta_log/")]


class Nemesis:
    """Between a client and its catalog: loses answers, lets a rival in first, sets a policy, records."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.policy: MaintenancePolicy | None = None
        self.lose_marks = 0
        self.before_commit: Callable[[str, int], None] | None = None
        self.after_commit: Callable[[str, int], None] | None = None
        self.proposals: list[tuple[int, str | None]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def commit(self, table_id: str, version: int, **kw: Any) -> None:
        self.proposals.append((version, kw.get("staged_uri")))
        hook, self.before_commit = self.before_commit, None
        if hook is not None:
            hook(table_id, version)
        self.inner.commit(table_id, version, **kw)
        hook, self.after_commit = self.after_commit, None
        if hook is not None:
            hook(table_id, version)
            raise CatalogTimeout("the answer to the proposal was lost")

    def mark_published(self, table_id: str, version: int) -> None:
        self.inner.mark_published(table_id, version)
        if self.lose_marks:
            self.lose_marks -= 1
            raise CatalogTimeout("the answer to the publication mark was lost")

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        if self.policy is not None:
            return self.policy
        policy: MaintenancePolicy = self.inner.maintenance_policy(table_id)
        return policy


class RendezvousStagedStorage(MemoryStorage):
    """An object store whose first read of a staged commit waits for a second one to start (a slow
    remote store): a catalog that reads proposals outside its lock has two readers at once, whatever
    the machine's load; one that holds its lock never has, and goes on after ``WAIT_S``, once."""

    WAIT_S = 2.0

    def __init__(self) -> None:
        super().__init__()
        self._readers = 0
        self._count = threading.Lock()
        self._two = threading.Event()

    def get(self, uri: str) -> bytes:
        if "/_staged_commits/" in uri and not self._two.is_set():
            with self._count:
                self._readers += 1
                if self._readers >= 2:
                    self._two.set()
            if not self._two.wait(self.WAIT_S):
                self._two.set()  # no second reader: a serialising catalog, which nobody makes wait again
        return super().get(uri)


class RecordingStorage(MemoryStorage):
    def __init__(self) -> None:
        super().__init__()
        self.puts: list[str] = []

    def put(self, uri: str, data: bytes, *, if_absent: bool = False) -> None:
        super().put(uri, data, if_absent=if_absent)
        self.puts.append(uri)


def setup(
    target: DurableTarget, tmp: Path, storage: MemoryStorage | None = None
) -> tuple[TargetEnv, Any, MemoryStorage]:
    env = env_for(tmp, storage)
    return env, target.make_catalog(env), env.storage  # type: ignore[return-value]


# ---------------------------------------------------------------- catalog scenarios


def s_write_behind(target: DurableTarget, tmp: Path) -> bool:
    env, cat, _ = setup(target, tmp)
    client = target.make_client(cat, env)
    client.create_table("t")
    for i in range(1, 7):
        client.append("t", [row(i)])
    cat = target.restart_catalog(cat, env)
    info = cat.resolve("t")
    resp = cat.get_commits(info.table_id)
    if resp.latest_version != 6 or [c.version for c in resp.commits] != list(range(1, 7)):
        return False
    return target.make_client(cat, env).append("t", [row(7)]) == 7


def s_location_counter(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    for n in ("a", "b"):
        new_table(cat, storage, n)
    before = {cat.resolve(n).location for n in ("a", "b")}
    cat = target.restart_catalog(cat, env)
    after = [cat.create_staging_table().location for _ in range(3)]
    return len(set(after)) == 3 and not set(after) & before


def s_restart_casefold(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    for n in ("Caps", "caps"):
        new_table(cat, storage, n)
    before = {n: cat.resolve(n).location for n in ("Caps", "caps")}
    cat = target.restart_catalog(cat, env)
    after = {n: cat.resolve(n).location for n in ("Caps", "caps")}
    return before == after and before["Caps"] != before["caps"]


def s_first_page(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    info = new_table(cat, storage)
    for v in range(1, 11):
        raw_commit(cat, storage, info, v)
    try:
        readable = target.make_client(cat, env).read("t").version == 10
    except Exception:  # noqa: BLE001 - an unreadable latest version is the symptom
        readable = False
    return listed(cat, info) == list(range(1, 11)) and readable


def s_text_range(target: DurableTarget, tmp: Path) -> bool:
    _, cat, storage = setup(target, tmp)
    info = new_table(cat, storage)
    for v in range(1, 13):
        raw_commit(cat, storage, info, v)
    return listed(cat, info) == list(range(1, 13)) and listed(cat, info, 5, 11) == list(range(5, 12))


def s_piggyback_mark(target: DurableTarget, tmp: Path) -> bool:
    _, cat, storage = setup(target, tmp)
    info = new_table(cat, storage)
    for v in range(1, 7):
        raw_commit(cat, storage, info, v)
    for v in (1, 2):  # publication lags: only 1 and 2 are in _delta_log
        storage.put(f"{info.location}/_delta_log/{v:020d}.json", commit_bytes(cat, storage, info, v))
    raw_commit(cat, storage, info, 7, latest_published_version=2)
    return [v for v in listed(cat, info) if v > 2] == list(range(3, 8))


def s_unlocked_race(target: DurableTarget, tmp: Path) -> bool:
    _, cat, storage = setup(target, tmp, RendezvousStagedStorage())
    info = new_table(cat, storage)
    uris = [stage(storage, info.location, 1, body(now_ms())) for _ in range(6)]
    barrier = threading.Barrier(len(uris))
    acknowledged: list[str] = []

    def propose(uri: str) -> None:
        barrier.wait()
        try:
            cat.commit(info.table_id, 1, staged_uri=uri, in_commit_timestamp=now_ms())
            acknowledged.append(uri)
        except CommitConflict:
            pass

    threads = [threading.Thread(target=propose, args=(u,)) for u in uris]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    stored = cat.get_commits(info.table_id).commits
    return len(acknowledged) == 1 and [c.staged_uri for c in stored] == acknowledged


def s_inline_rebase(target: DurableTarget, tmp: Path) -> bool:
    _, cat, storage = setup(target, tmp)
    info = new_table(cat, storage)
    content = body(now_ms(), fake_add("part-once.parquet"))
    cat.commit(info.table_id, 1, inline_content=content, in_commit_timestamp=now_ms())
    with contextlib.suppress(CatalogError):  # the same proposal delivered a second time
        cat.commit(info.table_id, 1, inline_content=content, in_commit_timestamp=now_ms())
    resp = cat.get_commits(info.table_id)
    return bool(resp.latest_version == 1 and sum(c.inline_content == content for c in resp.commits) == 1)


def s_name_prefix(target: DurableTarget, tmp: Path) -> bool:
    _, cat, storage = setup(target, tmp)
    stem = "t" + "x" * 69
    a, b = stem + "a", stem + "b"
    created = []
    for n in (a, b):
        try:
            new_table(cat, storage, n)
            created.append(n)
        except InvalidRequest:
            pass  # a clean refusal is allowed
    locations = {n: cat.resolve(n).location for n in created}
    return len(set(locations.values())) == len(created)


def s_inline_truncate(target: DurableTarget, tmp: Path) -> bool:
    _, cat, storage = setup(target, tmp)
    info = new_table(cat, storage)
    content = body(now_ms(), *(fake_add(f"part-{i:05d}-{'p' * 60}.parquet") for i in range(1000)))
    assert len(content) > 100_000
    try:
        cat.commit(info.table_id, 1, inline_content=content, in_commit_timestamp=now_ms())
    except (InvalidRequest, CommitRejected):
        return bool(cat.get_commits(info.table_id).latest_version == 0)  # a clean refusal
    return [c.inline_content for c in cat.get_commits(info.table_id).commits] == [content]


def s_evicts(target: DurableTarget, tmp: Path) -> bool:
    _, cat, storage = setup(target, tmp)
    info = new_table(cat, storage)
    for v in range(1, 21):
        try:
            raw_commit(cat, storage, info, v)
        except (InvalidRequest, CommitRejected):
            break  # a clean refusal at the cap
    latest = cat.get_commits(info.table_id).latest_version
    return latest >= 1 and listed(cat, info) == list(range(1, latest + 1))


def s_declared_name_limit(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    declared = declared_limits(target).name_length  # type: ignore[arg-type]
    limit = declared or 64
    at = "n" * limit
    try:
        new_table(cat, storage, at)
    except InvalidRequest:
        return False
    if declared is None:
        return True
    try:
        new_table(cat, storage, "m" * (limit + 1))
    except InvalidRequest:
        return True
    return False


def s_conflict_latest(target: DurableTarget, tmp: Path) -> bool:
    _, cat, storage = setup(target, tmp)
    info = new_table(cat, storage)
    for v in range(1, 6):
        raw_commit(cat, storage, info, v)
    try:
        raw_commit(cat, storage, info, 3)
    except CommitConflict as conflict:
        return conflict.latest_version in (None, 5)
    return False


def s_bounded_latest(target: DurableTarget, tmp: Path) -> bool:
    _, cat, storage = setup(target, tmp)
    info = new_table(cat, storage)
    for v in range(1, 6):
        raw_commit(cat, storage, info, v)
    return bool(cat.get_commits(info.table_id, 1, 2).latest_version == 5)


def s_staged_any_table(target: DurableTarget, tmp: Path) -> bool:
    _, cat, storage = setup(target, tmp)
    a, b = new_table(cat, storage, "a"), new_table(cat, storage, "b")
    foreign = stage(storage, b.location, 1, body(now_ms()))
    try:
        cat.commit(a.table_id, 1, staged_uri=foreign, in_commit_timestamp=now_ms())
    except CatalogError:
        return bool(cat.get_commits(a.table_id).latest_version == 0)
    return False


# ---------------------------------------------------------------- writer scenarios


def s_local_clock(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    client = target.make_client(cat, env)
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "IST-5:30"
    time.tzset()
    try:
        start = now_ms()
        client.create_table("t")
        client.append("t", [row(1)])
        end = now_ms()
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()
    info = cat.resolve("t")
    tolerance = 5 * 60_000
    return all(
        start - tolerance <= commit_info(cat, storage, info, v)["inCommitTimestamp"] <= end + tolerance for v in (0, 1)
    )


def s_skew(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    client = target.make_client(cat, env)
    client.create_table("t")
    info = cat.resolve("t")
    ahead = now_ms() + 400 * DAY_MS  # a peer whose clock is 400 days ahead
    raw_commit(cat, storage, info, 1, body(ahead))
    v = client.append("t", [row(1)])
    return bool(v == 2 and commit_info(cat, storage, info, 2)["inCommitTimestamp"] > ahead)


def s_txnid_unique(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    one, two = target.make_client(cat, env), target.make_client(cat, env)
    for client, name in ((one, "a"), (two, "b")):
        client.create_table(name)
        client.append(name, [row(1)])
        client.append(name, [row(2)])
    seen = []
    for name in ("a", "b"):
        info = cat.resolve(name)
        seen += [commit_info(cat, storage, info, v)["txnId"] for v in range(3)]
    return len(seen) == 6 and len(set(seen)) == 6


def s_publish_order(target: DurableTarget, tmp: Path) -> bool:
    storage = RecordingStorage()
    env, cat, _ = setup(target, tmp, storage)
    client = target.make_client(cat, env)
    client.create_table("t")
    info = cat.resolve("t")
    client.append("t", [row(1)])
    rival_add = ResilientClient(cat, storage).write_data(info.location, [row(2)])
    cat.commit(info.table_id, 2, inline_content=body(now_ms() + 1, rival_add), in_commit_timestamp=now_ms() + 1)
    client.append("t", [row(3)])
    storage.puts.clear()
    client.publish("t")
    order = [int(m.group(1)) for u in storage.puts if (m := _PUBLISHED.search(u))]
    return order == [1, 2, 3]


def s_lost_mark(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    nemesis = Nemesis(cat)
    client = target.make_client(nemesis, env)
    client.create_table("t")
    for i in range(1, 4):
        client.append("t", [row(i)])
    nemesis.lose_marks = 1
    with contextlib.suppress(CatalogTimeout):
        client.publish("t")
    try:
        result = ResilientClient(cat, storage).read("t")
    except Exception:  # noqa: BLE001 - a lost commit makes the table unreadable
        return False
    return result.version == 3 and ids(result.rows) == [1, 2, 3]


def s_lost_answer_published(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    nemesis = Nemesis(cat)
    client = target.make_client(nemesis, env)
    client.create_table("t")
    # the catalog ratifies the proposal, a prompt peer publishes it (the catalog drops it), the answer is lost
    nemesis.after_commit = lambda _tid, _v: ResilientClient(cat, storage).publish("t")
    try:
        v = client.append("t", [row(1)])
    except CatalogTimeout:
        return False
    info = cat.resolve("t")
    return v == 1 and cat.get_commits(info.table_id).latest_version == 1


def s_compaction_order(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    client = target.make_client(cat, env)
    client.create_table("t")
    for i in range(1, 10):
        client.append("t", [row(i)])
    assert client.delete("t", [9]) == 10  # removes the file v9 added
    client.publish("t")
    info = cat.resolve("t")
    if not client.compact_log("t", 5, 10):
        return False
    removed = {a["remove"]["path"] for a in decode(commit_bytes(cat, storage, info, 10)) if "remove" in a}
    compacted = decode(storage.get(f"{info.location}/_delta_log/{5:020d}.{10:020d}.compacted.json"))
    live = {a["add"]["path"] for a in compacted if "add" in a}
    return bool(removed) and not removed & live


def s_cleanup_staged_above(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    client = target.make_client(cat, env)
    client.create_table("t")
    for i in range(1, 4):
        client.append("t", [row(i)])
    client.publish("t")
    assert client.checkpoint("t") == 3
    for i in (4, 5):  # ratified, not published
        client.append("t", [row(i)])
    client.cleanup("t", 5)
    try:
        result = ResilientClient(cat, storage).read("t")
    except Exception:  # noqa: BLE001
        return False
    return result.version == 5 and ids(result.rows) == [1, 2, 3, 4, 5]


def s_cleanup_nearest(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    client = target.make_client(cat, env)
    client.create_table("t")
    for i in range(1, 7):
        client.append("t", [row(i)])
    client.publish("t")
    assert client.checkpoint("t") == 6
    client.cleanup("t", 5)  # no checkpoint at or before 5: nothing may go
    try:
        result = ResilientClient(cat, storage).read("t", version=3)
    except Exception:  # noqa: BLE001
        return False
    return ids(result.rows) == [1, 2, 3]


def s_cached_policy(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    nemesis = Nemesis(cat)
    client = target.make_client(nemesis, env)
    client.create_table("t")
    client.append("t", [row(1)])
    client.publish("t")
    assert client.checkpoint("t") == 1
    nemesis.policy = MaintenancePolicy(ALL_OPS - {"checkpoint"})  # the catalog tightens its policy
    client.append("t", [row(2)])
    client.publish("t")
    written = client.checkpoint("t")
    info = cat.resolve("t")
    return written is None and not any(u.endswith(f"{2:020d}.checkpoint.parquet") for u in log_files(storage, info))


def s_partial_policy(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    nemesis = Nemesis(cat)
    nemesis.policy = MaintenancePolicy(ALL_OPS - {"metadata_cleanup"})
    client = target.make_client(nemesis, env)
    client.create_table("t")
    for i in range(1, 4):
        client.append("t", [row(i)])
    client.publish("t")
    assert client.checkpoint("t") == 3
    info = cat.resolve("t")
    before = log_files(storage, info)
    client.cleanup("t", 3)
    return log_files(storage, info) == before


def _rival_first(cat: Any, storage: MemoryStorage, nemesis: Nemesis) -> None:
    """A rival's commit reaches the catalog just before the client's first proposal."""

    def rival(table_id: str, version: int) -> None:
        info = next(i for i in (cat.resolve("t"),) if i.table_id == table_id)
        raw_commit(cat, storage, info, version, body(now_ms()))

    nemesis.before_commit = rival


def s_accumulating_retry(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    nemesis = Nemesis(cat)
    client = target.make_client(nemesis, env)
    client.create_table("t")
    _rival_first(cat, storage, nemesis)
    v = client.append("t", [row(1)])
    info = cat.resolve("t")
    adds = Counter(a["add"]["path"] for a in decode(commit_bytes(cat, storage, info, v)) if "add" in a)
    return v == 2 and max(adds.values()) == 1


def s_staged_reuse(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    nemesis = Nemesis(cat)
    client = target.make_client(nemesis, env)
    client.create_table("t")
    _rival_first(cat, storage, nemesis)
    try:
        v = client.append("t", [row(1)])
    except CatalogError:
        return False
    named = [
        (version, int(m.group(1))) for version, uri in nemesis.proposals if uri and (m := _STAGED_NAME.search(uri))
    ]
    return v == 2 and len(named) == 2 and all(version == in_name for version, in_name in named)


# ---------------------------------------------------------------- reader scenarios


def s_published_wins(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    client = target.make_client(cat, env)
    client.create_table("t")
    client.append("t", [row(1)])
    client.append("t", [row(2)])
    info = cat.resolve("t")
    # a published file for v2 that is not what the catalog ratified (a faulty publisher wrote it)
    ict = commit_info(cat, storage, info, 2)["inCommitTimestamp"]
    storage.put(f"{info.location}/_delta_log/{2:020d}.json", body(ict))
    result = client.read("t")
    return result.version == 2 and ids(result.rows) == [1, 2]


def s_mtime_time_travel(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    client = target.make_client(cat, env)
    client.create_table("t")
    info = cat.resolve("t")
    icts = []
    for i in range(1, 4):
        client.append("t", [row(i)])
        icts.append(commit_info(cat, storage, info, i)["inCommitTimestamp"])
    while now_ms() <= icts[-1] + 1:  # the clock past the last commit, so the files are dated after it
        time.sleep(0.001)
    client.publish("t")  # published late: the files' modification times are after every commit
    try:
        result = client.read("t", timestamp_ms=icts[1])
    except Exception:  # noqa: BLE001
        return False
    return result.version == 2 and ids(result.rows) == [1, 2]


def s_above_latest(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    client = target.make_client(cat, env)
    client.create_table("t")
    client.append("t", [row(1)])
    info = cat.resolve("t")
    rogue = ResilientClient(cat, storage).write_data(info.location, [row(9)])
    storage.put(f"{info.location}/_delta_log/{2:020d}.json", body(now_ms(), rogue))  # a filesystem commit
    result = client.read("t")
    return result.version == 1 and ids(result.rows) == [1]


def s_staged_prefix(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    client = target.make_client(cat, env)
    client.create_table("t")
    client.append("t", [row(1)])
    info = cat.resolve("t")
    abandoned = ResilientClient(cat, storage).write_data(info.location, [row(99)])
    stage(storage, info.location, 2, body(now_ms(), abandoned), uid="00000000-0000-4000-8000-000000000000")
    assert client.append("t", [row(2)]) == 2
    result = client.read("t")
    return result.version == 2 and ids(result.rows) == [1, 2]


def s_first_list_page(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    info = new_table(cat, storage)
    last = 1005
    base = now_ms()
    data = ResilientClient(cat, storage).write_data(info.location, [row(7)])
    for v in range(1, last + 1):
        content = body(base + v, data) if v == last else body(base + v)
        raw_commit(cat, storage, info, v, content)
        storage.put(f"{info.location}/_delta_log/{v:020d}.json", content)
        if v % 100 == 0 or v == last:
            cat.mark_published(info.table_id, v)
    try:
        result = target.make_client(cat, env).read("t")
    except Exception:  # noqa: BLE001
        return False
    return result.version == last and ids(result.rows) == [7]


def s_inline_dropped(target: DurableTarget, tmp: Path) -> bool:
    env, cat, storage = setup(target, tmp)
    client = target.make_client(cat, env)
    client.create_table("t")
    client.append("t", [row(1)])
    info = cat.resolve("t")
    rival = ResilientClient(cat, storage).write_data(info.location, [row(2)])
    cat.commit(info.table_id, 2, inline_content=body(now_ms() + 1, rival), in_commit_timestamp=now_ms() + 1)
    try:
        result = client.read("t")
    except Exception:  # noqa: BLE001
        return False
    return result.version == 2 and ids(result.rows) == [1, 2]


# ---------------------------------------------------------------- the demonstrations

SCENARIOS: dict[str, Callable[[DurableTarget, Path], bool]] = {
    "cr4-catalog-write-behind": s_write_behind,
    "cr4-catalog-location-counter": s_location_counter,
    "cr4-catalog-restart-casefold": s_restart_casefold,
    "cr4-catalog-list-first-page": s_first_page,
    "cr4-catalog-list-text-range": s_text_range,
    "cr4-catalog-piggyback-mark": s_piggyback_mark,
    "cr4-catalog-unlocked-validation": s_unlocked_race,
    "cr4-catalog-inline-rebase": s_inline_rebase,
    "cr4-catalog-name-prefix-index": s_name_prefix,
    "cr4-catalog-inline-truncate": s_inline_truncate,
    "cr4-catalog-unpublished-evicts": s_evicts,
    "cr4-catalog-declared-name-limit": s_declared_name_limit,
    "cr4-catalog-conflict-watermark": s_conflict_latest,
    "cr4-catalog-bounded-latest": s_bounded_latest,
    "cr4-catalog-staged-any-table": s_staged_any_table,
    "cr4-writer-local-clock-utc": s_local_clock,
    "cr4-writer-skew-distrust": s_skew,
    "cr4-writer-txnid-counter": s_txnid_unique,
    "cr4-writer-publish-by-file-name": s_publish_order,
    "cr4-writer-rollback-lost-mark": s_lost_mark,
    "cr4-writer-lost-answer-listing-only": s_lost_answer_published,
    "cr4-writer-compaction-text-order": s_compaction_order,
    "cr4-writer-cleanup-staged-to-cutoff": s_cleanup_staged_above,
    "cr4-writer-cleanup-nearest-checkpoint": s_cleanup_nearest,
    "cr4-writer-cached-policy": s_cached_policy,
    "cr4-writer-cleanup-checkpoint-permit": s_partial_policy,
    "cr4-writer-retry-accumulates-adds": s_accumulating_retry,
    "cr4-writer-reuse-staged-file": s_staged_reuse,
    "cr4-reader-published-wins": s_published_wins,
    "cr4-reader-mtime-time-travel": s_mtime_time_travel,
    "cr4-reader-published-proves-latest": s_above_latest,
    "cr4-reader-staged-by-prefix": s_staged_prefix,
    "cr4-reader-first-list-page": s_first_list_page,
    "cr4-reader-drops-inline": s_inline_dropped,
}


def load(variant: Variant) -> type[DurableTarget]:
    module, _, cls = variant.target.partition(":")
    found: type[DurableTarget] = getattr(importlib.import_module(module), cls)
    return found


def test_the_list_is_well_formed() -> None:
    assert len(VARIANTS) >= 18
    assert len({v.name for v in VARIANTS}) == len(VARIANTS)
    assert set(SCENARIOS) == {v.name for v in VARIANTS}
    sides = Counter(v.side for v in VARIANTS)
    assert abs(sides["catalog"] - sides["client"]) <= len(VARIANTS) // 4
    for v in VARIANTS:
        cls = load(v)
        assert issubclass(cls, DurableTarget) and cls is not DurableTarget
        assert cls.name == v.name and v.name.startswith("cr4-")
        assert v.doc == cls.__doc__ and v.doc
        assert v.level in ("MUST", "SHOULD")
        assert v.rules and all(re.fullmatch(r"(NEW )?(CAT|WRT|RDR)-[A-Z0-9-]+.*", r) for r in v.rules)
        prefix = {"delta-cm-catalog": "CAT-", "delta-cm-writer": "WRT-", "delta-cm-reader": "RDR-"}[v.profile]
        assert all(r.removeprefix("NEW ").startswith(prefix) for r in v.rules)
        if v.side == "catalog":
            assert v.profile == "delta-cm-catalog" and cls.client_cls is DurableTarget.client_cls
            assert cls.catalog_cls is not DurableTarget.catalog_cls
        else:
            assert v.profile in ("delta-cm-writer", "delta-cm-reader") and cls.catalog_cls is DurableTarget.catalog_cls
            assert cls.client_cls is not DurableTarget.client_cls


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A private directory for the catalogs' state files (plain tempfile: no basetemp housekeeping)."""
    with tempfile.TemporaryDirectory(prefix="cr4-") as d:
        yield Path(d)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_variant_misbehaves_where_the_baseline_does_not(variant: Variant, scratch: Path) -> None:
    scenario = SCENARIOS[variant.name]
    assert scenario(DurableTarget(), scratch / "baseline"), f"the baseline fails the scenario of {variant.name}"
    assert not scenario(load(variant)(), scratch / "variant"), f"{variant.name} passes its own scenario"
