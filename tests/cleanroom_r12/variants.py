"""Round 12: faulty variants of the durable clean-room catalog (profile delta-cm-catalog).

Each target swaps exactly the catalog side of ``DurableTarget`` for a faulty subclass. Written from the
RFC, the public contract, docs/certify.md and the clean-room baselines only.
"""

from __future__ import annotations

import base64
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any, ClassVar

from conformance.contract.delta import (
    CatalogLimits,
    CommitRejected,
    GetCommitsResponse,
    InvalidRequest,
    MaintenancePolicy,
    RatifiedCommit,
    Storage,
    TableInfo,
    TableNotFound,
)
from tests.cleanroom.catalog import _TABLE_NAME, CleanCatalog, TableState, is_int
from tests.cleanroom.client import encode
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget
from tests.cleanroom_r3.variant import Variant

# ================================================================ 1. stateless front-end, lost update


class StatelessLostUpdateCatalog(DurableCatalog):
    """cr12-cat-stateless-lost-update. CAT-RATIFY-RACE (MUST), CAT-RATIFY-ONCE (MUST); RFC "Commit
    Protocol" (of concurrent proposals for one version exactly one is ratified; a version is ratified at
    most once). The catalog is run as a stateless front-end (so that several replicas can serve one state
    store): every call on a table loads the table's record from the state store, works on that copy and
    writes it back whole. The per-table lock it takes is the lock of the freshly loaded copy, so it
    excludes nobody, and the write-back is a plain atomic replace with no compare-and-swap on the record's
    version. Two concurrent proposals for version v both load ``latest = v - 1``, both pass the sequence
    check and both answer success; the last write wins and one acknowledged commit is silently replaced.
    Shallow suites miss it: every sequential test (gaps, taken versions, resends one after the other,
    restarts) is right, because each call sees the state the previous one wrote; only proposals that
    really overlap (both loaded before either stored) show it."""

    def _table(self, table_id: object, missing: type[Exception]) -> TableState:
        t = super()._table(table_id, missing)
        if self.state_dir is None:
            return t
        # Stateless: the record in the store is the truth; load it for this request.
        doc = json.loads((self.state_dir / f"{t.table_id}.json").read_text())
        return self.decode_table(doc)


class StatelessLostUpdateTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StatelessLostUpdateCatalog


# ================================================================ 2. listing read skew


class ListReadSkewCatalog(DurableCatalog):
    """cr12-cat-list-read-skew. CAT-LIST-CONTIGUOUS (MUST), CAT-LIST-LATEST (MUST); RFC "Getting Ratified
    Commits from the Catalog" (the listed commits form a contiguous run ending at the latest ratified
    version, and the response carries the true latest version). The listing is two queries that are not
    in one transaction: first the table's head (``SELECT latest``, taken without the table lock, it is
    "just a read"), then the stored commits (``WHERE version >= start``, and ``<= end`` only when the
    caller gave an end). A ratification that lands between the two queries is listed, while the response
    states the older latest version: the listing holds a commit above its own ``latest_version`` (a reader
    that trusts the latest version ignores it; one that trusts the commits reads past the head). Shallow
    suites miss it: every listing made while nobody commits is exact; only a listing that overlaps a
    ratification of the same table (readers polling a table under write load) shows it."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        t = self._table(table_id, TableNotFound)
        for bound in (start_version, end_version):
            if bound is not None and (not is_int(bound) or bound < 0):
                raise InvalidRequest(f"bad version bound {bound!r}")
        if start_version is not None and end_version is not None and start_version > end_version:
            raise InvalidRequest("start_version is above end_version")
        latest = self.latest_of(t)  # query 1: the head, outside the lock
        lo = 0 if start_version is None else start_version
        with t.lock:  # query 2: the rows
            if end_version is None:
                commits = [t.stored[v] for v in sorted(t.stored) if v >= lo]
            else:
                commits = self.listed(t, lo, min(end_version, latest))
        return GetCommitsResponse(commits, latest)


class ListReadSkewTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ListReadSkewCatalog


# ================================================================ 3. limits together overflow the state item


class LimitedCatalog(DurableCatalog):
    """Correct helper (not a variant): a durable catalog with declared limits on inline commits
    (``INLINE_BYTES``) and on ratified, unpublished commits per table (``CAP``, counted as
    ``latest - published``); past either the proposal is refused cleanly, before anything changes."""

    INLINE_BYTES: ClassVar[int] = 64 * 1024
    CAP: ClassVar[int] = 10

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
        if isinstance(inline_content, bytes | bytearray) and len(inline_content) > self.INLINE_BYTES:
            raise CommitRejected(f"inline commits hold at most {self.INLINE_BYTES} bytes")
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            latest_published_version=latest_published_version,
        )

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if t.latest - t.published >= self.CAP:
            raise CommitRejected(f"table holds {self.CAP} unpublished commits; publish first")
        super().store(t, commit)


class LimitedTarget(DurableTarget):
    """Correct helper: ``LimitedCatalog`` with its limits declared."""

    catalog_cls: ClassVar[type[CleanCatalog]] = LimitedCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(inline_bytes=LimitedCatalog.INLINE_BYTES, unpublished=LimitedCatalog.CAP)


class StateItemSizeCatalog(LimitedCatalog):
    """cr12-cat-state-item-size. CAT-LIMIT-DECLARED (MUST); RFC "Catalog Responsibilities" and
    docs/certify.md "Limits" (a limit the catalog declares is its real limit: a call at it succeeds). The
    catalog declares 64 KiB per inline commit and 10 unpublished commits per table, and enforces each
    correctly, but it keeps a table's record, unpublished inline commits included (base64), in one item
    of a key-value store whose items hold at most 400,000 bytes (DynamoDB's limit). Each declared limit
    fits alone; together they do not: from about the fifth unpublished inline commit near 64 KiB the
    write of the record fails, and the proposal, within both declared limits, ends in the store's error
    (not a clean refusal) after the in-memory cache was already updated, so the commit is listed although
    its proposer was told it failed, and is gone after a restart. Shallow suites miss it: they test each
    limit on its own (one inline commit at 64 KiB; ten small commits up to the cap), which is right; only
    several large inline commits waiting unpublished at once reach the item size."""

    ITEM_BYTES: ClassVar[int] = 400_000

    def persist_ratified(self, t: TableState, commit: RatifiedCommit) -> None:
        size = len(json.dumps(self.encode_table(t)).encode())
        if size > self.ITEM_BYTES:
            raise RuntimeError(f"ValidationException: Item size has exceeded the maximum allowed size ({size})")
        super().persist_ratified(t, commit)


class StateItemSizeTarget(LimitedTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StateItemSizeCatalog


# ================================================================ 4. content binding checked by size


class BindingCatalog(DurableCatalog):
    """Correct helper (not a variant): a durable catalog that binds each ratified staged commit to the
    bytes it held when it was ratified (CAT-RATIFIED-CONTENT-BOUND, a MAY). It lists the commit by its
    location while the file still holds those bytes, and as an inline commit of the kept bytes once the
    file was changed (docs/certify.md). The kept bytes are persisted with the table's state."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._bound: dict[tuple[str, int], bytes] = {}
        super().__init__(warehouse_uri, storage, state_dir)

    def encode_table(self, t: TableState) -> dict[str, Any]:
        doc = super().encode_table(t)
        doc["bound"] = {
            str(v): base64.b64encode(self._bound[(t.table_id, v)]).decode()
            for v in sorted(t.stored)
            if (t.table_id, v) in self._bound
        }
        return doc

    def decode_table(self, doc: dict[str, Any]) -> TableState:
        t = super().decode_table(doc)
        for v, data in doc.get("bound", {}).items():
            self._bound[(t.table_id, int(v))] = base64.b64decode(data)
        return t

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if commit.staged_uri is not None:
            self._bound[(t.table_id, commit.version)] = self.storage.get(commit.staged_uri)
        super().store(t, commit)

    def unchanged(self, uri: str, kept: bytes) -> bool:
        """Whether the staged file still holds the ratified bytes."""
        try:
            return self.storage.get(uri) == kept
        except FileNotFoundError:
            return False

    def listed(self, t: TableState, lo: int, hi: int) -> list[RatifiedCommit]:
        out: list[RatifiedCommit] = []
        for c in super().listed(t, lo, hi):
            kept = self._bound.get((t.table_id, c.version))
            if c.staged_uri is not None and kept is not None and not self.unchanged(c.staged_uri, kept):
                c = RatifiedCommit(c.version, None, kept, c.in_commit_timestamp)
            out.append(c)
        return out


class BindingTarget(DurableTarget):
    """Correct helper: ``BindingCatalog``."""

    catalog_cls: ClassVar[type[CleanCatalog]] = BindingCatalog


class BoundSizeCheckCatalog(BindingCatalog):
    """cr12-cat-bound-size-check. CAT-RATIFIED-CONTENT-BOUND (MAY); RFC "Publishing Commits" (the content
    of a ratified commit is immutable), "Catalog-Managed Tables" (motivation 1) and "Terminology - Commits"
    (ratified commit). The catalog binds a ratified staged commit to its bytes, but to spare a GET of
    every staged file on every listing it decides whether the file changed from the object's metadata
    only: the size the store lists for it (a HEAD's Content-Length) against the length of the kept bytes.
    A rewrite of the staged file to other bytes of the same length (a value edited in place, one digit of
    a timestamp, ``"a"`` for ``"b"`` in a path, a row's id) passes as unchanged, and the listing hands
    readers the file's location: they read the rewritten commit, not the ratified one. Shallow suites
    miss it: a tampering test that truncates the file, appends a line or writes another commit in its
    place changes the size, and the catalog then serves the kept bytes correctly."""

    def unchanged(self, uri: str, kept: bytes) -> bool:
        folder = uri.rsplit("/", 1)[0] + "/"
        found = [f for f in self.storage.list(folder) if f.uri == uri]
        return bool(found) and found[0].size == len(kept)


class BoundSizeCheckTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = BoundSizeCheckCatalog


# ================================================================ 5. drop detaches the table with a commit


class DroppingDurableCatalog(DurableCatalog):
    """Correct helper (not a variant): a durable catalog with a soft ``drop_table`` (CAT-DROP, a MAY): the
    name is removed from the index and the table's record no longer carries it; files stay."""

    def drop_table(self, name: str) -> None:
        with self._lock:
            table_id = self._by_name.get(name) if isinstance(name, str) else None
            t = self._by_id.get(table_id) if table_id is not None else None
            if t is None:
                raise TableNotFound(f"no table {name!r}")
        with t.lock:
            self.before_drop(t)
            with self._lock:
                del self._by_name[name]
                t.name = None
            self.persist(t)

    def before_drop(self, t: TableState) -> None:
        """What happens to the table before its name goes (caller holds ``t.lock``)."""


class DroppingTarget(DurableTarget):
    """Correct helper: ``DroppingDurableCatalog``."""

    catalog_cls: ClassVar[type[CleanCatalog]] = DroppingDurableCatalog


class DropDetachCommitCatalog(DroppingDurableCatalog):
    """cr12-cat-drop-detach-commit. CAT-DROP (MAY); RFC "Creating and Dropping Catalog-managed Tables"
    (a catalog that drops a table removes its name, leaves other tables as they were and makes no commit
    to the dropped table). So that the files of a dropped table stay usable by path-based tools ("a drop
    turns a managed table into an external one"), the catalog detaches the table before removing its
    name: when every ratified commit is published it writes one last commit,
    ``_delta_log/<latest+1>.json``, whose protocol drops the ``catalogManaged`` feature (a commitInfo
    ``DETACH`` and a protocol action), and records it as ratified. The dropped table thus gets a commit
    the client never made. Shallow suites miss it: they check that the name no longer resolves and that
    other tables are untouched, both right; only looking at the dropped table's ``_delta_log`` after the
    drop (a soft drop leaves its files, so they are there to see) shows the extra version. A table with
    unpublished commits is left as it is, so a drop right after writing shows nothing either."""

    def before_drop(self, t: TableState) -> None:
        if t.published < t.latest:
            return  # unpublished commits: leave the table managed
        version = t.latest + 1
        ict = time.time_ns() // 1_000_000
        try:
            for line in self.storage.get(f"{t.location}/_delta_log/{version - 1:020d}.json").splitlines():
                info = json.loads(line).get("commitInfo")
                if isinstance(info, dict) and is_int(info.get("inCommitTimestamp")):
                    ict = max(ict, int(info["inCommitTimestamp"]) + 1)
        except (FileNotFoundError, ValueError):
            pass
        content = encode(
            [
                {"commitInfo": {"operation": "DETACH", "inCommitTimestamp": ict, "txnId": str(uuid.uuid4())}},
                {
                    "protocol": {
                        "minReaderVersion": 3,
                        "minWriterVersion": 7,
                        "readerFeatures": [],
                        "writerFeatures": ["inCommitTimestamp"],
                    }
                },
            ]
        )
        self.storage.put(f"{t.location}/_delta_log/{version:020d}.json", content, if_absent=True)
        t.latest = version
        t.published = version


class DropDetachCommitTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = DropDetachCommitCatalog


# ================================================================ 6. maintenance policy keys after restart


class PolicyRestartKeysCatalog(DurableCatalog):
    """cr12-cat-policy-restart-keys. CAT-MAINTENANCE-POLICY (MAY); RFC "Maintenance Operations on
    Catalog-managed Tables" (a catalog that defines maintenance policies exposes them per table, in terms
    of the known maintenance operations). The catalog keeps each table's policy as table properties and
    persists them the way Delta spells its properties, camelCase (``checkpoint``, ``logCompaction``,
    ``checksum``, ``metadataCleanup``, ``vacuum``). A table created in the running process gets the
    default policy object directly; a table loaded from the state store gets its policy rebuilt from the
    stored keys, with no mapping back to the operation names: after a restart the policy allows
    ``logCompaction`` and ``metadataCleanup``, which are no maintenance operations, and no longer allows
    ``log_compaction`` nor ``metadata_cleanup``, which every client then takes as forbidden. Shallow
    suites miss it: they read the policy of a fresh table, which is right; only reading it again after a
    restart of the catalog shows it."""

    KEYS: ClassVar[dict[str, str]] = {
        "checkpoint": "checkpoint",
        "log_compaction": "logCompaction",
        "checksum": "checksum",
        "metadata_cleanup": "metadataCleanup",
        "vacuum": "vacuum",
    }

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        self._policies: dict[str, MaintenancePolicy] = {}
        super().__init__(warehouse_uri, storage, state_dir)

    def policy_of(self, table_id: str) -> MaintenancePolicy:
        return self._policies.get(table_id) or MaintenancePolicy()

    def encode_table(self, t: TableState) -> dict[str, Any]:
        doc = super().encode_table(t)
        allowed = self.policy_of(t.table_id).allowed
        doc["properties"] = {self.KEYS.get(op, op): op in allowed for op in self.KEYS}
        return doc

    def decode_table(self, doc: dict[str, Any]) -> TableState:
        t = super().decode_table(doc)
        props = doc.get("properties")
        if isinstance(props, dict):
            self._policies[t.table_id] = MaintenancePolicy(frozenset(k for k, on in props.items() if on))
        return t

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        t = self._table(table_id, TableNotFound)
        return self.policy_of(t.table_id)


class PolicyRestartKeysTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = PolicyRestartKeysCatalog


# ================================================================ 7. one state file for the whole catalog


class SingleStateFileCatalog(DurableCatalog):
    """cr12-cat-single-state-file. CAT-RATIFY-DURABLE (MUST); RFC "Commit Protocol" and "Terminology -
    Commits" (ratified commit: ratified commits survive a catalog restart). The catalog keeps its whole
    state in one document (``catalog.json``, all tables), rewritten atomically after every change. The
    rewrite happens under the lock of the table that changed, which is what serialises ratifications, but
    the document holds every table: two ratifications on two different tables at once each take a
    snapshot of all tables and write it, and when the snapshot taken first is written last, the other
    table's ratification, already acknowledged, is missing from the file. While the process lives nothing
    shows (memory is right, and the next change of any table writes it again); a restart at that moment
    comes back without it: the version is free again and a later proposal ratifies it a second time.
    Shallow suites miss it: the restart checks commit to one table (or to tables one after another) and
    restart, and each snapshot then holds everything; only concurrent commits to several tables followed
    by a restart before any further change show it."""

    def state_file(self) -> Path:
        assert self.state_dir is not None
        return self.state_dir / "catalog.json"

    def persist(self, t: TableState) -> None:
        if self.state_dir is None:
            return
        with self._lock:
            tables = list(self._by_id.values())
        doc = [self.encode_table(x) for x in tables]  # a snapshot of every table, under t's lock only
        path = self.state_file()
        tmp = path.with_suffix(f".{os.getpid()}.{id(t)}.tmp")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, path)

    def load(self) -> None:
        path = self.state_file()
        if not path.exists():
            return
        for d in json.loads(path.read_text()):
            t = self.decode_table(d)
            self._by_id[t.table_id] = t
            if t.name is not None:
                self._by_name[self.name_key(t.name)] = t.table_id


class SingleStateFileTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = SingleStateFileCatalog


# ================================================================ 8. registration check-then-insert race


class RegisterNameRaceCatalog(DurableCatalog):
    """cr12-cat-register-name-race. CAT-RESOLVE-LOCATION (MUST); RFC "Table Discovery" and "Reader
    Requirements for Catalog-managed tables" (resolving a table name returns the table's storage
    location). To keep the catalog-wide index lock short, registration checks that the name is free under
    the lock, releases it for the slow storage check that version 0 is written, and takes it again to
    insert the name, without checking again. Two creations of one name that overlap (two engines running
    ``CREATE TABLE t`` at once, or a client's retry racing its first attempt) both pass the check, both
    are told their table is registered, and the second insert silently re-points the name: the first
    creator's table no longer resolves, its writers and readers go to the other table's location.
    Shallow suites miss it: registering a taken name one call after the other is refused as it should
    be; only two registrations of one name whose storage checks overlap show it."""

    def register_table(self, name: str, table_id: str) -> TableInfo:
        if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
            raise InvalidRequest(f"bad table name {name!r}")
        with self._lock:
            t = self._by_id.get(table_id) if isinstance(table_id, str) else None
            if t is None or t.name is not None:
                raise InvalidRequest(f"no staging table {table_id!r}")
            if name in self._by_name:
                raise InvalidRequest(f"table {name!r} exists")
        if not self.storage.exists(f"{t.location}/_delta_log/{0:020d}.json"):  # slow: outside the lock
            raise InvalidRequest("version 0 of the staging table is not written")
        with self._lock:
            t.name = name
            self._by_name[name] = table_id
        with t.lock:
            self.persist(t)
        return TableInfo(table_id, name, t.location, True)


class RegisterNameRaceTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = RegisterNameRaceCatalog


# ================================================================ the list


def _v(
    name: str,
    cls: type[DurableTarget],
    rules: tuple[str, ...],
    level: str,
    dimensions: tuple[str, ...],
) -> Variant:
    return Variant(
        name,
        f"tests.cleanroom_r12.variants:{cls.__name__}",
        "catalog",
        "delta-cm-catalog",
        rules,
        level,
        dimensions,
        (cls.catalog_cls.__doc__ or "").strip(),
    )


VARIANTS: list[Variant] = [
    _v(
        "cr12-cat-stateless-lost-update",
        StatelessLostUpdateTarget,
        ("CAT-RATIFY-RACE", "CAT-RATIFY-ONCE"),
        "MUST",
        ("concurrency", "state-store", "lost-update"),
    ),
    _v(
        "cr12-cat-list-read-skew",
        ListReadSkewTarget,
        ("CAT-LIST-CONTIGUOUS", "CAT-LIST-LATEST"),
        "MUST",
        ("concurrency", "listing", "read-skew"),
    ),
    _v(
        "cr12-cat-state-item-size",
        StateItemSizeTarget,
        ("CAT-LIMIT-DECLARED",),
        "MUST",
        ("limits", "sizes", "unpublished-runs", "inline-commits"),
    ),
    _v(
        "cr12-cat-bound-size-check",
        BoundSizeCheckTarget,
        ("CAT-RATIFIED-CONTENT-BOUND",),
        "MAY",
        ("tampering", "content-binding", "sizes"),
    ),
    _v(
        "cr12-cat-drop-detach-commit",
        DropDetachCommitTarget,
        ("CAT-DROP",),
        "MAY",
        ("drop", "publication", "maintenance"),
    ),
    _v(
        "cr12-cat-policy-restart-keys",
        PolicyRestartKeysTarget,
        ("CAT-MAINTENANCE-POLICY",),
        "MAY",
        ("restart", "maintenance", "encodings"),
    ),
    _v(
        "cr12-cat-single-state-file",
        SingleStateFileTarget,
        ("CAT-RATIFY-DURABLE",),
        "MUST",
        ("restart", "concurrency", "several-tables"),
    ),
    _v(
        "cr12-cat-register-name-race",
        RegisterNameRaceTarget,
        ("CAT-RESOLVE-LOCATION",),
        "MUST",
        ("concurrency", "names", "creation"),
    ),
]
