"""The clean-room variants lakecert misses are really faulty: each fault shown in process, in milliseconds.

A variant that certifies is only a finding if it breaks its rule; these scenarios show the break
(and that the correct clean-room catalog or client does not), so an xfail in tests/test_cleanroom.py
never hides a variant that is in fact harmless. Storage is in memory; no wall clock is relied on
(clients that need one get a fixed one).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from conformance.contract.delta import CatalogError
from tests.cleanroom import variants as V
from tests.cleanroom.catalog import CleanCatalog
from tests.cleanroom.client import Action, CleanClient, ReadError, decode
from tests.cleanroom.memstore import MemoryStorage


def _setup(
    catalog_cls: type[CleanCatalog] = CleanCatalog, client_cls: type[CleanClient] = CleanClient
) -> tuple[MemoryStorage, CleanCatalog, CleanClient]:
    storage = MemoryStorage()
    catalog = catalog_cls("mem://warehouse", storage)
    client = client_cls(catalog, storage)
    client.create_table("t")
    return storage, catalog, client


def _staged(storage: MemoryStorage, catalog: CleanCatalog, name_version: int, folder: str = "_staged_commits") -> str:
    uri = f"{catalog.resolve('t').location}/_delta_log/{folder}/{name_version:020d}.{uuid.uuid4()}.json"
    storage.put(uri, b'{"commitInfo":{"inCommitTimestamp":1,"txnId":"x"}}\n')
    return uri


def _refused(action: Callable[[], object]) -> bool:
    try:
        action()
    except (CatalogError, ReadError):
        return True
    return False


def _icts(storage: MemoryStorage, catalog: CleanCatalog) -> list[int]:
    """In-commit timestamps of the published commits, in version order."""
    log = f"{catalog.resolve('t').location}/_delta_log/"
    files = [f.uri for f in storage.list(log) if f.uri[len(log) :][20:] == ".json"]
    return [int(decode(storage.get(u))[0]["commitInfo"]["inCommitTimestamp"]) for u in files]


# ---------------------------------------------------------------- catalog


@pytest.mark.parametrize("cls,faulty", [(CleanCatalog, False), (V._GapAfterCreation, True)])
def test_first_commit_over_a_gap(cls: type[CleanCatalog], faulty: bool) -> None:
    storage, catalog, _ = _setup(cls)
    uri = _staged(storage, catalog, 3)
    assert _refused(lambda: catalog.commit(catalog.resolve("t").table_id, 3, staged_uri=uri)) is not faulty


@pytest.mark.parametrize("cls,faulty", [(CleanCatalog, False), (V._AnyVersionInName, True)])
def test_staged_name_for_another_version(cls: type[CleanCatalog], faulty: bool) -> None:
    storage, catalog, _ = _setup(cls)
    uri = _staged(storage, catalog, 5)
    assert _refused(lambda: catalog.commit(catalog.resolve("t").table_id, 1, staged_uri=uri)) is not faulty


@pytest.mark.parametrize("cls,faulty", [(CleanCatalog, False), (V._EscapingStagedPath, True)])
def test_staged_path_outside_staged_commits(cls: type[CleanCatalog], faulty: bool) -> None:
    storage, catalog, _ = _setup(cls)
    uri = _staged(storage, catalog, 1, folder="_staged_commits/../../elsewhere")
    assert _refused(lambda: catalog.commit(catalog.resolve("t").table_id, 1, staged_uri=uri)) is not faulty


@pytest.mark.parametrize("cls,faulty", [(CleanCatalog, False), (V._ConflictOnlyWhenStored, True)])
def test_reproposal_of_a_published_version(cls: type[CleanCatalog], faulty: bool) -> None:
    storage, catalog, client = _setup(cls)
    client.append("t", [{"id": 1, "value": "a"}])
    client.publish("t")  # the catalog forgets version 1
    uri = _staged(storage, catalog, 1)
    assert _refused(lambda: catalog.commit(catalog.resolve("t").table_id, 1, staged_uri=uri)) is not faulty


@pytest.mark.parametrize("cls,faulty", [(CleanCatalog, False), (V._InlineAsText, True)])
def test_inline_commit_served_unchanged(cls: type[CleanCatalog], faulty: bool) -> None:
    _, catalog, _ = _setup(cls)
    table_id = catalog.resolve("t").table_id
    content = b'{"commitInfo":{"inCommitTimestamp":5,"txnId":"y"}}\n'
    catalog.commit(table_id, 1, inline_content=content)
    assert (catalog.get_commits(table_id).commits[0].inline_content != content) is faulty


# ---------------------------------------------------------------- writer


class _FrozenClock(V._WallClockIct):
    def now_ms(self) -> int:
        return 1_700_000_000_000  # two commits in one millisecond


class _FrozenClockCorrect(CleanClient):
    def now_ms(self) -> int:
        return 1_700_000_000_000


@pytest.mark.parametrize("cls,faulty", [(_FrozenClockCorrect, False), (_FrozenClock, True)])
def test_commits_in_one_millisecond(cls: type[CleanClient], faulty: bool) -> None:
    storage, catalog, client = _setup(client_cls=cls)
    client.append("t", [{"id": 1, "value": "a"}])
    client.publish("t")
    icts = _icts(storage, catalog)
    assert (icts[1] <= icts[0]) is faulty


def test_a_writer_an_hour_behind_goes_back_in_time() -> None:
    storage, catalog, first = _setup(client_cls=V._SkewedHostIct)
    second = V._SkewedHostIct(catalog, storage)
    assert isinstance(first, V._SkewedHostIct)
    assert {first.skew_ms, second.skew_ms} == {0, -3_600_000}
    first.append("t", [{"id": 1, "value": "a"}])
    second.append("t", [{"id": 2, "value": "b"}])
    first.append("t", [{"id": 3, "value": "c"}])
    first.publish("t")
    icts = _icts(storage, catalog)
    assert any(b <= a for a, b in zip(icts, icts[1:], strict=False))


class _Rival:
    """Lets another writer commit while this one stages its first attempt, so that attempt loses."""

    rival: CleanClient | None = None

    def before_propose(self, log: str, version: int, content: bytes) -> None:
        if self.rival is not None:
            rival, self.rival = self.rival, None
            rival.append("t", [{"id": 99, "value": "rival"}])


class _LosesRace(_Rival, CleanClient):
    pass


class _LosesRaceStale(_Rival, V._StaleRetry):
    pass


@pytest.mark.parametrize("cls,faulty", [(_LosesRace, False), (_LosesRaceStale, True)])
def test_retry_after_a_lost_race(cls: type[_LosesRace], faulty: bool) -> None:
    storage, catalog, rival = _setup()
    writer = cls(catalog, storage)
    writer.rival = rival
    assert writer.append("t", [{"id": 1, "value": "a"}]) == 2
    staged = f"{catalog.resolve('t').location}/_delta_log/_staged_commits/"
    by_version: dict[int, list[bytes]] = {}
    for f in storage.list(staged):
        by_version.setdefault(int(f.uri[len(staged) :][:20]), []).append(storage.get(f.uri))
    assert len(by_version[1]) == 2 and len(by_version[2]) == 1
    assert (by_version[2][0] in by_version[1]) is faulty  # the version-2 file is a copy of the lost attempt


def test_staged_names_past_version_nine() -> None:
    storage, catalog, client = _setup(client_cls=V._NinteenZeros)
    for i in range(9):
        client.append("t", [{"id": i, "value": "v"}])
    with pytest.raises(CatalogError):  # the correct catalog refuses the 21-digit name of version 10
        client.append("t", [{"id": 9, "value": "v"}])
    staged = f"{catalog.resolve('t').location}/_delta_log/_staged_commits/"
    assert any(len(f.uri[len(staged) :].split(".")[0]) == 21 for f in storage.list(staged))


class _RecordingStorage(MemoryStorage):
    def __init__(self) -> None:
        super().__init__()
        self.puts: list[str] = []

    def put(self, uri: str, data: bytes, *, if_absent: bool = False) -> None:
        self.puts.append(uri)
        super().put(uri, data, if_absent=if_absent)


@pytest.mark.parametrize("cls,faulty", [(CleanClient, False), (V._PublishAsText, True)])
def test_publishing_past_version_nine(cls: type[CleanClient], faulty: bool) -> None:
    storage = _RecordingStorage()
    catalog = CleanCatalog("mem://warehouse", storage)
    client = cls(catalog, storage)
    client.create_table("t")
    for i in range(11):
        client.append("t", [{"id": i, "value": "v"}])
    client.publish("t")
    log = f"{catalog.resolve('t').location}/_delta_log/"
    order = [int(u[len(log) :][:20]) for u in storage.puts if u.startswith(log) and u[len(log) :][20:] == ".json"]
    assert (order != sorted(order)) is faulty


@pytest.mark.parametrize("cls,faulty", [(CleanClient, False), (V._CompactionRangeExclusive, True)])
def test_compaction_whose_last_version_is_unpublished(cls: type[CleanClient], faulty: bool) -> None:
    storage, catalog, client = _setup(client_cls=cls)
    for i in range(3):
        client.append("t", [{"id": i, "value": "v"}])
    client.publish("t")
    client.append("t", [{"id": 3, "value": "v"}])  # version 4, not published
    assert client.compact_log("t", 1, 4) is faulty


# ---------------------------------------------------------------- reader


@pytest.mark.parametrize("cls,faulty", [(CleanClient, False), (V._ClampVersion, True)])
def test_read_above_the_latest_version(cls: type[CleanClient], faulty: bool) -> None:
    _, _, client = _setup(client_cls=cls)
    client.append("t", [{"id": 1, "value": "a"}])
    assert _refused(lambda: client.read("t", version=7)) is not faulty


class _EngineClockAhead(CleanClient):
    """Another engine: commitInfo.timestamp from its own clock, an hour after the in-commit timestamp."""

    def commit_info(self, operation: str, ict: int, *, first: bool = False) -> Action:
        action = super().commit_info(operation, ict, first=first)
        action["commitInfo"]["timestamp"] = ict + 3_600_000
        return action


@pytest.mark.parametrize("cls,faulty", [(CleanClient, False), (V._CommitInfoTimestamp, True)])
def test_time_travel_when_timestamps_disagree(cls: type[CleanClient], faulty: bool) -> None:
    storage, catalog, writer = _setup(client_cls=_EngineClockAhead)
    version = writer.append("t", [{"id": 1, "value": "a"}])
    ict = catalog.get_commits(catalog.resolve("t").table_id).commits[-1].in_commit_timestamp
    assert ict is not None
    try:
        resolved: int | None = cls(catalog, storage).read("t", timestamp_ms=ict).version
    except ReadError:
        resolved = None  # the faulty reader sees no commit at or before the commit's own timestamp
    assert (resolved != version) is faulty


@pytest.mark.parametrize("cls,faulty", [(CleanClient, False), (V._ReplayAsText, True)])
def test_delete_after_version_nine(cls: type[CleanClient], faulty: bool) -> None:
    storage, catalog, writer = _setup()
    for i in range(10):
        writer.append("t", [{"id": i, "value": "v"}])
    writer.delete("t", [2])  # version 11 removes the file added by version 3
    ids = [r["id"] for r in cls(catalog, storage).read("t").rows]
    assert (2 in ids) is faulty
