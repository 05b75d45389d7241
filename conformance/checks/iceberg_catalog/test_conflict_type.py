"""A refused commit names its error (REST spec, updateTable: the 409 answer is documented as
CommitFailedException). Engines do not depend on it, hence a SHOULD; other readers of the error do."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.checks.iceberg_catalog.driver import RestDriver, append, on_main

# A lost race on the branch, and a create transaction over an existing table: the two refusals
# engines meet most, both documented as the same 409.
REFUSED: dict[str, dict[str, Any]] = {"stale-main": on_main(7), "exists": {"type": "assert-create"}}


@pytest.mark.req("ICE-CAT-CONFLICT-TYPE")
@pytest.mark.parametrize("requirement", REFUSED.values(), ids=REFUSED.keys())
def test_refused_commit_is_named_commit_failed(rest: RestDriver, requirement: dict[str, Any]) -> None:
    table = rest.new_table()
    first = rest.commit(table, [on_main(None)], append(1, None, 1))
    assert first.status == 200, f"the first append to a new table (main must not exist) was answered {first.status}"
    answer = rest.commit(table, [requirement], append(2, 1, 2))
    assert answer.status == 409, f"a commit whose requirement fails was answered {answer.status}"
    assert answer.error_type == "CommitFailedException", f"the refusal is typed {answer.error_type!r}"
