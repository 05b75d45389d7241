"""Faults for the round-9 blind misses (issue 28, session 18): catalog. Each is another member of the
family a blind variant lives in, not a copy of it: an inline commit measured as the ASCII-escaped JSON
it would be forwarded as (more than its bytes wherever its text is not ASCII), and a start-up that
loads only the oldest unpublished commits of each table up to a batch of its own."""

from __future__ import annotations

import dataclasses
import json
import urllib.parse
from pathlib import Path

from conformance.contract.delta import InvalidRequest, RatifiedCommit, Storage
from reference_impl.catalog.catalog import ReferenceCatalog, check_commit
from reference_impl.catalog.transaction import Tx
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


@fault(
    "ict-kept-in-seconds",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="Keeps a commit's in-commit timestamp in whole seconds (a column of epoch seconds): a"
    " timestamp with a millisecond part is served cut to the second.",
)
class IctKeptInSeconds(ReferenceCatalog):
    def _served(self, commit: RatifiedCommit) -> RatifiedCommit:
        served = super()._served(commit)
        ict = served.in_commit_timestamp
        return served if ict is None else dataclasses.replace(served, in_commit_timestamp=ict // 1000 * 1000)


@fault(
    "inline-content-form-decoded",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="Serves an inline commit's content through form decoding (as a field of a form-encoded"
    " body): every '+' in the commit comes back as a space.",
)
class InlineContentFormDecoded(ReferenceCatalog):
    def _served(self, commit: RatifiedCommit) -> RatifiedCommit:
        served = super()._served(commit)
        content = served.inline_content
        return served if content is None else dataclasses.replace(served, inline_content=content.replace(b"+", b" "))


@fault(
    "mark-above-latest-when-caught-up",
    "catalog",
    breaks=("CAT-PUBLISH-REPORT-POSSIBLE",),
    description="Checks a publication mark against the latest version only while commits wait for"
    " publication: on a table with nothing unpublished a mark above the latest is taken, and the next"
    " commit ratified is then served as published (not listed).",
)
class MarkAboveLatestWhenCaughtUp(ReferenceCatalog):
    def mark_published(self, table_id: str, version: int) -> None:
        with self._store.write() as tx:
            row = self._registered(tx, table_id)
            caught_up = row.latest_published_version >= row.latest_version
            if caught_up and isinstance(version, int) and version > row.latest_version:
                self._publish(tx, table_id, version)  # the bug: nothing waits, so any mark goes
                return
        super().mark_published(table_id, version)

    def _stored_commits(self, tx: Tx, table_id: str) -> list[RatifiedCommit]:
        row = tx.table(table_id)
        mark = -1 if row is None else row.latest_published_version
        return [c for c in super()._stored_commits(tx, table_id) if c.version > mark]  # "published": not served


@fault(
    "staged-path-checked-decoded",
    "catalog",
    breaks=("CAT-STAGED-IN-TABLE",),
    description="Checks a staged proposal's path after percent-decoding it (as a web layer decodes a"
    " path) but ratifies the URI as sent: `_delta_log%2F_staged_commits/<v>.<uuid>.json`, a file in the"
    " table folder whose name holds an encoded slash, passes as a staged commit.",
)
class StagedPathCheckedDecoded(ReferenceCatalog):
    def _check_proposal(self, location: str, proposal: RatifiedCommit) -> None:
        uri = proposal.staged_uri
        decoded = None if uri is None else urllib.parse.unquote(uri)
        check_commit(location, RatifiedCommit(proposal.version, decoded, proposal.inline_content))


@fault(
    "missing-staged-file-stored-then-refused",
    "catalog",
    breaks=("CAT-LIST-RATIFIED-ONLY",),
    description="Reads a staged proposal's file only after storing the proposal: a file that is not there"
    " is refused to the client, but the proposal stays stored and is listed as ratified.",
)
class MissingStagedFileStoredThenRefused(ReferenceCatalog):
    def _read_staged(self, location: str, staged_uri: str) -> bytes:
        try:
            return super()._read_staged(location, staged_uri)
        except InvalidRequest:
            return b""  # judged after the store (below)

    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        super()._ratify(table_id, proposal, published, content or None)
        if proposal.staged_uri is not None and content == b"":
            raise InvalidRequest(f"the staged commit {proposal.staged_uri!r} cannot be read")  # the bug: stored
