"""Faults for the round-17 blind misses (issue 28, session 22): see docs/mutation.md, round 17."""

from __future__ import annotations

import contextlib
from typing import ClassVar

from conformance.contract.delta import TableInfo
from reference_impl.delta.client import Builder, Proposals, ReferenceClient
from reference_impl.delta.log_paths import delta_uri
from reference_impl.delta.snapshot import LogReader
from reference_impl.faults.base import fault


@fault(
    "publish-page-of-100-marks-latest",
    "client",
    breaks=("WRT-PUBLISH-ORDER",),
    description="To bound one publish call, the publisher copies the first 100 ratified, unpublished commits"
    " it lists, oldest first ('the next publish catches up'), and then tells the catalog the newest listed"
    " version is published, not the last one it copied. Right with up to 100 commits waiting; past that the"
    " commits above the page are never copied, the catalog forgets them, and the next publication lands"
    " above the gap (a sibling of round 17's batch of 32: a longer page, caught only by a longer run).",
)
class PublishPageOf100MarksLatest(ReferenceClient):
    PAGE: ClassVar[int] = 100

    def publish(self, name: str) -> None:
        table = self._table(name)
        stored = {c.version: c for c in self.catalog.get_commits(table.table_id).commits}
        if not stored:
            return
        for v in self._publish_order(list(stored))[: self.PAGE]:
            content = self._log.commit_bytes(LogReader.catalog_ref(stored[v]))
            with contextlib.suppress(FileExistsError):
                self.storage.put(delta_uri(table.location, v), self._published_bytes(content), if_absent=True)
        self._mark_published(table.table_id, max(stored))


@fault(
    "ict-retry-winner-plus-elapsed",
    "client",
    breaks=("WRT-ICT-WALLCLOCK",),
    description="After losing a version, the writer stamps its rebased commit with the winner's in-commit"
    " timestamp plus the time its retry took since the first attempt (at least 1 ms), keeping the distance"
    " it measured to the winner instead of reading the clock. First attempts read the clock; a retry after a"
    " rival stamped a day ago (a peer with a slow clock) is stamped a day in the past (a sibling of round"
    " 17's winner + 1).",
)
class IctRetryWinnerPlusElapsed(ReferenceClient):
    def _commit(self, table: TableInfo, operation: str, build: Builder) -> int:
        self.__dict__["_first_stamp"] = None  # a new commit: its first attempt reads the clock
        return super()._commit(table, operation, build)

    def _next_ict(self, previous: int | None) -> int:
        now = self.clock()
        first: int | None = self.__dict__.get("_first_stamp")
        if first is None or previous is None:
            self.__dict__["_first_stamp"] = now
            return now if previous is None else max(now, previous + 1)
        return previous + max(1, now - first)


@fault(
    "ict-after-lost-answer-winner-plus-one",
    "client",
    breaks=("WRT-ICT-WALLCLOCK",),
    description="A writer whose proposal's answer was lost asks the catalog; when another commit holds the"
    " version, it rebuilds on it and stamps the retry with that commit's in-commit timestamp + 1 ms ('we lost"
    " by a hair'), without reading the clock. A retry after a conflict it was told of reads the clock: only"
    " the lost-answer path is wrong, and only behind a winner stamped in the past (a peer with a slow clock).",
)
class IctAfterLostAnswerWinnerPlusOne(ReferenceClient):
    def _commit(self, table: TableInfo, operation: str, build: Builder) -> int:
        self.__dict__["_lost_to_rival"] = False
        return super()._commit(table, operation, build)

    def _after_lost_answer(self, table: TableInfo, version: int, mine: Proposals) -> int | None:
        landed = super()._after_lost_answer(table, version, mine)
        self.__dict__["_lost_to_rival"] = landed is None
        return landed

    def _next_ict(self, previous: int | None) -> int:
        if self.__dict__.get("_lost_to_rival") and previous is not None:
            self.__dict__["_lost_to_rival"] = False
            return previous + 1
        return super()._next_ict(previous)
