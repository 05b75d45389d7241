"""Round 7: each faulty variant misbehaves in process where the durable baseline does not.

Fast and deterministic: in-memory storage, no sleeps, no wall-clock limits. Every test runs one
scenario against the baseline (``DurableTarget``'s parts) and against the variant and compares.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.contract.delta import (
    Catalog,
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    TableInfo,
    TableNotFound,
)
from conformance.contract.target import TargetEnv
from tests.cleanroom.client import CleanClient, ReadError, encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r7 import variants as r7

# ---------------------------------------------------------------- helpers


class Rig:
    """A target built on its own in-memory store and state directory."""

    def __init__(self, target_cls: type[DurableTarget], workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.target = target_cls()
        self.storage = MemoryStorage()
        self.env = TargetEnv(workdir=workdir, warehouse_uri="mem://wh", storage=self.storage)
        self.catalog: Catalog = self.target.make_catalog(self.env)

    def client(self) -> CleanClient:
        client = self.target.make_client(self.catalog, self.env)
        assert isinstance(client, CleanClient)
        return client

    def baseline_client(self) -> ResilientClient:
        return ResilientClient(self.catalog, self.storage)

    def table(self, name: str = "t") -> TableInfo:
        self.baseline_client().create_table(name)
        return self.catalog.resolve(name)

    def stage(self, info: TableInfo, version: int, content: bytes | None = None, folder: str | None = None) -> str:
        folder = folder or f"{info.location}/_delta_log/_staged_commits"
        uri = f"{folder}/{version:020d}.{uuid.uuid4()}.json"
        self.storage.put(uri, content or commit_bytes(version))
        return uri

    def propose(self, info: TableInfo, version: int, ict: int | None = None, **kwargs: Any) -> None:
        uri = self.stage(info, version)
        self.catalog.commit(info.table_id, version, staged_uri=uri, in_commit_timestamp=ict or version, **kwargs)

    def listed(self, info: TableInfo) -> list[int]:
        return [c.version for c in self.catalog.get_commits(info.table_id).commits]

    def ict(self, info: TableInfo, version: int) -> int:
        (c,) = [c for c in self.catalog.get_commits(info.table_id, version, version).commits if c.version == version]
        assert c.in_commit_timestamp is not None
        return c.in_commit_timestamp

    def commit_content(self, info: TableInfo, version: int) -> list[dict[str, Any]]:
        published = f"{info.location}/_delta_log/{version:020d}.json"
        if self.storage.exists(published):
            data = self.storage.get(published)
        else:
            (c,) = [c for c in self.catalog.get_commits(info.table_id, version, version).commits]
            data = c.inline_content if c.inline_content is not None else self.storage.get(str(c.staged_uri))
        return [json.loads(line) for line in data.decode().splitlines() if line.strip()]


def commit_bytes(version: int, actions: int = 1) -> bytes:
    first = {"commitInfo": {"inCommitTimestamp": version, "txnId": str(uuid.uuid4())}}
    adds = [{"add": {"path": f"f{version}-{i}.parquet", "size": 1, "dataChange": True}} for i in range(actions - 1)]
    return encode([first, *adds])


def rigs(tmp_path: Path, variant: type[DurableTarget], baseline: type[DurableTarget] = r7.R7Target) -> Iterator[Rig]:
    yield Rig(baseline, tmp_path / "baseline")
    yield Rig(variant, tmp_path / "variant")


def ids(rows: list[dict[str, object]]) -> list[object]:
    return [r["id"] for r in rows]


# ---------------------------------------------------------------- the list


def test_variants_are_listed_well() -> None:
    assert len(r7.VARIANTS) >= 18
    assert len({v.name for v in r7.VARIANTS}) == len(r7.VARIANTS)
    assert sum(v.side == "catalog" for v in r7.VARIANTS) >= 7
    assert sum(v.side == "client" for v in r7.VARIANTS) >= 7
    assert len({d for v in r7.VARIANTS for d in v.dimensions}) >= 7
    for v in r7.VARIANTS:
        module, cls_name = v.target.split(":")
        cls = getattr(r7, cls_name)
        assert module == r7.__name__ and issubclass(cls, DurableTarget)
        assert v.name.startswith("cr7-") and v.level in {"MUST", "SHOULD"} and v.doc == cls.__doc__
        sides = (cls.catalog_cls is not DurableCatalog, cls.client_cls is not ResilientClient)
        assert sides == ((True, False) if v.side == "catalog" else (False, True))
        assert v.rules and all(re.fullmatch(r"(CAT|WRT|RDR|INT)(-[A-Z]+)+", r) for r in v.rules)


# ---------------------------------------------------------------- catalog faults


def test_page_boundary_duplicate(tmp_path: Path) -> None:
    seen = []
    for rig in rigs(tmp_path, r7.PageBoundaryDuplicateTarget):
        info = rig.table()
        for v in range(1, 11):
            rig.propose(info, v)
        seen.append(rig.listed(info))
    assert seen[0] == list(range(1, 11))
    assert seen[1] != list(range(1, 11)) and seen[1].count(8) == 2  # v8 closes page 1 and opens page 2


def test_cap_counted_across_tables(tmp_path: Path) -> None:
    refused = []
    for rig in rigs(tmp_path, r7.CapAcrossTablesTarget):
        a, b = rig.table("a"), rig.table("b")
        for v in range(1, 7):
            rig.propose(a, v)
        for v in range(1, 5):
            rig.propose(b, v)
        try:
            rig.propose(b, 5)  # table b holds 4 unpublished commits: far below the declared cap of 10
            refused.append(False)
        except CommitRejected:
            refused.append(True)
    assert r7.CapAcrossTablesTarget().catalog_limits().unpublished == 10
    assert refused == [False, True]


def test_cap_refused_as_conflict(tmp_path: Path) -> None:
    answers = []
    for rig in rigs(tmp_path, r7.CapRefusedAsConflictTarget):
        info = rig.table()
        for v in range(1, 11):
            rig.propose(info, v)
        try:
            rig.propose(info, 11)
            answers.append("ratified")
        except CommitConflict as e:
            answers.append(f"conflict latest={e.latest_version}")
        assert rig.catalog.get_commits(info.table_id).latest_version == (11 if answers[-1] == "ratified" else 10)
    assert answers == ["ratified", "conflict latest=10"]  # version 11 is free, yet "taken"


def test_mark_as_count(tmp_path: Path) -> None:
    seen = []
    for rig in rigs(tmp_path, r7.MarkAsCountTarget):
        info = rig.table()
        for v in range(1, 11):
            rig.propose(info, v)
        rig.catalog.mark_published(info.table_id, 3)
        rig.catalog.mark_published(info.table_id, 5)
        seen.append(rig.listed(info))
    assert seen == [[6, 7, 8, 9, 10], [9, 10]]  # 6, 7, 8 were never published


def test_mark_clamped(tmp_path: Path) -> None:
    seen = []
    for rig in rigs(tmp_path, r7.MarkClampedTarget):
        info = rig.table()
        for v in range(1, 4):
            rig.propose(info, v)
        with contextlib.suppress(InvalidRequest):
            rig.catalog.mark_published(info.table_id, 10)
        seen.append(rig.listed(info))
    assert seen == [[1, 2, 3], []]


@pytest.fixture
def india_time() -> Iterator[None]:
    old = os.environ.get("TZ")
    os.environ["TZ"] = "IST-5:30"
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()


def test_ict_naive_datetime(tmp_path: Path, india_time: None) -> None:
    ict = 1_764_370_000_123
    served = []
    for rig in rigs(tmp_path, r7.NaiveIctTarget):
        info = rig.table()
        rig.propose(info, 1, ict=ict)
        served.append(rig.ict(info, 1))
    assert served == [ict, ict + 19_800_000]  # 5 h 30 min ahead


def test_ict_naive_datetime_is_exact_in_utc(tmp_path: Path) -> None:
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        rig = Rig(r7.NaiveIctTarget, tmp_path)
        info = rig.table()
        rig.propose(info, 1, ict=1_764_370_000_123)
        assert rig.ict(info, 1) == 1_764_370_000_123  # why a UTC-only suite misses it
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()


def test_drop_not_durable(tmp_path: Path) -> None:
    resolved = []
    for rig in rigs(tmp_path, r7.DropNotDurableTarget, baseline=r7.DurableDropTarget):
        old = rig.table("t")
        drop = getattr(rig.catalog, "drop_table")  # noqa: B009 - optional DroppingCatalog member
        drop("t")
        new = rig.table("t")
        assert rig.catalog.resolve("t").table_id == new.table_id  # right until the restart
        restarted = rig.target.restart_catalog(rig.catalog, rig.env)
        got = restarted.resolve("t").table_id
        resolved.append("new" if got == new.table_id else "old" if got == old.table_id else got)
    assert resolved == ["new", "old"]


def test_stale_proposal_rejected(tmp_path: Path) -> None:
    answers = []
    for rig in rigs(tmp_path, r7.StaleProposalRejectedTarget):
        info = rig.table()
        for v in range(1, 4):
            rig.propose(info, v)
        rig.catalog.mark_published(info.table_id, 3)
        try:
            rig.propose(info, 2)
        except CommitConflict:
            answers.append("conflict")
        except CommitRejected:
            answers.append("rejected")
    assert answers == ["conflict", "rejected"]


def test_actions_counted_by_newline(tmp_path: Path) -> None:
    rig = Rig(r7.CommitActionsByNewlineTarget, tmp_path)
    limit = r7.CommitActionsByNewlineTarget().catalog_limits().commit_actions
    assert limit == 64
    info = rig.table()
    with_newline = commit_bytes(1, actions=limit + 1)
    with pytest.raises(CommitRejected):  # one past the limit, ending in a newline: refused, right
        rig.catalog.commit(info.table_id, 1, inline_content=with_newline, in_commit_timestamp=1)
    without = with_newline.rstrip(b"\n")
    rig.catalog.commit(info.table_id, 1, inline_content=without, in_commit_timestamp=1)  # BUG: ratified
    (c,) = rig.catalog.get_commits(info.table_id).commits
    assert c.inline_content is not None and len(c.inline_content.splitlines()) == limit + 1
    assert r7.R7Target().catalog_limits().commit_actions is None  # the baseline declares no such limit


def test_staged_prefix_casefold(tmp_path: Path) -> None:
    answers = []
    for rig in rigs(tmp_path, r7.StagedPrefixCasefoldTarget):
        info = rig.table()
        uri = rig.stage(info, 1, folder=f"{info.location}/_DELTA_LOG/_Staged_Commits")
        try:
            rig.catalog.commit(info.table_id, 1, staged_uri=uri, in_commit_timestamp=1)
            answers.append("ratified")
        except InvalidRequest:
            answers.append("refused")
        assert rig.catalog.get_commits(info.table_id).latest_version == (1 if answers[-1] == "ratified" else 0)
    assert answers == ["refused", "ratified"]


def test_name_nfc_key(tmp_path: Path) -> None:
    rig = Rig(r7.NameNfcKeyTarget, tmp_path)
    nfd = unicodedata.normalize("NFD", "café")
    nfc = unicodedata.normalize("NFC", "café")
    assert nfd != nfc
    rig.table(nfc)  # typed in NFC: resolves
    with pytest.raises(InvalidRequest):  # the pair is one name: refusing the second is allowed
        rig.table(nfd)
    other = Rig(r7.NameNfcKeyTarget, tmp_path / "other")
    other.baseline_client().create_table(nfd)  # accepted ...
    with pytest.raises(TableNotFound):
        other.catalog.resolve(nfd)  # ... and never resolves by its own name
    baseline = Rig(r7.R7Target, tmp_path / "baseline")
    with pytest.raises(InvalidRequest):  # the baseline refuses non-ASCII names cleanly
        baseline.baseline_client().create_table(nfd)


# ---------------------------------------------------------------- client faults


def test_delete_per_id_removes_twice(tmp_path: Path) -> None:
    counts = []
    for rig in rigs(tmp_path, r7.DeletePerIdTarget):
        info = rig.table()
        client = rig.client()
        client.append("t", [{"id": 1, "value": "a"}, {"id": 2, "value": "b"}, {"id": 3, "value": "c"}])
        v = client.delete("t", [1, 2])
        paths = [a["remove"]["path"] for a in rig.commit_content(info, v) if "remove" in a]
        counts.append(max(paths.count(p) for p in paths))
        assert ids(client.read("t").rows) == [3]  # the rows are right either way
    assert counts == [1, 2]


def racing_client(rig: Rig, rival: CleanClient) -> CleanClient:
    """A client of the rig's target whose first proposal is overtaken by ``rival``'s commit of that version."""
    fired: list[bool] = []

    class Racing(type(rival)):  # type: ignore[misc]
        def before_propose(self, log: str, version: int, content: bytes) -> None:
            if not fired:
                fired.append(True)
                rival.append("t", [{"id": 2, "value": "rival"}])  # commits this very version first

    return Racing(rig.catalog, rig.storage)


def test_staged_name_deterministic_loses_a_write(tmp_path: Path) -> None:
    seen = []
    for rig in rigs(tmp_path, r7.DeterministicStagedNameTarget):
        rig.table()
        mine = racing_client(rig, rig.client())
        v = mine.append("t", [{"id": 1, "value": "mine"}])
        seen.append((v, ids(rig.baseline_client().read("t").rows)))
    assert seen[0] == (2, [1, 2])
    assert seen[1] == (1, [2])  # reported as version 1, which holds the rival's row: id 1 is lost


class AheadClient(ResilientClient):
    """A peer whose clock is a day ahead."""

    def now_ms(self) -> int:
        return super().now_ms() + 86_400_000


def test_ict_from_published_goes_backwards(tmp_path: Path) -> None:
    ordered = []
    for rig in rigs(tmp_path, r7.IctFromPublishedTarget):
        info = rig.table()
        writer = rig.client()
        AheadClient(rig.catalog, rig.storage).append("t", [{"id": 1, "value": "peer"}])  # v1, unpublished
        v = writer.append("t", [{"id": 2, "value": "me"}])
        ordered.append(rig.ict(info, v) > rig.ict(info, v - 1))
    assert ordered == [True, False]


def test_checkpoint_holds_latest_state(tmp_path: Path) -> None:
    rows_at_2 = []
    for rig in rigs(tmp_path, r7.CheckpointLatestStateTarget):
        rig.table()
        client = rig.client()
        client.append("t", [{"id": 1, "value": "a"}])
        client.append("t", [{"id": 2, "value": "b"}])
        client.publish("t")
        client.append("t", [{"id": 3, "value": "c"}])  # v3, ratified, unpublished
        assert client.checkpoint("t") == 2
        rows_at_2.append(ids(rig.baseline_client().read("t", version=2).rows))
    assert rows_at_2 == [[1, 2], [1, 2, 3]]


def test_compaction_drops_outer_removes(tmp_path: Path) -> None:
    found = []
    for rig in rigs(tmp_path, r7.CompactionDropsOuterRemovesTarget):
        info = rig.table()
        client = rig.client()
        client.append("t", [{"id": 1, "value": "a"}])  # v1 adds file F1
        client.append("t", [{"id": 2, "value": "b"}])  # v2
        client.delete("t", [1])  # v3 removes F1
        client.publish("t")
        (f1,) = [a["add"]["path"] for a in rig.commit_content(info, 1) if "add" in a]
        assert client.compact_log("t", 2, 3)
        uri = f"{info.location}/_delta_log/{2:020d}.{3:020d}.compacted.json"
        actions = [json.loads(line) for line in rig.storage.get(uri).decode().splitlines()]
        found.append(any(a.get("remove", {}).get("path") == f1 for a in actions))
    assert found == [True, False]


def test_compaction_of_ratified_range(tmp_path: Path) -> None:
    written = []
    for rig in rigs(tmp_path, r7.CompactionOfRatifiedTarget):
        info = rig.table()
        client = rig.client()
        client.append("t", [{"id": 1, "value": "a"}])
        client.append("t", [{"id": 2, "value": "b"}])  # v1, v2: ratified, unpublished
        done = client.compact_log("t", 1, 2)
        uri = f"{info.location}/_delta_log/{1:020d}.{2:020d}.compacted.json"
        written.append((done, rig.storage.exists(uri), rig.storage.exists(f"{info.location}/_delta_log/{2:020d}.json")))
    assert written == [(False, False, False), (True, True, False)]


def test_cleanup_keeps_staged_commits(tmp_path: Path) -> None:
    left = []
    for rig in rigs(tmp_path, r7.CleanupSkipsStagedDirTarget):
        info = rig.table()
        client = rig.client()
        for i in range(1, 4):
            client.append("t", [{"id": i, "value": "x"}])
        client.publish("t")
        assert client.checkpoint("t") == 3
        client.cleanup("t", 3)
        left.append(len(rig.storage.list(f"{info.location}/_delta_log/_staged_commits/")))
    assert left == [0, 3]


def test_timeline_published_only(tmp_path: Path) -> None:
    resolved = []
    for rig in rigs(tmp_path, r7.TimelinePublishedOnlyTarget):
        info = rig.table()
        client = rig.client()
        client.append("t", [{"id": 1, "value": "a"}])
        client.publish("t")
        client.append("t", [{"id": 2, "value": "b"}])  # v2, unpublished
        resolved.append(client.read("t", timestamp_ms=rig.ict(info, 2)).version)
    assert resolved == [2, 1]


def test_timeline_from_checkpoint(tmp_path: Path) -> None:
    resolved: list[int | None] = []
    for rig in rigs(tmp_path, r7.TimelineFromCheckpointTarget):
        info = rig.table()
        client = rig.client()
        client.append("t", [{"id": 1, "value": "a"}])
        client.append("t", [{"id": 2, "value": "b"}])
        client.publish("t")
        assert client.checkpoint("t") == 2
        client.append("t", [{"id": 3, "value": "c"}])
        ict2 = [a for a in rig.commit_content(info, 2) if "commitInfo" in a][0]["commitInfo"]["inCommitTimestamp"]
        assert client.read("t", version=2).version == 2  # readable by version either way
        try:
            resolved.append(client.read("t", timestamp_ms=ict2).version)
        except ReadError:
            resolved.append(None)
    assert resolved == [2, None]


def later(clock: Callable[[], int], seconds: int) -> Callable[[], int]:
    return lambda: clock() + seconds * 10**9


def test_session_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    late = []
    for rig in rigs(tmp_path, r7.SessionClockTarget):
        info = rig.table()
        client = rig.client()
        monkeypatch.setattr(time, "time_ns", later(time.time_ns, 600))  # ten minutes on
        now = time.time_ns() // 1_000_000
        v = client.append("t", [{"id": 1, "value": "a"}])
        monkeypatch.undo()
        late.append(now - rig.ict(info, v) > 300_000)  # more than the 5 minutes the oracle allows
    assert late == [False, True]


def test_publish_watermark_per_client(tmp_path: Path) -> None:
    outcomes = []
    for rig in rigs(tmp_path, r7.PublishWatermarkPerClientTarget):
        a, b = rig.table("a"), rig.table("b")
        client = rig.client()
        for i in range(5):
            client.append("a", [{"id": i, "value": "a"}])
        client.publish("a")
        for i in range(7):
            client.append("b", [{"id": i, "value": "b"}])
        client.publish("b")
        published = [v for v in range(8) if rig.storage.exists(f"{b.location}/_delta_log/{v:020d}.json")]
        try:
            readable = len(rig.baseline_client().read("b").rows)
        except ReadError:
            readable = -1
        outcomes.append((published, readable))
        assert a.table_id != b.table_id
    assert outcomes[0] == (list(range(8)), 7)
    assert outcomes[1] == ([0, 6, 7], -1)  # v6 published before v1..v5, which the catalog then dropped


def test_compaction_skips_gap(tmp_path: Path) -> None:
    rows = []
    for rig in rigs(tmp_path, r7.CompactionSkipsGapTarget):
        rig.table()
        writer = rig.baseline_client()
        for i in range(1, 5):
            writer.append("t", [{"id": i, "value": "x"}])
        writer.publish("t")
        assert writer.compact_log("t", 3, 4)  # a correct compaction file of v3..v4
        reader = rig.client()
        rows.append((ids(reader.read("t").rows), ids(reader.read("t", version=2).rows)))
    assert rows[0] == ([1, 2, 3, 4], [1, 2])
    assert rows[1] == ([3, 4], [1, 2])  # v0..v2 skipped at the latest version; right below the range
