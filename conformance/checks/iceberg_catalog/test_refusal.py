"""A refused commit leaves no trace (REST spec, updateTable: a commit whose requirements fail changes
nothing): the same metadata location and metadata, the same listing, and no new file where lakecert
can see the catalog's files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.checks.iceberg_catalog.driver import RestDriver, Table, append, on_main
from conformance.contract.iceberg_catalog import RestCatalogEndpoint

REFUSED: dict[str, dict[str, Any]] = {
    "stale-main": on_main(7),
    "other-table-uuid": {"type": "assert-table-uuid", "uuid": "00000000-0000-4000-8000-000000000000"},
    "old-schema": {"type": "assert-current-schema-id", "current-schema-id": 5},
    "exists": {"type": "assert-create"},
}


def _files(endpoint: RestCatalogEndpoint) -> list[str]:
    root = endpoint.warehouse
    return sorted(str(p) for p in root.rglob("*")) if isinstance(root, Path) else []


def _state(rest: RestDriver, table: Table) -> tuple[Any, ...]:
    loaded = rest.load(table)
    return loaded["metadata-location"], loaded["metadata"], rest.listed(table), _files(rest.endpoint)


@pytest.mark.req("ICE-CAT-REFUSAL-NO-TRACE")
@pytest.mark.parametrize("requirement", REFUSED.values(), ids=REFUSED.keys())
def test_refused_commit_leaves_no_trace(rest: RestDriver, requirement: dict[str, Any]) -> None:
    table = rest.new_table()
    first = rest.commit(table, [on_main(None)], append(1, None, 1))
    assert first.status == 200, f"the first append to a new table (main must not exist) was answered {first.status}"
    before = _state(rest, table)
    updates = [*append(2, 1, 2), {"action": "set-properties", "updates": {"lakecert.refused": "yes"}}]
    answer = rest.commit(table, [requirement], updates)
    assert answer.status == 409, f"a commit whose requirement fails was answered {answer.status}"
    assert _state(rest, table) == before, "the refused commit changed the table or left a file"
