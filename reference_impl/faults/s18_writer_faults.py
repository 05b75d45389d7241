"""Faults for the round-9 blind misses (issue 28, session 18): writer."""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

from conformance.contract.delta import TableInfo
from reference_impl.delta.actions import Action, commit_info_action, encode_commit
from reference_impl.delta.cleanup import cut_off_checkpoint, log_files
from reference_impl.delta.client import Proposals, ReferenceClient
from reference_impl.delta.compaction import reconcile
from reference_impl.delta.log_paths import compaction_uri, delta_uri, log_dir, staged_dir
from reference_impl.delta.snapshot import LogReader
from reference_impl.faults.base import fault


@fault(
    "publish-crlf-as-lf",
    "client",
    breaks=("WRT-PUBLISH-BYTES",),
    description="The publisher writes every ratified commit with LF line endings: a commit another writer"
    " ratified with CRLF line endings (valid newline-delimited JSON, the CR being JSON whitespace) is"
    " published with its CRs dropped.",
)
class PublishCrlfAsLf(ReferenceClient):
    def _published_bytes(self, content: bytes) -> bytes:
        return content.replace(b"\r\n", b"\n")


@fault(
    "publish-drops-commit-info",
    "client",
    breaks=("WRT-PUBLISH-IDENTICAL", "INT-PUBLISH-PATH-READABLE"),
    description="The publisher leaves out a commit's commitInfo action (taken for bookkeeping): the published"
    " file loses the in-commit timestamp the ratified commit carries.",
)
class PublishDropsCommitInfo(ReferenceClient):
    def _published_bytes(self, content: bytes) -> bytes:
        lines = content.splitlines(keepends=True)
        return b"".join(line for line in lines if not line.lstrip().startswith(b'{"commitInfo"'))


@fault(
    "cleanup-checkpoints-below-cutoff-commit",
    "client",
    breaks=("WRT-CLEANUP-KEEPS",),
    description="Besides step 3's deletions, cleanup deletes every checkpoint older than the cut-off commit"
    " (rather than older than the cut-off checkpoint), sparing only the newest checkpoint of the log: with"
    " one checkpoint nothing more goes; with several, the cut-off checkpoint below the cut-off commit does.",
)
class CleanupCheckpointsBelowCutoffCommit(ReferenceClient):
    def _cleanup_plan(self, uris: list[str], cutoff_version: int) -> list[str]:
        doomed = super()._cleanup_plan(uris, cutoff_version)
        if cut_off_checkpoint(log_files(uris), cutoff_version) is None:  # step 2 stops cleanup
            return doomed
        checkpoints = [f for f in log_files(uris) if f.kind == "checkpoint"]
        newest = max(f.version for f in checkpoints)
        return sorted(set(doomed) | {f.uri for f in checkpoints if f.version < cutoff_version and f.version != newest})


@fault(
    "compaction-tidies-staged",
    "client",
    breaks=("WRT-MAINTENANCE-POLICY",),
    description="After writing a log compaction file (allowed by the policy), the client deletes the staged"
    " files of the published commits the compaction covers, without asking the policy about metadata"
    " cleanup, which that deletion is.",
)
class CompactionTidiesStaged(ReferenceClient):
    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        done = super().compact_log(name, start_version, end_version)
        if done:
            location = self.catalog.resolve(name).location
            published = {f.version for f in log_files(f.uri for f in self.storage.list(log_dir(location) + "/"))}
            for f in log_files(f.uri for f in self.storage.list(staged_dir(location) + "/")):
                if f.kind == "staged" and start_version <= f.version <= end_version and f.version in published:
                    self.storage.delete(f.uri)
        return done


@fault(
    "cleanup-published-staged-by-age",
    "client",
    breaks=("WRT-CLEANUP-STAGED-ABOVE",),
    description="Cleanup deletes the staged files of published commits that are older (modification time)"
    " than the cut-off checkpoint file, whatever their version; unpublished commits' staged files it keeps."
    " A commit staged before the checkpoint and published after it, above its version, is deleted.",
)
class CleanupPublishedStagedByAge(ReferenceClient):
    def _cleanup_plan(self, uris: list[str], cutoff_version: int) -> list[str]:
        doomed = set(super()._cleanup_plan(uris, cutoff_version))
        files = log_files(uris)
        kept = max((f.version for f in files if f.kind == "checkpoint" and f.version <= cutoff_version), default=None)
        if kept is None:
            return sorted(doomed)
        cp = next(f.uri for f in files if f.kind == "checkpoint" and f.version == kept)
        location = cp.rsplit("/_delta_log/", 1)[0]
        mtimes = {i.uri: i.mtime_ms for i in self.storage.list(log_dir(location) + "/")}
        published = {f.version for f in files if f.kind == "delta"}
        doomed |= {
            f.uri
            for f in files
            if f.kind == "staged" and f.version in published and mtimes.get(f.uri, mtimes[cp] + 1) <= mtimes[cp]
        }
        return sorted(doomed)


@fault(
    "checkpoint-publishes-newest-first",
    "client",
    breaks=("WRT-PUBLISH-ORDER",),
    description="So that the checkpoint of the latest version has its Delta file, the checkpoint step first"
    " copies every ratified, unpublished commit to _delta_log, newest first (it publishes all of them, so"
    " no gap is left once it is done), then checkpoints the latest version.",
)
class CheckpointPublishesNewestFirst(ReferenceClient):
    def checkpoint(self, name: str) -> int | None:
        table = self._table(name)
        if self._policy_allows(table.table_id, "checkpoint"):
            stored = {c.version: c for c in self.catalog.get_commits(table.table_id).commits}
            for v in sorted(stored, reverse=True):
                content = self._log.commit_bytes(LogReader.catalog_ref(stored[v]))
                with contextlib.suppress(FileExistsError):
                    self.storage.put(delta_uri(table.location, v), content, if_absent=True)
        return super().checkpoint(name)


@fault(
    "compaction-carries-table-header",
    "client",
    breaks=("WRT-COMPACTION-CONTENT",),
    description="Each log compaction file is made self-describing: besides the range's reconciled file"
    " actions it carries the table's protocol and metaData as of the range's last version, whether or not"
    " a commit of the range holds them (right for a range from v0, wrong for any later one).",
)
class CompactionCarriesTableHeader(ReferenceClient):
    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        table = self._table(name)
        if not self._policy_allows(table.table_id, "log_compaction"):
            return False
        seg = self._log.segment(table.table_id, table.location)
        if not self._compaction_allowed(seg, start_version, end_version):
            return False
        state = self._log.snapshot_of(seg, end_version).state_actions()
        header = [a for a in state if "protocol" in a or "metaData" in a]
        commits = [self._log.commit_actions(seg.commits[v]) for v in range(start_version, end_version + 1)]
        data = encode_commit(reconcile([header, *commits]))
        with contextlib.suppress(FileExistsError):
            self.storage.put(compaction_uri(table.location, start_version, end_version), data, if_absent=True)
        return True


@fault(
    "lost-answer-reports-refreshed-snapshot",
    "client",
    breaks=("WRT-LOST-ANSWER-ONCE",),
    description="After a lost answer the writer asks the catalog whether the version it proposed is its own"
    " (rightly), and when it is, reloads the table and reports the version of that fresh snapshot, taking"
    " 'my write is now visible' for 'my write is the newest'.",
)
class LostAnswerReportsRefreshedSnapshot(ReferenceClient):
    def _after_lost_answer(self, table: TableInfo, version: int, mine: Proposals) -> int | None:
        if super()._after_lost_answer(table, version, mine) is None:
            return None
        return self._log.snapshot_of(self._log.segment(table.table_id, table.location)).version


@fault(
    "txnid-named-by-client-and-stamp",
    "client",
    breaks=("WRT-TXNID-UNIQUE",),
    description="The txnId is a name-based UUID of the client's own id and the commit's in-commit timestamp,"
    " so that anyone can recompute it from the commit. Timestamps strictly increase within a table only: one"
    " client's commits to two tables at the same stamp share a txnId.",
)
class TxnIdNamedByClientAndStamp(ReferenceClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._client_id = self._uuid()

    def _commit_info(self, ict: int, operation: str) -> Action:
        txn = str(uuid.uuid5(uuid.NAMESPACE_URL, f"lakecert-client:{self._client_id}/{ict}"))
        return commit_info_action(ict, txn, operation)
