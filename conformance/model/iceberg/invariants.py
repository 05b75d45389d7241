"""Invariants of a snapshot's files, judged on the model's state (FizzBee's ``NoDanglingDeleteFiles``)."""

from __future__ import annotations

from conformance.model.iceberg.snapshot import Snapshot
from conformance.model.iceberg.store import ObjectStore


def dangling_deletes(store: ObjectStore, snapshot: Snapshot) -> tuple[str, ...]:
    """Live delete files that point nowhere: none of their data files is live in ``snapshot`` (a
    delete committed against a file another commit removed), or a position past the end of a live
    data file. A format v2 delete file spanning several data files may outlive some of them: its
    other entries still delete rows, as Iceberg allows."""
    out = []
    for name in sorted(snapshot.delete_files):
        positions = store.deletes(name).positions
        live = [(f, p) for f, p in positions if f in snapshot.data_files]
        if not live or any(p >= len(store.data(f).rows) for f, p in live):
            out.append(name)
    return tuple(out)
