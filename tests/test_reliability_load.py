"""Load: K concurrent writers x M commits over T tables, over HTTP on loopback, against
`lakecert serve` on SQLite and on PostgreSQL. Afterwards no version is ratified twice, no
listing has a gap, and no acknowledged commit is missing or changed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from reference_impl.server.runner import ServerProcess
from reference_impl.storage.local import path_to_uri
from tests.tooling.loadgen import Storm, history_problems, listings, make_tables

WRITERS, COMMITS, TABLES = 8, 25, 4


@pytest.mark.slow
def test_concurrent_writers_lose_nothing(db: str, tmp_path: Path) -> None:
    with ServerProcess(db, path_to_uri(tmp_path / "warehouse"), "--max-unpublished", "0") as server:
        tables = make_tables(server.url, TABLES)
        storm = Storm([server.url], tables, WRITERS, COMMITS).run(timeout_s=120)
        listed = listings(server.url, tables)
    assert storm.stop_reasons == []
    assert storm.acked == WRITERS * COMMITS
    assert history_problems(storm.proposals, listed) == []
    acked_per_table = Counter(p.table for p in storm.proposals if p.status == 200)
    assert [li["latest_table_version"] for li in listed] == [acked_per_table[t] for t in range(TABLES)]
    # The writers did contend: some proposals lost a race and were told the latest version.
    assert any(p.status == 409 for p in storm.proposals)
