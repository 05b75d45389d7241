"""A thread-safe in-memory ``Storage`` for demonstrating the variants' faults without lakecert."""

from __future__ import annotations

import threading
import time

from conformance.contract.delta import FileInfo


class MemoryStorage:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._objects: dict[str, tuple[bytes, int]] = {}

    def put(self, uri: str, data: bytes, *, if_absent: bool = False) -> None:
        with self._lock:
            if if_absent and uri in self._objects:
                raise FileExistsError(uri)
            self._objects[uri] = (bytes(data), time.time_ns() // 1_000_000)

    def get(self, uri: str) -> bytes:
        with self._lock:
            if uri not in self._objects:
                raise FileNotFoundError(uri)
            return self._objects[uri][0]

    def list(self, prefix_uri: str) -> list[FileInfo]:
        with self._lock:
            items = sorted((u, d) for u, d in self._objects.items() if u.startswith(prefix_uri))
        return [FileInfo(u, len(d[0]), d[1]) for u, d in items]

    def delete(self, uri: str) -> None:
        with self._lock:
            self._objects.pop(uri, None)

    def exists(self, uri: str) -> bool:
        with self._lock:
            return uri in self._objects
