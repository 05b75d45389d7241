"""Round 9 (writer A): faulty catalog variants of the durable clean-room target.

Each target swaps exactly the catalog side of ``DurableTarget`` for a faulty subclass. Written from the
RFC, the public contract, docs/certify.md and the clean-room baselines only.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import PurePosixPath
from typing import Any, ClassVar
from urllib.parse import quote, urljoin

from conformance.contract.delta import (
    CatalogLimits,
    CommitRejected,
    InvalidRequest,
    RatifiedCommit,
    Storage,
    TableInfo,
    TableNotFound,
)
from tests.cleanroom.catalog import CleanCatalog, TableState
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget
from tests.cleanroom_r3.variant import Variant

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_STAGED_FILE = re.compile(rf"(\d{{20}})\.{_UUID}\.json")


# ================================================================ correct helpers (not variants)


class SequentialLocationCatalog(DurableCatalog):
    """Correct helper (not a variant): table locations are ``<warehouse>/tables/t<n>`` with ``n`` one
    more than the number of tables the catalog knows (persisted ones included), so they stay unique
    across restarts."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Any = None) -> None:
        self._seq_lock = threading.Lock()
        self._next = 1
        super().__init__(warehouse_uri, storage, state_dir)
        self._next = len(self._by_id) + 1

    def new_location(self, table_id: str) -> str:
        with self._seq_lock:
            n = self._next
            self._next += 1
        return f"{self.warehouse}/tables/t{n}"


class SequentialLocationTarget(DurableTarget):
    """Correct helper: ``SequentialLocationCatalog``."""

    catalog_cls: ClassVar[type[CleanCatalog]] = SequentialLocationCatalog


class CappedCatalog(DurableCatalog):
    """Correct helper (not a variant): at most ``CAP`` ratified, unpublished commits per table, counted
    as ``latest - published`` (the publication watermark only ever moves up); one more is refused."""

    CAP: ClassVar[int] = 10

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if t.latest - t.published >= self.CAP:
            raise CommitRejected(f"table holds {self.CAP} unpublished commits; publish first")
        super().store(t, commit)


class CappedTarget(DurableTarget):
    """Correct helper: ``CappedCatalog`` with its cap declared."""

    catalog_cls: ClassVar[type[CleanCatalog]] = CappedCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(unpublished=CappedCatalog.CAP)


class InlineLimitCatalog(DurableCatalog):
    """Correct helper (not a variant): inline commits of at most ``INLINE_BYTES`` bytes; a larger one is
    refused cleanly before anything is stored."""

    INLINE_BYTES: ClassVar[int] = 1024

    def inline_size(self, content: bytes) -> int:
        return len(content)

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        content = kwargs.get("inline_content")
        if isinstance(content, bytes | bytearray) and self.inline_size(bytes(content)) > self.INLINE_BYTES:
            raise CommitRejected(f"inline commit larger than {self.INLINE_BYTES} bytes")
        super().commit(table_id, version, **kwargs)


class InlineLimitTarget(DurableTarget):
    """Correct helper: ``InlineLimitCatalog`` with its limit declared."""

    catalog_cls: ClassVar[type[CleanCatalog]] = InlineLimitCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(inline_bytes=InlineLimitCatalog.INLINE_BYTES)


class DroppingCatalog(DurableCatalog):
    """Correct helper (not a variant): ``drop_table`` removes exactly the named table's name (a durable
    soft drop: the table's record loses its name and is persisted), nothing else."""

    def find_for_drop(self, name: str) -> str | None:
        """The id of the table ``name`` designates (caller holds ``self._lock``)."""
        return self._by_name.get(name)

    def drop_table(self, name: str) -> None:
        with self._lock:
            table_id = self.find_for_drop(name) if isinstance(name, str) else None
            t = self._by_id.get(table_id) if table_id is not None else None
            if t is None or t.name is None:
                raise TableNotFound(f"no table {name!r}")
            del self._by_name[t.name]
            t.name = None
        with t.lock:
            self.persist(t)


class DroppingTarget(DurableTarget):
    """Correct helper: ``DroppingCatalog``."""

    catalog_cls: ClassVar[type[CleanCatalog]] = DroppingCatalog


# ================================================================ catalog faults


class InlineCanonicalJsonCatalog(DurableCatalog):
    """cr9-cat-inline-canonical-json. CAT-RETAIN-UNPUBLISHED (MUST); RFC "Terminology - Commits"
    (ratified commit: stored, unchanged, until published; inline commit) and "Commit Protocol" option 2.
    Bug: the catalog validates an inline commit by parsing every line as a JSON object, and stores what it
    validated: each action re-serialised compactly (``json.dumps(obj, separators=(",", ":"),
    ensure_ascii=False)``), one per line, with a final newline. Every commit of a compact writer (the
    clean-room client and most Delta writers write exactly that) comes back byte for byte; a commit with
    spaces after separators (Python's default ``json.dumps``), with escaped characters (``\\/``,
    ``\\u00e9``), with other number spellings or without a final newline is served, and so published,
    as different bytes. A shallow suite round-trips only the bytes its own compact writer produces."""

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        content = kwargs.get("inline_content")
        if isinstance(content, bytes | bytearray) and content:
            try:
                lines = [json.loads(line) for line in bytes(content).decode().splitlines() if line.strip()]
            except ValueError as e:
                raise InvalidRequest(f"inline commit is not newline-delimited JSON: {e}") from e
            kwargs["inline_content"] = b"".join(
                json.dumps(a, separators=(",", ":"), ensure_ascii=False).encode() + b"\n" for a in lines
            )
        super().commit(table_id, version, **kwargs)


class InlineCanonicalJsonTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = InlineCanonicalJsonCatalog


class StagedLocationPrefixCatalog(SequentialLocationCatalog):
    """cr9-cat-staged-location-prefix. CAT-STAGED-IN-TABLE (MUST); RFC "Terminology - Commits" (staged
    commit) and "Commit Protocol" option 1: a staged proposal is ratified only when its file is directly
    in the table's own ``_delta_log/_staged_commits/``. Bug: the check is written as two conditions, "the
    file is under the table's location" (``staged_uri.startswith(location)``, with no separator) and "its
    parent folders are ``_delta_log/_staged_commits`` and its name is ``<20 digits>.<uuid>.json`` for the
    version". With the catalog's sequential locations (``.../tables/t1``, ``t2``...) no location is a
    string prefix of another until the tenth table: then table ``t1`` ratifies staged files of ``t10`` to
    ``t19`` (and files in sub-folders below its location). ``..`` is refused. A shallow suite proposes
    another table's staged file with two or three tables, or tables whose locations differ early."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        path = PurePosixPath(staged_uri)
        m = _STAGED_FILE.fullmatch(path.name)
        if (
            not staged_uri.startswith(t.location)
            or ".." in path.parts
            or path.parent.name != "_staged_commits"
            or path.parent.parent.name != "_delta_log"
            or m is None
        ):
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {path.name} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class StagedLocationPrefixTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedLocationPrefixCatalog


class ExpireByIctCatalog(DurableCatalog):
    """cr9-cat-expire-by-ict. CAT-RETAIN-UNPUBLISHED (MUST); RFC "Terminology - Commits" (the catalog
    stores a ratified commit until it is published) and "Commit Protocol". Bug: to reclaim the rows of
    abandoned tables, the catalog expires ratified, unpublished commits older than a retention of 7 days,
    and dates a commit by the in-commit timestamp its proposal carried (the only time it records). Every
    ratification sweeps the table. A writer stamping the wall clock is never hit while a shallow suite
    runs; a commit stamped in the past (a skewed peer, a replayed or fixture history, fixed timestamps such
    as 2023's ``1_700_000_000_000``) disappears from the catalog at the next ratification, or at once,
    though nothing published it."""

    RETENTION_MS: ClassVar[int] = 7 * 24 * 3600 * 1000

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        horizon = time.time_ns() // 1_000_000 - self.RETENTION_MS
        t.stored[commit.version] = commit
        t.latest = commit.version
        for v, c in list(t.stored.items()):
            if c.in_commit_timestamp is not None and c.in_commit_timestamp < horizon:
                del t.stored[v]
        self.persist_ratified(t, commit)


class ExpireByIctTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ExpireByIctCatalog


class RestartStagedUrljoinCatalog(DurableCatalog):
    """cr9-cat-restart-staged-urljoin. CAT-RATIFY-DURABLE (MUST); RFC "Commit Protocol" and "Terminology
    - Commits" (ratified commits are stored and served unchanged until published, across restarts). Bug:
    to keep tables relocatable the state file stores a staged commit's URI relative to the table's
    location (``_delta_log/_staged_commits/<file>``) and rebuilds it on load with ``urljoin(location,
    rel)``. The location has no trailing slash, so ``urljoin`` replaces its last segment (``file:///w/t``
    + rel gives ``file:///w/_delta_log/...``), and for schemes it does not know (``s3``) it returns the
    relative path alone. Before a restart every answer is right; after one every stored staged commit is
    served with a URI where nothing is. A shallow restart check compares the latest version, or uses inline
    commits, or publishes before restarting."""

    def encode_table(self, t: TableState) -> dict[str, Any]:
        doc = super().encode_table(t)
        prefix = f"{t.location}/"
        for c in doc["stored"]:
            uri = c["staged_uri"]
            if isinstance(uri, str) and uri.startswith(prefix):
                c["staged_uri"] = None
                c["staged_rel"] = uri[len(prefix) :]
        return doc

    def decode_table(self, doc: dict[str, Any]) -> TableState:
        t = super().decode_table(doc)
        for c in doc["stored"]:
            rel = c.get("staged_rel")
            if rel is not None:
                old = t.stored[int(c["version"])]
                t.stored[old.version] = RatifiedCommit(
                    old.version, urljoin(t.location, rel), old.inline_content, old.in_commit_timestamp
                )
        return t


class RestartStagedUrljoinTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = RestartStagedUrljoinCatalog


class StateDocTailCatalog(DurableCatalog):
    """cr9-cat-state-doc-tail. CAT-RATIFY-DURABLE (MUST); RFC "Commit Protocol" and "Terminology -
    Commits" (every ratified commit is stored, and served unchanged, until it is published; it survives a
    restart). Bug: a table's state document must stay under the document store's size limit, so it keeps
    the newest ``MAX_ROWS`` (50) stored commits only, "older ones are published by then". In memory the
    catalog holds everything, so every answer is right until a restart; after one, a table with more than
    50 unpublished commits has lost its oldest ones (the listing starts at latest - 49, the run is no
    longer anchored on what is published). A shallow restart check restarts a table with a few commits."""

    MAX_ROWS: ClassVar[int] = 50

    def encode_table(self, t: TableState) -> dict[str, Any]:
        doc = super().encode_table(t)
        doc["stored"] = doc["stored"][-self.MAX_ROWS :]
        return doc


class StateDocTailTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StateDocTailCatalog


class InlineLimitCharsCatalog(InlineLimitCatalog):
    """cr9-cat-inline-limit-chars. CAT-LIMIT-DECLARED (MUST); RFC "Catalog Responsibilities" and
    docs/certify.md "Limits" (``inline_bytes`` is the largest inline commit accepted, in bytes; one past it
    is refused). Bug: the catalog decodes an inline commit to text to validate it and measures the decoded
    string (``len(content.decode())``), so it counts characters: a commit with non-ASCII text (a value,
    a path, a user name in ``commitInfo``) is accepted past the declared 1024 bytes, up to four times as
    many. A shallow suite probes the limit with ASCII payloads, where characters and bytes agree."""

    def inline_size(self, content: bytes) -> int:
        return len(content.decode("utf-8", errors="replace"))


class InlineLimitCharsTarget(InlineLimitTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = InlineLimitCharsCatalog


class MarkRegressesWatermarkCatalog(CappedCatalog):
    """cr9-cat-mark-regresses-watermark. CAT-LIMIT-DECLARED (MUST); RFC "Catalog Responsibilities" /
    docs/certify.md "Limits" (the declared cap of unpublished commits is the real one) and "Publishing
    Commits". Bug: ``mark_published(b)`` stores ``b`` as the table's publication watermark as it comes
    (``UPDATE ... SET published = :b``, no ``GREATEST``). A late or repeated mark (a publisher's retry
    after a lost answer, two clients publishing, the piggy-backed mark of a slow writer) moves the
    watermark back, and the cap, counted as ``latest - published``, then counts published commits as
    unpublished: proposals are refused long before the declared 10 unpublished commits. Marks arrive in
    order in a shallow suite."""

    def forget_published(self, t: TableState, version: int) -> None:
        for v in [v for v in t.stored if v <= version]:
            del t.stored[v]
        t.published = version
        self.persist(t)


class MarkRegressesWatermarkTarget(CappedTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = MarkRegressesWatermarkCatalog


class DropCasefoldCatalog(DroppingCatalog):
    """cr9-cat-drop-casefold. CAT-DROP (MAY); RFC "Creating and Dropping Catalog-managed Tables": a
    catalog that drops tables removes that table's name and leaves other tables as they were. Bug: names
    are registered and resolved exactly as given, but ``drop_table`` treats its argument as a SQL
    identifier and looks it up case-insensitively, taking the first registered name that matches: with
    tables ``orders`` and ``Orders``, dropping ``Orders`` drops ``orders``, and ``Orders`` stays. A
    shallow suite drops a table whose name has no case twin."""

    def find_for_drop(self, name: str) -> str | None:
        for known, table_id in self._by_name.items():
            if known.lower() == name.lower():
                return table_id
        return None


class DropCasefoldTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = DropCasefoldCatalog


class ResolveQuotedLocationCatalog(DurableCatalog):
    """cr9-cat-resolve-quoted-location. CAT-RESOLVE-LOCATION (MUST); RFC "Table Discovery" and "Reader
    Requirements" (resolving a name returns the table's storage location). Bug: name resolution builds
    its answer for the REST layer and URI-encodes the location (``quote(location, safe=":/")``), while
    staging and registration hand out the location as it is. For a warehouse whose path is plain ASCII
    without spaces the two are the same; under a warehouse path with a space, ``%``, ``#`` or non-ASCII
    letters (a user's home folder, a bucket prefix such as ``team data/``) resolution returns a location
    where nothing of the table is, and clients read and write elsewhere."""

    def resolve(self, name: str) -> TableInfo:
        info = super().resolve(name)
        return TableInfo(info.table_id, info.name, quote(info.location, safe=":/"), info.catalog_managed)


class ResolveQuotedLocationTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = ResolveQuotedLocationCatalog


class StagingPoolRecycleCatalog(DurableCatalog):
    """cr9-cat-staging-pool-recycle. CAT-STAGING-UNIQUE (SHOULD); RFC "Creating and Dropping
    Catalog-managed Tables" (phase 1: each creation gets its own unique staging location). Bug: the
    catalog hands out staging locations from a pool (it provisions folders and their credentials ahead of
    time) and, to tidy up, a staging table whose registration is refused (its name is taken) is discarded
    and its location goes back to the pool: the next creation gets the same location, where the refused
    creation's ``_delta_log/00000000000000000000.json`` still lies (the new client's version 0 collides
    with it, or the new table starts from another table's files). A shallow suite compares the locations
    of a few successful creations, which are all distinct."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Any = None) -> None:
        self._pool: list[str] = []
        super().__init__(warehouse_uri, storage, state_dir)

    def new_location(self, table_id: str) -> str:
        with self._lock:
            if self._pool:
                return self._pool.pop()
        return super().new_location(table_id)

    def register_table(self, name: str, table_id: str) -> TableInfo:
        try:
            return super().register_table(name, table_id)
        except InvalidRequest:
            with self._lock:
                taken = isinstance(name, str) and name in self._by_name
                t = self._by_id.get(table_id) if isinstance(table_id, str) else None
                if taken and t is not None and t.name is None:
                    del self._by_id[table_id]  # discard the refused creation, recycle its folder
                    self._pool.append(t.location)
            if taken and t is not None and self.state_dir is not None:
                (self.state_dir / f"{table_id}.json").unlink(missing_ok=True)
            raise


class StagingPoolRecycleTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StagingPoolRecycleCatalog


# ================================================================ registry


def _v(
    name: str,
    cls: type[DurableTarget],
    rules: tuple[str, ...],
    level: str,
    dimensions: tuple[str, ...],
) -> Variant:
    return Variant(
        name,
        f"tests.cleanroom_r9.variants:{cls.__name__}",
        "catalog",
        "delta-cm-catalog",
        rules,
        level,
        dimensions,
        (cls.catalog_cls.__doc__ or "").strip(),
    )


VARIANTS: list[Variant] = [
    _v(
        "cr9-cat-inline-canonical-json",
        InlineCanonicalJsonTarget,
        ("CAT-RETAIN-UNPUBLISHED",),
        "MUST",
        ("inline-commits", "encodings"),
    ),
    _v(
        "cr9-cat-staged-location-prefix",
        StagedLocationPrefixTarget,
        ("CAT-STAGED-IN-TABLE",),
        "MUST",
        ("staged-commits", "several-tables", "boundaries"),
    ),
    _v(
        "cr9-cat-expire-by-ict",
        ExpireByIctTarget,
        ("CAT-RETAIN-UNPUBLISHED",),
        "MUST",
        ("time", "timestamps", "unpublished-runs"),
    ),
    _v(
        "cr9-cat-restart-staged-urljoin",
        RestartStagedUrljoinTarget,
        ("CAT-RATIFY-DURABLE",),
        "MUST",
        ("restarts", "staged-commits", "encodings"),
    ),
    _v(
        "cr9-cat-state-doc-tail",
        StateDocTailTarget,
        ("CAT-RATIFY-DURABLE",),
        "MUST",
        ("restarts", "long-history", "unpublished-runs"),
    ),
    _v(
        "cr9-cat-inline-limit-chars",
        InlineLimitCharsTarget,
        ("CAT-LIMIT-DECLARED",),
        "MUST",
        ("limits", "sizes", "encodings"),
    ),
    _v(
        "cr9-cat-mark-regresses-watermark",
        MarkRegressesWatermarkTarget,
        ("CAT-LIMIT-DECLARED",),
        "MUST",
        ("limits", "publication", "retries", "ordering"),
    ),
    _v(
        "cr9-cat-drop-casefold",
        DropCasefoldTarget,
        ("CAT-DROP",),
        "MAY",
        ("drop", "names", "several-tables"),
    ),
    _v(
        "cr9-cat-resolve-quoted-location",
        ResolveQuotedLocationTarget,
        ("CAT-RESOLVE-LOCATION",),
        "MUST",
        ("names", "encodings", "locations"),
    ),
    _v(
        "cr9-cat-staging-pool-recycle",
        StagingPoolRecycleTarget,
        ("CAT-STAGING-UNIQUE",),
        "SHOULD",
        ("table-creation", "locations", "refusals"),
    ),
]
