"""The reference Delta client: writes, conflicts, publishing, maintenance, reads, time travel."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.contract.delta import (
    Catalog,
    DeltaClient,
    MaintenancePolicy,
    RatifiedCommit,
    Storage,
    TableInfo,
)
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta import actions as act
from reference_impl.delta.actions import Action, InvalidCommitError, decode_commit, encode_commit
from reference_impl.delta.checkpoint import read_checkpoint, read_last_checkpoint
from reference_impl.delta.cleanup import plan_cleanup
from reference_impl.delta.client import ConcurrentModificationError, ReferenceClient
from reference_impl.delta.data_files import write_data_file
from reference_impl.delta.log_paths import (
    LogFile,
    checkpoint_uri,
    compaction_uri,
    delta_uri,
    log_dir,
    parse_log_name,
    staged_uri,
)
from reference_impl.delta.snapshot import LogReader, TimestampOutOfRange
from reference_impl.storage.local import LocalStorage, path_to_uri

T0 = 1_600_000_000_000
U1, U2 = "016ae953-37a9-438e-8683-9a9a4a79a395", "7d17ac10-5cc3-401b-bd1a-9c82dd2ea032"
ROWS = [{"id": 1, "value": "a"}, {"id": 2, "value": "b"}]


class RecordingStorage(LocalStorage):
    """LocalStorage that remembers the URIs it was asked to put."""

    def __init__(self) -> None:
        super().__init__()
        self.puts: list[str] = []

    def put(self, uri: str, data: bytes, *, if_absent: bool = False) -> None:
        self.puts.append(uri)
        super().put(uri, data, if_absent=if_absent)


class RacingCatalog(ReferenceCatalog):
    """Runs ``race`` (another writer's commit) just before the next proposal reaches the catalog."""

    race: Callable[[], object] | None = None

    def commit(
        self,
        table_id: str,
        version: int,
        *,
        staged_uri: str | None = None,
        inline_content: bytes | None = None,
        in_commit_timestamp: int | None = None,
        latest_published_version: int | None = None,
        staged_content: bytes | None = None,
    ) -> None:
        race, self.race = self.race, None
        if race is not None:
            race()
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            latest_published_version=latest_published_version,
            staged_content=staged_content,
        )


def ticking(start: int = T0, step: int = 1000) -> Callable[[], int]:
    counter = itertools.count(start, step)
    return lambda: next(counter)


@pytest.fixture
def storage() -> RecordingStorage:
    return RecordingStorage()


@pytest.fixture
def catalog(tmp_path: Path, storage: RecordingStorage) -> RacingCatalog:
    return RacingCatalog(tmp_path / "catalog.db", path_to_uri(tmp_path / "warehouse"), storage)


@pytest.fixture
def client(catalog: RacingCatalog, storage: RecordingStorage) -> ReferenceClient:
    return ReferenceClient(catalog, storage, clock=ticking())


@pytest.fixture
def table(client: ReferenceClient, catalog: RacingCatalog) -> TableInfo:
    client.create_table("t")
    return catalog.resolve("t")


def listed(storage: LocalStorage, table: TableInfo) -> list[LogFile]:
    return [f for f in (parse_log_name(i.uri) for i in storage.list(log_dir(table.location) + "/")) if f]


def staged_versions(storage: LocalStorage, table: TableInfo) -> list[int]:
    return sorted(f.version for f in listed(storage, table) if f.kind == "staged")


def ratified(catalog: RacingCatalog, table: TableInfo) -> dict[int, RatifiedCommit]:
    return {c.version: c for c in catalog.get_commits(table.table_id).commits}


def commit_actions(catalog: Catalog, storage: Storage, table: TableInfo) -> dict[int, list[Action]]:
    reader = LogReader(catalog, storage)
    seg = reader.segment(table.table_id, table.location)
    return {v: reader.commit_actions(ref) for v, ref in seg.commits.items()}


# ---------------------------------------------------------------- format units


def test_log_names_round_trip() -> None:
    loc = "s3://bucket/tables/t"
    assert parse_log_name(delta_uri(loc, 7)) == LogFile(delta_uri(loc, 7), "delta", 7)
    assert parse_log_name(checkpoint_uri(loc, 2)) == LogFile(checkpoint_uri(loc, 2), "checkpoint", 2)
    assert parse_log_name(compaction_uri(loc, 3, 5)) == LogFile(compaction_uri(loc, 3, 5), "compaction", 3, 5)
    uid = U1
    assert parse_log_name(staged_uri(loc, 8, uid)) == LogFile(staged_uri(loc, 8, uid), "staged", 8, uuid=uid)
    assert staged_uri(loc, 8, uid).endswith(f"/_delta_log/_staged_commits/00000000000000000008.{uid}.json")
    assert parse_log_name(f"{loc}/_delta_log/_staged_commits/8.{uid}.json") is None  # unpadded
    assert parse_log_name(f"{loc}/_delta_log/_last_checkpoint") is None
    assert parse_log_name(f"{loc}/part-00000000000000000001.json") is None  # not in _delta_log


def test_decode_commit_is_strict() -> None:
    actions = [act.commit_info_action(T0, "txn", "WRITE"), act.protocol_action()]
    content = encode_commit(actions)
    assert content.count(b"\n") == 2 and content.endswith(b"\n")
    assert decode_commit(content) == actions
    with pytest.raises(InvalidCommitError):
        decode_commit(content[:-10])  # partial last line
    with pytest.raises(InvalidCommitError):
        decode_commit(b"[" + content.replace(b"\n", b",")[:-1] + b"]\n")  # one JSON array
    with pytest.raises(InvalidCommitError):
        decode_commit(b"")


def test_cleanup_plan_without_checkpoint_deletes_nothing() -> None:
    loc = "file:///t"
    uris = [delta_uri(loc, v) for v in range(6)] + [staged_uri(loc, 1, U1)]
    assert plan_cleanup(uris, 5) == []
    assert plan_cleanup([*uris, checkpoint_uri(loc, 6)], 5) == []  # checkpoint newer than the cut-off


def test_cleanup_plan_follows_the_rfc() -> None:
    loc = "file:///t"
    u1, u2 = U1, U2
    crc = f"{loc}/_delta_log/{{:020d}}.crc".format
    keep = [
        delta_uri(loc, 3),
        delta_uri(loc, 4),
        delta_uri(loc, 5),
        checkpoint_uri(loc, 3),
        checkpoint_uri(loc, 6),
        crc(3),
        compaction_uri(loc, 4, 6),
        staged_uri(loc, 4, u1),
        f"{loc}/_delta_log/_last_checkpoint",
    ]
    delete = [
        delta_uri(loc, 0),
        delta_uri(loc, 2),
        checkpoint_uri(loc, 1),
        crc(2),
        compaction_uri(loc, 0, 2),
        compaction_uri(loc, 3, 5),
        staged_uri(loc, 2, u1),
        staged_uri(loc, 3, u2),
    ]
    assert plan_cleanup(keep + delete, 5) == sorted(delete)


# ---------------------------------------------------------------- writes and reads


def test_reference_client_is_a_delta_client(client: ReferenceClient) -> None:
    assert isinstance(client, DeltaClient)


def test_create_table_writes_a_catalog_managed_version_0(
    table: TableInfo, storage: RecordingStorage, catalog: RacingCatalog
) -> None:
    actions = decode_commit(storage.get(delta_uri(table.location, 0)))
    assert [act.kind(a) for a in actions] == ["commitInfo", "protocol", "metaData"]
    assert actions[1] == act.protocol_action()
    assert actions[2]["metaData"]["configuration"] == {"delta.enableInCommitTimestamps": "true"}
    assert catalog.get_commits(table.table_id).latest_version == 0


def test_append_delete_read_round_trip(client: ReferenceClient, table: TableInfo) -> None:
    assert client.append("t", ROWS) == 1
    assert client.append("t", [{"id": 3, "value": None}]) == 2
    assert client.delete("t", [2, 42]) == 3
    result = client.read("t")
    assert result.version == 3
    assert result.rows == [{"id": 1, "value": "a"}, {"id": 3, "value": None}]
    assert client.read("t", version=1).rows == ROWS
    assert client.read("t", version=0).rows == []


def test_commits_carry_commit_info_first_with_ict_and_txn_id(
    client: ReferenceClient, table: TableInfo, catalog: RacingCatalog, storage: RecordingStorage
) -> None:
    client.append("t", ROWS)
    client.delete("t", [1])
    commits = commit_actions(catalog, storage, table)
    infos = [actions[0]["commitInfo"] for actions in commits.values()]
    assert [act.kind(actions[0]) for actions in commits.values()] == ["commitInfo"] * 3
    icts = [info["inCommitTimestamp"] for info in infos]
    assert icts == sorted(set(icts))
    assert len({info["txnId"] for info in infos}) == 3


def test_ict_exceeds_previous_even_when_the_clock_stalls(catalog: Catalog, storage: Storage) -> None:
    client = ReferenceClient(catalog, storage, clock=lambda: T0)
    client.create_table("t")
    client.append("t", ROWS)
    client.append("t", ROWS)
    table = catalog.resolve("t")
    icts = [act.in_commit_timestamp(a) for a in commit_actions(catalog, storage, table).values()]
    assert icts == [T0, T0 + 1, T0 + 2]


def test_append_stages_each_commit_and_leaves_it_unpublished(
    client: ReferenceClient, table: TableInfo, catalog: RacingCatalog, storage: RecordingStorage
) -> None:
    client.append("t", ROWS)
    stored = ratified(catalog, table)
    assert list(stored) == [1]
    assert parse_log_name(stored[1].staged_uri or "") is not None
    assert not storage.exists(delta_uri(table.location, 1))


def test_conflict_retry_writes_a_new_staged_file(
    client: ReferenceClient, table: TableInfo, catalog: RacingCatalog, storage: RecordingStorage
) -> None:
    other = ReferenceClient(catalog, storage, clock=ticking(T0 + 500_000))
    catalog.race = lambda: other.append("t", [{"id": 9, "value": "other"}])
    assert client.append("t", ROWS) == 2
    assert staged_versions(storage, table) == [1, 1, 2]
    winner = parse_log_name(ratified(catalog, table)[2].staged_uri or "")
    assert winner is not None and (winner.kind, winner.version) == ("staged", 2)
    assert client.read("t").rows == [*ROWS, {"id": 9, "value": "other"}]


def test_delete_of_concurrently_deleted_rows_fails(
    client: ReferenceClient, table: TableInfo, catalog: RacingCatalog, storage: RecordingStorage
) -> None:
    client.append("t", ROWS)
    other = ReferenceClient(catalog, storage, clock=ticking(T0 + 500_000))
    catalog.race = lambda: other.delete("t", [1])
    with pytest.raises(ConcurrentModificationError):
        client.delete("t", [1])
    assert client.read("t").version == 2
    assert client.read("t").rows == [{"id": 2, "value": "b"}]


def test_inline_mode_sends_content_to_the_catalog(catalog: RacingCatalog, storage: RecordingStorage) -> None:
    client = ReferenceClient(catalog, storage, inline=True, clock=ticking())
    client.create_table("t")
    table = catalog.resolve("t")
    client.append("t", ROWS)
    stored = ratified(catalog, table)[1]
    assert stored.staged_uri is None and stored.inline_content is not None
    assert staged_versions(storage, table) == []
    assert client.read("t").rows == ROWS
    client.publish("t")
    assert storage.get(delta_uri(table.location, 1)) == stored.inline_content


# ---------------------------------------------------------------- publishing and maintenance


def test_publish_copies_exact_bytes_in_order(
    client: ReferenceClient, table: TableInfo, catalog: RacingCatalog, storage: RecordingStorage
) -> None:
    for i in range(3):
        client.append("t", [{"id": i, "value": str(i)}])
    staged = {v: storage.get(c.staged_uri or "") for v, c in ratified(catalog, table).items()}
    storage.puts.clear()
    client.publish("t")
    assert storage.puts == [delta_uri(table.location, v) for v in (1, 2, 3)]
    assert {v: storage.get(delta_uri(table.location, v)) for v in staged} == staged
    assert ratified(catalog, table) == {}
    assert client.read("t").rows == [{"id": i, "value": str(i)} for i in range(3)]


def test_checkpoint_covers_only_published_versions(
    client: ReferenceClient, table: TableInfo, storage: RecordingStorage
) -> None:
    client.append("t", ROWS)
    client.append("t", [{"id": 3, "value": "c"}])
    assert client.checkpoint("t") == 0
    assert not storage.exists(checkpoint_uri(table.location, 2))
    client.publish("t")
    assert client.checkpoint("t") == 2
    assert len([a for a in read_checkpoint(storage, table.location, 2) if "add" in a]) == 2
    assert (read_last_checkpoint(storage, table.location) or {}).get("version") == 2
    assert client.read("t").rows == [*ROWS, {"id": 3, "value": "c"}]


def test_compaction_refused_until_the_range_is_published(
    client: ReferenceClient, table: TableInfo, storage: RecordingStorage
) -> None:
    client.append("t", ROWS)
    client.delete("t", [1])
    assert client.compact_log("t", 1, 2) is False
    assert not storage.exists(compaction_uri(table.location, 1, 2))
    client.publish("t")
    assert client.compact_log("t", 1, 2) is True
    compacted = decode_commit(storage.get(compaction_uri(table.location, 1, 2)))
    assert sorted(act.kind(a) for a in compacted) == ["add", "remove"]


def test_maintenance_forbidden_by_policy_writes_nothing(
    client: ReferenceClient, table: TableInfo, catalog: RacingCatalog, storage: RecordingStorage
) -> None:
    client.append("t", ROWS)
    client.publish("t")
    catalog.set_maintenance_policy(table.table_id, MaintenancePolicy(frozenset()))
    before = storage.list(log_dir(table.location) + "/")
    assert client.checkpoint("t") is None
    assert client.compact_log("t", 0, 1) is False
    client.cleanup("t", 1)
    assert storage.list(log_dir(table.location) + "/") == before


def test_cleanup_deletes_up_to_the_checkpoint_and_keeps_the_table_readable(
    client: ReferenceClient, table: TableInfo, storage: RecordingStorage
) -> None:
    for i in range(3):
        client.append("t", [{"id": i, "value": str(i)}])
    client.publish("t")
    client.checkpoint("t")
    client.append("t", [{"id": 9, "value": "unpublished"}])
    client.cleanup("t", 3)
    kinds = sorted((f.kind, f.version) for f in listed(storage, table))
    assert kinds == [("checkpoint", 3), ("delta", 3), ("staged", 4)]
    rows = [{"id": i, "value": str(i)} for i in range(3)] + [{"id": 9, "value": "unpublished"}]
    assert client.read("t").rows == rows


# ---------------------------------------------------------------- time travel


def test_time_travel_by_in_commit_timestamp(client: ReferenceClient, table: TableInfo) -> None:
    client.append("t", ROWS)  # the clock ticks once per commit: ICTs T0, T0+1000, T0+2000
    client.append("t", [{"id": 3, "value": "c"}])
    client.publish("t")  # publishing later changes file times, never the answer
    assert client.read("t", timestamp_ms=T0).version == 0
    assert client.read("t", timestamp_ms=T0 + 1500).rows == ROWS
    assert client.read("t", timestamp_ms=T0 + 2000).version == 2
    assert client.read("t", timestamp_ms=T0 + 10**9).version == 2
    with pytest.raises(TimestampOutOfRange):
        client.read("t", timestamp_ms=T0 - 1)


def test_reader_ignores_published_files_above_the_catalog_latest(
    client: ReferenceClient, table: TableInfo, storage: RecordingStorage
) -> None:
    client.append("t", ROWS)
    client.publish("t")
    stray = write_data_file(storage, table.location, [{"id": 99, "value": "stray"}], modification_time=T0)
    info = act.commit_info_action(T0 + 10**6, "stray-txn", "WRITE")
    storage.put(delta_uri(table.location, 2), encode_commit([info, stray]))
    assert client.read("t").version == 1
    assert client.read("t").rows == ROWS
