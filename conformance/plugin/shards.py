"""One run's checks shared among processes of its own (``jobs``), for a target whose every part is
built in the process that uses it (the reference and its faulty variants: ``in_process``).

Every process collects the same checks; each takes the next one nobody has claimed when it is ready
for one (``Shard``), so a process that drew light checks takes more. Process 0 is ``lakecert run``
itself; the others are forked from it just before its session starts. Each of those builds its own
target in a work folder of its own (``work/shard-<k>``), writes its Allure results and reproducers
into the run's folders, and leaves its rows in its work folder when its session ends. Process 0
waits for them at the end of its own session and judges every row, in collection order. A process
that ends without its rows leaves the run incomplete (never certified, exit 2); an interrupted
process 0 stops the others first.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest

from conformance.report.outcomes import Outcome
from conformance.report.results import CheckResult
from conformance.run_context import RunContext

ROWS = "rows.json"
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def work_folder(out: Path, index: int) -> Path:
    """Where process ``index`` (> 0) keeps its target's parts and leaves its rows."""
    return out / "work" / f"shard-{index}"


class Counter(Protocol):
    """A number shared by the run's processes (``multiprocessing.Value``, made before they fork)."""

    value: int

    def get_lock(self) -> AbstractContextManager[Any]: ...


def counter() -> Counter:
    """The run's next unclaimed check, in shared memory: made by process 0 before it forks."""
    shared: Counter = multiprocessing.get_context("fork").Value("q", 0)
    return shared


@dataclass
class Shard:
    """This process's place in the run: ``index`` of ``count``; process 0 knows the others' pids.

    Every process collects every check; each runs the ones it claims from ``next_check``, the next
    one as it starts a check (so that pytest tears down and sets up fixtures for the check it will
    really run next). A process that finishes early claims more: the shares even out."""

    index: int
    count: int
    next_check: Counter
    children: tuple[int, ...] = ()
    order: dict[str, int] = field(default_factory=dict)  # every collected check's place, in every process

    def pytest_configure(self, config: pytest.Config) -> None:
        config.stash[SHARD_KEY] = self

    @pytest.hookimpl(trylast=True)  # once ``selection`` and every conftest narrowed the checks
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.order = {item.nodeid: i for i, item in enumerate(session.items)}

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        items = session.items
        mine = self._claim()
        while mine < len(items):
            after = self._claim()
            nextitem = items[after] if after < len(items) else None
            items[mine].config.hook.pytest_runtest_protocol(item=items[mine], nextitem=nextitem)
            if session.shouldfail:
                raise session.Failed(session.shouldfail)
            if session.shouldstop:
                raise session.Interrupted(session.shouldstop)
            mine = after
        return True

    def _claim(self) -> int:
        with self.next_check.get_lock():
            claimed = self.next_check.value
            self.next_check.value = claimed + 1
        return claimed


SHARD_KEY = pytest.StashKey[Shard]()


def start(count: int, share: Callable[[int], None]) -> tuple[int, ...]:
    """Fork processes 1..count-1, each running ``share(k)`` (which never returns); their pids."""
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pids = []
    for k in range(1, count):
        pid = os.fork()
        if pid == 0:
            _end_with(parent)
            share(k)
            os._exit(2)  # not reached: ``share`` ends its process
        pids.append(pid)
    return tuple(pids)


def _end_with(parent: int) -> None:
    """In a forked process: SIGTERM when process 0 ends, however it ends (SIGKILL, a crash), so that
    no share of a run goes on alone, writing into the run's folders. Linux only (``prctl``)."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # process 0 ended before the request was in place
        os.kill(os.getpid(), signal.SIGTERM)


def hand_over(ctx: RunContext, results: list[CheckResult], interrupted: bool, index: int) -> None:
    """A process k > 0 at its session's end: its rows, for process 0."""
    rows = {
        "rows": [r.to_json() for r in results],
        "held_schedules": ctx.held_schedules,
        "interrupted": interrupted,
    }
    path = work_folder(ctx.out, index) / ROWS
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(rows))
    os.replace(tmp, path)  # process 0 never reads half a file


def gather(config: pytest.Config, results: list[CheckResult], interrupted: bool) -> tuple[list[CheckResult], bool]:
    """Process 0 at its session's end: every process's rows in collection order, and whether the run
    was interrupted (in any process). ``ctx.collected`` becomes the number of checks of all shares,
    so that a missing share leaves the run incomplete."""
    shard = config.stash.get(SHARD_KEY, None)
    if shard is None or shard.count == 1:
        return results, interrupted
    ctx = RunContext.of(config)
    interrupted = _wait(shard.children, stop=interrupted) or interrupted
    shard.children = ()  # waited for: their pids may belong to other processes from now on
    rows = list(results)
    for k in range(1, shard.count):
        path = work_folder(ctx.out, k) / ROWS
        if not path.exists():
            print(f"lakecert: process {k} of {shard.count} of this run left no results", file=sys.stderr)
            continue
        data = json.loads(path.read_text())
        rows += [_row(r) for r in data["rows"]]
        interrupted = interrupted or bool(data["interrupted"])
        _add_counts(ctx.held_schedules, data["held_schedules"])
    ctx.collected = len(shard.order)
    rows.sort(key=lambda r: shard.order.get(r.test, len(shard.order)))
    return rows, interrupted


def stop(shard: Shard | None) -> None:
    """Process 0 after its session: the others stopped and waited for, if its session ended
    before it could gather them (pytest broke during collection, say)."""
    if shard is not None and shard.children:
        _wait(shard.children, stop=True)
        shard.children = ()


def _wait(pids: tuple[int, ...], *, stop: bool) -> bool:
    """Wait for the other processes (stopped first when this one was interrupted); True when this
    process was interrupted while it waited. A process stopped once ends its session to hand its
    rows over and ignores a second stop; an interrupt while waiting for it ends it (SIGKILL)."""
    if stop:
        _signal(pids, signal.SIGTERM)
    try:
        for pid in pids:
            _reap(pid)
    except KeyboardInterrupt:
        _signal(pids, signal.SIGTERM if not stop else signal.SIGKILL)
        for pid in pids:
            _reap(pid)
        return True
    return False


def _signal(pids: tuple[int, ...], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):  # already ended
            os.kill(pid, sig)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):  # already waited for
        os.waitpid(pid, 0)


def _row(data: dict[str, Any]) -> CheckResult:
    return CheckResult(
        data["test"],
        data["requirements"],
        Outcome(data["status"]),
        data["message"],
        data["duration_s"],
        data["reproducer"],
        data["violated"],
        data["premise_broken"],
        list(data.get("observations") or []),
    )


def _add_counts(into: dict[str, dict[str, object]], other: dict[str, dict[str, object]]) -> None:
    """The explorer's counts per format (``held_schedules``): asks and engine runs add up."""
    for fmt, counts in other.items():
        mine = into.setdefault(fmt, {**counts, "asked": 0, "engine_runs": 0})
        for key in ("asked", "engine_runs"):
            mine[key] = int(str(mine[key])) + int(str(counts[key]))
