"""``HoldingStorage`` (conformance/observe/holding.py): racers held at their first read of their own
object until all are there; nothing held unless armed; a hold nobody completes lets go after its timeout."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from conformance.observe.holding import HoldingStorage
from reference_impl.storage import make_storage


def _objects(tmp_path: Path, n: int) -> tuple[HoldingStorage, list[str]]:
    storage = HoldingStorage(make_storage())
    uris = [(tmp_path / f"o{i}").as_uri() for i in range(n)]
    for u in uris:
        storage.put(u, b"x")
    return storage, uris


def test_every_racer_waits_for_the_others(tmp_path: Path) -> None:
    storage, uris = _objects(tmp_path, 3)
    passed: list[float] = []

    def read(uri: str, delay: float) -> None:
        time.sleep(delay)
        assert storage.exists(uri)
        passed.append(time.monotonic())

    with storage.holding(uris, 3, timeout_s=5):
        threads = [threading.Thread(target=read, args=(u, 0.05 * i)) for i, u in enumerate(uris)]
        start = time.monotonic()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert min(passed) - start >= 0.1  # the first reader waited for the last one, 0.1 s later
    assert storage.held == 3 and not storage.timed_out
    assert storage.get(uris[0]) == b"x"  # unarmed: nothing held


def test_a_hold_nobody_completes_lets_go(tmp_path: Path) -> None:
    storage, uris = _objects(tmp_path, 2)
    with storage.holding(uris, 2, timeout_s=0.05):
        start = time.monotonic()
        assert storage.exists(uris[0])  # alone: released by the timeout
        assert time.monotonic() - start < 2
        assert storage.exists(uris[0])  # held once only
    assert storage.timed_out
