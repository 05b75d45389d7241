"""The nemesis on the storage side: a client that crashes part-way through a sequence of writes.

``NemesisCatalog`` can crash a client at a catalog call only; a publication is a sequence of storage
writes (one copy per ratified commit) followed by one catalog call (the mark), and a crash can fall
between any two of them. ``CrashingStorage`` stands between a client under test and its storage and,
armed with a count, lets that many published commits (``_delta_log/<version>.json``) be written, then
raises ``ClientCrashed`` instead of the next one. From then on every call raises it too: the process
is gone, nothing it does after the crash reaches storage, until ``revive`` (restarted in place)."""

from __future__ import annotations

from conformance.contract.delta import FileInfo, Storage
from conformance.nemesis.wrapper import ClientCrashed
from conformance.oracle.names import parse


class CrashingStorage:
    """``contract.Storage`` around ``inner`` (the recording storage the client would otherwise get)."""

    def __init__(self, inner: Storage) -> None:
        self._inner = inner
        self._copies_left: int | None = None  # published commits still let through; None: unarmed
        self.crashed = False
        self.fired: list[str] = []

    def crash_after_copies(self, copies: int) -> None:
        """Crash the client at its next write of a published commit once ``copies`` have been written."""
        self._copies_left = copies

    def revive(self) -> None:
        """The client runs again (restarted in place), unarmed: its calls reach storage once more."""
        self.crashed, self._copies_left = False, None

    def _alive(self) -> None:
        if self.crashed:
            raise ClientCrashed("lakecert's nemesis crashed the client earlier: it no longer runs")

    def put(self, uri: str, data: bytes, *, if_absent: bool = False) -> None:
        self._alive()
        name = parse(uri)
        if self._copies_left is not None and name is not None and name.kind == "delta":
            if self._copies_left == 0:
                self.crashed = True
                self.fired.append(f"the client crashed before writing _delta_log's v{name.version}")
                raise ClientCrashed(f"lakecert's nemesis crashed the client before it wrote {uri}")
            self._copies_left -= 1
        self._inner.put(uri, data, if_absent=if_absent)

    def get(self, uri: str) -> bytes:
        self._alive()
        return self._inner.get(uri)

    def list(self, prefix_uri: str) -> list[FileInfo]:
        self._alive()
        return self._inner.list(prefix_uri)

    def delete(self, uri: str) -> None:
        self._alive()
        self._inner.delete(uri)

    def exists(self, uri: str) -> bool:
        self._alive()
        return self._inner.exists(uri)
