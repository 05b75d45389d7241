"""The run's storage as the catalog under test gets it, able to hold chosen objects at a barrier.

A defect that needs two calls to overlap inside the catalog (a check made before a storage read and
acted on after it, without checking again) shows only when they do. Repeating a race makes it likely;
holding every racer at its first access to an object of its own until all of them got there makes it
certain wherever the catalog reads those objects through the storage lakecert handed it. A catalog that
does not (one that reads nothing there, or a server with storage of its own) is never held: the race
then runs as it would anyway, repeated. Nothing is held unless a check asks, and a holder that is not
joined by every party lets them all go after ``timeout_s`` (a catalog that reads inside its own lock)."""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Iterable, Iterator

from conformance.contract.delta import FileInfo, Storage


class HoldingStorage:
    """``contract.Storage`` around ``inner``: ``holding(uris, parties)`` holds the first access to each of
    ``uris`` (``exists``, ``get``, or a ``list`` of a prefix of it) until ``parties`` such accesses wait. A uri
    listed n times holds its first n accesses (racers that all read one object, as registrations of one id)."""

    def __init__(self, inner: Storage) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self._waiting: Counter[str] = Counter()  # held objects, and how many accesses to each are still held
        self._barrier: threading.Barrier | None = None
        self._timeout_s = 0.0
        self.held = 0  # accesses that met the barrier while armed (the check reads it into its transcript)
        self.timed_out = False  # a holder was not joined by every party in time (reads serialised elsewhere)

    @contextlib.contextmanager
    def holding(self, uris: Iterable[str], parties: int, timeout_s: float = 1.0) -> Iterator[None]:
        # ``timeout_s``: long enough for every racer to arrive on a loaded 2-core machine (at 0.25 s a
        # busy CI worker could let a hold go early, and a catch that needs the hold become likely only);
        # a catalog that serialises its reads pays it once per check (the check then stops holding).
        with self._lock:
            self.timed_out = False
            self._waiting = Counter(uris)
            self._barrier = threading.Barrier(parties)
            self._timeout_s = timeout_s
        try:
            yield
        finally:
            with self._lock:
                self._waiting, self._barrier = Counter(), None

    def _hold(self, match: str, prefix: bool = False) -> None:
        if self._barrier is None:
            return
        with self._lock:
            barrier = self._barrier
            hit = [u for u in self._waiting if (u.startswith(match) if prefix else u == match)]
            if barrier is None or not hit:
                return
            self._waiting.subtract(hit)
            self._waiting = +self._waiting  # drops the objects whose accesses are all held
            self.held += 1
        try:
            barrier.wait(self._timeout_s)
        except threading.BrokenBarrierError:
            self.timed_out = True

    def put(self, uri: str, data: bytes, *, if_absent: bool = False) -> None:
        self._inner.put(uri, data, if_absent=if_absent)

    def get(self, uri: str) -> bytes:
        self._hold(uri)
        return self._inner.get(uri)

    def list(self, prefix_uri: str) -> list[FileInfo]:
        self._hold(prefix_uri, prefix=True)
        return self._inner.list(prefix_uri)

    def delete(self, uri: str) -> None:
        self._inner.delete(uri)

    def exists(self, uri: str) -> bool:
        self._hold(uri)
        return self._inner.exists(uri)
