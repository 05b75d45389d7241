"""Limits kept in the wrong unit or over the wrong scope (issue 28, session 17: round 7's misses).

Each is the reference catalog declaring a limit it keeps wrongly: actions counted by newline
characters (a commit whose last action has no final newline passes one action past the limit), and
a per-table cap on unpublished commits counted over every table of the catalog. The checks are
conformance/checks/delta/catalog/test_envelope.py (the inline and unpublished-cap checks).
"""

from __future__ import annotations

import dataclasses

from conformance.contract.delta import CommitRejected, RatifiedCommit
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.faults.base import fault

NEWLINE_ACTIONS = 24  # the declared actions per commit, counted by newline characters
WIDE_CAP = 10  # the declared unpublished cap per table, counted over every table


@fault(
    "envelope17-actions-by-newline",
    "catalog",
    breaks=("CAT-LIMIT-DECLARED",),
    description=f"Declares {NEWLINE_ACTIONS} actions per commit but counts newlines: one more passes unterminated.",
)
class ActionsByNewline(ReferenceCatalog):
    LIMITS = dataclasses.replace(ReferenceCatalog.LIMITS, commit_actions=NEWLINE_ACTIONS)

    def _check_inline_size(self, proposal: RatifiedCommit) -> None:
        super()._check_inline_size(proposal)
        content = proposal.inline_content
        # The bug: a missing final newline (Delta allows it) hides the last action from the count.
        if isinstance(content, bytes) and content.count(b"\n") > NEWLINE_ACTIONS:
            raise CommitRejected(f"more than {NEWLINE_ACTIONS} actions in one commit")


@fault(
    "envelope17-cap-catalog-wide",
    "catalog",
    breaks=("CAT-LIMIT-DECLARED",),
    description=f"Declares {WIDE_CAP} unpublished commits per table but counts them over every table.",
)
class CapCatalogWide(ReferenceCatalog):
    LIMITS = dataclasses.replace(ReferenceCatalog.LIMITS, unpublished=WIDE_CAP)

    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        with self._store.read() as tx:
            rows = tx.conn.execute("SELECT latest_version, latest_published_version FROM tables").fetchall()
        pending = sum(max(latest - max(mark, 0), 0) for latest, mark in rows)  # the bug: every table's
        if pending >= WIDE_CAP:
            raise CommitRejected(f"{pending} commits wait for publication; the cap is {WIDE_CAP}")
        super()._ratify(table_id, proposal, published, content)


@fault(
    "envelope17-inline-size-terminated",
    "catalog",
    breaks=("CAT-LIMIT-DECLARED",),
    description="Measures an inline commit with a final newline added: one at the size limit without one is refused.",
)
class InlineSizeTerminated(ReferenceCatalog):
    def _check_inline_size(self, proposal: RatifiedCommit) -> None:
        content = proposal.inline_content
        # The bug: it measures the commit as it would store it, every line terminated, not as proposed.
        if isinstance(content, bytes) and not content.endswith(b"\n"):
            proposal = dataclasses.replace(proposal, inline_content=content + b"\n")
        super()._check_inline_size(proposal)
