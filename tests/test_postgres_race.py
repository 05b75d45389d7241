"""Several `lakecert serve` PROCESSES on one PostgreSQL database and one table, over HTTP:
exactly one ratification per version, no gap, every server lists the same history; and the
racy faulty variant, served the same way, is caught by the same checks."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest

from reference_impl.server.runner import serving
from reference_impl.storage.local import path_to_uri
from tests.pg import Postgres
from tests.tooling.loadgen import Storm, history_problems, listings, make_tables
from tests.tooling.server import COMMITS, Driver, Table

SERVERS = 3
PER_SERVER = 2  # proposers per server
ROUNDS = 8


def race_round(urls: list[str], table: Table, version: int) -> list[httpx.Response]:
    """Every proposer stages its own file for ``version``; all propose at once, each through its server."""
    proposers = len(urls) * PER_SERVER
    barrier = threading.Barrier(proposers)
    answers: list[httpx.Response] = []
    lock = threading.Lock()

    def propose(i: int) -> None:
        with httpx.Client(base_url=urls[i % len(urls)], timeout=30) as http:
            driver = Driver(http)
            body = driver.commit_body(table, version, driver.stage(table, version))
            barrier.wait(timeout=30)
            answer = http.post(COMMITS, json=body)
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=propose, args=(i,)) for i in range(proposers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return answers


def test_server_processes_ratify_each_version_once(postgres: Postgres, tmp_path: Path) -> None:
    db, warehouse = postgres.new_schema(), path_to_uri(tmp_path / "warehouse")
    with serving(SERVERS, db, warehouse, "--max-unpublished", "0") as servers:
        urls = [s.url for s in servers]
        assert len({s.pid for s in servers}) == SERVERS
        (table,) = make_tables(urls[0], 1)
        for version in range(1, ROUNDS + 1):
            answers = race_round(urls, table, version)
            assert sorted(a.status_code for a in answers) == [200] + [409] * (SERVERS * PER_SERVER - 1)
            conflicts = [a.json()["details"][0]["metadata"] for a in answers if a.status_code == 409]
            assert {c["latest_table_version"] for c in conflicts} == {str(version)}
        seen = [listings(url, [table])[0] for url in urls]
    assert all(listing == seen[0] for listing in seen)
    assert [c["version"] for c in seen[0]["commits"]] == list(range(1, ROUNDS + 1))
    assert seen[0]["latest_table_version"] == ROUNDS


@pytest.mark.slow
def test_writers_through_every_server_leave_one_history(postgres: Postgres, tmp_path: Path) -> None:
    db, warehouse = postgres.new_schema(), path_to_uri(tmp_path / "warehouse")
    with serving(SERVERS, db, warehouse, "--max-unpublished", "0") as servers:
        urls = [s.url for s in servers]
        tables = make_tables(urls[0], 2)
        storm = Storm(urls, tables, writers=SERVERS * PER_SERVER, commits=20).run(timeout_s=120)
        seen = [listings(url, tables) for url in urls]
    assert storm.stop_reasons == []
    assert storm.acked == SERVERS * PER_SERVER * 20
    assert all(listed == seen[0] for listed in seen)
    assert history_problems(storm.proposals, seen[0]) == []


@pytest.mark.slow
def test_racy_variant_is_caught_across_processes(postgres: Postgres, tmp_path: Path) -> None:
    """The same storm against `--fault racy-ratify` (check and act in two transactions): the
    checks above see a version acknowledged twice or an acknowledged commit overwritten."""
    db, warehouse = postgres.new_schema(), path_to_uri(tmp_path / "warehouse")
    with serving(SERVERS, db, warehouse, "--max-unpublished", "0", "--fault", "racy-ratify") as servers:
        urls = [s.url for s in servers]
        (table,) = make_tables(urls[0], 1)
        storm = Storm(urls, [table], writers=SERVERS * PER_SERVER, commits=10).run(timeout_s=120)
        listed = listings(urls[0], [table])
    assert history_problems(storm.proposals, listed) != []
