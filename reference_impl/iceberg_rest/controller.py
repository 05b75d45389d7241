"""The schedule controller: hold commits at the catalog so the harness decides the order they land in.

A *hold* captures the next ``count`` commit requests to one table (optionally only those of one
writer) in arrival order. A captured request blocks inside the server before its requirements are
checked, i.e. the writer has reached its commit step and waits there. The harness waits until the
commits it expects are held, releases them in the order it chooses, and reads each one's outcome
(200 committed, 409 requirement failed...). A client that retries after a 409 sends a new request;
it is not captured once the hold is full, so retries run free and show up in ``history()``.

A writer is named by the ``X-Lakecert-Writer`` header (both Spark's and pyiceberg's REST clients send
every ``header.<name>`` catalog property as a header), or else by the ``lakecert.writer`` property of
the snapshot summary it commits (``snapshot_properties`` in pyiceberg, ``snapshot-property.*`` in Spark).

The same controller holds commits to any other REST catalog: lakecert's holding proxy
(``conformance/adapters/catalog_proxy.py``) sits in front of it and hands every commit request it
forwards to ``run`` (see there), so a hold, its release order and the history mean the same whichever
catalog applies the commit.

Nothing waits forever. A held request not released within the hold's timeout is answered 503 without
being applied, and the harness gets ``ScheduleTimeout`` from ``outcome()``; ``wait_held`` raises
``ScheduleTimeout`` when the writers do not arrive in time.
"""

from __future__ import annotations

import enum
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TypeVar

from pyiceberg.table import CommitTableResponse
from pyiceberg.table.update import AddSnapshotUpdate, AssertRefSnapshotId, TableRequirement, TableUpdate

from reference_impl.iceberg_rest import errors
from reference_impl.iceberg_rest.names import Namespace, dotted

WRITER_HEADER = "X-Lakecert-Writer"
WRITER_PROPERTY = "lakecert.writer"
R = TypeVar("R")


class ScheduleTimeout(TimeoutError):
    """A schedule step did not happen in time: a writer never reached its commit, or a held commit was
    never released. The harness's fault or a stuck writer, never a verdict on the target."""


class State(enum.Enum):
    HELD = "held"
    RELEASED = "released"  # let through; its outcome follows
    DONE = "done"
    EXPIRED = "expired"  # not released in time; answered 503, nothing applied
    CANCELLED = "cancelled"  # its hold was cancelled while it waited; answered 503, nothing applied


@dataclass(frozen=True)
class CommitArrival:
    """A commit request as the catalog received it."""

    namespace: Namespace
    table: str
    writer: str | None
    requirements: tuple[TableRequirement, ...]
    updates: tuple[TableUpdate, ...]

    @property
    def added_snapshot_ids(self) -> tuple[int, ...]:
        return tuple(u.snapshot.snapshot_id for u in self.updates if isinstance(u, AddSnapshotUpdate))

    @property
    def expected_main(self) -> int | None:
        """The snapshot id ``assert-ref-snapshot-id`` expects ``main`` at (the writer's base), if asserted."""
        for r in self.requirements:
            if isinstance(r, AssertRefSnapshotId) and r.ref == "main":
                return r.snapshot_id
        return None


def writer_of(header: str | None, updates: Iterable[TableUpdate]) -> str | None:
    if header:
        return header
    for update in updates:
        summary = update.snapshot.summary if isinstance(update, AddSnapshotUpdate) else None
        if summary is not None and (tag := summary.get(WRITER_PROPERTY)):
            return str(tag)
    return None


@dataclass(frozen=True)
class CommitOutcome:
    """What the writer was answered: ``status`` 200 with the new pointer, or an error status and type."""

    status: int
    error_type: str | None = None
    metadata_location: str | None = None
    snapshot_id: int | None = None  # the table's current snapshot after a successful commit

    @property
    def committed(self) -> bool:
        return self.status == 200


@dataclass(frozen=True)
class CommitRecord:
    """One commit request in the history, held or not; ``seq`` is its arrival order at the catalog."""

    seq: int
    arrival: CommitArrival
    held: bool
    outcome: CommitOutcome


class HeldCommit:
    """A commit request captured by a hold."""

    def __init__(self, hold: Hold, seq: int, arrival: CommitArrival) -> None:
        self.hold, self.seq, self.arrival = hold, seq, arrival
        self.deadline = time.monotonic() + hold.timeout_s
        self._cond = hold.controller.cond
        self._state = State.HELD
        self._outcome: CommitOutcome | None = None

    def __repr__(self) -> str:
        who = f" by {self.arrival.writer}" if self.arrival.writer else ""
        return f"commit #{self.seq}{who} to {dotted((*self.arrival.namespace, self.arrival.table))}"

    @property
    def state(self) -> State:
        with self._cond:
            return self._state

    @property
    def result(self) -> CommitOutcome | None:
        """The outcome if the commit has finished, without waiting."""
        with self._cond:
            return self._outcome

    def release(self) -> None:
        """Let the request go on to its requirement check; releasing twice is harmless."""
        with self._cond:
            if self._state is State.EXPIRED:
                raise ScheduleTimeout(f"{self} expired before it was released (hold timeout {self.hold.timeout_s}s)")
            if self._state is State.HELD:
                self._state = State.RELEASED
                self._cond.notify_all()

    def outcome(self, timeout_s: float | None = None) -> CommitOutcome:
        """Wait for the answer the writer got; ``ScheduleTimeout`` if it expired or does not come in time."""
        wait = self.hold.timeout_s if timeout_s is None else timeout_s
        with self._cond:
            self._cond.wait_for(lambda: self._outcome is not None or self._state is State.EXPIRED, wait)
            if self._state is State.EXPIRED:
                raise ScheduleTimeout(f"{self} was never released within its hold timeout of {self.hold.timeout_s}s")
            if self._outcome is None:
                still = " (it is still held: release it first)" if self._state is State.HELD else ""
                raise ScheduleTimeout(f"{self} had no outcome within {wait}s{still}")
            return self._outcome

    def release_and_wait(self, timeout_s: float | None = None) -> CommitOutcome:
        self.release()
        return self.outcome(timeout_s)

    # server side

    def _await_release(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._state is not State.HELD, max(0.0, self.deadline - time.monotonic()))
            if self._state is State.HELD:
                self._state = State.EXPIRED
                self._cond.notify_all()
            if self._state is State.EXPIRED:
                raise errors.unavailable(f"lakecert hold: {self} was not released within {self.hold.timeout_s}s")
            if self._state is State.CANCELLED:
                raise errors.unavailable(f"lakecert hold: {self} was cancelled")

    def _finish(self, outcome: CommitOutcome) -> None:
        with self._cond:
            self._outcome = outcome
            if self._state is State.RELEASED:
                self._state = State.DONE
            self._cond.notify_all()


class Hold:
    """Captures the next ``count`` commits to one table (of one writer, if ``writer`` is given)."""

    def __init__(
        self,
        controller: ScheduleController,
        hold_id: int,
        namespace: Namespace,
        table: str,
        count: int,
        writer: str | None,
        timeout_s: float,
    ) -> None:
        self.controller, self.id = controller, hold_id
        self.namespace, self.table = namespace, table
        self.count, self.writer, self.timeout_s = count, writer, timeout_s
        self.cancelled = False
        self._commits: list[HeldCommit] = []

    def __repr__(self) -> str:
        who = f" of {self.writer}" if self.writer else ""
        return f"hold {self.id} ({self.count} commit(s){who} to {dotted((*self.namespace, self.table))})"

    @property
    def commits(self) -> list[HeldCommit]:
        """The captured commits, in arrival order."""
        with self.controller.cond:
            return list(self._commits)

    def _captures(self, arrival: CommitArrival) -> bool:
        return (
            not self.cancelled
            and len(self._commits) < self.count
            and (arrival.namespace, arrival.table) == (self.namespace, self.table)
            and (self.writer is None or self.writer == arrival.writer)
        )

    def wait_held(self, n: int | None = None, timeout_s: float | None = None) -> list[HeldCommit]:
        """Block until ``n`` (default: all ``count``) commits are held; the first ``n``, in arrival order."""
        n = self.count if n is None else n
        if not 0 < n <= self.count:
            raise ValueError(f"{self} captures at most {self.count} commits, not {n}")
        wait = self.timeout_s if timeout_s is None else timeout_s
        with self.controller.cond:
            if not self.controller.cond.wait_for(lambda: len(self._commits) >= n, wait):
                raise ScheduleTimeout(
                    f"{self}: {len(self._commits)} of {n} expected commits reached the catalog within {wait}s"
                )
            return self._commits[:n]

    def release_all(self) -> None:
        for commit in self.commits:
            commit.release()

    def cancel(self) -> None:
        """Capture nothing more; commits still held are answered 503 and change nothing."""
        with self.controller.cond:
            self.cancelled = True
            for commit in self._commits:
                if commit._state is State.HELD:
                    commit._state = State.CANCELLED
            self.controller.cond.notify_all()

    def __enter__(self) -> Hold:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.cancel()


class ScheduleController:
    """Holds, releases and records commits; the server calls ``run_commit`` for every commit request."""

    def __init__(self, default_timeout_s: float = 10.0) -> None:
        self.default_timeout_s = default_timeout_s
        self.cond = threading.Condition()
        self._holds: list[Hold] = []
        self._ids = itertools.count(1)
        self._seq = itertools.count(1)
        self._history: list[CommitRecord] = []

    def hold(
        self,
        namespace: str | Sequence[str],
        table: str,
        count: int = 1,
        *,
        writer: str | None = None,
        timeout_s: float | None = None,
    ) -> Hold:
        """Capture the next ``count`` commits to ``namespace.table`` (of ``writer`` only, if given)."""
        if count < 1:
            raise ValueError(f"count must be at least 1, not {count}")
        timeout = self.default_timeout_s if timeout_s is None else timeout_s
        if timeout <= 0:
            raise ValueError(f"timeout_s must be positive, not {timeout}")
        ns = (namespace,) if isinstance(namespace, str) else tuple(namespace)
        with self.cond:
            hold = Hold(self, next(self._ids), ns, table, count, writer, timeout)
            self._holds.append(hold)
        return hold

    def holds(self) -> list[Hold]:
        with self.cond:
            return list(self._holds)

    def get(self, hold_id: int) -> Hold | None:
        with self.cond:
            return next((h for h in self._holds if h.id == hold_id), None)

    def history(self) -> list[CommitRecord]:
        """Every commit request that finished, in the order they finished."""
        with self.cond:
            return list(self._history)

    def release_in_order(self, commits: Iterable[HeldCommit], timeout_s: float | None = None) -> list[CommitOutcome]:
        """Release each commit and wait for its outcome before releasing the next."""
        return [commit.release_and_wait(timeout_s) for commit in commits]

    def close(self) -> None:
        """Cancel every hold, so no request stays blocked (the server calls it when it stops)."""
        for hold in self.holds():
            hold.cancel()

    # server side

    def run_commit(self, arrival: CommitArrival, commit: Callable[[], CommitTableResponse]) -> CommitTableResponse:
        """Hold the request if a hold captures it, then run ``commit`` and record what it answered."""
        return self.run(arrival, commit, response_outcome)

    def run(self, arrival: CommitArrival, commit: Callable[[], R], outcome_of: Callable[[R], CommitOutcome]) -> R:
        """``run_commit`` for any way of applying a commit: in this catalog (``commit`` returns its
        response) or in another catalog behind lakecert's holding proxy (``commit`` forwards the request
        and returns the upstream's answer). ``outcome_of`` reads the outcome from what ``commit``
        returned; an ``IcebergApiError`` it raises is the outcome too. One hold mechanism for both."""
        with self.cond:
            seq = next(self._seq)
            hold = next((h for h in self._holds if h._captures(arrival)), None)
            held = None
            if hold is not None:
                held = HeldCommit(hold, seq, arrival)
                hold._commits.append(held)
                self.cond.notify_all()
        outcome = CommitOutcome(500, "InternalServerError")
        try:
            if held is not None:
                held._await_release()
            result = commit()
            outcome = outcome_of(result)
            return result
        except errors.IcebergApiError as e:
            outcome = CommitOutcome(e.code, e.type)
            raise
        finally:
            with self.cond:
                self._history.append(CommitRecord(seq, arrival, held is not None, outcome))
            if held is not None:
                held._finish(outcome)


def response_outcome(response: CommitTableResponse) -> CommitOutcome:
    return CommitOutcome(200, None, response.metadata_location, response.metadata.current_snapshot_id)
