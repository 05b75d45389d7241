"""Faulty variants of the reference Delta client for session 17's writer histories
(``conformance/checks/delta/client_histories.py``): a delete that removes a file once per deleted row
it held, staged names drawn per version (shared by every writer of every table), a publication
watermark shared by the tables of one warehouse, and a loser that re-proposes its old snapshot's
actions after a conflict."""

from __future__ import annotations

import contextlib
import random
import uuid

from conformance.contract.delta import CatalogTimeout, CommitConflict, TableInfo
from reference_impl.delta import actions as act
from reference_impl.delta.actions import Action
from reference_impl.delta.client import Builder, Proposals, ReferenceClient, wall_clock_ms
from reference_impl.delta.data_files import read_data_file, row_id, write_data_file
from reference_impl.delta.log_paths import delta_uri, staged_uri
from reference_impl.delta.snapshot import LogReader
from reference_impl.faults.base import fault


@fault(
    "writers17-delete-remove-per-row",
    "client",
    ("WRT-FILE-ACTIONS-ONCE",),
    "A delete writes one remove of a data file for every deleted row the file held (one file rewrite):"
    " a delete of two rows of one file removes its path twice in one commit.",
)
class DeleteRemovePerRow(ReferenceClient):
    def _rewrite_without(self, location: str, add: Action, ids: set[int]) -> list[Action]:
        rows = read_data_file(self.storage, location, add["add"]["path"])
        keep = [r for r in rows if row_id(r) not in ids]
        if len(keep) == len(rows):
            return []
        now = wall_clock_ms()
        replacement = (
            [write_data_file(self.storage, location, keep, modification_time=now, file_id=self._uuid())] if keep else []
        )
        return [act.remove_action(add, now) for _ in range(len(rows) - len(keep))] + replacement


@fault(
    "writers17-staged-name-per-version",
    "client",
    ("WRT-STAGED-NAME",),
    "The staged name's UUID is drawn from a generator seeded with the version (the same for every writer"
    " and table) and written without if_absent: two writers racing for one version share the file.",
)
class StagedNamePerVersion(ReferenceClient):
    def _staged_uri(self, location: str, version: int) -> str:
        return staged_uri(location, version, str(uuid.UUID(int=random.Random(version).getrandbits(128), version=4)))

    def _stage(self, location: str, version: int, content: bytes, previous: str | None) -> str:
        uri = self._staged_uri(location, version)
        self.storage.put(uri, content)
        return uri


@fault(
    "writers17-publish-warehouse-watermark",
    "client",
    ("WRT-PUBLISH-ORDER",),
    "The publisher skips versions at or below the highest it published under the same warehouse folder"
    " (every table of the client's catalog): after a longer table, a shorter one is not published.",
)
class PublishWarehouseWatermark(ReferenceClient):
    def publish(self, name: str) -> None:
        table = self._table(name)
        marks: dict[str, int] = self.__dict__.setdefault("_marks", {})
        folder = table.location.rstrip("/").rsplit("/", 1)[0]  # the fault: the warehouse's, not the table's
        stored = {c.version: c for c in self.catalog.get_commits(table.table_id).commits}
        todo = [v for v in self._publish_order(list(stored)) if v > marks.get(folder, -1)]
        if not todo:
            return
        for v in todo:
            content = self._log.commit_bytes(LogReader.catalog_ref(stored[v]))
            with contextlib.suppress(FileExistsError):
                self.storage.put(delta_uri(table.location, v), self._published_bytes(content), if_absent=True)
        self._mark_published(table.table_id, max(todo))
        marks[folder] = max(marks.get(folder, -1), max(todo))


@fault(
    "writers17-rebase-stale-actions",
    "client",
    ("WRT-REBASE-UNPUBLISHED",),
    "After a conflict the writer proposes the next version with the actions it built on its first"
    " snapshot, without reading the winner's commit: a racing delete of the same file is undone.",
)
class RebaseStaleActions(ReferenceClient):
    def _commit(self, table: TableInfo, operation: str, build: Builder) -> int:
        seg = self._log.segment(table.table_id, table.location)
        snap = self._log.snapshot_of(seg)
        built = build(snap)  # the fault: built once, on the first snapshot
        version, previous_ict = snap.version + 1, snap.in_commit_timestamp
        error: Exception | None = None
        mine = Proposals()  # lost answers and second deliveries are handled as the reference does
        for _attempt in range(self.max_retries + 1):
            ict = self._next_ict(previous_ict)
            content = self._encode(self._order_actions([self._commit_info(ict, operation), *built]))
            staged = None if self.inline else self._stage(table.location, version, content, None)
            mine.add(staged, content)
            try:
                self.catalog.commit(
                    table.table_id,
                    version,
                    staged_uri=staged,
                    inline_content=content if self.inline else None,
                    in_commit_timestamp=ict,
                )
            except CommitConflict as e:
                if self._own_after_conflict(table, version, mine):
                    return version
                error = e
            except CatalogTimeout as e:
                landed = self._after_lost_answer(table, version, mine)
                if landed is not None:
                    return landed
                error = e
            else:
                return version
            latest = self._log.snapshot_of(self._log.segment(table.table_id, table.location))
            version, previous_ict = latest.version + 1, latest.in_commit_timestamp  # the version only
        assert error is not None
        raise error
