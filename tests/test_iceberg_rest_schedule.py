"""The schedule controller: commits held at the catalog, released in a chosen order, timeouts, atomicity."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import requests
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import ServiceUnavailableError, ValidationException
from pyiceberg.table import Table

from reference_impl.iceberg_rest import CommitOutcome, HeldCommit, IcebergRestServer, ScheduleTimeout

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("color", pa.string())])
# Retry at once after a 409: pyiceberg's default first wait is 100 ms.
FAST_RETRY = {"commit.retry.min-wait-ms": "1"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[IcebergRestServer]:
    # A hang guard only (a loaded machine must not expire a hold the test releases); the expiry test
    # sets its own short hold.
    with IcebergRestServer((tmp_path / "warehouse").as_uri(), hold_timeout_s=600) as srv:
        yield srv


def catalog(server: IcebergRestServer, writer: str | None = None) -> Catalog:
    return load_catalog(writer or "setup", **server.client_properties(writer))


def seeded_table(server: IcebergRestServer) -> Table:
    """db.t with rows 1 red and 2 green, committed by an untagged setup client."""
    setup = catalog(server)
    setup.create_namespace("db")
    table = setup.create_table("db.t", schema=SCHEMA, properties=FAST_RETRY)
    table.append(pa.table({"id": [1, 2], "color": ["red", "green"]}, schema=SCHEMA))
    return table


class Writer(threading.Thread):
    """Runs one pyiceberg operation on its own catalog client; keeps what it raised."""

    def __init__(self, table: Table, operation: Callable[[Table], Any]) -> None:
        super().__init__(daemon=True)
        self.table, self.operation = table, operation
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            self.operation(self.table)
        except Exception as e:  # the test inspects it
            self.error = e


def append(ids: list[int], color: str) -> Callable[[Table], None]:
    return lambda t: t.append(pa.table({"id": ids, "color": [color] * len(ids)}, schema=SCHEMA))


def delete_id(i: int) -> Callable[[Table], None]:
    return lambda t: t.delete(f"id = {i}")


def content(server: IcebergRestServer) -> list[tuple[int, str]]:
    rows = catalog(server).load_table("db.t").scan().to_arrow().to_pylist()
    return sorted((r["id"], r["color"]) for r in rows)


def run_held_pair(
    server: IcebergRestServer, operations: dict[str, Callable[[Table], Any]], order: tuple[str, str]
) -> tuple[dict[str, Writer], list[HeldCommit], list[CommitOutcome]]:
    """Writers w1 and w2 load the same snapshot, both commits are held, then released in ``order``.
    Returns the writers (joined), the held commits and their outcomes, in release order."""
    base = seeded_table(server).current_snapshot()
    assert base is not None
    writers = {name: Writer(catalog(server, name).load_table("db.t"), op) for name, op in operations.items()}
    holds = {name: server.controller.hold("db", "t", writer=name) for name in writers}
    for writer in writers.values():
        writer.start()
    held = [holds[name].wait_held()[0] for name in order]
    assert [c.arrival.expected_main for c in held] == [base.snapshot_id] * 2  # the same starting point
    outcomes = server.controller.release_in_order(held)
    for name, writer in writers.items():
        holds[name].cancel()
        writer.join(10)
    return writers, held, outcomes


@pytest.mark.parametrize("order", [("w1", "w2"), ("w2", "w1")])
def test_held_appends_second_gets_409_and_retries(server: IcebergRestServer, order: tuple[str, str]) -> None:
    operations = {"w1": append([3], "blue"), "w2": append([4], "black")}
    writers, held, outcomes = run_held_pair(server, operations, order)
    assert [o.status for o in outcomes] == [200, 409]
    assert all(w.error is None for w in writers.values())  # pyiceberg refreshed and retried the loser
    records = [(r.arrival.writer, r.held, r.outcome.status) for r in server.controller.history()]
    first, second = order
    assert records == [(None, False, 200), (first, True, 200), (second, True, 409), (second, False, 200)]
    assert content(server) == [(1, "red"), (2, "green"), (3, "blue"), (4, "black")]
    snapshots = catalog(server).load_table("db.t").snapshots()
    # pyiceberg keeps the snapshot id across a retry and rebases it onto the winner's snapshot.
    assert [s.snapshot_id for s in snapshots[1:]] == [c.arrival.added_snapshot_ids[0] for c in held]
    assert [s.parent_snapshot_id for s in snapshots] == [None, snapshots[0].snapshot_id, snapshots[1].snapshot_id]


def test_held_deletes_second_fails_validation_after_409(server: IcebergRestServer) -> None:
    writers, _, outcomes = run_held_pair(server, {"w1": delete_id(1), "w2": delete_id(1)}, ("w1", "w2"))
    assert [o.status for o in outcomes] == [200, 409]
    assert writers["w1"].error is None
    assert isinstance(writers["w2"].error, ValidationException)  # on refresh: the file it deletes from is gone
    assert [r.outcome.status for r in server.controller.history()] == [200, 200, 409]  # no retried commit
    assert content(server) == [(2, "green")]
    assert len(catalog(server).load_table("db.t").snapshots()) == 2


def test_writer_tag_from_snapshot_summary(server: IcebergRestServer) -> None:
    """Without the header, the ``lakecert.writer`` snapshot property names the writer."""
    seeded_table(server)
    untagged = catalog(server).load_table("db.t")
    rows = pa.table({"id": [9], "color": ["x"]}, schema=SCHEMA)
    writer = Writer(untagged, lambda t: t.append(rows, snapshot_properties={"lakecert.writer": "w9"}))
    with server.controller.hold("db", "t", writer="w9") as hold:
        writer.start()
        (held,) = hold.wait_held(timeout_s=5)
        assert held.arrival.writer == "w9"
        assert held.release_and_wait().committed
    writer.join(5)
    assert writer.error is None


def test_unreleased_hold_times_out(server: IcebergRestServer) -> None:
    table = seeded_table(server)
    before = table.metadata_location
    writer = Writer(catalog(server, "w1").load_table("db.t"), append([3], "blue"))
    hold = server.controller.hold("db", "t", writer="w1", timeout_s=0.5)
    writer.start()
    (held,) = hold.wait_held()
    started = time.monotonic()
    with pytest.raises(ScheduleTimeout):
        held.outcome(timeout_s=5)  # longer than the hold: the hold's own timeout ends it
    assert time.monotonic() - started < 1.5
    writer.join(5)
    assert isinstance(writer.error, ServiceUnavailableError)  # answered 503, not applied
    assert catalog(server).load_table("db.t").metadata_location == before
    with pytest.raises(ScheduleTimeout):
        held.release()  # too late


def test_writer_that_never_arrives_times_out(server: IcebergRestServer) -> None:
    seeded_table(server)
    hold = server.controller.hold("db", "t", count=2, timeout_s=0.3)
    started = time.monotonic()
    with pytest.raises(ScheduleTimeout):
        hold.wait_held()
    assert time.monotonic() - started < 1.0


def test_cancelled_hold_answers_503_and_lets_later_commits_through(server: IcebergRestServer) -> None:
    seeded_table(server)
    writer = Writer(catalog(server, "w1").load_table("db.t"), append([3], "blue"))
    hold = server.controller.hold("db", "t")
    writer.start()
    (held,) = hold.wait_held(timeout_s=5)
    hold.cancel()
    assert held.outcome(timeout_s=5).status == 503
    writer.join(5)
    assert isinstance(writer.error, ServiceUnavailableError)
    append([4], "black")(catalog(server).load_table("db.t"))  # nothing captures it any more
    assert content(server) == [(1, "red"), (2, "green"), (4, "black")]


def snapshot_commit(base: int, sequence_number: int, snapshot_id: int) -> dict[str, Any]:
    """A raw commit adding one snapshot on top of ``base`` (its manifest list need not exist)."""
    snapshot = {
        "snapshot-id": snapshot_id,
        "parent-snapshot-id": base,
        "sequence-number": sequence_number,
        "timestamp-ms": int(time.time() * 1000),
        "manifest-list": f"file:///nowhere/snap-{snapshot_id}.avro",
        "summary": {"operation": "append"},
        "schema-id": 0,
    }
    return {
        "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": base}],
        "updates": [
            {"action": "add-snapshot", "snapshot": snapshot},
            {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id},
        ],
    }


def race_commits(url: str, bodies: list[dict[str, Any]]) -> list[int]:
    """POST every body from its own thread, all released by one barrier; the statuses in body order."""
    barrier = threading.Barrier(len(bodies))
    statuses = [0] * len(bodies)

    def post(i: int) -> None:
        barrier.wait()
        statuses[i] = requests.post(url, json=bodies[i], timeout=30).status_code

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return statuses


@pytest.mark.parametrize("held", [True, False], ids=["held-then-released-together", "free-race"])
def test_concurrent_commits_on_one_base_exactly_one_wins(server: IcebergRestServer, held: bool) -> None:
    table = seeded_table(server)
    base = table.current_snapshot()
    assert base is not None
    n = 8
    sequence_number = (base.sequence_number or 0) + 1
    bodies = [snapshot_commit(base.snapshot_id, sequence_number, 1000 + i) for i in range(n)]
    url = f"{server.url}/v1/lakecert/namespaces/db/tables/t"
    if held:
        hold = server.controller.hold("db", "t", count=n)
        posting = threading.Thread(target=lambda: statuses.extend(race_commits(url, bodies)))
        statuses: list[int] = []
        posting.start()
        commits = hold.wait_held()
        hold.release_all()
        outcomes = [c.outcome() for c in commits]
        posting.join(30)
        assert sorted(o.status for o in outcomes) == [200] + [409] * (n - 1)
    else:
        statuses = race_commits(url, bodies)
    assert sorted(statuses) == [200] + [409] * (n - 1)
    winner = 1000 + statuses.index(200)
    final = catalog(server).load_table("db.t")
    assert final.current_snapshot() is not None and final.current_snapshot().snapshot_id == winner  # type: ignore[union-attr]
    assert [s.snapshot_id for s in final.snapshots()] == [base.snapshot_id, winner]
    assert len(final.metadata.metadata_log) == 2  # create, seed append: one new version only


def test_admin_endpoints_drive_a_hold(server: IcebergRestServer) -> None:
    seeded_table(server)
    admin = f"{server.url}/lakecert"
    created = requests.post(f"{admin}/holds", json={"namespace": ["db"], "table": "t", "writer": "w1"}, timeout=5)
    assert created.status_code == 201
    hold_id = created.json()["id"]
    writer = Writer(catalog(server, "w1").load_table("db.t"), append([3], "blue"))
    writer.start()
    waited = requests.post(f"{admin}/holds/{hold_id}/wait", json={"timeout-s": 5}, timeout=10).json()
    (commit,) = waited["commits"]
    assert (commit["writer"], commit["state"]) == ("w1", "held")
    released = requests.post(f"{admin}/holds/{hold_id}/commits/{commit['seq']}/release", json={}, timeout=10)
    assert released.status_code == 200
    assert released.json()["outcome"]["status"] == 200
    writer.join(5)
    assert writer.error is None
    history = requests.get(f"{admin}/commits", timeout=5).json()["commits"]
    assert [(c["writer"], c["held"], c["outcome"]["status"]) for c in history] == [
        (None, False, 200),
        ("w1", True, 200),
    ]
    assert requests.delete(f"{admin}/holds/{hold_id}", timeout=5).status_code == 204


def test_admin_wait_times_out_as_504(server: IcebergRestServer) -> None:
    admin = f"{server.url}/lakecert"
    hold_id = requests.post(f"{admin}/holds", json={"namespace": ["db"], "table": "t"}, timeout=5).json()["id"]
    waited = requests.post(f"{admin}/holds/{hold_id}/wait", json={"timeout-s": 0.2}, timeout=5)
    assert waited.status_code == 504
    assert waited.json()["error"]["type"] == "ScheduleTimeout"
