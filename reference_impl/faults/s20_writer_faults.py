"""Faults for the round-14 blind misses (issue 28, session 20): see docs/mutation.md, round 14.

Writer side: each fails a judgement widened for that round (publication after a lost race, the
protocol and metaData a checkpoint holds, cleanup with the checkpoint at the cut-off) and none is one
of the round's variants."""

from __future__ import annotations

import contextlib

from conformance.contract.delta import TableInfo
from reference_impl.delta.checkpoint import read_last_checkpoint, write_checkpoint
from reference_impl.delta.cleanup import files_to_delete, log_files
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.log_paths import checkpoint_uri, delta_uri, log_dir
from reference_impl.delta.snapshot import LogReader
from reference_impl.faults.base import fault


@fault(
    "publish-proposal-memo",
    "client",
    breaks=("WRT-PUBLISH-IDENTICAL",),
    description="The client remembers the content of every commit it proposes, keyed by (table, version),"
    " and its publisher copies that content when it has it, asking the catalog's staged file only for"
    " versions it never proposed. The memo is filled at the proposal, not at the ratification: after a lost"
    " race for v it holds the rejected attempt, which is published as <v>.json in place of the winner's.",
)
class PublishProposalMemo(ReferenceClient):
    def _before_propose(self, table: TableInfo, version: int, content: bytes) -> None:
        memo: dict[tuple[str, int], bytes] = self.__dict__.setdefault("_proposed", {})
        memo[(table.table_id, version)] = content

    def publish(self, name: str) -> None:
        table = self._table(name)
        memo: dict[tuple[str, int], bytes] = self.__dict__.setdefault("_proposed", {})
        stored = {c.version: c for c in self.catalog.get_commits(table.table_id).commits}
        if not stored:
            return
        for v in self._publish_order(list(stored)):
            content = memo.get((table.table_id, v)) or self._log.commit_bytes(LogReader.catalog_ref(stored[v]))
            with contextlib.suppress(FileExistsError):
                self.storage.put(delta_uri(table.location, v), content, if_absent=True)
        self._mark_published(table.table_id, max(stored))


@fault(
    "checkpoint-protocol-reader-side-only",
    "client",
    breaks=("WRT-PROTOCOL-VERSIONS",),
    description="The checkpoint writer rebuilds the protocol row it stores: a feature listed as a reader"
    " feature is taken to be a reader-writer feature and kept only in readerFeatures, so catalogManaged (and"
    " every other reader-writer feature) leaves writerFeatures. Every commit carries the right protocol;"
    " the table replayed from a checkpoint, by a path-based writer too, is no longer catalog-managed.",
)
class CheckpointProtocolReaderSideOnly(ReferenceClient):
    def checkpoint(self, name: str) -> int | None:
        table = self._table(name)
        if not self._policy_allows(table.table_id, "checkpoint"):
            return None
        seg = self._log.segment(table.table_id, table.location)
        version = self._checkpoint_version(seg)
        if version is None:
            return None
        actions = self._log.snapshot_of(seg, version).state_actions()
        for a in actions:
            if "protocol" in a:
                readers = set(a["protocol"].get("readerFeatures") or [])
                writers = [f for f in a["protocol"].get("writerFeatures") or [] if f not in readers]
                a["protocol"] = {**a["protocol"], "writerFeatures": writers}
        write_checkpoint(self.storage, table.location, version, actions)
        return version


@fault(
    "cleanup-cut-off-from-hint",
    "client",
    breaks=("WRT-CLEANUP-STAGED-BELOW", "WRT-CLEANUP-COMPACTION"),
    description="Metadata cleanup takes the cut-off checkpoint from _last_checkpoint instead of listing the"
    " log: when the checkpoint it names is a single file there, at or before the cut-off, cleanup runs step 3"
    " from it; otherwise it deletes nothing. It never deletes too much, but with a newer checkpoint than the"
    " cut-off (the hint names the newest) the staged commits and compactions at or below the cut-off"
    " checkpoint stay.",
)
class CleanupCutOffFromHint(ReferenceClient):
    def cleanup(self, name: str, cutoff_version: int) -> None:
        table = self._table(name)
        if not self._policy_allows(table.table_id, "metadata_cleanup"):
            return
        hint = read_last_checkpoint(self.storage, table.location)
        version = hint.get("version") if hint is not None else None
        if not isinstance(version, int) or version > cutoff_version:
            return
        if "parts" in (hint or {}) or not self.storage.exists(checkpoint_uri(table.location, version)):
            return
        uris = [f.uri for f in self.storage.list(log_dir(table.location) + "/")]
        for uri in files_to_delete(log_files(uris), version):
            self.storage.delete(uri)
