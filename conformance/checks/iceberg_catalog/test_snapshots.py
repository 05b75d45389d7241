"""Snapshots and refs are served as committed (REST spec: TableUpdate add-snapshot and
set-snapshot-ref; LoadTableResult): engines plan reads and time travel from them."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.checks.iceberg_catalog.driver import RestDriver, append, on_main, snapshot

KEPT = ("snapshot-id", "parent-snapshot-id", "sequence-number", "timestamp-ms", "manifest-list")


@pytest.mark.req("ICE-CAT-SNAPSHOTS-KEPT")
def test_snapshots_and_refs_are_served_as_committed(rest: RestDriver) -> None:
    table = rest.new_table()
    committed = [snapshot(1, None, 1), snapshot(2, 1, 2), snapshot(3, 1, 3)]
    audit = {"type": "assert-ref-snapshot-id", "ref": "audit", "snapshot-id": None}
    tag = {"action": "set-snapshot-ref", "ref-name": "v1", "type": "tag", "snapshot-id": 1}
    steps: tuple[tuple[str, list[dict[str, Any]], list[dict[str, Any]]], ...] = (
        ("append snapshot 1 to main", [on_main(None)], append(1, None, 1)),
        ("append snapshot 2 to main", [on_main(1)], append(2, 1, 2)),
        ("append snapshot 3 to the new branch audit", [audit], append(3, 1, 3, ref="audit")),
        ("tag snapshot 1 as v1", [], [tag]),
    )
    for what, requirements, updates in steps:
        status = rest.commit(table, requirements, updates).status
        assert status == 200, f"{what}: a commit whose requirements hold was answered {status}"

    metadata = rest.load(table)["metadata"]
    served = {s["snapshot-id"]: s for s in metadata["snapshots"]}
    assert sorted(served) == [1, 2, 3], (
        f"commits added snapshots 1, 2 and 3, and the catalog then serves snapshots {sorted(served)}: "
        "a committed snapshot must stay served"
    )
    for snap in committed:
        got = served[snap["snapshot-id"]]
        served_fields, committed_fields = ({k: s.get(k) for k in KEPT} for s in (got, snap))
        assert served_fields == committed_fields, (
            f"snapshot {snap['snapshot-id']} is served as {served_fields}, committed as {committed_fields}"
        )
        operation = got["summary"]["operation"]
        assert operation == "append", (
            f"snapshot {snap['snapshot-id']} is served as a {operation!r}, committed as an append"
        )
    refs = {name: (ref["snapshot-id"], ref["type"]) for name, ref in metadata["refs"].items()}
    committed_refs = {"main": (2, "branch"), "audit": (3, "branch"), "v1": (1, "tag")}
    assert refs == committed_refs, f"refs are served as {refs} (snapshot, type), committed as {committed_refs}"
    current = metadata["current-snapshot-id"]
    assert current == 2, f"the current snapshot is served as {current}, but main was committed at snapshot 2"
