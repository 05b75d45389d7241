"""Faults for the round-16 blind misses (issue 28, session 21): see docs/mutation.md, round 16.

What a proposal carries beside its version, taken for more than it says:

- a staged file the catalog already knows (ratified, published) taken for "a re-sent proposal" and
  acknowledged at whatever version it is proposed for. The blind miss looked the file up among the
  stored commits; its neighbour here looks at the publication mark instead: a file whose own version is
  published is acknowledged at any version. ``test_ratified_staged_file_is_refused_at_another_version``
  proposes ratified files again at other versions, once they are published too.
- a publication mark carried by a gap proposal taken as news that the versions before it were committed
  by RFC option 3 (PUT-if-absent). The blind miss took a mark of exactly v-1; its neighbour here takes
  any mark above the latest, on inline proposals only (a writer that holds its commit inline "must"
  have published the rest). ``test_refused_proposals_carrying_a_publication_mark_change_nothing``
  proposes gaps carrying marks next to the proposed version in every form.
"""

from __future__ import annotations

import re
from typing import Any

from conformance.contract.delta import RatifiedCommit
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.faults.base import fault

# The version a staged file's name carries (RFC "Delta Log Entries": <20-digit version>.<uuid>.json).
_OWN_VERSION = re.compile(r"/_staged_commits/(\d{20})\.[^/]+\.json$")


@fault(
    "published-staged-file-acknowledged",
    "catalog",
    breaks=("CAT-STAGED-VERSION",),
    description="Answers re-sent proposals kindly: a staged file whose own version (the one its name carries)"
    " is at or below the table's publication mark is taken for a late retry of a commit already published and"
    " acknowledged at once, without looking at the proposed version: the file of a published v, proposed for"
    " the next free version, is told ratified there, which holds nothing. A re-sent proposal of an unpublished"
    " commit, and every fresh file, is judged as the reference does.",
)
class PublishedStagedFileAcknowledged(ReferenceCatalog):
    def commit(self, table_id: str, version: int, *, staged_uri: str | None = None, **kw: Any) -> None:
        own = _OWN_VERSION.search(staged_uri) if isinstance(staged_uri, str) else None
        if own is not None and kw.get("inline_content") is None:
            with self._store.read() as tx:
                row = tx.table(table_id)
            if row is not None and 1 <= int(own.group(1)) <= row.latest_published_version:
                return  # the fault: "already published, nothing to do", at any version
        super().commit(table_id, version, staged_uri=staged_uri, **kw)


@fault(
    "inline-gap-mark-catches-up",
    "catalog",
    breaks=("CAT-RATIFY-SEQUENTIAL",),
    description="Takes an inline proposal of v that carries a publication mark above the latest version as"
    " news that the versions before v were committed by PUT-if-absent (RFC option 3): it moves its latest"
    " version and its mark up to v-1, without looking at storage, and ratifies v over the gap, forgetting the"
    " unpublished commits below it. Staged proposals, and marks at or below the latest, are judged as the"
    " reference does.",
)
class InlineGapMarkCatchesUp(ReferenceCatalog):
    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        if proposal.inline_content is not None and published is not None:
            with self._store.write() as tx:
                row = tx.table(table_id)
                if row is not None and row.latest_version < published < proposal.version:
                    tx.raise_latest(table_id, proposal.version - 1)  # the fault: a mark vouches for a gap
                    self._publish(tx, table_id, proposal.version - 1)
        super()._ratify(table_id, proposal, published, content)
