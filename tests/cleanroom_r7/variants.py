"""Round 7: faulty variants of the durable clean-room baseline (``tests.cleanroom_r3.base``).

Each target swaps exactly one side, the catalog or the client, for a subclass of ``DurableCatalog`` or
``ResilientClient`` that is correct except for one slip a real implementation could make. Written from
the RFC, the public contract and docs/certify.md only. The docstring of each faulty class says what is
wrong, which RFC section it breaks and why a shallow suite would not see it; ``VARIANTS`` at the end
lists them for the lead.
"""

from __future__ import annotations

import calendar
import contextlib
import io
import json
import re
import time
import unicodedata
import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from conformance.contract.delta import (
    Catalog,
    CatalogLimits,
    CatalogTimeout,
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    RatifiedCommit,
    Storage,
    TableInfo,
    TableNotFound,
)
from tests.cleanroom.catalog import _STAGED_NAME, CleanCatalog, TableState
from tests.cleanroom.client import (
    _CHECKPOINT_SCHEMA,
    _COMPACTION,
    Action,
    CleanClient,
    LogView,
    ReadError,
    RetriesExhausted,
    Snapshot,
    decode,
    encode,
)
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant

# ================================================================ catalog faults


class PageBoundaryDuplicateCatalog(DurableCatalog):
    """Listing pages overlap at their boundary: the commit closing a page opens the next one too.

    Bug: the catalog's store serves ratified commits in pages of 8 (the target declares
    ``page_size=8``) and the listing follows the continuation, as it should; but the continuation
    token is the version of the last commit of the page and the next page starts *at* it (``>=``),
    not after it. A listing of more than 8 stored commits therefore holds the 8th, 15th, ... commit
    twice. RFC "Getting Ratified Commits from the Catalog" / "Sample Catalog Client API": the returned
    commits are sorted in ascending version and contiguous (CAT-LIST-CONTIGUOUS). A shallow suite keeps
    fewer than 9 commits stored at a time (clients publish promptly), or checks the listed versions as a
    set (contiguous, no gap), and never sees a version listed twice.
    """

    page_size: ClassVar[int] = 8

    def listed(self, t: TableState, lo: int, hi: int) -> list[RatifiedCommit]:
        out: list[RatifiedCommit] = []
        cursor = lo
        while True:
            page = [t.stored[v] for v in sorted(t.stored) if cursor <= v <= hi][: self.page_size]
            out.extend(page)
            if len(page) < self.page_size:
                return out
            cursor = page[-1].version  # BUG: the next page starts at the token, not after it


class CapAcrossTablesCatalog(DurableCatalog):
    """The cap on unpublished commits is counted over all tables instead of per table.

    Bug: the catalog declares (``unpublished=10``) and enforces a cap of 10 ratified, unpublished
    commits per table, but the count it compares with the cap is the sum over every table of the
    catalog (one counter of the backing store's "pending publication" queue). With one table, or with
    tables written one after another and published in between, it is exact; with two tables each
    holding a few unpublished commits, a proposal is refused while its own table is far below the cap.
    RFC "Catalog Responsibilities" / certify.md "Declare your limits": a declared limit is the real
    limit, a call at it succeeds (CAT-LIMIT-DECLARED). A shallow suite exercises the cap on one table.
    """

    unpublished_cap: ClassVar[int] = 10

    def check_sequence(self, t: TableState, version: int) -> None:
        super().check_sequence(t, version)
        with self._lock:
            tables = list(self._by_id.values())
        pending = sum(x.latest - x.published for x in tables)  # BUG: every table's, not ``t``'s
        if pending >= self.unpublished_cap:
            raise CommitRejected(f"{pending} commits wait for publication; the cap is {self.unpublished_cap}")


class CapRefusedAsConflictCatalog(DurableCatalog):
    """One past the cap on unpublished commits, the proposal is refused as a version conflict.

    Bug: the catalog caps ratified, unpublished commits at 10 per table (declared ``unpublished=10``)
    and counts them right, but answers the proposal one past the cap with ``CommitConflict`` (its HTTP
    layer maps every "try again later" to 409) carrying the true latest version. The version is free:
    a conflict says it is taken. A client then checks whether the version is its own, finds it is not,
    rebases onto the same latest version and proposes the same version again, forever. RFC "Commit
    Protocol" (a conflict is a lost race) and certify.md "Limits": one past a limit the call is refused
    as a rejection or an invalid request (CAT-LIMIT-CLEAN-REFUSAL). A shallow suite accepts any
    ``CatalogError`` as "refused" and checks only that nothing changed.
    """

    unpublished_cap: ClassVar[int] = 10

    def check_sequence(self, t: TableState, version: int) -> None:
        super().check_sequence(t, version)
        if t.latest - t.published >= self.unpublished_cap:
            raise CommitConflict("too many unpublished commits", latest_version=t.latest)  # BUG: not a conflict


class MarkAsCountCatalog(DurableCatalog):
    """A publication mark is applied as a number of stored commits to drop, not as a version.

    Bug: ``mark_published(b)`` deletes the first ``b`` stored commits in version order (``rows[:b]``),
    written when the stored commits always started at version 1. The first mark of a table is exact;
    once commits were dropped by an earlier mark, the next mark ``b2`` drops the ``b2`` oldest stored
    commits, which run past ``b2``: ratified commits that were never published are gone. RFC "Commit
    Protocol" / "Terminology - Commits" (the catalog stores ratified commits until they are published)
    and "Publishing Commits" (CAT-FORGET-PUBLISHED-ONLY, CAT-RETAIN-UNPUBLISHED). A shallow suite marks
    once per table, or marks everything that is stored.
    """

    def forget_published(self, t: TableState, version: int) -> None:
        for v in sorted(t.stored)[:version]:  # BUG: a count of commits, not a version bound
            del t.stored[v]
        t.published = max(t.published, version)
        self.persist(t)


class MarkClampedCatalog(DurableCatalog):
    """A publication mark above the latest version is clamped to the latest instead of refused.

    Bug: ``mark_published(b)`` with ``b`` above the latest ratified version is taken as "everything is
    published" (``b = min(b, latest)``, written to make the call robust to clients that count ahead),
    so the catalog drops every stored commit, also the ratified ones nobody published. certify.md (a
    mark above the latest version cannot be true: refuse it or ignore it, never drop a commit because
    of it) and RFC "Publishing Commits" (CAT-PUBLISH-REPORT-POSSIBLE, a SHOULD). A shallow suite only
    sends marks that are true.
    """

    def mark_published(self, table_id: str, version: int) -> None:
        t = self._table(table_id, InvalidRequest)
        with t.lock:
            if isinstance(version, int) and not isinstance(version, bool) and version > t.latest:
                version = t.latest  # BUG: an impossible report is trusted up to the latest
        super().mark_published(table_id, version)


class NaiveIctCatalog(DurableCatalog):
    """The in-commit timestamp a catalog stores goes through a naive local date-time.

    Bug: the catalog keeps a ratified commit's in-commit timestamp in a ``TIMESTAMP WITHOUT TIME ZONE``
    column: it converts the milliseconds with ``datetime.fromtimestamp`` (local wall time, no zone) and
    serves them back with ``calendar.timegm`` (as if that wall time were UTC). On a catalog host whose
    zone is UTC, as every CI machine's, it is exact; in any other zone each served
    ``in_commit_timestamp`` is off by the zone's offset (5 h 30 min in India). RFC "Terminology -
    Commits" (a ratified commit is stored and served unchanged until published) and "Publishing
    Commits" (in-commit timestamps are what time travel relies on): CAT-RETAIN-UNPUBLISHED. A shallow
    suite runs in UTC, or compares only the commit's bytes.
    """

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        ict = commit.in_commit_timestamp
        if ict is not None:
            wall = datetime.fromtimestamp(ict // 1000).replace(microsecond=(ict % 1000) * 1000)  # local, naive
            ict = calendar.timegm(wall.timetuple()) * 1000 + wall.microsecond // 1000  # BUG: read back as UTC
            commit = RatifiedCommit(commit.version, commit.staged_uri, commit.inline_content, ict)
        super().store(t, commit)


class DurableDropCatalog(DurableCatalog):
    """A correct dropping catalog (``DroppingCatalog``): the name is removed and the removal persisted."""

    def drop_table(self, name: str) -> None:
        with self._lock:
            table_id = self._by_name.pop(name, None) if isinstance(name, str) else None
            t = self._by_id.get(table_id) if table_id is not None else None
        if t is None:
            raise TableNotFound(f"no table {name!r}")
        with t.lock:
            t.name = None  # soft drop: the files stay, the name is gone
            self.persist(t)


class DropNotDurableCatalog(DurableDropCatalog):
    """Dropping a table is not persisted, and after a restart its old name wins over the new table.

    Bug: ``drop_table`` removes the name from the in-memory index only; the table's record keeps its
    name (a soft drop, "so that it can be undropped") and is not rewritten. After a restart the index is
    rebuilt from the records in creation order, first one wins (names are assumed unique), so a name
    that was dropped and given to a new table resolves again to the dropped table's location: its
    readers and writers go to the old files. RFC "Table Discovery" and "Creating and Dropping
    Catalog-managed Tables" (CAT-RESOLVE-LOCATION; CAT-DROP). Until the catalog restarts, everything is
    right; a shallow suite never restarts after a drop, let alone after reusing the name.
    """

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._created: dict[str, int] = {}
        super().__init__(warehouse_uri, storage, state_dir)

    def new_location(self, table_id: str) -> str:
        self._created[table_id] = time.time_ns()
        return super().new_location(table_id)

    def encode_table(self, t: TableState) -> dict[str, Any]:
        return {**super().encode_table(t), "created": self._created.get(t.table_id, 0)}

    def load(self) -> None:
        assert self.state_dir is not None
        docs = [json.loads(p.read_text()) for p in sorted(self.state_dir.glob("*.json"))]
        for doc in sorted(docs, key=lambda d: int(d.get("created", 0))):
            t = self.decode_table(doc)
            self._created[t.table_id] = int(doc.get("created", 0))
            self._by_id[t.table_id] = t
            if t.name is not None:
                self._by_name.setdefault(self.name_key(t.name), t.table_id)  # BUG: the oldest record wins

    def drop_table(self, name: str) -> None:
        with self._lock:
            if not isinstance(name, str) or name not in self._by_name:
                raise TableNotFound(f"no table {name!r}")
            del self._by_name[name]  # BUG: the record keeps its name and is not persisted


class StaleProposalRejectedCatalog(DurableCatalog):
    """A proposal for a version that was published and dropped is refused as a gap, not a conflict.

    Bug: the catalog decides "taken" by looking the version up among the commits it still stores (or
    the latest one), and anything else that is not ``latest + 1`` is a gap: a proposal for an old
    version whose commit was published and forgotten gets ``CommitRejected``. The version is taken
    and nothing changes, but the answer says "gap": a writer that lost its version to a published commit
    (a stale snapshot) gives up instead of rebasing, and the latest version it would have learnt from
    the conflict is not given. RFC "Commit Protocol" (a version is ratified at most once; any later
    proposal for it gets a conflict; the catalog gives the latest version on a conflict):
    CAT-RATIFY-ONCE. A shallow suite proposes a taken version only while its commit is still stored.
    """

    def check_sequence(self, t: TableState, version: int) -> None:
        if version in t.stored or version == t.latest:  # BUG: forgotten published versions look free
            raise CommitConflict(f"version {version} is already ratified", latest_version=t.latest)
        if version != t.latest + 1:
            raise CommitRejected(f"version {version} would leave a gap after {t.latest}")


class CommitActionsByNewlineCatalog(DurableCatalog):
    """The declared limit on actions per commit is counted as newline characters.

    Bug: the catalog declares ``commit_actions=64`` for inline commits and counts a commit's actions as
    ``content.count(b"\\n")``. Every commit written with a final newline is counted right; a commit
    whose last action has no newline (a Delta file need not end with one) is counted one short, so a
    commit of 65 actions is ratified. RFC "Catalog Responsibilities", certify.md "Declare your limits"
    (a declared limit is exact: one past it is refused): CAT-LIMIT-DECLARED. A shallow suite builds its
    probes with the same encoder every time, always ending in a newline.
    """

    max_actions: ClassVar[int] = 64

    def commit(
        self,
        table_id: str,
        version: int,
        *,
        staged_uri: str | None = None,
        inline_content: bytes | None = None,
        in_commit_timestamp: int | None = None,
        latest_published_version: int | None = None,
    ) -> None:
        if isinstance(inline_content, bytes | bytearray) and bytes(inline_content).count(b"\n") > self.max_actions:
            raise CommitRejected(f"more than {self.max_actions} actions")  # BUG: newlines are not actions
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            latest_published_version=latest_published_version,
        )


class StagedPrefixCasefoldCatalog(DurableCatalog):
    """The staged file's folder is compared case-insensitively.

    Bug: the catalog checks that a staged file lies directly in the table's
    ``_delta_log/_staged_commits/`` with ``lower()`` on both sides (its path helpers were written for a
    case-insensitive file system), so ``<location>/_DELTA_LOG/_Staged_Commits/<v>.<uuid>.json``, a file
    of another folder on every object store, is ratified as a staged commit of the table. The name, the
    version and the file's existence are still checked. RFC "Terminology - Commits" (a staged commit is
    written at ``_delta_log/_staged_commits/<v>.<uuid>.json``) and "Commit Protocol" option 1:
    CAT-STAGED-IN-TABLE. A shallow suite tries ``..``, ``_delta_log/`` itself and another table's
    folder, never a folder that differs in case only.
    """

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.lower().startswith(prefix.lower()) else ""  # BUG
        m = _STAGED_NAME.fullmatch(rest)
        if m is None:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class NameNfcKeyCatalog(DurableCatalog):
    """Names of any script are accepted and indexed in NFC, but resolution looks up the name as given.

    Bug: the catalog accepts table names of Unicode word characters and, to treat the precomposed and
    the decomposed spelling of a name as one, keys its name index by the name's NFC normalisation when
    it registers a table; resolution looks the name up exactly as it is given. A name written in NFC
    (every keyboard's) or in ASCII resolves; a table registered under a decomposed (NFD) name, e.g.
    ``cafe`` + U+0301, is accepted and then never resolves by that name: its writers and readers get
    ``TableNotFound``. RFC "Table Discovery" (name resolution returns the table's location) and
    certify.md "Names of any script" (a name the catalog accepts must resolve to its own table):
    CAT-RESOLVE-LOCATION. A shallow suite uses ASCII names, or non-ASCII names typed in NFC.
    """

    _UNICODE_NAME = re.compile(r"(?:\w|[\u0300-\u036f]){1,128}")  # letters, digits, _ and combining accents

    def name_key(self, name: str) -> str:
        return unicodedata.normalize("NFC", name)

    def register_table(self, name: str, table_id: str) -> TableInfo:
        if not isinstance(name, str) or not self._UNICODE_NAME.fullmatch(name):
            raise InvalidRequest(f"bad table name {name!r}")
        key = self.name_key(name)
        with self._lock:
            t = self._by_id.get(table_id) if isinstance(table_id, str) else None
            if t is None or t.name is not None:
                raise InvalidRequest(f"no staging table {table_id!r}")
            if key in self._by_name:
                raise InvalidRequest(f"table {name!r} exists")
            if not self.storage.exists(f"{t.location}/_delta_log/{0:020d}.json"):
                raise InvalidRequest("version 0 of the staging table is not written")
            t.name = name
            self._by_name[key] = table_id
        with t.lock:
            self.persist(t)
        return TableInfo(table_id, name, t.location, True)

    # BUG: ``resolve`` is CleanCatalog's, which looks the name up as given, not by ``name_key``


# ================================================================ client faults


class DeletePerIdClient(ResilientClient):
    """A delete of several ids in one data file removes that file once per id.

    Bug: the delete is planned id by id: for each deleted id, every data file holding it gets a
    ``remove`` action; the file is rewritten once (the rewrites are kept by path), but the removes are
    appended to a list. A delete of one id, or of ids that sit in different files, is exact; deleting
    two ids of one file writes two ``remove`` actions for the same path in one commit. The rows read
    back are right (removing a file twice leaves it removed). PROTOCOL.md "Add File and Remove File"
    (at most one remove per path in a version), required of the commits a catalog-managed writer makes:
    WRT-FILE-ACTIONS-ONCE. A shallow suite deletes one id at a time, or checks only the rows.
    """

    def delete(self, name: str, ids: Sequence[int]) -> int:
        doomed = set(ids)

        def build(info: Any, snap: Snapshot, ict: int) -> list[Action]:
            removes: list[Action] = []
            rewritten: dict[str, Action | None] = {}
            contents: dict[str, list[dict[str, Any]]] = {}
            for i in ids:  # BUG: one pass per id
                for path, add in sorted(snap.files.items()):
                    if path not in contents:
                        uri = path if "://" in path else f"{info.location}/{path}"
                        contents[path] = pq.read_table(io.BytesIO(self.storage.get(uri))).to_pylist()
                    rows = contents[path]
                    if not any(r["id"] == i for r in rows):
                        continue
                    removes.append(
                        {
                            "remove": {
                                "path": path,
                                "deletionTimestamp": ict,
                                "dataChange": True,
                                "extendedFileMetadata": True,
                                "partitionValues": {},
                                "size": add.get("size", 0),
                            }
                        }
                    )
                    if path not in rewritten:
                        kept = [r for r in rows if r["id"] not in doomed]
                        rewritten[path] = self.write_data(info.location, kept) if kept else None
            return removes + [a for a in rewritten.values() if a is not None]

        return self.transact(name, "DELETE", build)


class DeterministicStagedNameClient(ResilientClient):
    """Staged file names are derived from the table and the version, so two writers share one file.

    Bug: to make a retried upload idempotent (a retry overwrites its own staged file instead of leaving
    an orphan), the client names a staged commit ``<v>.<uuid5(log, v)>.json`` and writes it without
    ``if_absent``. One writer alone never notices. Two writers proposing the same version write the
    same file: the later upload replaces the earlier one's content, the catalog ratifies the path with
    whichever content is there, and the other writer, hearing a conflict, finds its own path ratified
    and reports a version that holds the other writer's change: its own change is lost. RFC
    "Terminology - Commits" (the uuid is a random UUID generated for each commit) and "Delta Log
    Entries" (commit files cannot safely be reused for several commit attempts): WRT-STAGED-NAME, and
    INT-NO-LOST-COMMIT. A shallow suite checks the name's shape, which is a valid UUID.
    """

    def stage(self, log: str, version: int, content: bytes, previous_uri: str | None) -> str:
        token = uuid.uuid5(uuid.NAMESPACE_URL, f"{log}#{version}")  # BUG: not random per commit
        uri = f"{log}/_staged_commits/{version:020d}.{token}.json"
        self.storage.put(uri, content)  # a retry overwrites "its own" file
        return uri


class IctFromPublishedClient(ResilientClient):
    """The previous in-commit timestamp is taken from the newest published commit only.

    Bug: to stamp a commit the writer needs the previous commit's in-commit timestamp; it reads it
    from the newest ``_delta_log/<v>.json`` (one small GET it already has cached for the log tail)
    rather than from the latest ratified commit, which may be unpublished. When everything is
    published, or every writer's clock agrees, nothing shows. When a peer whose clock is ahead
    committed and its commit is not published yet, the writer stamps its own clock, below the
    previous commit's timestamp. PROTOCOL.md In-Commit Timestamps (strictly above the previous
    commit's), mandatory per the RFC's "Writer Requirements for Catalog-managed tables":
    WRT-ICT-MONOTONIC, WRT-ICT-SKEW. A shallow suite publishes after every commit, or has no skewed peer.
    """

    _last_view: LogView | None = None

    def view(self, info: Any) -> LogView:
        v = super().view(info)
        self._last_view = v
        return v

    def next_ict(self, previous: int | None) -> int:
        v = self._last_view
        if v is not None and v.published:
            newest = max(v.published)  # BUG: ignores the catalog's unpublished commits above it
            previous = self.ict_of(decode(self.storage.get(v.published[newest])))
        return super().next_ict(previous)


class CheckpointLatestStateClient(ResilientClient):
    """A checkpoint is named after the newest published version but holds the latest state.

    Bug: the client picks the checkpoint's version right (the newest published one, RFC "Maintenance
    Operations"), but fills it from the snapshot it already has at hand, the latest one, which includes
    ratified commits that are not published yet. When everything is published (a shallow suite
    publishes before it checkpoints) the two are the same; with unpublished commits the checkpoint of
    version v holds rows of later versions, and a reader that starts from it sees, at v, changes made
    after v. RFC "Maintenance Operations on Catalog-managed Tables" (a checkpoint only of published
    versions: here, in substance, of unpublished ones): WRT-CHECKPOINT-PUBLISHED.
    """

    def checkpoint(self, name: str) -> int | None:
        info = self._info(name)
        if not self.policy_allows(info, "checkpoint"):
            return None
        view = self.view(info)
        version = self.checkpoint_version(view)
        if version is None:
            return None
        snap = self.snapshot(view, view.latest)  # BUG: the latest state, not the state at ``version``
        rows: list[dict[str, Any]] = [{"protocol": snap.protocol}, {"metaData": snap.metadata}]
        rows += [
            {"add": {k: a.get(k) for k in _CHECKPOINT_SCHEMA.field("add").type.names}} for a in snap.files.values()
        ]
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows, schema=_CHECKPOINT_SCHEMA), buf)
        log = f"{info.location}/_delta_log"
        try:
            self.storage.put(f"{log}/{version:020d}.checkpoint.parquet", buf.getvalue(), if_absent=True)
        except FileExistsError:
            return version
        pointer = {"version": version, "size": len(rows), "numOfAddFiles": len(snap.files)}
        self.storage.put(f"{log}/_last_checkpoint", json.dumps(pointer).encode())
        return version


class CompactionDropsOuterRemovesClient(ResilientClient):
    """A log compaction file drops the removes of files added before its range.

    Bug: reconciling commits x..y, the client treats a ``remove`` as cancelling an ``add`` of the same
    range and drops it when there is none ("a remove of nothing"). A range that starts at version 1
    (every file is added inside it) is right; a range starting later loses the removes of files added
    before x, so a reader replaying a checkpoint before x and then the compaction file sees deleted rows
    again. PROTOCOL.md Log Compaction Files (the reconciled actions of the commits x..y, removes
    included) and RFC "Maintenance Operations": WRT-COMPACTION-CONTENT. A shallow suite compacts from
    version 1, or only checks that the file exists for published versions.
    """

    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        info = self._info(name)
        if not self.policy_allows(info, "log_compaction"):
            return False
        view = self.view(info)
        if (
            start_version < 0
            or start_version > end_version
            or not self.compaction_allowed(view, start_version, end_version)
        ):
            return False
        sources = self.commit_sources(view)
        adds: dict[str, Action] = {}
        removes: dict[str, Action] = {}
        other: list[Action] = []
        for v in range(start_version, end_version + 1):
            for a in decode(self.content(sources[v])):
                if "add" in a:
                    adds[a["add"]["path"]] = a
                    removes.pop(a["add"]["path"], None)
                elif "remove" in a:
                    adds.pop(a["remove"]["path"], None)  # BUG: the remove itself is never kept
                elif "commitInfo" not in a:
                    other.append(a)
        body = encode([*other, *adds.values(), *removes.values()])
        uri = f"{info.location}/_delta_log/{start_version:020d}.{end_version:020d}.compacted.json"
        with contextlib.suppress(FileExistsError):
            self.storage.put(uri, body, if_absent=True)
        return True


class CompactionOfRatifiedClient(ResilientClient):
    """Log compaction checks only that the range is ratified, not that it is published.

    Bug: before compacting x..y the client checks that the range exists, ``y <= latest`` (the catalog's
    latest ratified version), and reads the commits from the catalog where they are not published:
    the compaction file's content is right, but it covers commits that are not in ``_delta_log`` yet.
    When a client publishes before maintenance, as a shallow suite's does, nothing shows. RFC
    "Maintenance Operations on Catalog-managed Tables" (a log compaction file for x <= v <= y only if
    ``_delta_log/<v>.json`` exists): WRT-COMPACTION-PUBLISHED.
    """

    def compaction_allowed(self, view: LogView, start: int, end: int) -> bool:
        return end <= view.latest  # BUG: ratified is not published


class CleanupSkipsStagedDirClient(ResilientClient):
    """Metadata cleanup never deletes staged commits: it skips ``_delta_log``'s sub-folders.

    Bug: the cleanup was ported from a filesystem-table implementation that only deletes entries
    directly in ``_delta_log`` and skips every sub-folder (once only ``_delta_log/_commits`` of
    coordinated commits, which it must not touch). Everything it deletes is right, but the staged
    commits at or below the cut-off checkpoint's version stay forever. RFC "Metadata Cleanup" step 3
    (also delete the staged commit files having version <= the cut-off checkpoint's version):
    WRT-CLEANUP-STAGED-BELOW (a SHOULD). A shallow suite checks what cleanup must keep, not what it
    should delete.
    """

    def cleanup_doomed(self, view: LogView, files: list[str], checkpoint: int, cutoff: int) -> list[str]:
        log = f"{view.info.location}/_delta_log/"
        top = [u for u in files if "/" not in u[len(log) :]]  # BUG: sub-folders are skipped
        return super().cleanup_doomed(view, top, checkpoint, cutoff)


class TimelinePublishedOnlyClient(ResilientClient):
    """Time travel by timestamp only knows the published commits.

    Bug: the reader builds its (version, in-commit timestamp) index for time travel from
    ``_delta_log/<v>.json`` only, a cheap pass over files it has listed anyway; the catalog's ratified,
    unpublished commits are read for "latest" and "by version" reads but not indexed. A timestamp at or
    after an unpublished commit's in-commit timestamp resolves to the newest published version. RFC
    "Reader Requirements" (readers must contact the catalog for unpublished ratified commits) and
    "Publishing Commits" (time travel by in-commit timestamps): RDR-TIME-TRAVEL-ICT, RDR-UNPUBLISHED. A
    shallow suite time-travels after publishing.
    """

    def timeline(self, view: LogView) -> list[tuple[int, int]]:
        out = []
        for v, uri in sorted(view.published.items()):  # BUG: the catalog's commits are not indexed
            ict = self.ict_of(decode(self.storage.get(uri)))
            if ict is not None:
                out.append((v, ict))
        return out


class TimelineFromCheckpointClient(ResilientClient):
    """Time travel by timestamp only knows the commits after the newest checkpoint.

    Bug: the reader indexes in-commit timestamps while it replays a snapshot, and a snapshot replays
    from the newest checkpoint: the checkpoint's own commit and everything before it are never indexed.
    Without a checkpoint every timestamp resolves; once there is one, a timestamp at the checkpoint's
    version or before it finds no version and the read fails, although those versions are still
    readable (by version, they read fine). RFC "Publishing Commits" (time travel by in-commit
    timestamps) and PROTOCOL.md (the version at a timestamp is the latest commit at or before it):
    RDR-TIME-TRAVEL-ICT. A shallow suite time-travels on tables without checkpoints, or to the newest
    version.
    """

    def timeline(self, view: LogView) -> list[tuple[int, int]]:
        newest = max(view.checkpoints) if view.checkpoints else None
        return [(v, ict) for v, ict in super().timeline(view) if newest is None or v > newest]  # BUG


class CompactionSkipsGapClient(ResilientClient):
    """The reader replaces commits by a log compaction file and skips the commits before its range.

    Bug: to read faster the reader uses the newest log compaction file x..y that lies after its start
    checkpoint (or after version 0's start, without one) and ends at or before the asked version: it
    replays the checkpoint, then the compaction file, then the commits after y. It assumes a compaction
    file starts right after the checkpoint, as the RFC's example (checkpoint 2, compaction 3..5) does,
    and so never replays the commits between the start and x. When x is the first version after the
    start nothing is lost; a compaction file that starts later (3..4 on a table without a checkpoint)
    makes the reader drop the earlier commits: their rows, and without a checkpoint version 0's
    protocol and metadata. RFC "Reading Catalog-managed Tables" (the published commits the catalog no
    longer stores are read from ``_delta_log``) and PROTOCOL.md Log Compaction Files:
    RDR-LIST-FALLBACK, INT-RATIFIED-READABLE. A shallow suite compacts from the checkpoint on, or never.
    """

    def snapshot(self, view: LogView, target: int) -> Snapshot:
        cp = self.start_checkpoint(view, target)
        first = 0 if cp is None else cp + 1
        log = f"{view.info.location}/_delta_log/"
        best: tuple[int, int, str] | None = None
        for f in self.storage.list(log):
            m = _COMPACTION.fullmatch(f.uri[len(log) :])
            if m is None:
                continue
            x, y = int(m.group(1)), int(m.group(2))
            if first <= x <= y <= target and (best is None or y > best[1]):
                best = (x, y, f.uri)
        if best is None:
            return super().snapshot(view, target)
        _, y, uri = best
        sources = self.commit_sources(view)
        missing = [v for v in range(y + 1, target + 1) if v not in sources]
        if missing:
            raise ReadError(f"commits {missing} of version {target} are neither in the catalog nor published")
        batches: list[list[Action]] = []
        if cp is not None:
            batches.append(self.checkpoint_actions(view.checkpoints[cp]))
        # BUG: the commits ``first .. x - 1`` are never replayed
        batches.append(decode(self.storage.get(uri)))
        batches.extend(decode(self.content(sources[v])) for v in range(y + 1, target + 1))
        snap = self.replay(target, batches)
        if target in sources:
            snap.in_commit_timestamp = self.ict_of(decode(self.content(sources[target])))
        return snap


class SessionClockClient(ResilientClient):
    """In-commit timestamps come from a clock read once per client session.

    Bug: the client reads the wall clock once, when it is built (the session's "statement time", as
    SQL's ``CURRENT_TIMESTAMP``), and stamps every commit with ``max(session time, previous + 1)``. The
    timestamps increase strictly, whatever the peers do, and in a short session they are close to the
    time of the commit. In a session that lives longer than a few minutes, every commit is stamped at
    the session's start (plus a millisecond per commit): time travel to a moment between two such
    commits finds the wrong version. PROTOCOL.md In-Commit Timestamps (the time at which the writer
    attempted the commit), mandatory per the RFC's "Writer Requirements": WRT-ICT-WALLCLOCK. A shallow
    suite builds a client per check and checks only monotonicity.
    """

    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        super().__init__(catalog, storage)
        self._session_ms = time.time_ns() // 1_000_000

    def now_ms(self) -> int:
        return self._session_ms  # BUG: the clock of the session's start


class PublishWatermarkPerClientClient(ResilientClient):
    """The publisher skips versions below a watermark kept per client, not per table.

    Bug: to avoid re-copying commits it published already, the client remembers the highest version it
    published and skips the catalog's commits at or below it. The watermark is a field of the client,
    written when a client served one table. With one table it is exact; after publishing table A up to
    v5, publishing table B skips B's v1..v5, publishes v6 onwards and marks them published: the
    catalog drops v1..v5, which were never copied to ``_delta_log``. RFC "Publishing Commits" (v-1 is
    published before v): WRT-PUBLISH-ORDER, INT-PUBLISH-PATH-READABLE. A shallow suite publishes one
    table per client.
    """

    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        super().__init__(catalog, storage)
        self._published_upto = -1

    def publish(self, name: str) -> None:
        info = self._info(name)
        view = self.view(info)
        done = -1
        for c in self.publish_order(list(view.catalog_commits.values())):
            if c.version <= self._published_upto:  # BUG: another table's watermark
                continue
            target = f"{info.location}/_delta_log/{self.delta_name(c.version)}"
            if c.version not in view.published:
                with contextlib.suppress(FileExistsError):
                    self.storage.put(target, self.content(c), if_absent=True)
            done = max(done, c.version)
        if done < 0:
            return
        for _ in range(self.max_attempts):
            try:
                self.catalog.mark_published(info.table_id, done)
                break
            except CatalogTimeout:
                continue
        else:
            raise RetriesExhausted(f"no answer from the catalog to the publication mark of v{done}")
        self._published_upto = max(self._published_upto, done)


# ================================================================ targets


class R7Target(DurableTarget):
    """The durable baseline under this round's name; each variant swaps one side."""

    name = "cleanroom-r7"

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits()


class DurableDropTarget(R7Target):
    """The correct baseline with a correct, persisted ``drop_table``."""

    catalog_cls: ClassVar[type[CleanCatalog]] = DurableDropCatalog


class PageBoundaryDuplicateTarget(R7Target):
    __doc__ = PageBoundaryDuplicateCatalog.__doc__
    name = "cr7-PageBoundaryDuplicateTarget"
    catalog_cls: ClassVar[type[CleanCatalog]] = PageBoundaryDuplicateCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(page_size=8)


class CapAcrossTablesTarget(R7Target):
    __doc__ = CapAcrossTablesCatalog.__doc__
    name = "cr7-CapAcrossTablesTarget"
    catalog_cls: ClassVar[type[CleanCatalog]] = CapAcrossTablesCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(unpublished=10)


class CapRefusedAsConflictTarget(R7Target):
    __doc__ = CapRefusedAsConflictCatalog.__doc__
    name = "cr7-CapRefusedAsConflictTarget"
    catalog_cls: ClassVar[type[CleanCatalog]] = CapRefusedAsConflictCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(unpublished=10)


class MarkAsCountTarget(R7Target):
    __doc__ = MarkAsCountCatalog.__doc__
    name = "cr7-MarkAsCountTarget"
    catalog_cls: ClassVar[type[CleanCatalog]] = MarkAsCountCatalog


class MarkClampedTarget(R7Target):
    __doc__ = MarkClampedCatalog.__doc__
    name = "cr7-MarkClampedTarget"
    catalog_cls: ClassVar[type[CleanCatalog]] = MarkClampedCatalog


class NaiveIctTarget(R7Target):
    __doc__ = NaiveIctCatalog.__doc__
    name = "cr7-NaiveIctTarget"
    catalog_cls: ClassVar[type[CleanCatalog]] = NaiveIctCatalog


class DropNotDurableTarget(R7Target):
    __doc__ = DropNotDurableCatalog.__doc__
    name = "cr7-DropNotDurableTarget"
    catalog_cls: ClassVar[type[CleanCatalog]] = DropNotDurableCatalog


class StaleProposalRejectedTarget(R7Target):
    __doc__ = StaleProposalRejectedCatalog.__doc__
    name = "cr7-StaleProposalRejectedTarget"
    catalog_cls: ClassVar[type[CleanCatalog]] = StaleProposalRejectedCatalog


class CommitActionsByNewlineTarget(R7Target):
    __doc__ = CommitActionsByNewlineCatalog.__doc__
    name = "cr7-CommitActionsByNewlineTarget"
    catalog_cls: ClassVar[type[CleanCatalog]] = CommitActionsByNewlineCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(commit_actions=64)


class StagedPrefixCasefoldTarget(R7Target):
    __doc__ = StagedPrefixCasefoldCatalog.__doc__
    name = "cr7-StagedPrefixCasefoldTarget"
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedPrefixCasefoldCatalog


class NameNfcKeyTarget(R7Target):
    __doc__ = NameNfcKeyCatalog.__doc__
    name = "cr7-NameNfcKeyTarget"
    catalog_cls: ClassVar[type[CleanCatalog]] = NameNfcKeyCatalog


class CompactionOfRatifiedTarget(R7Target):
    __doc__ = CompactionOfRatifiedClient.__doc__
    name = "cr7-CompactionOfRatifiedTarget"
    client_cls: ClassVar[type[CleanClient]] = CompactionOfRatifiedClient


class DeletePerIdTarget(R7Target):
    __doc__ = DeletePerIdClient.__doc__
    name = "cr7-DeletePerIdTarget"
    client_cls: ClassVar[type[CleanClient]] = DeletePerIdClient


class DeterministicStagedNameTarget(R7Target):
    __doc__ = DeterministicStagedNameClient.__doc__
    name = "cr7-DeterministicStagedNameTarget"
    client_cls: ClassVar[type[CleanClient]] = DeterministicStagedNameClient


class IctFromPublishedTarget(R7Target):
    __doc__ = IctFromPublishedClient.__doc__
    name = "cr7-IctFromPublishedTarget"
    client_cls: ClassVar[type[CleanClient]] = IctFromPublishedClient


class CheckpointLatestStateTarget(R7Target):
    __doc__ = CheckpointLatestStateClient.__doc__
    name = "cr7-CheckpointLatestStateTarget"
    client_cls: ClassVar[type[CleanClient]] = CheckpointLatestStateClient


class CompactionDropsOuterRemovesTarget(R7Target):
    __doc__ = CompactionDropsOuterRemovesClient.__doc__
    name = "cr7-CompactionDropsOuterRemovesTarget"
    client_cls: ClassVar[type[CleanClient]] = CompactionDropsOuterRemovesClient


class CleanupSkipsStagedDirTarget(R7Target):
    __doc__ = CleanupSkipsStagedDirClient.__doc__
    name = "cr7-CleanupSkipsStagedDirTarget"
    client_cls: ClassVar[type[CleanClient]] = CleanupSkipsStagedDirClient


class TimelinePublishedOnlyTarget(R7Target):
    __doc__ = TimelinePublishedOnlyClient.__doc__
    name = "cr7-TimelinePublishedOnlyTarget"
    client_cls: ClassVar[type[CleanClient]] = TimelinePublishedOnlyClient


class TimelineFromCheckpointTarget(R7Target):
    __doc__ = TimelineFromCheckpointClient.__doc__
    name = "cr7-TimelineFromCheckpointTarget"
    client_cls: ClassVar[type[CleanClient]] = TimelineFromCheckpointClient


class CompactionSkipsGapTarget(R7Target):
    __doc__ = CompactionSkipsGapClient.__doc__
    name = "cr7-CompactionSkipsGapTarget"
    client_cls: ClassVar[type[CleanClient]] = CompactionSkipsGapClient


class SessionClockTarget(R7Target):
    __doc__ = SessionClockClient.__doc__
    name = "cr7-SessionClockTarget"
    client_cls: ClassVar[type[CleanClient]] = SessionClockClient


class PublishWatermarkPerClientTarget(R7Target):
    __doc__ = PublishWatermarkPerClientClient.__doc__
    name = "cr7-PublishWatermarkPerClientTarget"
    client_cls: ClassVar[type[CleanClient]] = PublishWatermarkPerClientClient


# ================================================================ the list


def _v(
    name: str,
    target: type[R7Target],
    side: Literal["catalog", "client"],
    profile: str,
    rules: tuple[str, ...],
    level: str,
    dimensions: tuple[str, ...],
) -> Variant:
    return Variant(name, f"{__name__}:{target.__name__}", side, profile, rules, level, dimensions, target.__doc__ or "")


_CAT = "delta-cm-catalog"
_WRT = "delta-cm-writer"
_RDR = "delta-cm-reader"

VARIANTS: list[Variant] = [
    # ---- catalog
    _v(
        "cr7-cat-page-boundary-duplicate",
        PageBoundaryDuplicateTarget,
        "catalog",
        _CAT,
        ("CAT-LIST-CONTIGUOUS",),
        "MUST",
        ("listing pages", "long histories", "limits"),
    ),
    _v(
        "cr7-cat-cap-across-tables",
        CapAcrossTablesTarget,
        "catalog",
        _CAT,
        ("CAT-LIMIT-DECLARED",),
        "MUST",
        ("several tables", "unpublished cap", "limits"),
    ),
    _v(
        "cr7-cat-cap-refused-as-conflict",
        CapRefusedAsConflictTarget,
        "catalog",
        _CAT,
        ("CAT-LIMIT-CLEAN-REFUSAL",),
        "MUST",
        ("unpublished cap", "limits", "error classes"),
    ),
    _v(
        "cr7-cat-mark-as-count",
        MarkAsCountTarget,
        "catalog",
        _CAT,
        ("CAT-FORGET-PUBLISHED-ONLY", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("publication marks", "long histories"),
    ),
    _v(
        "cr7-cat-mark-clamped",
        MarkClampedTarget,
        "catalog",
        _CAT,
        ("CAT-PUBLISH-REPORT-POSSIBLE",),
        "SHOULD",
        ("publication marks", "impossible reports"),
    ),
    _v(
        "cr7-cat-ict-naive-datetime",
        NaiveIctTarget,
        "catalog",
        _CAT,
        ("CAT-RETAIN-UNPUBLISHED",),
        "MUST",
        ("time zones", "in-commit timestamps"),
    ),
    _v(
        "cr7-cat-drop-not-durable",
        DropNotDurableTarget,
        "catalog",
        _CAT,
        ("CAT-RESOLVE-LOCATION", "CAT-DROP"),
        "MUST",
        ("catalog restarts", "dropping tables", "several tables"),
    ),
    _v(
        "cr7-cat-stale-proposal-rejected",
        StaleProposalRejectedTarget,
        "catalog",
        _CAT,
        ("CAT-RATIFY-ONCE",),
        "MUST",
        ("publication marks", "stale proposals", "error classes"),
    ),
    _v(
        "cr7-cat-actions-by-newline",
        CommitActionsByNewlineTarget,
        "catalog",
        _CAT,
        ("CAT-LIMIT-DECLARED",),
        "MUST",
        ("limits", "many actions in one commit", "commit encoding"),
    ),
    _v(
        "cr7-cat-staged-prefix-casefold",
        StagedPrefixCasefoldTarget,
        "catalog",
        _CAT,
        ("CAT-STAGED-IN-TABLE",),
        "MUST",
        ("staged paths", "encoding"),
    ),
    _v(
        "cr7-cat-name-nfc-key",
        NameNfcKeyTarget,
        "catalog",
        _CAT,
        ("CAT-RESOLVE-LOCATION",),
        "MUST",
        ("non-ASCII names", "encoding"),
    ),
    # ---- client: writer
    _v(
        "cr7-wrt-delete-per-id",
        DeletePerIdTarget,
        "client",
        _WRT,
        ("WRT-FILE-ACTIONS-ONCE",),
        "MUST",
        ("commit content", "many actions in one commit"),
    ),
    _v(
        "cr7-wrt-staged-name-deterministic",
        DeterministicStagedNameTarget,
        "client",
        _WRT,
        ("WRT-STAGED-NAME", "INT-NO-LOST-COMMIT"),
        "MUST",
        ("several clients", "concurrent proposals"),
    ),
    _v(
        "cr7-wrt-ict-from-published",
        IctFromPublishedTarget,
        "client",
        _WRT,
        ("WRT-ICT-MONOTONIC", "WRT-ICT-SKEW"),
        "MUST",
        ("clock skew", "unpublished commits", "several clients"),
    ),
    _v(
        "cr7-wrt-checkpoint-latest-state",
        CheckpointLatestStateTarget,
        "client",
        _WRT,
        ("WRT-CHECKPOINT-PUBLISHED",),
        "MUST",
        ("checkpoints", "unpublished commits", "reads of old versions"),
    ),
    _v(
        "cr7-wrt-compaction-drops-outer-removes",
        CompactionDropsOuterRemovesTarget,
        "client",
        _WRT,
        ("WRT-COMPACTION-CONTENT",),
        "MUST",
        ("log compaction", "deletes"),
    ),
    _v(
        "cr7-wrt-compaction-of-ratified",
        CompactionOfRatifiedTarget,
        "client",
        _WRT,
        ("WRT-COMPACTION-PUBLISHED",),
        "MUST",
        ("log compaction", "unpublished commits"),
    ),
    _v(
        "cr7-wrt-cleanup-skips-staged-dir",
        CleanupSkipsStagedDirTarget,
        "client",
        _WRT,
        ("WRT-CLEANUP-STAGED-BELOW",),
        "SHOULD",
        ("metadata cleanup", "staged commits"),
    ),
    _v(
        "cr7-wrt-ict-session-clock",
        SessionClockTarget,
        "client",
        _WRT,
        ("WRT-ICT-WALLCLOCK",),
        "MUST",
        ("clocks", "long-lived clients", "in-commit timestamps"),
    ),
    _v(
        "cr7-wrt-publish-watermark-per-client",
        PublishWatermarkPerClientTarget,
        "client",
        _WRT,
        ("WRT-PUBLISH-ORDER", "INT-PUBLISH-PATH-READABLE"),
        "MUST",
        ("several tables", "publication"),
    ),
    # ---- client: reader
    _v(
        "cr7-rdr-timeline-published-only",
        TimelinePublishedOnlyTarget,
        "client",
        _RDR,
        ("RDR-TIME-TRAVEL-ICT", "RDR-UNPUBLISHED"),
        "MUST",
        ("time travel by timestamp", "unpublished commits"),
    ),
    _v(
        "cr7-rdr-timeline-from-checkpoint",
        TimelineFromCheckpointTarget,
        "client",
        _RDR,
        ("RDR-TIME-TRAVEL-ICT",),
        "MUST",
        ("time travel by timestamp", "checkpoints", "reads of old versions"),
    ),
    _v(
        "cr7-rdr-compaction-skips-gap",
        CompactionSkipsGapTarget,
        "client",
        _RDR,
        ("RDR-LIST-FALLBACK", "INT-RATIFIED-READABLE"),
        "MUST",
        ("log compaction", "reads of old versions"),
    ),
]
