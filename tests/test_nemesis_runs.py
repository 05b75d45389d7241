"""The nemesis's runs of lost answers (``NemesisCatalog.arm(..., run=n)``) and the oracle's whole
checkpoints (``complete_checkpoints``), without lakecert's runner."""

from __future__ import annotations

import pytest

from conformance.contract.delta import CatalogTimeout, GetCommitsResponse
from conformance.nemesis import NemesisCatalog
from conformance.oracle.names import complete_checkpoints, entries


class _Counting:
    """A catalog that answers every listing and mark, and counts what reached it."""

    def __init__(self) -> None:
        self.acted: list[str] = []

    def get_commits(self, table_id: str, start: int | None = None, end: int | None = None) -> GetCommitsResponse:
        self.acted.append("get_commits")
        return GetCommitsResponse([], 0)

    def mark_published(self, table_id: str, version: int) -> None:
        self.acted.append("mark_published")


def test_a_run_loses_the_next_answers_whatever_call_they_answer() -> None:
    inner = _Counting()
    nemesis = NemesisCatalog(inner)  # type: ignore[arg-type]
    nemesis.arm("mark_published", "lose", run=3)
    nemesis.get_commits("t")  # before the run starts: answered
    for call in (
        lambda: nemesis.mark_published("t", 1),
        lambda: nemesis.get_commits("t"),
        lambda: nemesis.get_commits("t"),
    ):
        with pytest.raises(CatalogTimeout):
            call()
    nemesis.get_commits("t")  # the run is over
    assert nemesis.lost == 3 and inner.acted.count("get_commits") == 4  # the catalog acted on every call
    nemesis.arm("get_commits", "lose", run=2)
    with pytest.raises(CatalogTimeout):
        nemesis.get_commits("t")
    nemesis.disarm()  # the rest of the run is dropped
    nemesis.get_commits("t")
    with pytest.raises(ValueError):
        nemesis.arm("commit", "duplicate", run=2)


def test_only_whole_checkpoints_count() -> None:
    log = "s3://b/t/_delta_log/"
    names = entries(
        [
            f"{log}{2:020d}.checkpoint.{1:010d}.{2:010d}.parquet",  # part 2 of 2 missing
            f"{log}{4:020d}.checkpoint.{1:010d}.{2:010d}.parquet",
            f"{log}{4:020d}.checkpoint.{2:010d}.{2:010d}.parquet",
            f"{log}{6:020d}.checkpoint.{1:010d}.{3:010d}.parquet",  # part 2 of 3 missing
            f"{log}{6:020d}.checkpoint.{3:010d}.{3:010d}.parquet",
            f"{log}{7:020d}.checkpoint.parquet",
            f"{log}_last_checkpoint",
        ]
    )
    assert complete_checkpoints(names) == {4, 7}
