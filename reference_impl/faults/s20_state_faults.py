"""Faults for the round-14 blind misses (issue 28, session 20): see docs/mutation.md, round 14.

A catalog's own store limits a table's state: the unpublished inline commits it holds. Each fault here
refuses a proposal once that state outgrows a quota, but judges the quota only after the ratification
was written, and does not undo all of it: a refused call that changed the table. Both are caught only
as one table's unpublished state grows by large inline commits, each refusal judged by a listing at
once (``test_refusals_as_the_unpublished_state_grows_change_nothing``).

No fault here for the back-to-back commits of one table then a restart
(``test_back_to_back_commits_of_one_table_survive_a_restart``): the faults it looks for (a state
written out of order, a ratification left for another caller to write) need two calls to overlap inside
the catalog, which that check makes likely (about a third of its rounds), not certain, and a registered
fault must be caught on every run. ``ratifications-in-memory`` and the other restart faults fail it."""

from __future__ import annotations

from conformance.contract.delta import CommitRejected, RatifiedCommit
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.catalog.transaction import Tx
from reference_impl.faults.base import fault

# The unpublished inline bytes of one table the faulty store holds in the table's record (the reference
# holds any number); a commit larger than OUT_OF_LINE is kept apart (a blob of its own) and not counted.
STATE_QUOTA = 1024 * 1024
OUT_OF_LINE = 512 * 1024


def over_quota(tx: Tx, table_id: str) -> bool:
    """Whether the table's unpublished inline commits kept in its record, as now written, take more than
    the quota."""
    row = tx.table(table_id)
    assert row is not None
    held = [c.inline_content for c in tx.commits(table_id) if c.version > row.latest_published_version]
    return sum(len(c) for c in held if c is not None and len(c) <= OUT_OF_LINE) > STATE_QUOTA


@fault(
    "state-quota-judged-after-write",
    "catalog",
    breaks=("CAT-LIST-RATIFIED-ONLY",),
    description="The catalog holds at most 1 MiB of a table's unpublished inline commits in its record (one"
    " over 512 KiB is kept apart, not counted); the quota is judged after the ratification is written, in a"
    " second transaction, and a proposal over it is answered CommitRejected with nothing undone: the refused"
    " commit is listed and the latest moves past it. Small commits, or one large one on a fresh table, never"
    " reach the quota.",
)
class StateQuotaJudgedAfterWrite(ReferenceCatalog):
    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        super()._ratify(table_id, proposal, published, content)
        with self._store.read() as tx:
            if over_quota(tx, table_id):  # the bug: refused, yet the write stands
                raise CommitRejected(f"table {table_id} holds more than {STATE_QUOTA} unpublished bytes")


@fault(
    "state-quota-undo-keeps-latest",
    "catalog",
    breaks=("CAT-LIMIT-CLEAN-REFUSAL",),
    description="The catalog holds at most 1 MiB of a table's unpublished inline commits in its record (one"
    " over 512 KiB is kept apart, not counted); the quota is judged after the ratification is written, and a"
    " proposal over it is undone by deleting its commit and answered CommitRejected, but the table's latest"
    " version is not lowered again: the refused version is not listed, yet the latest stands past it (and"
    " the next proposal of that version conflicts).",
)
class StateQuotaUndoKeepsLatest(ReferenceCatalog):
    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        super()._ratify(table_id, proposal, published, content)
        with self._store.write() as tx:
            over = over_quota(tx, table_id)
            if over:
                tx._execute(  # the bug: the commit undone, the latest left raised
                    "DELETE FROM commits WHERE table_id = ? AND version = ?", (table_id, proposal.version)
                )
        if over:  # raised once the undo is written (an error inside the transaction would roll it back)
            raise CommitRejected(f"table {table_id} holds more than {STATE_QUOTA} unpublished bytes")
