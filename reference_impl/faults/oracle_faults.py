"""Faulty variants found only by the independent oracle: in-commit timestamps judged against the wall
clock, txnIds unique across the run, and a shared misunderstanding: content the reference's own
decoder and replay accept though the protocol forbids it (issue 28 item 5)."""

from __future__ import annotations

import calendar
import itertools
import time

from reference_impl.delta.actions import Action
from reference_impl.delta.client import ReferenceClient
from reference_impl.faults.base import fault


@fault(
    "ict-in-seconds",
    "client",
    ("WRT-ICT-WALLCLOCK",),
    "Stamps in-commit timestamps in seconds since the epoch, still strictly increasing (prev + 1).",
)
class IctInSeconds(ReferenceClient):
    def _next_ict(self, previous: int | None) -> int:
        now_s = self.clock() // 1000
        return now_s if previous is None else max(now_s, previous + 1)


@fault(
    "ict-local-time-as-utc",
    "client",
    ("WRT-ICT-WALLCLOCK",),
    "Stamps the local wall-clock reading as if it were UTC, kept above the previous commit's: hours off east of UTC.",
)
class IctLocalTimeAsUtc(ReferenceClient):
    def _next_ict(self, previous: int | None) -> int:
        local = calendar.timegm(time.localtime()) * 1000 + time.time_ns() // 1_000_000 % 1000
        return local if previous is None else max(local, previous + 1)


@fault(
    "txnid-per-client-counter",
    "client",
    ("WRT-TXNID-UNIQUE",),
    "txnIds count up per client (txn-0, txn-1, ...): unique in one client's table, repeated by the next client.",
)
class TxnIdPerClientCounter(ReferenceClient):
    _counter: itertools.count[int] | None = None

    def _txn_id(self) -> str | None:
        if self._counter is None:
            self._counter = itertools.count()
        return f"txn-{next(self._counter)}"


@fault(
    "add-written-twice",
    "client",
    ("WRT-FILE-ACTIONS-ONCE",),
    "Writes every add action twice in its commit (a retried write of the action list). The reference's decoder and"
    " replay (files keyed by path) accept it and read the right rows; the protocol allows one add per path.",
)
class AddWrittenTwice(ReferenceClient):
    def _order_actions(self, actions: list[Action]) -> list[Action]:
        return [copy for a in actions for copy in ([a, a] if "add" in a else [a])]
