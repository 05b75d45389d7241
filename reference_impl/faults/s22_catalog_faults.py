"""Faults for the round-17 blind misses (issue 28, session 22): see docs/mutation.md, round 17.

Two dimensions of the catalog's answers the suite had not crossed:

- conflicts on tables whose commits mix forms: a catalog that keeps track of staged and inline commits
  apart states, on a conflict, a latest of the proposal's own form. Caught by the history's proposals
  of taken versions in both forms (``edges.py``), on tables holding both forms (CAT-CONFLICT-LATEST).
- publication marks after timestamps that do not rise: a catalog that purges its store by time drops,
  at a mark (given alone, or carried by a proposal), commits above it stamped earlier. Caught by marks,
  given both ways in turn, after each such timestamp
  (``test_in_commit_timestamps_out_of_order_are_served_as_proposed_or_refused``).
"""

from __future__ import annotations

from typing import Any

from conformance.contract.delta import CommitConflict, RatifiedCommit
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.catalog.transaction import Tx
from reference_impl.faults.base import fault


@fault(
    "conflict-latest-per-form-counter",
    "catalog",
    breaks=("CAT-CONFLICT-LATEST",),
    description="The catalog counts the latest ratified version of each form of commit (staged, inline) per"
    " table, and a conflict states the counter of the proposal's own form (the table's latest when that form"
    " was never ratified). On a table whose commits mix forms, a proposal that loses to a commit of the other"
    " form is told an older latest; on a table of one form the answer is right.",
)
class ConflictLatestPerFormCounter(ReferenceCatalog):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._per_form: dict[tuple[str, bool], int] = {}  # (table id, inline) -> latest of that form

    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        form = (table_id, proposal.inline_content is not None)
        try:
            super()._ratify(table_id, proposal, published, content)
        except CommitConflict as conflict:
            stated = self._per_form.get(form, conflict.latest_version)  # the bug: this form's latest, not the table's
            raise CommitConflict(str(conflict), latest_version=stated) from None
        self._per_form[form] = proposal.version


@fault(
    "publication-watermark-by-timestamp",
    "catalog",
    breaks=("CAT-FORGET-PUBLISHED-ONLY",),
    description="The catalog purges its store by time: a publication mark at b becomes a watermark, the"
    " newest in-commit timestamp among the commits at or below b, and every stored commit stamped below it"
    " is dropped with those at or below b. With rising timestamps that is the same set; after a ratified"
    " commit stamped below an earlier one, a later mark drops it unpublished.",
)
class PublicationWatermarkByTimestamp(ReferenceCatalog):
    def _drop_on_publish(self, tx: Tx, table_id: str, published: int) -> None:
        stamps = [c.in_commit_timestamp for c in tx.commits(table_id) if c.version <= published]
        watermark = max((s for s in stamps if s is not None), default=None)
        super()._drop_on_publish(tx, table_id, published)
        if watermark is None:
            return
        for c in tx.commits(table_id):
            if c.in_commit_timestamp is not None and c.in_commit_timestamp < watermark:  # the bug: by time
                tx._execute("DELETE FROM commits WHERE table_id = ? AND version = ?", (table_id, c.version))
                tx._execute("DELETE FROM ratified_content WHERE table_id = ? AND version = ?", (table_id, c.version))


@fault(
    "carried-mark-forgets-by-timestamp",
    "catalog",
    # A drop on a proposal that adds a commit is charged as a ratified commit not served: the check
    # cannot tell it from a cap that drops the oldest (test_retention.py).
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="A publication mark carried by a proposal (UC's latest backfilled version) is applied by a"
    " purge by time: once the proposal is ratified, every other stored commit stamped at or before the marked"
    " commit b is dropped with those at or below b. mark_published drops by version, as it should; after"
    " ratified commits stamped at or below an earlier one, a proposal's mark drops them unpublished.",
)
class CarriedMarkForgetsByTimestamp(ReferenceCatalog):
    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        with self._store.read() as tx:
            marked = None if published is None else tx.commit_at(table_id, published)
        super()._ratify(table_id, proposal, published, content)
        cutoff = None if marked is None else marked.in_commit_timestamp
        if cutoff is None:
            return
        with self._store.write() as tx:
            for c in tx.commits(table_id):
                stamped = c.in_commit_timestamp
                if c.version != proposal.version and stamped is not None and stamped <= cutoff:  # the bug
                    tx._execute("DELETE FROM commits WHERE table_id = ? AND version = ?", (table_id, c.version))
