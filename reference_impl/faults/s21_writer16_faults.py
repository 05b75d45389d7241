"""Faults for the round-16 blind misses (issue 28, session 21): see docs/mutation.md, round 16.

Writer side: in-commit timestamps counted on from the previous commit instead of read from the clock
(caught only on a table whose newest commit is old), and a log compaction whose file actions are not
reconciled (caught only by the compaction's own shape: one action per path). Neither is one of the
round's variants."""

from __future__ import annotations

import contextlib

from reference_impl.delta.actions import Action, encode_commit
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.compaction import reconcile
from reference_impl.delta.log_paths import compaction_uri
from reference_impl.faults.base import fault


@fault(
    "ict-previous-plus-stopwatch",
    "client",
    breaks=("WRT-ICT-WALLCLOCK",),
    description="The writer keeps each table's time line continuous and immune to wall-clock jumps: it reads"
    " the clock for a table's creating commit only, and stamps every later commit with the previous commit's"
    " in-commit timestamp plus the time its own stopwatch measured since its last stamp (at least 1 ms)."
    " Strictly increasing, above a skewed peer, and right on a table it keeps writing; on a table whose last"
    " commit is a day old (a long-lived table, a peer with a slow clock) its commit is stamped a day ago.",
)
class IctPreviousPlusStopwatch(ReferenceClient):
    def _next_ict(self, previous: int | None) -> int:
        now = self.clock()
        last: int = self.__dict__.get("_last_stamp", now)
        self.__dict__["_last_stamp"] = now
        return now if previous is None else previous + max(1, now - last)


@fault(
    "compaction-concatenates-file-actions",
    "client",
    breaks=("WRT-COMPACTION-CONTENT",),
    description="A log compaction reconciles the range's protocol and metaData but writes its file actions as"
    " the commits hold them, in commit order (commitInfo dropped): 'replay applies them in order'. A file"
    " added and removed inside the range is in the file as an add and then a remove; a reader replaying it"
    " in order gets the right files, but a compaction holds one reconciled action per path.",
)
class CompactionConcatenatesFileActions(ReferenceClient):
    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        table = self._table(name)
        if not self._policy_allows(table.table_id, "log_compaction"):
            return False
        seg = self._log.segment(table.table_id, table.location)
        if not self._compaction_allowed(seg, start_version, end_version):
            return False
        commits = [self._log.commit_actions(seg.commits[v]) for v in range(start_version, end_version + 1)]
        header = [a for a in reconcile(commits) if "protocol" in a or "metaData" in a]
        files: list[Action] = [a for actions in commits for a in actions if "add" in a or "remove" in a]
        with contextlib.suppress(FileExistsError):
            self.storage.put(
                compaction_uri(table.location, start_version, end_version),
                encode_commit([*header, *files]),
                if_absent=True,
            )
        return True
