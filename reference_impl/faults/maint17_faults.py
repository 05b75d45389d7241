"""Faulty variants of the reference Delta client for session 17's maintenance and reader-shape checks:
a checkpoint named after the newest published version but filled with the latest state, a log
compaction that drops the removes of files added before its range, a reader that replaces the commits
before a log compaction's range by nothing, and a reader that drops an unterminated last line."""

from __future__ import annotations

import contextlib

from reference_impl.delta import actions as act
from reference_impl.delta.actions import Action, decode_commit
from reference_impl.delta.checkpoint import write_checkpoint
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.compaction import reconcile
from reference_impl.delta.log_paths import compaction_uri, log_dir, parse_log_name
from reference_impl.delta.snapshot import LogReader, LogSegment
from reference_impl.faults.base import fault


@fault(
    "maint17-checkpoint-latest-state",
    "client",
    ("WRT-CHECKPOINT-PUBLISHED",),
    "The checkpoint is named after the newest published version but holds the latest ratified state,"
    " unpublished commits included.",
)
class CheckpointLatestState(ReferenceClient):
    def checkpoint(self, name: str) -> int | None:
        table = self._table(name)
        if not self._policy_allows(table.table_id, "checkpoint"):
            return None
        seg = self._log.segment(table.table_id, table.location)
        version = self._checkpoint_version(seg)
        if version is None:
            return None
        snap = self._log.snapshot_of(seg, None)  # the fault: the latest state, not the state at ``version``
        write_checkpoint(self.storage, table.location, version, snap.state_actions())
        return version


@fault(
    "maint17-compaction-drops-outer-removes",
    "client",
    ("WRT-COMPACTION-CONTENT",),
    "A log compaction keeps only the removes of files its own range added: removes of older files are dropped.",
)
class CompactionDropsOuterRemoves(ReferenceClient):
    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        table = self._table(name)
        if not self._policy_allows(table.table_id, "log_compaction"):
            return False
        seg = self._log.segment(table.table_id, table.location)
        if not self._compaction_allowed(seg, start_version, end_version):
            return False
        commits = [self._log.commit_actions(seg.commits[v]) for v in range(start_version, end_version + 1)]
        added = {a["add"]["path"] for c in commits for a in c if "add" in a}
        kept = [a for a in reconcile(commits) if "remove" not in a or a["remove"]["path"] in added]
        with contextlib.suppress(FileExistsError):
            self.storage.put(
                compaction_uri(table.location, start_version, end_version), act.encode_commit(kept), if_absent=True
            )
        return True


class _CompactionSkipsGapReader(LogReader):
    """Starts from the checkpoint (or nothing) plus the newest log compaction x..y after it that ends
    at or before the version read, as if x were always the first version after the checkpoint."""

    def _base_checkpoint(self, seg: LogSegment, target: int) -> tuple[int | None, list[Action]]:
        cp, base = super()._base_checkpoint(seg, target)
        first = 0 if cp is None else cp + 1
        best: tuple[int, str] | None = None
        for info in self.storage.list(log_dir(seg.location) + "/"):
            f = parse_log_name(info.uri)
            if f is None or f.kind != "compaction" or f.end_version is None:
                continue
            if first <= f.version <= f.end_version <= target and (best is None or f.end_version > best[0]):
                best = (f.end_version, info.uri)
        if best is None:
            return cp, base
        # the fault: the commits first .. x - 1 are never replayed
        return best[0], base + decode_commit(self.storage.get(best[1]))


@fault(
    "maint17-reader-compaction-skips-gap",
    "client",
    ("RDR-LIST-FALLBACK",),
    "The reader replays checkpoint + log compaction x..y and skips the commits between the checkpoint and x.",
)
class CompactionSkipsGap(ReferenceClient):
    reader_class = _CompactionSkipsGapReader


class _CompleteLinesOnlyReader(LogReader):
    def _decode(self, content: bytes) -> list[Action]:
        if content and not content.endswith(b"\n"):
            content = content[: content.rfind(b"\n") + 1]  # the fault: an unterminated last line is dropped
        return super()._decode(content)


@fault(
    "maint17-reader-complete-lines-only",
    "client",
    ("RDR-UNPUBLISHED",),
    "The reader drops a commit's last line when the content has no final newline (valid NDJSON).",
)
class CompleteLinesOnly(ReferenceClient):
    reader_class = _CompleteLinesOnlyReader
