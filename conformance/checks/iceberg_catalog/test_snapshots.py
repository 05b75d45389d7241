"""Snapshots and refs are served as committed (REST spec: TableUpdate add-snapshot and
set-snapshot-ref; LoadTableResult): engines plan reads and time travel from them."""

from __future__ import annotations

import pytest

from conformance.checks.iceberg_catalog.driver import RestDriver, append, on_main, snapshot

KEPT = ("snapshot-id", "parent-snapshot-id", "sequence-number", "timestamp-ms", "manifest-list")


@pytest.mark.req("ICE-CAT-SNAPSHOTS-KEPT")
def test_snapshots_and_refs_are_served_as_committed(rest: RestDriver) -> None:
    table = rest.new_table()
    committed = [snapshot(1, None, 1), snapshot(2, 1, 2), snapshot(3, 1, 3)]
    assert rest.commit(table, [on_main(None)], append(1, None, 1)).status == 200
    assert rest.commit(table, [on_main(1)], append(2, 1, 2)).status == 200
    audit = {"type": "assert-ref-snapshot-id", "ref": "audit", "snapshot-id": None}
    assert rest.commit(table, [audit], append(3, 1, 3, ref="audit")).status == 200
    tag = {"action": "set-snapshot-ref", "ref-name": "v1", "type": "tag", "snapshot-id": 1}
    assert rest.commit(table, [], [tag]).status == 200

    metadata = rest.load(table)["metadata"]
    served = {s["snapshot-id"]: s for s in metadata["snapshots"]}
    assert sorted(served) == [1, 2, 3], f"snapshots served: {sorted(served)}"
    for snap in committed:
        got = served[snap["snapshot-id"]]
        assert {k: got.get(k) for k in KEPT} == {k: snap.get(k) for k in KEPT}, got
        assert got["summary"]["operation"] == "append"
    refs = {name: (ref["snapshot-id"], ref["type"]) for name, ref in metadata["refs"].items()}
    assert refs == {"main": (2, "branch"), "audit": (3, "branch"), "v1": (1, "tag")}, refs
    assert metadata["current-snapshot-id"] == 2
