"""Faults for the round-11 blind misses (issue 28, session 19): writer. Each fails a judgement widened
for that round (append sizes, maintenance on a table without a checkpoint, crashes inside a
publication) and none is one of the round's variants."""

from __future__ import annotations

from collections.abc import Sequence

from reference_impl.delta.checkpoint import write_checkpoint
from reference_impl.delta.cleanup import log_files
from reference_impl.delta.client import ReferenceClient, wall_clock_ms
from reference_impl.delta.data_files import Row, write_data_file
from reference_impl.delta.log_paths import delta_uri, log_dir
from reference_impl.delta.snapshot import LogReader
from reference_impl.faults.base import fault


@fault(
    "append-split-repeats-tail",
    "client",
    breaks=("WRT-FILE-ACTIONS-ONCE",),
    description="Appends of more than 4,096 rows are written as files of 4,096 rows (one Parquet row group"
    " each), each under a name of its own; the last, partial file's add is put in the commit twice (once"
    " as the loop's last chunk, once as the remainder). Appends of up to 4,096 rows, or of a multiple of it,"
    " are right.",
)
class AppendSplitRepeatsTail(ReferenceClient):
    GROUP = 4096

    def append(self, name: str, rows: Sequence[Row]) -> int:
        if len(rows) <= self.GROUP:
            return super().append(name, rows)
        table = self._table(name)
        chunks = [rows[i : i + self.GROUP] for i in range(0, len(rows), self.GROUP)]
        adds = [
            write_data_file(self.storage, table.location, c, modification_time=wall_clock_ms(), file_id=self._uuid())
            for c in chunks
        ]
        if len(chunks[-1]) < self.GROUP:
            adds.append(adds[-1])  # the remainder, "added" again
        return self._commit(table, "WRITE", lambda snap: list(adds))


@fault(
    "compaction-anchors-on-checkpoint",
    "client",
    breaks=("WRT-MAINTENANCE-POLICY",),
    description="Log compaction (allowed by the policy) first writes a checkpoint of the range's last version"
    " when the log has no checkpoint at all, so that readers have a base under the compacted range; it asks"
    " the policy about log compaction only, not about the checkpoint it writes.",
)
class CompactionAnchorsOnCheckpoint(ReferenceClient):
    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        table = self._table(name)
        if self._policy_allows(table.table_id, "log_compaction"):
            uris = [f.uri for f in self.storage.list(log_dir(table.location) + "/")]
            if not any(f.kind == "checkpoint" for f in log_files(uris)):
                seg = self._log.segment(table.table_id, table.location)
                if end_version in seg.published:
                    snap = self._log.snapshot_of(seg, end_version)
                    write_checkpoint(self.storage, table.location, end_version, snap.state_actions())
        return super().compact_log(name, start_version, end_version)


@fault(
    "publish-stops-at-present-file",
    "client",
    breaks=("WRT-CRASH-RECOVERY",),
    description="The publisher copies the ratified commits in order and stops at the first one it finds"
    " already in _delta_log, taking it for another publisher at work that will finish (copy the rest and"
    " mark them); it then neither copies nor marks. After a publisher crashed part-way through, nobody"
    " finishes: the rest stays unpublished and the catalog is never told.",
)
class PublishStopsAtPresentFile(ReferenceClient):
    def publish(self, name: str) -> None:
        table = self._table(name)
        stored = {c.version: c for c in self.catalog.get_commits(table.table_id).commits}
        for v in self._publish_order(list(stored)):
            content = self._log.commit_bytes(LogReader.catalog_ref(stored[v]))
            try:
                self.storage.put(delta_uri(table.location, v), self._published_bytes(content), if_absent=True)
            except FileExistsError:
                return  # someone else is publishing: theirs to finish
        if stored:
            self._mark_published(table.table_id, max(stored))


@fault(
    "publish-checkpoints-every-ten",
    "client",
    breaks=("WRT-MAINTENANCE-POLICY",),
    description="As Delta engines do by default (delta.checkpointInterval = 10), publishing ends with a"
    " checkpoint when the newest version it published is a multiple of ten and has none: a post-publication"
    " hook that does not ask the catalog's policy (the explicit checkpoint call does).",
)
class PublishCheckpointsEveryTen(ReferenceClient):
    INTERVAL = 10

    def publish(self, name: str) -> None:
        super().publish(name)
        table = self._table(name)
        seg = self._log.segment(table.table_id, table.location)
        newest = max(seg.published, default=0)
        if newest > 0 and newest % self.INTERVAL == 0:
            write_checkpoint(self.storage, table.location, newest, self._log.snapshot_of(seg, newest).state_actions())


@fault(
    "publish-splits-unicode-lines",
    "client",
    breaks=("WRT-PUBLISH-IDENTICAL",),
    description="Publishes a commit line by line as Python's str.splitlines() cuts it: a string holding a raw"
    " U+2028 (or U+0085, U+2029), which JSON allows, is cut in two and the published action is broken.",
)
class PublishSplitsUnicodeLines(ReferenceClient):
    def _published_bytes(self, content: bytes) -> bytes:
        return "".join(line + "\n" for line in content.decode().splitlines()).encode()
