"""The correct reference Delta client for catalog-managed tables.

Every rule lives in a small hook method (underscore names below) so that each faulty
variant in ``reference_impl/faults/client_faults.py`` overrides exactly one of them.
Reader-side hooks live on ``LogReader`` (snapshot.py); a faulty reader is plugged in with
``reader_class`` and only affects ``read``. Writes and maintenance use ``log_class``, so a
reader fault never disturbs how the client writes.

The client touches nothing but the ``catalog`` and ``storage`` it is given.
"""

from __future__ import annotations

import contextlib
import random
import time
import uuid
from collections.abc import Callable, Sequence
from typing import ClassVar

from conformance.contract.delta import (
    Catalog,
    CatalogTimeout,
    CommitConflict,
    MaintenanceOp,
    ReadResult,
    Storage,
    TableInfo,
)
from reference_impl.delta import actions as act
from reference_impl.delta.actions import Action
from reference_impl.delta.checkpoint import write_checkpoint
from reference_impl.delta.cleanup import plan_cleanup
from reference_impl.delta.compaction import reconcile
from reference_impl.delta.data_files import Row, read_data_file, row_id, write_data_file
from reference_impl.delta.log_paths import compaction_uri, delta_uri, log_dir, staged_uri
from reference_impl.delta.path_access import PathAccess
from reference_impl.delta.snapshot import LogReader, LogSegment, Snapshot, read_rows

Clock = Callable[[], int]
# Builds the data actions of a commit from the snapshot it is based on.
Builder = Callable[[Snapshot], list[Action]]


class Proposals:
    """What one commit proposed over its attempts: staged files and commit contents."""

    def __init__(self) -> None:
        self.staged: set[str] = set()
        self.contents: set[bytes] = set()
        self.last: bytes = b""

    def add(self, staged: str | None, content: bytes) -> None:
        if staged is not None:
            self.staged.add(staged)
        self.contents.add(content)
        self.last = content


class ConcurrentModificationError(Exception):
    """A concurrent commit removed files that this delete had to rewrite."""


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class ReferenceClient(PathAccess):
    """``contract.DeltaClient`` done right. ``inline=True`` sends commit content to the catalog.

    ``PathAccess`` adds the optional path contract: it refuses catalog-managed tables by path."""

    reader_class: ClassVar[type[LogReader]] = LogReader  # read()
    log_class: ClassVar[type[LogReader]] = LogReader  # the writer's own view of the table

    def __init__(
        self,
        catalog: Catalog,
        storage: Storage,
        *,
        inline: bool = False,
        clock: Clock | None = None,
        max_retries: int = 10,
        seed: int | None = None,
    ) -> None:
        self.catalog = catalog
        # Names and ids drawn from the run's seed: the same seed writes the same files (and gives
        # the same verdicts, where an order of names matters); without one, random ones.
        self._random = random.Random(seed) if seed is not None else None
        self.storage = storage
        self.inline = inline
        self.clock = clock or wall_clock_ms
        self.max_retries = max_retries
        self._log = self.log_class(catalog, storage)
        self._reader = self.reader_class(catalog, storage)

    # ================================================================ hooks: discovery

    def _table(self, name: str) -> TableInfo:
        """RFC "Table Discovery": always resolve the name through the catalog, never guess a path."""
        return self.catalog.resolve(name)

    # ================================================================ hooks: commit content

    def _protocol_action(self) -> Action:
        """RFC "Catalog-managed Table Enablement": reader 3 / writer 7, catalogManaged in both lists."""
        return act.protocol_action()

    def _metadata_configuration(self) -> dict[str, str]:
        """RFC "Writer Requirements": in-commit timestamps must be active."""
        return act.default_configuration()

    def _order_actions(self, actions: list[Action]) -> list[Action]:
        """PROTOCOL.md In-Commit Timestamps: commitInfo is the first action (builders put it first)."""
        return actions

    def _next_ict(self, previous: int | None) -> int:
        """In-commit timestamps strictly increase: max(now, previous + 1)."""
        now = self.clock()
        return now if previous is None else max(now, previous + 1)

    def _txn_id(self) -> str | None:
        """RFC "Commit Provenance Information": a unique txnId per commit."""
        return self._uuid()

    def _uuid(self) -> str:
        if self._random is None:
            return str(uuid.uuid4())
        return str(uuid.UUID(int=self._random.getrandbits(128), version=4))

    def _encode(self, actions: list[Action]) -> bytes:
        """Staged and inline commits use the published Delta file format (NDJSON)."""
        return act.encode_commit(actions)

    # ================================================================ hooks: proposing

    def _staged_uri(self, location: str, version: int) -> str:
        """RFC "Delta Log Entries": _staged_commits/<20-digit version>.<uuid>.json."""
        return staged_uri(location, version, self._uuid())

    def _stage(self, location: str, version: int, content: bytes, previous: str | None) -> str:
        """Write a NEW staged file for every attempt: a staged file is tied to its version (RFC note)."""
        uri = self._staged_uri(location, version)
        self.storage.put(uri, content, if_absent=True)
        return uri

    def _before_propose(self, table: TableInfo, version: int, content: bytes) -> None:
        """Nothing: writers must not commit through the filesystem (RFC "Writer Requirements")."""

    # ================================================================ hooks: publishing

    def _publish_order(self, versions: list[int]) -> list[int]:
        """RFC "Publishing Commits": v-1 is published before v."""
        return sorted(versions)

    def _published_bytes(self, content: bytes) -> bytes:
        """A published file is an exact copy of the ratified commit."""
        return content

    def _mark_published(self, table_id: str, version: int) -> None:
        """A lost answer to the mark is asked again: the mark never goes back, so twice is harmless."""
        for attempt in range(3):
            try:
                self.catalog.mark_published(table_id, version)
                return
            except CatalogTimeout:
                if attempt == 2:
                    raise

    # ================================================================ hooks: lost answers

    def _own_after_conflict(self, table: TableInfo, version: int, mine: Proposals) -> bool:
        """A conflict may answer a second delivery of our own proposal: the version is then ours."""
        return self._ours(table, version, mine)

    def _after_lost_answer(self, table: TableInfo, version: int, mine: Proposals) -> int | None:
        """The proposal's answer was lost (``CatalogTimeout``): ask the catalog. Ratified as ours: done,
        at that version; otherwise None (another attempt follows, which finds out about a late
        ratification of this one by its conflict). Never propose the same change blindly again."""
        return version if self._ours(table, version, mine) else None

    def _ours(self, table: TableInfo, version: int, mine: Proposals) -> bool:
        """Whether the commit ratified at ``version`` is one this commit proposed: the catalog's
        listing of that version, or its published file once the catalog no longer stores it."""
        for commit in self.catalog.get_commits(table.table_id, version, version).commits:
            if commit.version == version:
                return commit.staged_uri in mine.staged or commit.inline_content in mine.contents
        published = delta_uri(table.location, version)
        return self.storage.exists(published) and self.storage.get(published) in mine.contents

    # ================================================================ hooks: maintenance

    def _policy_allows(self, table_id: str, op: MaintenanceOp) -> bool:
        """RFC "Maintenance Operations": consult the catalog before every maintenance job."""
        return self.catalog.maintenance_policy(table_id).allows(op)

    def _checkpoint_version(self, seg: LogSegment) -> int | None:
        """Only published versions may be checkpointed: the newest one."""
        return max(seg.published, default=None)

    def _compaction_allowed(self, seg: LogSegment, start: int, end: int) -> bool:
        """Compaction files only cover published commits."""
        return 0 <= start <= end and all(v in seg.published for v in range(start, end + 1))

    def _cleanup_plan(self, uris: list[str], cutoff_version: int) -> list[str]:
        """RFC "Metadata Cleanup" as changed for catalog-managed tables (see cleanup.py)."""
        return plan_cleanup(uris, cutoff_version)

    # ================================================================ DeltaClient

    def create_table(self, name: str) -> None:
        # RFC "Creating ... Tables": staging location, version 0 there, then register the name.
        staging = self.catalog.create_staging_table()
        ict = self._next_ict(None)
        actions = self._order_actions(
            [
                self._commit_info(ict, "CREATE TABLE"),
                self._protocol_action(),
                act.metadata_action(staging.table_id, ict, self._metadata_configuration()),
            ]
        )
        self.storage.put(delta_uri(staging.location, 0), act.encode_commit(actions), if_absent=True)
        self.catalog.register_table(name, staging.table_id)

    def append(self, name: str, rows: Sequence[Row]) -> int:
        table = self._table(name)
        add = write_data_file(
            self.storage, table.location, rows, modification_time=wall_clock_ms(), file_id=self._uuid()
        )
        return self._commit(table, "WRITE", lambda snap: [add])

    def delete(self, name: str, ids: Sequence[int]) -> int:
        table = self._table(name)
        wanted = set(ids)
        replaced: dict[str, list[Action]] = {}  # path -> remove (+ rewritten add); [] when untouched
        removed: set[str] = set()

        def build(snap: Snapshot) -> list[Action]:
            gone = removed - snap.files.keys()
            if gone:
                # A concurrent commit already removed a file we rewrite: our delete is stale.
                raise ConcurrentModificationError(f"files removed concurrently: {sorted(gone)}")
            for path, add in snap.files.items():
                if path not in replaced:
                    replaced[path] = self._rewrite_without(table.location, add, wanted)
            removed.update(p for p in snap.files if replaced[p])
            return [a for p in sorted(snap.files) for a in replaced[p]]

        return self._commit(table, "DELETE", build)

    def publish(self, name: str) -> None:
        table = self._table(name)
        stored = {c.version: c for c in self.catalog.get_commits(table.table_id).commits}
        if not stored:
            return
        for v in self._publish_order(list(stored)):
            content = self._log.commit_bytes(LogReader.catalog_ref(stored[v]))
            # Already published (e.g. the catalog missed our last mark_published): same commit, fine.
            with contextlib.suppress(FileExistsError):
                self.storage.put(delta_uri(table.location, v), self._published_bytes(content), if_absent=True)
        self._mark_published(table.table_id, max(stored))

    def checkpoint(self, name: str) -> int | None:
        table = self._table(name)
        if not self._policy_allows(table.table_id, "checkpoint"):
            return None
        seg = self._log.segment(table.table_id, table.location)
        version = self._checkpoint_version(seg)
        if version is None:
            return None
        snap = self._log.snapshot_of(seg, version)
        write_checkpoint(self.storage, table.location, version, snap.state_actions())
        return version

    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        table = self._table(name)
        if not self._policy_allows(table.table_id, "log_compaction"):
            return False
        seg = self._log.segment(table.table_id, table.location)
        if not self._compaction_allowed(seg, start_version, end_version):
            return False
        commits = [self._log.commit_actions(seg.commits[v]) for v in range(start_version, end_version + 1)]
        data = act.encode_commit(reconcile(commits))
        with contextlib.suppress(FileExistsError):  # same range, same reconciled content
            self.storage.put(compaction_uri(table.location, start_version, end_version), data, if_absent=True)
        return True

    def cleanup(self, name: str, cutoff_version: int) -> None:
        table = self._table(name)
        if not self._policy_allows(table.table_id, "metadata_cleanup"):
            return
        uris = [f.uri for f in self.storage.list(log_dir(table.location) + "/")]
        for uri in self._cleanup_plan(uris, cutoff_version):
            self.storage.delete(uri)

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        if version is not None and timestamp_ms is not None:
            raise ValueError("give a version or a timestamp, not both")
        table = self._table(name)
        if timestamp_ms is not None:
            version = self._reader.version_at(table.table_id, table.location, timestamp_ms)
        snap = self._reader.snapshot(table.table_id, table.location, version)
        return ReadResult(snap.version, read_rows(self.storage, snap))

    # ================================================================ internals

    def _commit_info(self, ict: int, operation: str) -> Action:
        return act.commit_info_action(ict, self._txn_id(), operation)

    def _rewrite_without(self, location: str, add: Action, ids: set[int]) -> list[Action]:
        """Copy-on-write: remove the file and add a copy without the deleted rows ([] if none match)."""
        rows = read_data_file(self.storage, location, add["add"]["path"])
        keep = [r for r in rows if row_id(r) not in ids]
        if len(keep) == len(rows):
            return []
        # File times are plain wall-clock times; only in-commit timestamps use ``clock``.
        now = wall_clock_ms()
        replacement = (
            [write_data_file(self.storage, location, keep, modification_time=now, file_id=self._uuid())] if keep else []
        )
        return [act.remove_action(add, now), *replacement]

    def _commit(self, table: TableInfo, operation: str, build: Builder) -> int:
        """RFC "Commit Protocol": propose v = latest + 1; on a conflict rebuild on the new state."""
        staged: str | None = None
        conflict: CommitConflict | CatalogTimeout | None = None
        mine = Proposals()  # every attempt of this commit, to recognise it after a lost answer
        for _attempt in range(self.max_retries + 1):
            seg = self._log.segment(table.table_id, table.location)
            snap = self._log.snapshot_of(seg)
            version = snap.version + 1
            ict = self._next_ict(snap.in_commit_timestamp)
            actions = self._order_actions([self._commit_info(ict, operation), *build(snap)])
            content = self._encode(actions)
            if not self.inline:
                staged = self._stage(table.location, version, content, staged)
            self._before_propose(table, version, content)
            mine.add(staged, content)
            try:
                self.catalog.commit(
                    table.table_id,
                    version,
                    staged_uri=staged,
                    inline_content=content if self.inline else None,
                    in_commit_timestamp=ict,
                    latest_published_version=max(seg.published, default=None),
                )
            except CommitConflict as lost:
                if self._own_after_conflict(table, version, mine):
                    return version
                conflict = lost
                continue
            except CatalogTimeout as unknown:
                landed = self._after_lost_answer(table, version, mine)
                if landed is not None:
                    return landed
                conflict = unknown
                continue
            return version
        assert conflict is not None
        raise conflict
