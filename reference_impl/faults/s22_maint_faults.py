"""Faults for the round-17 blind misses (issue 28, session 22): see docs/mutation.md, round 17."""

from __future__ import annotations

import contextlib
import hashlib
import json

from reference_impl.delta import actions as act
from reference_impl.delta.actions import Action, decode_commit
from reference_impl.delta.client import ReferenceClient, wall_clock_ms
from reference_impl.delta.compaction import reconcile
from reference_impl.delta.data_files import _stats as data_stats
from reference_impl.delta.data_files import data_file_uri, encode_rows, read_data_file, row_id
from reference_impl.delta.log_paths import compaction_uri, delta_uri
from reference_impl.faults.base import fault


@fault(
    "rewrite-named-by-kept-rows",
    "client",
    breaks=("WRT-FILE-ACTIONS-ONCE",),
    description="A delete names each rewritten data file after the rows it keeps (a hash of their ids and"
    " values), written put-if-absent, so that a delete retried after a conflict reuses its rewrites instead of"
    " leaving orphans. Two files of one delete that keep equal rows get one name: the commit adds that path"
    " twice (and the table keeps one copy of those rows).",
)
class RewriteNamedByKeptRows(ReferenceClient):
    def _rewrite_without(self, location: str, add: Action, ids: set[int]) -> list[Action]:
        rows = read_data_file(self.storage, location, add["add"]["path"])
        keep = [r for r in rows if row_id(r) not in ids]
        if len(keep) == len(rows):
            return []
        now = wall_clock_ms()
        if not keep:
            return [act.remove_action(add, now)]
        key = json.dumps([[row_id(r), r.get("value")] for r in keep], ensure_ascii=False)
        path = f"part-{hashlib.sha256(key.encode()).hexdigest()[:32]}.parquet"
        data = encode_rows(keep)
        with contextlib.suppress(FileExistsError):  # the same kept rows: the same file, already written
            self.storage.put(data_file_uri(location, path), data, if_absent=True)
        return [act.remove_action(add, now), act.add_action(path, len(data), now, data_stats(keep))]


@fault(
    "compaction-prefers-published-copy",
    "client",
    breaks=("WRT-COMPACTION-CONTENT",),
    description="Log compaction only covers published versions, so the compaction writer reads each version"
    " of its range from its published file _delta_log/<v>.json, taken to be the same bytes as the catalog's"
    " copy (a commit's content is immutable), and not through the snapshot's catalog-first resolution. Where"
    " the catalog still returns a version (its mark lost) whose published file is not the ratified commit,"
    " the compaction holds that file's actions, not the commit's.",
)
class CompactionPrefersPublishedCopy(ReferenceClient):
    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        table = self._table(name)
        if not self._policy_allows(table.table_id, "log_compaction"):
            return False
        seg = self._log.segment(table.table_id, table.location)
        if not self._compaction_allowed(seg, start_version, end_version):
            return False
        commits = [
            decode_commit(self.storage.get(delta_uri(table.location, v))) for v in range(start_version, end_version + 1)
        ]
        data = act.encode_commit(reconcile(commits))
        with contextlib.suppress(FileExistsError):
            self.storage.put(compaction_uri(table.location, start_version, end_version), data, if_absent=True)
        return True
