"""The load generator against a server that behaves like Unity Catalog OSS 0.6.0 (docs/compatibility.md):
a 409 carries no structured latest version (served fault ``conflict-without-latest``) and a table
holds at most 10 unpublished commits (429, ``lakecert serve``'s default, UC's). The writers learn the
latest version by listing, publish as they go, wait out 429s, and lose nothing."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from tests.tooling.loadgen import Storm, history_problems, listings, make_tables
from tests.tooling.server import served

WRITERS, COMMITS, TABLES = 4, 12, 2  # 24 commits per table: more than twice the cap of 10


def _storm(tmp_path: Path, publish_every: int | None) -> tuple[Storm, list[dict[str, Any]]]:
    with served("--db", str(tmp_path / "c.sqlite"), "--fault", "conflict-without-latest") as (url, _):
        tables = make_tables(url, TABLES)
        storm = Storm([url], tables, WRITERS, COMMITS, publish_every=publish_every).run(timeout_s=600)
        return storm, listings(url, tables)


def _lost_nothing(storm: Storm, listed: list[dict[str, Any]]) -> None:
    assert storm.stop_reasons == []
    assert storm.acked == WRITERS * COMMITS
    assert history_problems(storm.proposals, listed) == []
    acked = Counter(p.table for p in storm.proposals if p.status == 200)
    assert [li["latest_table_version"] for li in listed] == [acked[t] for t in range(TABLES)]
    # Published commits left the listing: the history was rebuilt from _delta_log/ for them.
    assert storm.publications > 0


def test_writers_publish_as_they_go_and_learn_latest_by_listing(tmp_path: Path) -> None:
    storm, listed = _storm(tmp_path, publish_every=4)
    _lost_nothing(storm, listed)
    # The writers did contend, and no conflict named the latest version: each was learned by listing.
    conflicts = sum(p.status == 409 for p in storm.proposals)
    assert conflicts > 0 and storm.learned_by_listing == conflicts


def test_a_429_is_back_pressure(tmp_path: Path) -> None:
    storm, listed = _storm(tmp_path, publish_every=None)  # publish only when the server pushes back
    _lost_nothing(storm, listed)
    assert storm.backpressure > 0 and storm.backpressure == sum(p.status == 429 for p in storm.proposals)
