"""Tables and commits over the Iceberg REST API, for the catalog-side checks.

Snapshots point at manifest lists that do not exist: a catalog applies ``add-snapshot`` from the
metadata alone (REST spec: the catalog does not read manifests), and no check reads data.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from conformance.contract.iceberg_catalog import Answer, RestCatalogEndpoint, call

SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}],
}
MAIN = "main"


@dataclass(frozen=True)
class Table:
    namespace: str
    name: str


class RestDriver:
    def __init__(self, endpoint: RestCatalogEndpoint) -> None:
        self.endpoint = endpoint

    def request(self, method: str, path: str, body: Any = None) -> Answer:
        return call(f"{self.endpoint.base}/{path}", method, body, self.endpoint.headers)

    def new_table(self, properties: dict[str, str] | None = None) -> Table:
        """A table of its own namespace, format v2, with no snapshot."""
        table = Table(f"lakecert_{uuid.uuid4().hex[:12]}", "t")
        created = self.request("POST", "namespaces", {"namespace": [table.namespace]})
        assert created.status == 200, f"create namespace: {created}"
        # ``stage-create`` is optional in the spec, but Java's and pyiceberg's clients always send it and
        # Nessie refuses a body without it: send what engines send, so the check judges commits only.
        body = {
            "name": table.name,
            "schema": SCHEMA,
            "stage-create": False,
            "properties": {"format-version": "2", **(properties or {})},
        }
        made = self.request("POST", f"namespaces/{table.namespace}/tables", body)
        assert made.status == 200, f"create table: {made}"
        return table

    def load(self, table: Table) -> dict[str, Any]:
        loaded = self.request("GET", f"namespaces/{table.namespace}/tables/{table.name}")
        assert loaded.status == 200, f"load table: {loaded}"
        assert isinstance(loaded.body, dict), (
            f"load table answered 200 with a {type(loaded.body).__name__}, not an object"
        )
        return loaded.body

    def commit(self, table: Table, requirements: list[dict[str, Any]], updates: list[dict[str, Any]]) -> Answer:
        body = {"requirements": requirements, "updates": updates}
        return self.request("POST", f"namespaces/{table.namespace}/tables/{table.name}", body)

    def listed(self, table: Table) -> Any:
        return self.request("GET", f"namespaces/{table.namespace}/tables").body


def snapshot(snapshot_id: int, parent: int | None, sequence_number: int, **summary: str) -> dict[str, Any]:
    snap: dict[str, Any] = {
        "snapshot-id": snapshot_id,
        "sequence-number": sequence_number,
        "timestamp-ms": 1_700_000_000_000 + snapshot_id,
        "manifest-list": f"s3://lakecert-nowhere/manifests/snap-{snapshot_id}.avro",
        "summary": {"operation": "append", **summary},
        "schema-id": 0,
    }
    if parent is not None:
        snap["parent-snapshot-id"] = parent
    return snap


def append(snapshot_id: int, parent: int | None, sequence_number: int, ref: str = MAIN) -> list[dict[str, Any]]:
    """The updates of an append: the snapshot, then the branch moved to it."""
    return [
        {"action": "add-snapshot", "snapshot": snapshot(snapshot_id, parent, sequence_number)},
        {"action": "set-snapshot-ref", "ref-name": ref, "type": "branch", "snapshot-id": snapshot_id},
    ]


def on_main(snapshot_id: int | None) -> dict[str, Any]:
    return {"type": "assert-ref-snapshot-id", "ref": MAIN, "snapshot-id": snapshot_id}
