"""Each round-7b variant misbehaves, in process, where the correct durable baseline does not.

Fast, no lakecert, no sleeps: a ``MemoryStorage``, the target's own ``make_catalog``/``make_client``
and, for restarts, its ``restart_catalog``."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, cast
from urllib.parse import urlsplit

import pytest

from conformance.contract.delta import (
    Catalog,
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    TableNotFound,
)
from conformance.contract.target import Target, TargetEnv, declared_limits
from tests.cleanroom.client import CleanClient, ReadError, decode, encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r7b import variants as v

WAREHOUSE = "file:///warehouse"
DAY_MS = 86_400_000


class Rig:
    """One target with its environment, its catalog and clients."""

    def __init__(self, target: DurableTarget, tmp: Path) -> None:
        self.target = target
        self.env = TargetEnv(workdir=tmp, warehouse_uri=WAREHOUSE, storage=MemoryStorage())
        self.storage = self.env.storage
        self.catalog: Catalog = target.make_catalog(self.env)

    def client(self) -> CleanClient:
        client = self.target.make_client(self.catalog, self.env)
        assert isinstance(client, CleanClient)
        return client

    def client_cls(self) -> type[ResilientClient]:
        cls = self.target.client_cls
        assert issubclass(cls, ResilientClient)
        return cls

    def restart(self) -> None:
        self.catalog = self.target.restart_catalog(self.catalog, self.env)

    def table(self, name: str) -> Any:
        return self.catalog.resolve(name)

    def staged(self, name: str, version: int, suffix: str = "", data: bytes = b'{"commitInfo":{}}\n') -> str:
        info = self.table(name)
        uri = f"{info.location}/_delta_log/_staged_commits/{version:020d}.{uuid.uuid4()}.json{suffix}"
        self.storage.put(uri, data)
        return uri


def rigs(faulty: type[DurableTarget], tmp_path: Path) -> tuple[Rig, Rig]:
    (tmp_path / "good").mkdir()
    (tmp_path / "bad").mkdir()
    return Rig(DurableTarget(), tmp_path / "good"), Rig(faulty(), tmp_path / "bad")


def rows(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "value": f"v{i}"} for i in ids]


def ids_of(result: Any) -> list[int]:
    return [int(r["id"]) for r in result.rows]


def commit_actions(rig: Rig, name: str, version: int) -> list[dict[str, Any]]:
    client = rig.client()
    view = client.view(rig.table(name))
    return decode(client.content(client.commit_sources(view)[version]))


# ====================================================================== catalog


def test_variants_list_is_complete() -> None:
    assert len(v.VARIANTS) >= 16
    names = [x.name for x in v.VARIANTS]
    assert len(set(names)) == len(names)
    assert all(n.startswith("cr7b-") for n in names)
    assert sum(x.side == "catalog" for x in v.VARIANTS) >= 7
    assert sum(x.side == "client" for x in v.VARIANTS) >= 7
    assert len({d for x in v.VARIANTS for d in x.dimensions}) >= 7
    for x in v.VARIANTS:
        module, cls = x.target.split(":")
        assert module == "tests.cleanroom_r7b.variants"
        assert issubclass(getattr(v, cls), DurableTarget)
        assert x.doc and x.rules and x.level in {"MUST", "SHOULD"}


def test_staged_path_only_ratifies_a_file_in_another_bucket(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.PathOnlyStagedTarget, tmp_path), (False, True), strict=True):
        rig.client().create_table("t")
        info = rig.table("t")
        path = urlsplit(f"{info.location}/_delta_log/_staged_commits/{1:020d}.{uuid.uuid4()}.json").path
        elsewhere = f"s3://another-bucket{path}"
        rig.storage.put(elsewhere, b'{"commitInfo":{}}\n')
        if faulty:
            rig.catalog.commit(info.table_id, 1, staged_uri=elsewhere, in_commit_timestamp=1)
            assert rig.catalog.get_commits(info.table_id).commits[0].staged_uri == elsewhere
        else:
            with pytest.raises(InvalidRequest):
                rig.catalog.commit(info.table_id, 1, staged_uri=elsewhere, in_commit_timestamp=1)
            assert rig.catalog.get_commits(info.table_id).latest_version == 0


def test_unanchored_staged_name_ratifies_a_suffixed_name(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.UnanchoredStagedNameTarget, tmp_path), (False, True), strict=True):
        rig.client().create_table("t")
        info = rig.table("t")
        uri = rig.staged("t", 1, suffix=".tmp")
        if faulty:
            rig.catalog.commit(info.table_id, 1, staged_uri=uri, in_commit_timestamp=1)
            assert rig.catalog.get_commits(info.table_id).latest_version == 1
        else:
            with pytest.raises(InvalidRequest):
                rig.catalog.commit(info.table_id, 1, staged_uri=uri, in_commit_timestamp=1)
        # Exact names and published-style names are judged right by both.
        with pytest.raises(InvalidRequest):
            rig.catalog.commit(info.table_id, 2, staged_uri=f"{info.location}/_delta_log/{2:020d}.json")


def test_negative_resolve_cache_hides_a_new_table(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.NegativeResolveCacheTarget, tmp_path), (False, True), strict=True):
        with pytest.raises(TableNotFound):
            rig.catalog.resolve("fresh")  # "create if not exists": look first
        client = rig.client()
        client.create_table("fresh")
        if faulty:
            with pytest.raises(TableNotFound):
                rig.catalog.resolve("fresh")
            with pytest.raises(TableNotFound):
                client.append("fresh", rows(1))
        else:
            assert rig.catalog.resolve("fresh").name == "fresh"
            assert client.append("fresh", rows(1)) == 1
        # A table never looked up before its creation resolves in both.
        client.create_table("other")
        assert rig.catalog.resolve("other").name == "other"


def test_lazy_registration_loses_a_table_without_commits_at_restart(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.LazyRegistrationTarget, tmp_path), (False, True), strict=True):
        client = rig.client()
        client.create_table("busy")
        client.append("busy", rows(1))
        client.create_table("newborn")
        rig.restart()
        assert rig.catalog.get_commits(rig.catalog.resolve("busy").table_id).latest_version == 1
        if faulty:
            with pytest.raises(TableNotFound):
                rig.catalog.resolve("newborn")
        else:
            assert rig.catalog.resolve("newborn").name == "newborn"


def _many_actions(n_adds: int, final_newline: bool) -> bytes:
    actions: list[dict[str, Any]] = [{"commitInfo": {"inCommitTimestamp": 1, "txnId": str(uuid.uuid4())}}]
    actions += [
        {"add": {"path": f"f{i}.parquet", "partitionValues": {}, "size": 1, "modificationTime": 1, "dataChange": True}}
        for i in range(n_adds)
    ]
    body = encode(actions)
    return body if final_newline else body[:-1]


def test_newline_count_lets_one_action_past_the_declared_limit(tmp_path: Path) -> None:
    _, rig = rigs(v.NewlineCountActionsTarget, tmp_path)
    limit = declared_limits(cast(Target, rig.target)).commit_actions
    assert limit is not None and limit == 64
    rig.client().create_table("t")
    info = rig.table("t")
    at_limit = _many_actions(limit - 1, final_newline=True)
    rig.catalog.commit(info.table_id, 1, inline_content=at_limit, in_commit_timestamp=1)  # at the limit: ok
    past = _many_actions(limit, final_newline=True)
    assert len(decode(past)) == limit + 1
    with pytest.raises(CommitRejected):  # one past, with a final newline: refused cleanly
        rig.catalog.commit(info.table_id, 2, inline_content=past, in_commit_timestamp=2)
    unterminated = _many_actions(limit, final_newline=False)
    assert len(decode(unterminated)) == limit + 1
    rig.catalog.commit(info.table_id, 2, inline_content=unterminated, in_commit_timestamp=2)  # the fault
    stored = rig.catalog.get_commits(info.table_id, 2, 2).commits[0].inline_content
    assert stored is not None and len(decode(stored)) == limit + 1


def test_catalog_wide_cap_refuses_below_the_per_table_cap(tmp_path: Path) -> None:
    good, bad = rigs(v.CatalogWideCapTarget, tmp_path)
    cap = declared_limits(cast(Target, bad.target)).unpublished
    assert cap is not None and cap == 10
    for rig in (good, bad):
        client = rig.client()
        for name in ("a", "b", "c"):
            client.create_table(name)
        for name in ("a", "b"):
            for i in range(4):
                client.append(name, rows(i))
        client.append("c", rows(1))
        client.append("c", rows(2))
    # Table c holds 2 unpublished commits, far below the cap of 10 per table.
    assert good.client().append("c", rows(3)) == 3
    with pytest.raises(CommitRejected):
        bad.client().append("c", rows(3))
    # On a lone table the cap is exact.
    for name in ("a", "b", "c"):
        bad.client().publish(name)
    lone = bad.client()
    lone.create_table("lone")
    for i in range(cap):
        lone.append("lone", rows(i))
    with pytest.raises(CommitRejected):
        lone.append("lone", rows(99))


def test_stale_proposal_is_rejected_instead_of_a_conflict(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.StaleRejectedTarget, tmp_path), (False, True), strict=True):
        client = rig.client()
        client.create_table("t")
        for i in range(3):
            client.append("t", rows(i))
        info = rig.table("t")
        with pytest.raises(CommitConflict):  # the latest version itself: a conflict in both
            rig.catalog.commit(info.table_id, 3, staged_uri=rig.staged("t", 3), in_commit_timestamp=1)
        stale = rig.staged("t", 2)
        if faulty:
            with pytest.raises(CommitRejected) as caught:
                rig.catalog.commit(info.table_id, 2, staged_uri=stale, in_commit_timestamp=1)
            assert not isinstance(caught.value, CommitConflict)
        else:
            with pytest.raises(CommitConflict):
                rig.catalog.commit(info.table_id, 2, staged_uri=stale, in_commit_timestamp=1)
        assert rig.catalog.get_commits(info.table_id).latest_version == 3


def test_clamp_then_validate_refuses_a_window_above_the_latest(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.ClampThenValidateTarget, tmp_path), (False, True), strict=True):
        client = rig.client()
        client.create_table("t")
        client.append("t", rows(1))
        info = rig.table("t")
        assert rig.catalog.get_commits(info.table_id, 2).latest_version == 1  # start alone: fine in both
        assert rig.catalog.get_commits(info.table_id, 0, 9).latest_version == 1  # end alone above: fine
        if faulty:
            with pytest.raises(InvalidRequest):
                rig.catalog.get_commits(info.table_id, 2, 2)
        else:
            resp = rig.catalog.get_commits(info.table_id, 2, 2)
            assert resp.commits == [] and resp.latest_version == 1


def test_mark_one_above_latest_drops_unpublished_commits(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.MarkOneAboveLatestTarget, tmp_path), (False, True), strict=True):
        client = rig.client()
        client.create_table("t")
        for i in range(3):
            client.append("t", rows(i))  # v1-v3, unpublished
        info = rig.table("t")
        with pytest.raises(InvalidRequest):  # far above: refused by both
            rig.catalog.mark_published(info.table_id, 5)
        if faulty:
            rig.catalog.mark_published(info.table_id, 4)
            assert rig.catalog.get_commits(info.table_id).commits == []
            with pytest.raises(ReadError):
                rig.client().read("t")  # v1-v3 are neither stored nor published
        else:
            with pytest.raises(InvalidRequest):
                rig.catalog.mark_published(info.table_id, 4)
            assert [c.version for c in rig.catalog.get_commits(info.table_id).commits] == [1, 2, 3]
            assert rig.client().read("t").version == 3


# ====================================================================== client (writer)


def test_cleanup_keeps_the_staged_commit_at_the_checkpoint(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.CleanupStagedStrictTarget, tmp_path), (False, True), strict=True):
        client = rig.client()
        client.create_table("t")
        for i in (1, 2, 3):
            client.append("t", rows(i))
        client.publish("t")
        assert client.checkpoint("t") == 3
        client.append("t", rows(4))  # v4: ratified, unpublished, its staged file must stay
        client.cleanup("t", 3)
        info = rig.table("t")
        staged = rig.storage.list(f"{info.location}/_delta_log/_staged_commits/")
        versions = sorted(int(f.uri.rsplit("/", 1)[1][:20]) for f in staged)
        assert versions == ([3, 4] if faulty else [4])
        assert ids_of(client.read("t")) == [1, 2, 3, 4]


def test_create_commit_has_no_txnid(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.CreateWithoutTxnIdTarget, tmp_path), (False, True), strict=True):
        client = rig.client()
        client.create_table("t")
        client.append("t", rows(1))
        v0 = commit_actions(rig, "t", 0)[0]["commitInfo"]
        v1 = commit_actions(rig, "t", 1)[0]["commitInfo"]
        assert isinstance(v1.get("txnId"), str) and v1["txnId"]
        assert ("txnId" in v0) is not faulty


def _checkpoint_protocol(rig: Rig, name: str, version: int) -> dict[str, Any]:
    client = rig.client()
    info = rig.table(name)
    actions = client.checkpoint_actions(f"{info.location}/_delta_log/{version:020d}.checkpoint.parquet")
    return next(a["protocol"] for a in actions if "protocol" in a)


def test_checkpoint_protocol_loses_writer_features(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.CheckpointFeatureListTarget, tmp_path), (False, True), strict=True):
        client = rig.client()
        client.create_table("t")
        client.append("t", rows(1))
        client.publish("t")
        assert client.checkpoint("t") == 1
        protocol = _checkpoint_protocol(rig, "t", 1)
        assert ("inCommitTimestamp" in protocol["writerFeatures"]) is not faulty
        assert ids_of(client.read("t")) == [1]  # rows are right either way


def test_checkpoint_holds_unpublished_state(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.CheckpointCurrentStateTarget, tmp_path), (False, True), strict=True):
        client = rig.client()
        client.create_table("t")
        client.append("t", rows(1, 2))
        client.publish("t")
        client.delete("t", [1])  # v2, unpublished
        client.append("t", rows(3))  # v3, unpublished
        assert client.checkpoint("t") == 1
        reader = rig.client()
        assert ids_of(reader.read("t", version=1)) == ([2, 3] if faulty else [1, 2])


def test_ict_ties_with_a_peer_ahead(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.IctTieTarget, tmp_path), (False, True), strict=True):
        client = rig.client()
        client.create_table("t")

        class Ahead(ResilientClient):
            def now_ms(self) -> int:
                return super().now_ms() + 400 * DAY_MS

        Ahead(rig.catalog, rig.storage).append("t", rows(1))
        client.append("t", rows(2))
        peer = commit_actions(rig, "t", 1)[0]["commitInfo"]["inCommitTimestamp"]
        own = commit_actions(rig, "t", 2)[0]["commitInfo"]["inCommitTimestamp"]
        assert (own == peer) if faulty else (own == peer + 1)


def test_publish_before_ratify_puts_the_delta_file_first(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.PublishBeforeRatifyTarget, tmp_path), (False, True), strict=True):
        rig.client().create_table("t")

        class Spy(DurableCatalog):
            seen: ClassVar[list[bool]] = []

            def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
                info = self._by_id[table_id]
                self.seen.append(self.storage.exists(f"{info.location}/_delta_log/{version:020d}.json"))
                super().commit(table_id, version, **kwargs)

        spy = Spy(WAREHOUSE, rig.storage, rig.target.state_dir(rig.env))
        client = rig.client_cls()(spy, rig.storage)
        assert client.append("t", rows(1)) == 1
        assert Spy.seen == [faulty]  # the published file existed when v1 was proposed
        # A lost race withdraws the file, and the end state is right either way.
        rival = rig.client_cls()(spy, rig.storage)

        def rival_appends(rival: CleanClient = rival) -> None:
            rival.append("t", rows(2))

        loser = _hooked(rig.client_cls(), rival_appends)(spy, rig.storage)
        assert loser.append("t", rows(3)) == 3
        info = spy.resolve("t")
        ratified = {c.version: client.content(c) for c in spy.get_commits(info.table_id).commits}
        assert sorted(ratified) == [1, 2, 3]
        client.publish("t")
        for version in (1, 2, 3):
            assert rig.storage.get(f"{info.location}/_delta_log/{version:020d}.json") == ratified[version]
        assert ids_of(client.read("t")) == [1, 2, 3]


def test_compaction_drops_a_delete_of_an_older_file(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.CompactionDropsForeignRemovesTarget, tmp_path), (False, True), strict=True):
        client = rig.client()
        client.create_table("t")
        client.append("t", rows(1, 2))  # v1
        client.append("t", rows(3))  # v2
        client.delete("t", [1])  # v3: removes v1's file, adds one with id 2
        client.publish("t")
        assert client.compact_log("t", 2, 3)
        info = rig.table("t")
        body = decode(rig.storage.get(f"{info.location}/_delta_log/{2:020d}.{3:020d}.compacted.json"))
        removed = [a["remove"]["path"] for a in body if "remove" in a]
        v1_file = next(a["add"]["path"] for a in commit_actions(rig, "t", 1) if "add" in a)
        assert (v1_file in removed) is not faulty
        assert len([a for a in body if "add" in a]) == 2  # adds are right either way


def _hooked(base: type[ResilientClient], hook: Callable[[], None]) -> type[ResilientClient]:
    class Hooked(base):  # type: ignore[valid-type,misc]
        fired = False

        def before_propose(self, log: str, version: int, content: bytes) -> None:
            super().before_propose(log, version, content)
            if not Hooked.fired:
                Hooked.fired = True
                hook()

    return Hooked


def test_rebase_without_reread_undoes_the_winner(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.RebaseWithoutRereadTarget, tmp_path), (False, True), strict=True):
        setup = rig.client()
        setup.create_table("t")
        setup.append("t", rows(1, 2, 3, 4))
        rival = rig.client()

        def rival_deletes(rival: CleanClient = rival) -> None:
            rival.delete("t", [1])

        loser = _hooked(rig.client_cls(), rival_deletes)(rig.catalog, rig.storage)
        assert loser.delete("t", [2]) == 3
        assert ids_of(rig.client().read("t")) == ([1, 2, 3, 3, 4, 4] if faulty else [3, 4])
        # Blind appends that lose a race are fine either way.
        rival2 = rig.client()

        def rival_appends(rival: CleanClient = rival2) -> None:
            rival.append("t", rows(7))

        assert _hooked(rig.client_cls(), rival_appends)(rig.catalog, rig.storage).append("t", rows(8)) == 5


# ====================================================================== client (reader)


def _icts(rig: Rig, name: str) -> dict[int, int]:
    client = ResilientClient(rig.catalog, rig.storage)
    return dict(client.timeline(client.view(rig.table(name))))


def test_time_travel_before_the_checkpoint_is_refused(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.TimelineFromCheckpointTarget, tmp_path), (False, True), strict=True):
        client = rig.client()
        client.create_table("t")
        for i in (1, 2, 3):
            client.append("t", rows(i))
        client.publish("t")
        assert client.checkpoint("t") == 3
        ict = _icts(rig, "t")
        assert client.read("t", version=1).version == 1  # readable by version in both
        assert client.read("t", timestamp_ms=ict[3]).version == 3
        if faulty:
            with pytest.raises(ReadError):
                client.read("t", timestamp_ms=ict[1])
        else:
            assert client.read("t", timestamp_ms=ict[1]).version == 1


def test_unterminated_last_line_is_dropped(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.CompleteLinesOnlyTarget, tmp_path), (False, True), strict=True):
        client = rig.client()
        client.create_table("t")
        info = rig.table("t")
        writer = ResilientClient(rig.catalog, rig.storage)
        add = writer.write_data(info.location, rows(5, 6))
        ict = _icts(rig, "t")[0] + 1
        content = encode([writer.commit_info("WRITE", ict), add])[:-1]  # valid NDJSON, no final newline
        rig.catalog.commit(info.table_id, 1, inline_content=content, in_commit_timestamp=ict)
        result = client.read("t")
        assert result.version == 1
        assert ids_of(result) == ([] if faulty else [5, 6])
        client.publish("t")
        published = rig.storage.get(f"{info.location}/_delta_log/{1:020d}.json")
        assert (published == content) is not faulty


def test_time_travel_ignores_unpublished_commits(tmp_path: Path) -> None:
    for rig, faulty in zip(rigs(v.PublishedTimelineTarget, tmp_path), (False, True), strict=True):
        client = rig.client()
        client.create_table("t")
        client.append("t", rows(1))
        client.publish("t")
        client.append("t", rows(2))  # v2: ratified, unpublished
        ict = _icts(rig, "t")
        assert client.read("t").version == 2  # the latest snapshot is right in both
        result = client.read("t", timestamp_ms=ict[2])
        assert result.version == (1 if faulty else 2)
        assert ids_of(result) == ([1] if faulty else [1, 2])


def test_variants_json_serialisable() -> None:
    assert json.loads(json.dumps([x.__dict__ for x in v.VARIANTS]))
