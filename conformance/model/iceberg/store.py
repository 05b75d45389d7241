"""The ObjectStore role: an immutable key-value store of files (put-if-absent, get)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from conformance.contract.iceberg import Row
from conformance.model.iceberg.files import DataFile, DeleteFile, Position
from conformance.model.iceberg.snapshot import Metadata, Snapshot

Stored = DataFile | DeleteFile | Metadata


class ObjectStore:
    """Values are immutable, so a store is one too: ``put`` returns a new store. Hashable, so
    exploration can recognise a state it has seen."""

    __slots__ = ("_hash", "_objects")

    def __init__(self, objects: Mapping[str, Stored] | None = None, digest: int | None = None) -> None:
        self._objects: dict[str, Stored] = dict(objects or {})
        # XOR of the items' hashes: a function of the set of items that put and only update in step
        self._hash = digest if digest is not None else _digest(self._objects.items())

    def put(self, *objects: tuple[str, Stored]) -> ObjectStore:
        for name, _ in objects:
            if name in self._objects:
                raise KeyError(f"{name} already exists")  # object stores never overwrite here
        return ObjectStore({**self._objects, **dict(objects)}, self._hash ^ _digest(objects))

    def only(self, names: set[str]) -> ObjectStore:
        """The store without the objects not in ``names`` (itself when nothing goes)."""
        if names.issuperset(self._objects):
            return self
        gone = [(n, o) for n, o in self._objects.items() if n not in names]
        return ObjectStore({n: o for n, o in self._objects.items() if n in names}, self._hash ^ _digest(gone))

    def data(self, name: str) -> DataFile:
        obj = self._objects[name]
        assert isinstance(obj, DataFile)
        return obj

    def deletes(self, name: str) -> DeleteFile:
        obj = self._objects[name]
        assert isinstance(obj, DeleteFile)
        return obj

    def metadata(self, name: str) -> Metadata:
        obj = self._objects[name]
        assert isinstance(obj, Metadata)
        return obj

    def live_rows(self, snapshot: Snapshot) -> Iterator[tuple[Position, Row]]:
        """A scan: every row of the snapshot's data files that no delete file removes."""
        deleted = {p for d in snapshot.delete_files for p in self.deletes(d).positions}
        for name in sorted(snapshot.data_files):
            for pos, row in enumerate(self.data(name).rows):
                if (name, pos) not in deleted:
                    yield (name, pos), row

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectStore) and self._objects == other._objects

    def __hash__(self) -> int:
        return self._hash


def _digest(items: Iterable[tuple[str, Stored]]) -> int:
    out = 0
    for item in items:
        out ^= hash(item)
    return out
