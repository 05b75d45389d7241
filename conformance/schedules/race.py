"""Races with recorded seeds: N callables released together from a barrier.

The seed fixes the order in which threads are started and a small per-thread
delay after the barrier, so a failing interleaving can be rerun with its seed.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import allure

from conformance.observe.transcript import Transcript


@dataclass
class RaceOutcome:
    ok: bool
    result: object = None
    error: BaseException | None = None


def race(
    fns: Sequence[Callable[[], object]], *, seed: int, transcript: Transcript | None = None, max_delay_s: float = 0.0005
) -> list[RaceOutcome]:
    rng = random.Random(seed)
    order = list(range(len(fns)))
    rng.shuffle(order)
    delays = [rng.uniform(0, max_delay_s) for _ in fns]
    if transcript is not None:
        transcript.notes.setdefault("races", []).append({"seed": seed, "start_order": order, "delays_s": delays})
    barrier = threading.Barrier(len(fns))
    outcomes: list[RaceOutcome] = [RaceOutcome(False) for _ in fns]

    def run(i: int) -> None:
        barrier.wait()
        time.sleep(delays[i])
        try:
            outcomes[i] = RaceOutcome(True, fns[i]())
        except BaseException as e:  # recorded and judged by the check
            outcomes[i] = RaceOutcome(False, error=e)

    threads = [threading.Thread(target=run, args=(i,), name=f"proposer-{i}") for i in order]
    with allure.step(f"race of {len(fns)}: seed {seed}, start order {order}"):
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    return outcomes
