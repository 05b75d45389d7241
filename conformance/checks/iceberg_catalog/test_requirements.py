"""Every requirement type of the REST spec (``TableRequirement``) is enforced: one that does not hold
refuses the commit with 409, one that holds lets it through."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.checks.iceberg_catalog.driver import SCHEMA, RestDriver, Table

# requirement type -> (its field, the metadata field it is checked against)
FIELDS = {
    "assert-table-uuid": ("uuid", "table-uuid"),
    "assert-current-schema-id": ("current-schema-id", "current-schema-id"),
    "assert-last-assigned-field-id": ("last-assigned-field-id", "last-column-id"),
    "assert-last-assigned-partition-id": ("last-assigned-partition-id", "last-partition-id"),
    "assert-default-spec-id": ("default-spec-id", "default-spec-id"),
    "assert-default-sort-order-id": ("default-sort-order-id", "default-sort-order-id"),
}
REQUIREMENTS = [*FIELDS, "assert-ref-snapshot-id"]


def holding_and_failing(kind: str, metadata: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A requirement of ``kind`` that holds on the table's metadata, and one that does not."""
    if kind == "assert-ref-snapshot-id":  # a new table has no main branch: "must not exist" holds
        return {"type": kind, "ref": "main", "snapshot-id": None}, {"type": kind, "ref": "main", "snapshot-id": 4242}
    key, field = FIELDS[kind]
    value = metadata[field]
    wrong = "00000000-0000-4000-8000-0000000000aa" if kind == "assert-table-uuid" else value + 1
    return {"type": kind, key: value}, {"type": kind, key: wrong}


def _mark(table: Table, rest: RestDriver, requirement: dict[str, Any], value: str) -> int:
    update = {"action": "set-properties", "updates": {"lakecert.requirement": value}}
    return rest.commit(table, [requirement], [update]).status


@pytest.mark.req("ICE-CAT-REQUIREMENT-TYPES")
@pytest.mark.parametrize("kind", REQUIREMENTS)
def test_requirement_is_enforced(rest: RestDriver, kind: str) -> None:
    table = rest.new_table()
    loaded = rest.load(table)
    holding, failing = holding_and_failing(kind, loaded["metadata"])
    answer = rest.commit(table, [failing], [{"action": "set-properties", "updates": {"lakecert.requirement": "x"}}])
    assert answer.status == 409, f"{failing} does not hold, yet the commit was answered {answer.status}, not 409"
    assert rest.load(table)["metadata-location"] == loaded["metadata-location"], (
        f"the commit refused for {failing} still moved the table's metadata"
    )
    assert _mark(table, rest, holding, "held") == 200, f"{holding} holds, yet the commit was refused"
    marked = rest.load(table)["metadata"]["properties"].get("lakecert.requirement")
    assert marked == "held", f"the commit accepted under {holding} is not served: the property reads {marked!r}"


@pytest.mark.req("ICE-CAT-REQUIREMENT-TYPES")
def test_assert_create_refuses_an_existing_table_and_creates_a_new_one(rest: RestDriver) -> None:
    table = rest.new_table()
    loaded = rest.load(table)
    exists = rest.commit(table, [{"type": "assert-create"}], [{"action": "set-properties", "updates": {"k": "v"}}])
    assert exists.status == 409, f"assert-create on an existing table was answered {exists.status}"
    assert rest.load(table)["metadata-location"] == loaded["metadata-location"], (
        "the refused assert-create commit still moved the existing table's metadata"
    )

    # The spec's create transaction: a staged create (nothing stored), then a commit with assert-create.
    new = Table(table.namespace, "created")
    body = {"name": new.name, "schema": SCHEMA, "stage-create": True, "properties": {"format-version": "2"}}
    staged = rest.request("POST", f"namespaces/{new.namespace}/tables", body)
    assert staged.status == 200, f"a staged create (stage-create: true) was answered {staged.status}: {staged.body}"
    metadata = staged.body["metadata"]
    updates = [
        {"action": "assign-uuid", "uuid": metadata["table-uuid"]},
        {"action": "upgrade-format-version", "format-version": 2},
        {"action": "add-schema", "schema": SCHEMA},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-location", "location": metadata["location"]},
    ]
    created = rest.commit(new, [{"type": "assert-create"}], updates)
    assert created.status == 200, f"a create transaction was refused: {created}"
    served = rest.load(new)["metadata"]["table-uuid"]
    assert served == metadata["table-uuid"], (
        f"the created table is served with uuid {served}, not {metadata['table-uuid']}, the one its create assigned"
    )
