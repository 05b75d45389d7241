"""Racing commits on one branch: the catalog applies exactly one (REST spec, updateTable: requirements
are checked against the table's current metadata, and the swap is atomic)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from conformance.checks.iceberg_catalog.driver import RestDriver, append, on_main
from conformance.contract.iceberg_catalog import Answer

RACERS = 8


@pytest.mark.req("ICE-CAT-ATOMIC-REQUIREMENTS")
def test_one_of_racing_commits_on_a_branch_wins(rest: RestDriver) -> None:
    table = rest.new_table()
    first = rest.commit(table, [on_main(None)], append(1, None, 1))
    assert first.status == 200, f"the first append to a new table (main must not exist) was answered {first.status}"
    start = threading.Barrier(RACERS)

    def racer(i: int) -> Answer:
        # Every racer built on snapshot 1, as writers that read the table at the same time do.
        start.wait(timeout=120)
        return rest.commit(table, [on_main(1)], append(100 + i, 1, 2))

    with ThreadPoolExecutor(RACERS) as pool:
        answers = list(pool.map(racer, range(RACERS)))
    statuses = [a.status for a in answers]
    winners = [100 + i for i, a in enumerate(answers) if a.status == 200]
    assert len(winners) == 1, f"{len(winners)} of {RACERS} commits requiring main = 1 applied: {statuses}"
    losers = [a for a in answers if a.status != 200]
    # The error's type is judged by ICE-CAT-CONFLICT-TYPE (a SHOULD): engines read any 409 as a lost race.
    assert all(a.status == 409 for a in losers), (
        f"commits that lost the race were answered {[a.status for a in losers]}; a refused requirement is answered 409"
    )
    metadata = rest.load(table)["metadata"]
    main = metadata["refs"]["main"]["snapshot-id"]
    assert main == winners[0], f"main points at snapshot {main}, not at {winners[0]}, the one commit that was applied"
    # Only a loser's snapshot served would break atomicity; whether older snapshots are still served
    # is ICE-CAT-SNAPSHOTS-KEPT's to judge, not this rule's.
    served = {s["snapshot-id"] for s in metadata["snapshots"]}
    refused = {100 + i for i in range(RACERS)} - {winners[0]}
    assert not served & refused, f"refused commits' snapshots are served: {sorted(served & refused)}"
