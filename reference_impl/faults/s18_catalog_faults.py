"""Faults for the round-9 blind misses (issue 28, session 18): catalog. Each is another member of the
family a blind variant lives in, not a copy of it: an inline commit measured as the ASCII-escaped JSON
it would be forwarded as (more than its bytes wherever its text is not ASCII), and a start-up that
loads only the oldest unpublished commits of each table up to a batch of its own."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from conformance.contract.delta import InvalidRequest, RatifiedCommit, Storage
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.faults.base import fault
from reference_impl.storage.commit_file import DEFAULT_READ_LIMITS, ReadLimits


def _escaped_size(content: bytes) -> int:
    """The size of ``content`` with each line parsed and written again as JSON with non-ASCII escaped
    (``json.dumps``'s default), line endings kept: ASCII commits measure their bytes exactly."""
    lines = content.split(b"\n")
    rewritten = [json.dumps(json.loads(line), separators=(",", ":")).encode() if line else line for line in lines]
    return len(b"\n".join(rewritten))


@fault(
    "inline-size-measured-escaped",
    "catalog",
    breaks=("CAT-LIMIT-DECLARED",),
    description="The declared inline limit is applied to the commit re-serialised as ASCII-escaped JSON (as"
    " forwarded to a downstream store), not to its bytes: an inline commit of raw UTF-8 text (a 2-byte letter"
    " takes 6 escaped) is refused well within the declared limit; ASCII commits are measured exactly.",
)
class InlineSizeMeasuredEscaped(ReferenceCatalog):
    def _check_inline_size(self, proposal: RatifiedCommit) -> None:
        limit = self.LIMITS.inline_bytes
        content = proposal.inline_content
        if limit is not None and content is not None:
            try:
                size = _escaped_size(content)
            except ValueError:  # not JSON: the ratification's own validation refuses it
                size = len(content)
            if size > limit:
                raise InvalidRequest(f"inline commits have at most {limit} bytes, this one {size}")
        super()._check_inline_size(proposal)


START_UP_BATCH = 100  # unpublished commits per table the faulty start-up loads


@fault(
    "start-up-loads-oldest-batch",
    "catalog",
    breaks=("CAT-RATIFY-DURABLE",),
    description=f"At start-up each table's unpublished commits are loaded in one batch of {START_UP_BATCH}, oldest"
    " first, and the store is rewritten from what was loaded: a table holding more loses its newest commits at a"
    " restart, while its latest version stays. Until a restart everything is served.",
)
class StartUpLoadsOldestBatch(ReferenceCatalog):
    def __init__(
        self,
        db_path: str | Path,
        warehouse_uri: str,
        storage: Storage | None = None,
        *,
        read_limits: ReadLimits = DEFAULT_READ_LIMITS,
        durable: bool = True,
    ) -> None:
        super().__init__(db_path, warehouse_uri, storage, read_limits=read_limits, durable=durable)
        with self._store.write() as tx:
            for table in ("commits", "ratified_content"):
                tx.conn.execute(
                    f"DELETE FROM {table} WHERE version > {START_UP_BATCH} + (SELECT latest_published_version"
                    f" FROM tables WHERE tables.table_id = {table}.table_id)"
                )


CARRIED_CAP = 10  # the unpublished cap the next variant declares


@fault(
    "carried-mark-sets-watermark",
    "catalog",
    breaks=("CAT-LIMIT-DECLARED",),
    description=f"Declares {CARRIED_CAP} unpublished commits per table; a publication mark carried by a ratified"
    " proposal sets the table's mark as given, so a late one moves it back and the cap then counts long"
    " published commits as waiting.",
)
class CarriedMarkSetsWatermark(ReferenceCatalog):
    LIMITS = dataclasses.replace(ReferenceCatalog.LIMITS, unpublished=CARRIED_CAP)

    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        super()._ratify(table_id, proposal, published, content)
        if published is not None:
            with self._store.write() as tx:  # the bug: the carried mark taken as the mark, not raised to
                tx.conn.execute(
                    "UPDATE tables SET latest_published_version = ? WHERE table_id = ?", (published, table_id)
                )
