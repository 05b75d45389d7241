"""Round 5 faulty variants: each target swaps one side of ``DurableTarget`` for a subclass with one fault.

Written from the catalogManaged RFC, the public contract (``conformance/contract``), docs/certify.md and
the correct clean-room implementations only. Every fault breaks a MUST or SHOULD of the RFC under a
condition that a shallow suite does not set up, and is otherwise correct. ``VARIANTS`` at the end lists
them for the lead's measurement.
"""

from __future__ import annotations

import base64
import calendar
import hashlib
import json
import re
import uuid
from datetime import datetime
from typing import Any, ClassVar, Literal

from conformance.contract.delta import (
    CatalogLimits,
    CatalogTimeout,
    CommitConflict,
    CommitRejected,
    GetCommitsResponse,
    InvalidRequest,
    RatifiedCommit,
    ReadResult,
    TableInfo,
)
from tests.cleanroom.catalog import CleanCatalog, TableState, is_int
from tests.cleanroom.client import (
    Action,
    CleanClient,
    LogView,
    RetriesExhausted,
    Snapshot,
    decode,
    encode,
)
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r3.variant import Variant

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_STAGED_FILE = re.compile(rf"(\d{{20}})\.({_UUID})\.json")
_DELTA_FILE = re.compile(r"(\d{20})\.json")
_CHECKPOINT_FILE = re.compile(r"(\d{20})\.checkpoint\.parquet")
_COMPACTION_FILE = re.compile(r"(\d{20})\.(\d{20})\.compacted\.json")


# ====================================================================== catalog faults


class ListStartClampedCatalog(DurableCatalog):
    """CAT-LIST-RANGE (MUST), RFC "Getting Ratified Commits from the Catalog" and "Sample Catalog Client
    API" (getRatifiedCommits returns the ratified commits in [startVersion, endVersion]). Bug: the listing
    clamps its range into the table's history before querying, so a ``start_version`` above the latest
    ratified version becomes the latest, and the commit at the latest version is listed although it lies
    below the asked range. Readers asking "anything new since v?" with v = latest + 1 get the commit they
    already have. A shallow suite lists ranges inside the history (or above it with nothing unpublished
    stored), where the clamp changes nothing; only a start above the latest while the latest commit is
    still stored shows it."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        t = self._by_id.get(table_id) if isinstance(table_id, str) else None
        if t is not None and is_int(start_version) and start_version is not None and start_version > t.latest:
            start_version = t.latest  # "clamp the range into the history"
        return super().get_commits(table_id, start_version, end_version)


class RestartInlineNewlineCatalog(DurableCatalog):
    """CAT-RATIFY-DURABLE (MUST), also CAT-RETAIN-UNPUBLISHED; RFC "Commit Protocol" (the catalog stores
    ratified commits and makes them available until published) and "Terminology - Commits" (inline
    commit; a ratified commit is immutable). Bug: to keep its state file readable the catalog persists an
    inline commit as the list of its lines and joins them with newlines when it loads its state again, so
    the final newline every Delta file ends with is lost. While the catalog runs it serves the exact bytes
    from memory; after a restart every unpublished inline commit comes back one byte short. A shallow
    suite restarts the catalog with staged commits only, or checks inline commits without a restart."""

    def encode_table(self, t: TableState) -> dict[str, Any]:
        doc = super().encode_table(t)
        for entry in doc["stored"]:
            if entry["inline"] is not None:
                raw = base64.b64decode(entry["inline"])
                entry["inline"] = None
                entry["inline_lines"] = raw.decode("utf-8", "surrogateescape").splitlines()
        return doc

    def decode_table(self, doc: dict[str, Any]) -> TableState:
        t = super().decode_table(doc)
        for entry in doc["stored"]:
            lines = entry.get("inline_lines")
            if lines is not None:
                v = int(entry["version"])
                content = "\n".join(lines).encode("utf-8", "surrogateescape")
                t.stored[v] = RatifiedCommit(v, None, content, entry["ict"])
        return t


class DedupeByTimestampCatalog(DurableCatalog):
    """CAT-RATIFY-RACE, CAT-RATIFY-ONCE (MUST), RFC "Commit Protocol" (ratify version v at most once; of
    concurrent proposals one wins and the others are rejected). Bug: to answer re-sent proposals kindly
    the catalog keys its idempotency check on (table, version, in-commit timestamp): a proposal for a taken
    version whose in-commit timestamp equals the stored commit's is taken for a second delivery and
    acknowledged. A different writer that proposes the same version with the same timestamp (two writers
    racing within one millisecond, or any two clients whose clocks agree on the previous commit's
    timestamp + 1) is told it won although its commit was never ratified, and its change is lost. A
    shallow suite races proposals whose timestamps differ, or re-sends the very same proposal, where the
    shortcut is right."""

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
        t = self._by_id.get(table_id) if isinstance(table_id, str) else None
        if t is not None and is_int(version) and in_commit_timestamp is not None:
            with t.lock:
                held = t.stored.get(version)
            if held is not None and held.in_commit_timestamp == in_commit_timestamp:
                return  # "a re-delivery of the ratified proposal": acknowledge it again
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            latest_published_version=latest_published_version,
        )


class ConflictStatesProposedCatalog(DurableCatalog):
    """CAT-CONFLICT-LATEST (SHOULD), RFC "Commit Protocol" (the catalog provides the latest ratified commit
    information when a commit fails due to a version conflict). Bug: the conflict carries the version the
    proposal asked for as the "latest" version, on the reasoning that a conflict means that version was
    just taken. That is the truth for the usual lost race, a proposal for exactly the latest version; a
    stale proposal (a writer several versions behind, a re-sent proposal after others went on) is told a
    latest version below the true one, and a writer that trusts it proposes a taken version again. A
    shallow suite only provokes conflicts at the latest version."""

    def check_sequence(self, t: TableState, version: int) -> None:
        if version <= t.latest:
            raise CommitConflict(f"version {version} is already ratified", latest_version=version)
        super().check_sequence(t, version)


class StagedVersionParsedCatalog(DurableCatalog):
    """CAT-STAGED-NAME (MUST), RFC "Delta Log Entries" and "Terminology - Commits" (a staged commit is
    ``<version zero-padded to 20 digits>.<uuid>.json``). Bug: the catalog parses the staged file's name
    instead of matching it: the version part is any run of digits read with ``int`` and the UUID part
    anything ``uuid.UUID`` accepts. It refuses the names a shallow suite tries (``<v>.json`` without a
    UUID, a UUID part that is no UUID, another version's file) but ratifies ``3.<uuid>.json``, a
    21-digit version, and a UUID without dashes or in braces, none of which a reader recognises as a
    staged commit of that version."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.startswith(prefix) else ""
        head, _, tail = rest.partition(".")
        if not rest or "/" in rest or not head.isdigit() or not tail.endswith(".json"):
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        try:
            uuid.UUID(tail[: -len(".json")])
        except ValueError as exc:
            raise InvalidRequest(f"no UUID in staged file name {rest!r}") from exc
        if int(head) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class StagedNestedDirCatalog(DurableCatalog):
    """CAT-STAGED-IN-TABLE (MUST), RFC "Terminology - Commits" (a staged commit is written at
    ``_delta_log/_staged_commits/<v>.<uuid>.json``) and "Commit Protocol" option 1. Bug: the catalog
    checks the table's own staging prefix and refuses ``..`` segments, then judges only the file's base
    name, so a well-named file in a sub-folder (``_staged_commits/retry/<v>.<uuid>.json``) is ratified. A
    reader or publisher that looks for the staged commit where the RFC puts it, or a cleanup that deletes
    staged commits by listing ``_staged_commits/`` directly, misses it. A shallow suite tries ``..``,
    ``_delta_log/`` itself and another table's folder, all refused."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.startswith(prefix) else ""
        if not rest or ".." in rest.split("/") or "" in rest.split("/"):
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        m = _STAGED_FILE.fullmatch(rest.rsplit("/", 1)[-1])
        if m is None:
            raise InvalidRequest(f"not a staged commit name: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


def _ascii_escaped(content: bytes) -> bytes:
    """Each line holding non-ASCII bytes re-serialised with ``\\uXXXX`` escapes (JSON-equivalent)."""
    out: list[bytes] = []
    for line in content.split(b"\n"):
        if line.isascii():
            out.append(line)
            continue
        try:
            out.append(json.dumps(json.loads(line), separators=(",", ":")).encode())
        except ValueError:
            out.append(line)
    return b"\n".join(out)


class InlineAsciiEscapeCatalog(DurableCatalog):
    """CAT-RETAIN-UNPUBLISHED (MUST), CAT-INLINE-COMMITS; RFC "Terminology - Commits" (the catalog stores
    the inline commit's content until it is published; a ratified commit's content is immutable) and
    "Publishing Commits" (the published file is a copy of it). Bug: the catalog keeps inline commits in an
    ASCII text column, so a line holding non-ASCII UTF-8 (a value, a path, a table property in any script)
    is re-serialised with ``\\uXXXX`` escapes before it is stored. The JSON means the same, but the bytes
    served and later published are not the bytes ratified. A shallow suite round-trips ASCII inline
    commits (every commit a writer that escapes by default produces), where nothing changes."""

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
        if isinstance(inline_content, bytes | bytearray) and not bytes(inline_content).isascii():
            inline_content = _ascii_escaped(bytes(inline_content))
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            latest_published_version=latest_published_version,
        )


class CommitActionsTruncateCatalog(DurableCatalog):
    """CAT-LIMIT-CLEAN-REFUSAL (MUST), CAT-RETAIN-UNPUBLISHED (MUST); RFC "Terminology - Commits" (a
    proposed commit is ratified or rejected; the catalog stores the ratified content), certify.md
    "Limits" (past a limit, refuse cleanly, never truncate). Bug: the catalog declares (and enforces) a
    limit of 256 actions per commit, but enforces it on inline commits by keeping their first 256 lines
    and ratifying the rest of the proposal away, as a row-per-action store with a fixed batch would. Every
    inline commit of up to 256 actions round-trips exactly; a larger one is ratified cut, losing its last
    add and remove actions. A shallow suite sends inline commits of a few actions (or grows one large
    action), never a commit of many actions."""

    max_actions = 256

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
        if isinstance(inline_content, bytes | bytearray):
            lines = bytes(inline_content).splitlines(keepends=True)
            if len(lines) > self.max_actions:
                inline_content = b"".join(lines[: self.max_actions])
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            latest_published_version=latest_published_version,
        )


class NameLimitBytesCatalog(DurableCatalog):
    """CAT-LIMIT-DECLARED (MUST), RFC "Catalog Responsibilities"; certify.md "Declare your limits"
    (``name_length`` is the longest name accepted, in characters: a name at the limit must be accepted).
    Bug: the catalog accepts names in any script (Unicode word characters) and declares 64 characters,
    but its name column is 64 bytes wide and the check measures the UTF-8 encoding. Every ASCII name of
    64 characters is accepted and the 65th refused, exactly as declared; a 64-character name with an
    accent or a CJK character is refused although it is at the declared limit. A shallow suite probes
    the declared limit with ASCII names and the non-ASCII names with short ones."""

    max_name = 64
    NAME: ClassVar[re.Pattern[str]] = re.compile(r"\w+")

    def register_table(self, name: str, table_id: str) -> TableInfo:
        if not isinstance(name, str) or not self.NAME.fullmatch(name) or len(name.encode("utf-8")) > self.max_name:
            raise InvalidRequest(f"bad table name {name!r}")
        with self._lock:
            t = self._by_id.get(table_id) if isinstance(table_id, str) else None
            if t is None or t.name is not None:
                raise InvalidRequest(f"no staging table {table_id!r}")
            if name in self._by_name:
                raise InvalidRequest(f"table {name!r} exists")
            if not self.storage.exists(f"{t.location}/_delta_log/{0:020d}.json"):
                raise InvalidRequest("version 0 of the staging table is not written")
            t.name = name
            self._by_name[name] = table_id
        with t.lock:
            self.persist(t)
        return TableInfo(table_id, name, t.location, True)


# ====================================================================== client faults


class HookedClient(ResilientClient):
    """``ResilientClient.transact`` with its per-attempt decisions named; correct as it stands."""

    def attempt_ict(self, snap: Snapshot, first_ict: int | None) -> int:
        """The in-commit timestamp of this attempt: above the commit it is proposed after."""
        return self.next_ict(snap.in_commit_timestamp)

    def conflict_is_ours(
        self, exc: CommitConflict, info: TableInfo, version: int, staged_uri: str, content: bytes
    ) -> bool:
        return self.on_conflict(info, version, staged_uri, content)

    def on_rejected(self, exc: CommitRejected, info: TableInfo, log: str, version: int, content: bytes) -> int:
        raise exc

    def transact(self, name: str, operation: str, build: Any) -> int:
        info = self._info(name)
        log = f"{info.location}/_delta_log"
        first_ict: int | None = None
        for _ in range(self.max_attempts):
            view = self.view(info)
            snap = self.snapshot(view, view.latest)
            version = view.latest + 1
            ict = self.attempt_ict(snap, first_ict)
            first_ict = ict if first_ict is None else first_ict
            actions: list[Action] = build(info, snap, ict)
            content = encode(self.order_actions(self.commit_info_for(info, version, operation, ict), actions))
            uri = self.stage(log, version, content, None)
            self.before_propose(log, version, content)
            try:
                self.catalog.commit(info.table_id, version, staged_uri=uri, in_commit_timestamp=ict)
            except CommitConflict as exc:
                if not self.conflict_is_ours(exc, info, version, uri, content):
                    continue
            except CatalogTimeout:
                if not self.on_lost_answer(info, version, uri, content):
                    continue
            except CommitRejected as exc:
                return self.on_rejected(exc, info, log, version, content)
            self.after_ratified(info, version)
            return version
        raise RetriesExhausted(f"gave up committing to {name} after {self.max_attempts} lost races")


class TxnIdContentHashClient(ResilientClient):
    """WRT-TXNID-UNIQUE (MUST), RFC "Commit Provenance Information" (``commitInfo.txnId`` stores a unique
    transaction identifier). Bug: the txnId is derived from the commit's content (a hash of the operation
    and its actions) so that a retried attempt of one write keeps its id. Every commit that adds or
    removes a file differs (paths are random), so ids never repeat in an ordinary history; but two commits
    with the same actions get the same id: a DELETE that matches no row (or an empty append) commits no
    actions, and every such commit, in any table, from any client, carries the same txnId. A shallow
    suite only writes commits that change rows."""

    def order_actions(self, commit_info: Action, actions: list[Action]) -> list[Action]:
        body = json.dumps([commit_info["commitInfo"].get("operation"), actions], sort_keys=True, separators=(",", ":"))
        commit_info["commitInfo"]["txnId"] = hashlib.sha256(body.encode()).hexdigest()[:32]
        return super().order_actions(commit_info, actions)


class CommitInfoLastLargeClient(ResilientClient):
    """WRT-COMMITINFO-FIRST (MUST), PROTOCOL.md In-Commit Timestamps (the commitInfo action, carrying
    the inCommitTimestamp, is the first action of the commit), required by the RFC's "Writer Requirements
    for Catalog-managed tables". Bug: commits of 8 actions or more are streamed: their file and remove
    actions are written as they are produced and the commitInfo, which carries the operation's metrics,
    is appended last, once the metrics are known. Appends (one add) and deletes touching few files keep
    commitInfo first; a DELETE that rewrites four or more files does not. A shallow suite deletes from a
    table of one or two files."""

    streamed_from = 8

    def order_actions(self, commit_info: Action, actions: list[Action]) -> list[Action]:
        if len(actions) < self.streamed_from:
            return super().order_actions(commit_info, actions)
        commit_info["commitInfo"]["operationMetrics"] = {
            "numAddedFiles": str(sum("add" in a for a in actions)),
            "numRemovedFiles": str(sum("remove" in a for a in actions)),
        }
        return [*actions, commit_info]


class IctFixedAcrossRetriesClient(HookedClient):
    """WRT-ICT-MONOTONIC (MUST), also WRT-ICT-SKEW; PROTOCOL.md In-Commit Timestamps (each commit's
    timestamp is greater than the previous commit's), which the RFC makes mandatory. Bug: the writer
    stamps a transaction once, when it starts, and keeps that timestamp when it rebases after a lost race
    ("the transaction's time"). Its first attempt is stamped above the commit it read; but when it loses
    the version to a rival whose timestamp is at or above its own (a peer whose clock is ahead, or one
    that committed in the same millisecond) the rebased commit goes in below the rival's. A shallow suite
    races writers on one clock, milliseconds apart, where the rival's stamp is almost always older."""

    def attempt_ict(self, snap: Snapshot, first_ict: int | None) -> int:
        return super().attempt_ict(snap, None) if first_ict is None else first_ict


class PublishReencodesClient(ResilientClient):
    """WRT-PUBLISH-IDENTICAL (MUST), RFC "Publishing Commits" (publishing copies the ratified commit to
    ``_delta_log/<v>.json``; its content is immutable). Bug: the client parses every commit it loads and
    works with the parsed actions, so what it publishes is its own re-serialisation of the ratified commit
    (compact separators, ``\\uXXXX`` escapes), not its bytes. For commits the client wrote itself the
    two are identical, so publishing its own history is exact; a commit of another writer that
    serialises differently (spaces after separators, raw UTF-8, another key spelling of the same JSON)
    is published changed. A shallow suite publishes what the client under test committed."""

    def content(self, source: RatifiedCommit | str) -> bytes:
        return encode(decode(super().content(source)))


class CheckpointStagedClient(ResilientClient):
    """WRT-CHECKPOINT-PUBLISHED (MUST), RFC "Maintenance Operations on Catalog-managed Tables" (a
    checkpoint of version v only once ``_delta_log/<v>.json`` exists). Bug: the client treats a ratified
    staged commit as "on storage" like a published one and checkpoints the newest version whose commit is
    a file (published, or ratified and staged). After a publish, which is when a shallow suite
    checkpoints, the two agree; with ratified, unpublished staged commits it writes a checkpoint of a
    version that has no published Delta file."""

    def checkpoint_version(self, view: LogView) -> int | None:
        on_storage = set(view.published)
        on_storage |= {
            v for v, c in view.catalog_commits.items() if c.staged_uri is not None and self.storage.exists(c.staged_uri)
        }
        return max(on_storage) if on_storage else None


class CleanupCompactionByEndClient(ResilientClient):
    """WRT-CLEANUP-COMPACTION (SHOULD), RFC "Metadata Cleanup" step 3 (delete all log compaction files
    having startVersion <= the cut-off checkpoint's version). Bug: the client deletes a compaction file
    only when the whole range it covers is at or below the cut-off checkpoint (its end version), reading
    "before the checkpoint" as "entirely superseded". Compaction ranges that end at or before the
    checkpoint go as they should; a range that starts at or before it and ends after it is kept. A
    shallow suite compacts ranges that end before the checkpoint it then cleans up to."""

    def cleanup_doomed(self, view: LogView, files: list[str], checkpoint: int, cutoff: int) -> list[str]:
        doomed = super().cleanup_doomed(view, files, checkpoint, cutoff)
        log = f"{view.info.location}/_delta_log/"

        def spans(uri: str) -> bool:
            m = _COMPACTION_FILE.fullmatch(uri[len(log) :])
            return m is not None and int(m.group(2)) > checkpoint

        return [uri for uri in doomed if not spans(uri)]


class ConflictLatestShortcutClient(HookedClient):
    """WRT-LOST-ANSWER-ONCE (MUST), RFC "Commit Protocol" (the catalog is the source of truth for whether
    a commit attempt succeeded; a version is ratified at most once). Bug: on a conflict the client asks
    the catalog whether the version holds its own proposal (a second delivery of it), except when the
    conflict states a latest version above the proposed one: then "somebody is already further", it
    skips the question and rebases. A duplicated proposal whose first delivery was ratified and after
    which a rival committed the next version is answered by such a conflict, so the client commits its
    change a second time. A shallow suite duplicates a proposal with no rival in between (the conflict
    then states the proposed version, and the client asks)."""

    def conflict_is_ours(
        self, exc: CommitConflict, info: TableInfo, version: int, staged_uri: str, content: bytes
    ) -> bool:
        if exc.latest_version is not None and exc.latest_version > version:
            return False  # "others went on: certainly a lost race"
        return super().conflict_is_ours(exc, info, version, staged_uri, content)


class CapFilesystemFallbackClient(HookedClient):
    """WRT-NO-FILESYSTEM-COMMIT (MUST), RFC "Writer Requirements for Catalog-managed tables" (writers
    follow the catalog's commit protocol and must not perform ordinary filesystem-based commits). Bug:
    when the catalog refuses a proposal (its cap on unpublished commits is reached), the client falls
    back to "option 3" and commits by writing ``_delta_log/<v>.json`` with PUT-if-absent, on the
    reasoning that a published file proves the version ratified. It never does so while the catalog
    accepts; a catalog with room for every proposal, as in a shallow suite, never shows it."""

    def on_rejected(self, exc: CommitRejected, info: TableInfo, log: str, version: int, content: bytes) -> int:
        self.storage.put(f"{log}/{self.delta_name(version)}", content, if_absent=True)
        return version


class TimeTravelExclusiveClient(ResilientClient):
    """RDR-TIME-TRAVEL-ICT (MUST), RFC "Publishing Commits" (time travel by in-commit timestamps) and
    PROTOCOL.md (the version at a timestamp is the latest commit at or before it). Bug: the reader
    compares in-commit timestamps with ``<`` instead of ``<=``, so a read at exactly a commit's
    timestamp resolves the version before it (and the first version's own timestamp finds no version).
    A shallow suite reads at timestamps between commits, or takes "now", where both agree."""

    def version_at(self, timeline: list[tuple[int, int]], timestamp_ms: int) -> int:
        return super().version_at(timeline, timestamp_ms - 1)


class LastCheckpointOnlyClient(ResilientClient):
    """RDR-LIST-FALLBACK (MUST), RFC "Reading Catalog-managed Tables" (commits the catalog no longer
    stores are read from what is published in ``_delta_log``). Bug: the reader starts a snapshot from the
    checkpoint ``_last_checkpoint`` names when it is at or below the asked version, and otherwise replays
    from version 0, ignoring older checkpoints. Reads of the latest version, and of any version before
    metadata cleanup, are right; once cleanup has removed the commits before an older checkpoint, reading
    a version between that checkpoint and the newest one fails although it is readable. A shallow suite
    reads old versions before maintenance, or only the latest after it."""

    def start_checkpoint(self, view: LogView, target: int) -> int | None:
        try:
            pointer = int(json.loads(self.storage.get(view.last_checkpoint_uri))["version"])
        except FileNotFoundError:
            return None
        return pointer if pointer <= target and pointer in view.checkpoints else None


class StaleViewOnLostListingClient(ResilientClient):
    """WRT-LOST-ANSWER-ONCE (MUST), also RDR-UNPUBLISHED; RFC "Reader Requirements" (readers must contact
    the catalog for the ratified commits, and must establish the latest version from it) and certify.md
    "The nemesis" (a read whose listing was lost may raise, never report a version the catalog does not
    hold as the latest). Bug: a read asks the catalog once and, when the answer is lost, serves the view
    of the table it read last ("stale but consistent"). A read with no earlier view raises, as allowed;
    a read after an earlier one returns the old latest version and rows, missing every commit since,
    the client's own included. A shallow suite loses the listing of a first read only."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._last_views: dict[str, LogView] = {}

    def listed_view(self, info: TableInfo) -> LogView:
        resp = self.raw_catalog.get_commits(info.table_id)
        latest = resp.latest_version
        log = f"{info.location}/_delta_log/"
        published: dict[int, str] = {}
        checkpoints: dict[int, str] = {}
        for f in self.storage.list(log):
            rel = f.uri[len(log) :]
            m = _DELTA_FILE.fullmatch(rel)
            if m and int(m.group(1)) <= latest:
                published[int(m.group(1))] = f.uri
            m = _CHECKPOINT_FILE.fullmatch(rel)
            if m and int(m.group(1)) <= latest:
                checkpoints[int(m.group(1))] = f.uri
        commits = {c.version: c for c in resp.commits if c.version <= latest}
        return LogView(info, latest, commits, published, checkpoints, f"{log}_last_checkpoint")

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        info = self._info(name)
        try:
            view = self.listed_view(info)
        except CatalogTimeout:
            cached = self._last_views.get(info.table_id)
            if cached is None:
                raise
            view = cached
        else:
            self._last_views[info.table_id] = view
        if timestamp_ms is not None:
            version = self.version_at(self.timeline(view), timestamp_ms)
        target = self.readable_bound(view, version)
        snap = self.snapshot(view, target)
        return ReadResult(target, self.rows(info.location, snap))


class TimeTravelLocalZoneClient(ResilientClient):
    """RDR-TIME-TRAVEL-ICT (MUST), RFC "Publishing Commits" (time travel by in-commit timestamps, which
    are milliseconds since the Unix epoch). Bug: the reader hands the asked timestamp to its planner as a
    naive local date-time and the planner reads it back as UTC, so the timestamp it resolves is shifted by
    the reader's UTC offset. On a machine in UTC it is exact; in any other zone a read by timestamp lands
    hours away (east of UTC: on later versions, west: on earlier ones or none). A shallow suite runs its
    reader in UTC, and only its writers under another zone."""

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        if timestamp_ms is not None:
            local = datetime.fromtimestamp(timestamp_ms / 1000)  # naive, in the reader's zone
            timestamp_ms = calendar.timegm(local.timetuple()) * 1000 + timestamp_ms % 1000
        return super().read(name, version=version, timestamp_ms=timestamp_ms)


# ====================================================================== targets


class _Cr5Target(DurableTarget):
    """A round-5 variant: the durable, correct target with one side swapped."""

    def version(self) -> str:
        return f"cleanroom-r5 0.1 ({self.catalog_cls.__name__}, {self.client_cls.__name__})"


class ListStartClampedTarget(_Cr5Target):
    name = "cr5-cat-list-start-clamped"
    catalog_cls: ClassVar[type[CleanCatalog]] = ListStartClampedCatalog


class RestartInlineNewlineTarget(_Cr5Target):
    name = "cr5-cat-restart-inline-newline"
    catalog_cls: ClassVar[type[CleanCatalog]] = RestartInlineNewlineCatalog


class DedupeByTimestampTarget(_Cr5Target):
    name = "cr5-cat-dedupe-by-timestamp"
    catalog_cls: ClassVar[type[CleanCatalog]] = DedupeByTimestampCatalog


class ConflictStatesProposedTarget(_Cr5Target):
    name = "cr5-cat-conflict-states-proposed"
    catalog_cls: ClassVar[type[CleanCatalog]] = ConflictStatesProposedCatalog


class StagedVersionParsedTarget(_Cr5Target):
    name = "cr5-cat-staged-version-parsed"
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedVersionParsedCatalog


class StagedNestedDirTarget(_Cr5Target):
    name = "cr5-cat-staged-nested-dir"
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedNestedDirCatalog


class InlineAsciiEscapeTarget(_Cr5Target):
    name = "cr5-cat-inline-ascii-escape"
    catalog_cls: ClassVar[type[CleanCatalog]] = InlineAsciiEscapeCatalog


class CommitActionsTruncateTarget(_Cr5Target):
    name = "cr5-cat-commit-actions-truncate"
    catalog_cls: ClassVar[type[CleanCatalog]] = CommitActionsTruncateCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(commit_actions=CommitActionsTruncateCatalog.max_actions)


class NameLimitBytesTarget(_Cr5Target):
    name = "cr5-cat-name-limit-bytes"
    catalog_cls: ClassVar[type[CleanCatalog]] = NameLimitBytesCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(name_length=NameLimitBytesCatalog.max_name)


class TxnIdContentHashTarget(_Cr5Target):
    name = "cr5-wrt-txnid-content-hash"
    client_cls: ClassVar[type[CleanClient]] = TxnIdContentHashClient


class CommitInfoLastLargeTarget(_Cr5Target):
    name = "cr5-wrt-commitinfo-last-large"
    client_cls: ClassVar[type[CleanClient]] = CommitInfoLastLargeClient


class IctFixedAcrossRetriesTarget(_Cr5Target):
    name = "cr5-wrt-ict-fixed-across-retries"
    client_cls: ClassVar[type[CleanClient]] = IctFixedAcrossRetriesClient


class PublishReencodesTarget(_Cr5Target):
    name = "cr5-wrt-publish-reencodes"
    client_cls: ClassVar[type[CleanClient]] = PublishReencodesClient


class CheckpointStagedTarget(_Cr5Target):
    name = "cr5-wrt-checkpoint-staged"
    client_cls: ClassVar[type[CleanClient]] = CheckpointStagedClient


class CleanupCompactionByEndTarget(_Cr5Target):
    name = "cr5-wrt-cleanup-compaction-by-end"
    client_cls: ClassVar[type[CleanClient]] = CleanupCompactionByEndClient


class ConflictLatestShortcutTarget(_Cr5Target):
    name = "cr5-wrt-conflict-latest-shortcut"
    client_cls: ClassVar[type[CleanClient]] = ConflictLatestShortcutClient


class CapFilesystemFallbackTarget(_Cr5Target):
    name = "cr5-wrt-cap-filesystem-fallback"
    client_cls: ClassVar[type[CleanClient]] = CapFilesystemFallbackClient


class TimeTravelExclusiveTarget(_Cr5Target):
    name = "cr5-rdr-time-travel-exclusive"
    client_cls: ClassVar[type[CleanClient]] = TimeTravelExclusiveClient


class LastCheckpointOnlyTarget(_Cr5Target):
    name = "cr5-rdr-last-checkpoint-only"
    client_cls: ClassVar[type[CleanClient]] = LastCheckpointOnlyClient


class StaleViewOnLostListingTarget(_Cr5Target):
    name = "cr5-rdr-stale-view-on-lost-listing"
    client_cls: ClassVar[type[CleanClient]] = StaleViewOnLostListingClient


class TimeTravelLocalZoneTarget(_Cr5Target):
    name = "cr5-rdr-time-travel-local-zone"
    client_cls: ClassVar[type[CleanClient]] = TimeTravelLocalZoneClient


# ====================================================================== the list


def _variant(
    target: type[_Cr5Target],
    profile: str,
    rules: tuple[str, ...],
    level: str,
    dimensions: tuple[str, ...],
) -> Variant:
    side: Literal["catalog", "client"] = "catalog" if target.catalog_cls is not DurableCatalog else "client"
    faulty = target.catalog_cls if side == "catalog" else target.client_cls
    assert (target.client_cls is ResilientClient) == (side == "catalog"), "exactly one side is swapped"
    return Variant(
        name=str(target.name),
        target=f"{__name__}:{target.__name__}",
        side=side,
        profile=profile,
        rules=rules,
        level=level,
        dimensions=dimensions,
        doc=" ".join((faulty.__doc__ or "").split()),
    )


_CAT, _WRT, _RDR = "delta-cm-catalog", "delta-cm-writer", "delta-cm-reader"

VARIANTS: list[Variant] = [
    _variant(ListStartClampedTarget, _CAT, ("CAT-LIST-RANGE",), "MUST", ("listing-range", "polling-for-new")),
    _variant(
        RestartInlineNewlineTarget,
        _CAT,
        ("CAT-RATIFY-DURABLE", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("catalog-restart", "inline-commits", "encoding"),
    ),
    _variant(
        DedupeByTimestampTarget,
        _CAT,
        ("CAT-RATIFY-RACE", "CAT-RATIFY-ONCE"),
        "MUST",
        ("concurrent-proposals", "duplicate-delivery", "clock"),
    ),
    _variant(ConflictStatesProposedTarget, _CAT, ("CAT-CONFLICT-LATEST",), "SHOULD", ("stale-proposals", "conflicts")),
    _variant(StagedVersionParsedTarget, _CAT, ("CAT-STAGED-NAME",), "MUST", ("staged-names", "parsing")),
    _variant(StagedNestedDirTarget, _CAT, ("CAT-STAGED-IN-TABLE",), "MUST", ("staged-paths",)),
    _variant(
        InlineAsciiEscapeTarget,
        _CAT,
        ("CAT-RETAIN-UNPUBLISHED", "CAT-INLINE-COMMITS"),
        "MUST",
        ("inline-commits", "non-ascii", "encoding"),
    ),
    _variant(
        CommitActionsTruncateTarget,
        _CAT,
        ("CAT-LIMIT-CLEAN-REFUSAL", "CAT-RETAIN-UNPUBLISHED"),
        "MUST",
        ("limits", "many-actions", "inline-commits"),
    ),
    _variant(NameLimitBytesTarget, _CAT, ("CAT-LIMIT-DECLARED",), "MUST", ("limits", "non-ascii-names")),
    _variant(TxnIdContentHashTarget, _WRT, ("WRT-TXNID-UNIQUE",), "MUST", ("txnid", "several-tables", "no-op-commits")),
    _variant(CommitInfoLastLargeTarget, _WRT, ("WRT-COMMITINFO-FIRST",), "MUST", ("commit-content", "many-actions")),
    _variant(
        IctFixedAcrossRetriesTarget,
        _WRT,
        ("WRT-ICT-MONOTONIC", "WRT-ICT-SKEW"),
        "MUST",
        ("clock-skew", "concurrent-writers", "retry"),
    ),
    _variant(PublishReencodesTarget, _WRT, ("WRT-PUBLISH-IDENTICAL",), "MUST", ("publication", "foreign-commits")),
    _variant(CheckpointStagedTarget, _WRT, ("WRT-CHECKPOINT-PUBLISHED",), "MUST", ("maintenance", "unpublished-runs")),
    _variant(
        CleanupCompactionByEndTarget,
        _WRT,
        ("WRT-CLEANUP-COMPACTION",),
        "SHOULD",
        ("maintenance", "log-compaction", "metadata-cleanup"),
    ),
    _variant(
        ConflictLatestShortcutTarget,
        _WRT,
        ("WRT-LOST-ANSWER-ONCE",),
        "MUST",
        ("duplicate-delivery", "concurrent-writers", "lost-answers"),
    ),
    _variant(CapFilesystemFallbackTarget, _WRT, ("WRT-NO-FILESYSTEM-COMMIT",), "MUST", ("limits", "unpublished-cap")),
    _variant(TimeTravelExclusiveTarget, _RDR, ("RDR-TIME-TRAVEL-ICT",), "MUST", ("time-travel", "boundaries")),
    _variant(
        LastCheckpointOnlyTarget,
        _RDR,
        ("RDR-LIST-FALLBACK",),
        "MUST",
        ("old-versions", "maintenance", "metadata-cleanup"),
    ),
    _variant(
        StaleViewOnLostListingTarget,
        _WRT,
        ("WRT-LOST-ANSWER-ONCE", "RDR-UNPUBLISHED"),
        "MUST",
        ("lost-answers", "listings", "caching"),
    ),
    _variant(TimeTravelLocalZoneTarget, _RDR, ("RDR-TIME-TRAVEL-ICT",), "MUST", ("time-zones", "time-travel")),
]
