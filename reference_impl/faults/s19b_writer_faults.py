"""Faults for the round-12b blind misses (issue 28, session 19b): writer. Each fails a judgement widened
for that round (runs of consecutive lost answers around a proposal; cleanup on a log holding checkpoints
in every form, whole and not, with a stale or dangling ``_last_checkpoint``) and none is one of the
round's variants."""

from __future__ import annotations

import contextlib
import re

from conformance.contract.delta import CatalogError, CatalogTimeout, MaintenanceOp, TableInfo
from reference_impl.delta.actions import Action
from reference_impl.delta.checkpoint import read_last_checkpoint
from reference_impl.delta.cleanup import cut_off_checkpoint, files_to_delete, log_files
from reference_impl.delta.client import Builder, Proposals, ReferenceClient
from reference_impl.delta.log_paths import delta_uri, log_dir, parse_log_name, staged_dir
from reference_impl.faults.base import fault


@fault(
    "recovery-listing-lost-reads-log",
    "client",
    breaks=("WRT-LOST-ANSWER-ONCE",),
    description="After a lost answer to its proposal the writer asks the catalog whether the commit is its"
    " own; when the answer to that listing is lost as well, it decides from _delta_log alone: no published"
    " file of the version, so not ratified. A ratified, unpublished commit is taken for lost and the change"
    " is committed again at the next version. One lost answer at a time is handled right.",
)
class RecoveryListingLostReadsLog(ReferenceClient):
    def _ours(self, table: TableInfo, version: int, mine: Proposals) -> bool:
        try:
            return super()._ours(table, version, mine)
        except CatalogTimeout:
            # The fault: an unanswered question answered by the log, which holds no unpublished commit.
            published = delta_uri(table.location, version)
            return self.storage.exists(published) and self.storage.get(published) in mine.contents


@fault(
    "cleanup-trusts-last-checkpoint",
    "client",
    breaks=("WRT-CLEANUP-NEEDS-CHECKPOINT",),
    description="Metadata cleanup takes the version _last_checkpoint names (when at or before the cut-off"
    " and newer than every checkpoint file it lists) as the cut-off checkpoint, without checking that the"
    " checkpoint it names exists: a hint left by a writer that died before its checkpoint, or that names"
    " a file since lost, has older commits deleted with no checkpoint to replace them.",
)
class CleanupTrustsLastCheckpoint(ReferenceClient):
    def cleanup(self, name: str, cutoff_version: int) -> None:
        table = self._table(name)
        if not self._policy_allows(table.table_id, "metadata_cleanup"):
            return
        files = log_files(f.uri for f in self.storage.list(log_dir(table.location) + "/"))
        cp = cut_off_checkpoint(files, cutoff_version)
        hint = read_last_checkpoint(self.storage, table.location)
        hinted = int(hint.get("version", -1)) if hint is not None else -1
        if 0 <= hinted <= cutoff_version and (cp is None or hinted > cp):
            cp = hinted  # the fault: the hint's word for a checkpoint
        for uri in [] if cp is None else files_to_delete(files, cp):
            self.storage.delete(uri)


_MULTI_PART = re.compile(r"(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet")


@fault(
    "cleanup-multipart-first-and-last",
    "client",
    breaks=("WRT-CLEANUP-KEEPS",),
    description="Metadata cleanup also counts multi-part checkpoints (<v>.checkpoint.<i>.<n>.parquet), as"
    " engines write them; since parts are written in order, it takes a set as whole when its first and its"
    " last part are listed. A set missing a middle part (lost, or written out of order by a parallel"
    " writer) becomes the cut-off checkpoint over an older whole one, and the published commits between"
    " them are deleted.",
)
class CleanupMultipartFirstAndLast(ReferenceClient):
    def cleanup(self, name: str, cutoff_version: int) -> None:
        table = self._table(name)
        if not self._policy_allows(table.table_id, "metadata_cleanup"):
            return
        log = log_dir(table.location) + "/"
        uris = [f.uri for f in self.storage.list(log)]
        files = log_files(uris)
        found = {v for v in [cut_off_checkpoint(files, cutoff_version)] if v is not None}
        for uri in uris:
            m = _MULTI_PART.fullmatch(uri[len(log) :])
            if m and int(m[2]) == 1 and int(m[1]) <= cutoff_version:
                last = uri[len(log) :].replace(f".{1:010d}.{m[3]}.", f".{m[3]}.{m[3]}.")
                if log + last in uris:  # the fault: first and last there, taken for the whole set
                    found.add(int(m[1]))
        cp = max(found, default=None)
        doomed = [] if cp is None else files_to_delete(files, cp)
        if cp is not None:  # the parts of older sets go with the other older checkpoints
            doomed += [u for u in uris if (m := _MULTI_PART.fullmatch(u[len(log) :])) and int(m[1]) < cp]
        for uri in doomed:
            self.storage.delete(uri)


@fault(
    "policy-lookup-fails-open",
    "client",
    breaks=("WRT-MAINTENANCE-POLICY",),
    description="When the catalog's answer to a maintenance-policy lookup is lost (a timeout), takes every"
    " maintenance job as allowed and runs it: under a policy forbidding it, a checkpoint is written.",
)
class PolicyLookupFailsOpen(ReferenceClient):
    def _policy_allows(self, table_id: str, op: MaintenanceOp) -> bool:
        try:
            return super()._policy_allows(table_id, op)
        except CatalogError:
            return True  # the fault: no answer taken for "allowed"


@fault(
    "noop-commit-without-txnid",
    "client",
    breaks=("WRT-TXNID",),
    description="Gives a commit its txnId when the commit changes a file: a delete that matches no row is"
    " committed with a commitInfo that has none.",
)
class NoopCommitWithoutTxnId(ReferenceClient):
    def _order_actions(self, actions: list[Action]) -> list[Action]:
        if any("add" in a or "remove" in a for a in actions):
            return actions
        return [
            {"commitInfo": {k: v for k, v in a["commitInfo"].items() if k != "txnId"}} if "commitInfo" in a else a
            for a in actions
        ]


@fault(
    "rebased-commit-info-last",
    "client",
    breaks=("WRT-COMMITINFO-FIRST",),
    description="Builds a commit again after losing its version on a path of its own, which adds the commitInfo"
    " after the rebuilt actions: every commit that landed after a lost race ends with its commitInfo.",
)
class RebasedCommitInfoLast(ReferenceClient):
    def _commit(self, table: TableInfo, operation: str, build: Builder) -> int:
        self._attempts = 0
        return super()._commit(table, operation, build)

    def _order_actions(self, actions: list[Action]) -> list[Action]:
        self._attempts = getattr(self, "_attempts", 0) + 1
        if self._attempts == 1:
            return actions
        return [a for a in actions if "commitInfo" not in a] + [a for a in actions if "commitInfo" in a]


@fault(
    "publish-first-listed-staged-file",
    "client",
    breaks=("WRT-PUBLISH-IDENTICAL",),
    description="Publishes, for each version the catalog stores as staged, the first file its staging folder"
    " lists for that version: a rejected proposal whose name sorts first is published instead.",
)
class PublishFirstListedStagedFile(ReferenceClient):
    def publish(self, name: str) -> None:
        table = self._table(name)
        stored = {c.version: c for c in self.catalog.get_commits(table.table_id).commits}
        if not stored:
            return
        listed = sorted(info.uri for info in self.storage.list(staged_dir(table.location) + "/"))
        for v in self._publish_order(list(stored)):
            first = next((u for u in listed if (lf := parse_log_name(u)) is not None and lf.version == v), None)
            # The fault: the staging folder's first file of the version, not the one the catalog names.
            source = stored[v].staged_uri if first is None or stored[v].staged_uri is None else first
            content = stored[v].inline_content if source is None else self.storage.get(source)
            assert content is not None
            with contextlib.suppress(FileExistsError):
                self.storage.put(delta_uri(table.location, v), content, if_absent=True)
        self._mark_published(table.table_id, max(stored))
