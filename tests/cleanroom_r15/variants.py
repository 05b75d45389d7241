"""Round 15: faulty variants of the durable clean-room catalog (profile ``delta-cm-catalog``).

Each target swaps exactly one side of ``DurableTarget`` for a faulty subclass. Written from the RFC, the
public contract, docs/certify.md and the clean-room baselines only.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from typing import Any, ClassVar

from conformance.contract.delta import (
    CatalogLimits,
    InvalidRequest,
    RatifiedCommit,
    TableInfo,
    TableNotFound,
)
from tests.cleanroom.catalog import CleanCatalog, TableState
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget
from tests.cleanroom_r3.variant import Variant, variant_of

# ================================================================ correct helpers


class UnicodeNamesCatalog(DurableCatalog):
    """Correct helper (not a variant): the durable catalog accepting table names of Unicode word
    characters (``\\w``, any script), at most ``NAME_LENGTH`` characters, a limit it declares."""

    NAME_LENGTH: ClassVar[int] = 64

    def name_length(self, name: str) -> int:
        """How long a name is, in characters (the declared unit)."""
        return len(name)

    def name_ok(self, name: object) -> bool:
        return (
            isinstance(name, str)
            and re.fullmatch(r"\w+", name) is not None
            and 1 <= self.name_length(name) <= self.NAME_LENGTH
        )

    def register_table(self, name: str, table_id: str) -> TableInfo:
        if not self.name_ok(name):
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


class UnicodeNamesTarget(DurableTarget):
    """Correct helper: ``UnicodeNamesCatalog`` with its name limit declared."""

    catalog_cls: ClassVar[type[CleanCatalog]] = UnicodeNamesCatalog

    def catalog_limits(self) -> CatalogLimits:
        return CatalogLimits(name_length=UnicodeNamesCatalog.NAME_LENGTH)


class DroppingDurableCatalog(DurableCatalog):
    """Correct helper (not a variant): the durable catalog with ``drop_table``. A drop forgets the
    table's catalog record (its name and its state file); its files stay in storage (a soft drop)."""

    def drop_table(self, name: str) -> None:
        with self._lock:
            table_id = self._by_name.pop(name, None) if isinstance(name, str) else None
            t = self._by_id.pop(table_id, None) if table_id is not None else None
        if t is None:
            raise TableNotFound(f"no table {name!r}")
        if self.state_dir is not None:
            (self.state_dir / f"{t.table_id}.json").unlink(missing_ok=True)


class DroppingDurableTarget(DurableTarget):
    """Correct helper: ``DroppingDurableCatalog``."""

    catalog_cls: ClassVar[type[CleanCatalog]] = DroppingDurableCatalog


# ================================================================ catalog faults


class NameLimitUtf16Catalog(UnicodeNamesCatalog):
    """cr15-cat-name-limit-utf16-units. CAT-LIMIT-DECLARED (MUST); RFC "Catalog Responsibilities" and
    docs/certify.md "Limits" (a declared limit is the real one: a name of the declared length in
    characters is accepted, whatever the script). Bug: the catalog's name column is sized in UTF-16 code
    units (an NVARCHAR(64) of a JVM/SQL Server stack), and the check mirrors it: a name's length is
    ``len(name.encode("utf-16-le")) // 2``. Every character of the Basic Multilingual Plane counts one,
    so ASCII, ``é`` and ``表`` names of 64 characters pass; a letter outside the BMP (``𝔘``, CJK
    extension B ``𠀀``) counts two, and a 64-letter name of it is refused (one of 32 letters already is
    at the limit). A shallow suite tries the limit in ASCII, or with the BMP letters it has to hand."""

    def name_length(self, name: str) -> int:
        return len(name.encode("utf-16-le")) // 2


class NameLimitUtf16Target(UnicodeNamesTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = NameLimitUtf16Catalog


class StagedUuidColumnCatalog(DurableCatalog):
    """cr15-cat-staged-uuid-column-lowercase. CAT-RETAIN-UNPUBLISHED (MUST); RFC "Terminology - Commits"
    (a ratified commit, for a staged one its location, is stored and served unchanged until published)
    and "Delta Log Entries". Bug: the catalog does not store a staged commit's URI; it stores the UUID of
    its file name in a UUID-typed column (as UC-style schemas do) and rebuilds the URI from the table's
    location, the version and that UUID when it lists the commit. A UUID column returns the canonical,
    lower-case text, so a staged file whose name carries an upper-case UUID (Windows and .NET writers,
    ``uuid.uuid4().hex.upper()``) is served under a lower-case name that does not exist in a
    case-sensitive store: readers cannot read the ratified commit. A shallow suite stages only with
    ``str(uuid.uuid4())``, lower case, and the rebuilt URI is the one proposed."""

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if commit.staged_uri is not None:
            file_name = commit.staged_uri.rsplit("/", 1)[-1]
            file_uuid = uuid.UUID(file_name.split(".")[1])  # the column's type
            rebuilt = f"{t.location}/_delta_log/_staged_commits/{commit.version:020d}.{file_uuid}.json"
            commit = RatifiedCommit(commit.version, rebuilt, None, commit.in_commit_timestamp)
        super().store(t, commit)


class StagedUuidColumnTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedUuidColumnCatalog


class InlineNfcTextCatalog(DurableCatalog):
    """cr15-cat-inline-nfc-text. CAT-RETAIN-UNPUBLISHED (MUST); RFC "Terminology - Commits" (inline
    commit; a ratified commit is stored, unchanged, until it is published) and "Commit Protocol" option
    2. Bug: the catalog keeps an inline commit as text and, like every string it accepts from clients,
    normalises it to Unicode NFC on the way in (to keep look-alike identifiers apart). A commit holding
    decomposed text (``cafe`` + U+0301 in a value or in an added file's path, as macOS file names are) is
    served precomposed: other bytes than ratified, and an add naming a file that does not exist. ASCII
    commits, escaped JSON and precomposed UTF-8 round-trip, which is all a shallow suite sends."""

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        if commit.inline_content is not None:
            text = unicodedata.normalize("NFC", commit.inline_content.decode("utf-8"))
            commit = RatifiedCommit(commit.version, None, text.encode("utf-8"), commit.in_commit_timestamp)
        super().store(t, commit)


class InlineNfcTextTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = InlineNfcTextCatalog


class IctBumpedMonotonicCatalog(DurableCatalog):
    """cr15-cat-ict-bumped-monotonic. CAT-RETAIN-UNPUBLISHED (MUST); RFC "Terminology - Commits" (a
    ratified commit stays stored, unchanged, and served until it is published) and docs/certify.md
    (a served in-commit timestamp is the one proposed). Bug: to "help" time travel, the catalog enforces
    PROTOCOL.md's monotonic in-commit timestamps itself: a proposal whose timestamp is not above the one
    it holds for the previous version is ratified (the catalog is not the writer's judge) but recorded
    with the previous timestamp + 1 ms. The staged file or inline bytes still say the proposed time, and
    the catalog serves another one: readers resolving time travel by the catalog's timestamps disagree
    with the commit itself. A shallow suite proposes rising timestamps (``now``, a counter) only."""

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        prev = t.stored.get(commit.version - 1)
        ict = commit.in_commit_timestamp
        prev_ict = prev.in_commit_timestamp if prev is not None else None
        if prev_ict is not None and ict is not None and ict <= prev_ict:
            commit = RatifiedCommit(commit.version, commit.staged_uri, commit.inline_content, prev_ict + 1)
        super().store(t, commit)


class IctBumpedMonotonicTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = IctBumpedMonotonicCatalog


class RestartInlineEmptyUriCatalog(DurableCatalog):
    """cr15-cat-restart-inline-empty-staged-uri. CAT-RATIFY-DURABLE (MUST); RFC "Commit Protocol" and
    "Terminology - Commits" (ratified commits survive a restart, each served unchanged) and the contract
    (a listed commit carries exactly one of ``staged_uri`` and ``inline_content``). Bug: the durable
    record's ``staged_uri`` column is NOT NULL with an empty default, so an inline commit is written with
    ``staged_uri = ""``; in memory the commit keeps ``None``, so every answer is right until the catalog
    restarts. After a restart each stored inline commit is served with ``staged_uri=""`` *and* its
    content: a client testing ``staged_uri is not None`` reads the table's own folder as a commit file.
    A shallow restart test uses staged commits, or compares only the inline bytes."""

    def encode_table(self, t: TableState) -> dict[str, Any]:
        doc = super().encode_table(t)
        for c in doc["stored"]:
            c["staged_uri"] = c["staged_uri"] or ""
        return doc


class RestartInlineEmptyUriTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = RestartInlineEmptyUriCatalog


class StagedUuidParsedCatalog(DurableCatalog):
    """cr15-cat-staged-uuid-parsed-lenient. CAT-STAGED-NAME (MUST); RFC "Terminology - Commits" (staged
    commit) and "Delta Log Entries" (a staged commit is ``<20-digit version>.<uuid>.json``). Bug: the
    catalog checks the folder and the 20-digit version as it should, but validates the UUID part by
    parsing it with ``uuid.UUID(part)`` ("don't hand-roll UUID regexes"). That parser accepts far more
    than the canonical 8-4-4-4-12 form: 32 hex digits without dashes, braces (``{...}``) and a
    ``urn:uuid:`` prefix, with dashes anywhere. Such files are ratified under names no reader or
    cleanup that matches ``<v>.<uuid>.json`` takes for staged commits. A shallow suite's bad names
    (``00000000000000000003.json``, ``...3.not-a-uuid.json``) fail the parser too and are refused."""

    def check_staged_uri(self, t: TableState, version: int, staged_uri: str) -> None:
        prefix = f"{t.location}/_delta_log/_staged_commits/"
        rest = staged_uri[len(prefix) :] if staged_uri.startswith(prefix) else ""
        m = re.fullmatch(r"([0-9]{20})\.(.+)\.json", rest)
        if m is None or "/" in rest:
            raise InvalidRequest(f"not a staged commit of this table: {staged_uri!r}")
        try:
            uuid.UUID(m.group(2))
        except ValueError as exc:
            raise InvalidRequest(f"no UUID in {rest!r}") from exc
        if int(m.group(1)) != version:
            raise InvalidRequest(f"staged file {rest} is not for version {version}")
        if not self.storage.exists(staged_uri):
            raise InvalidRequest(f"staged file {staged_uri!r} does not exist")


class StagedUuidParsedTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = StagedUuidParsedCatalog


class LocationFromTableCountCatalog(DroppingDurableCatalog):
    """cr15-cat-location-from-table-count. CAT-STAGING-UNIQUE (SHOULD); RFC "Creating and Dropping
    Catalog-managed Tables" (phase 1: each creation gets its own unique storage location). Bug: staging
    locations are numbered from the number of table records the catalog holds (``t{len(tables)+1}``),
    which is persisted state, so they stay unique across restarts. But a drop forgets the dropped
    table's record (its files stay: a soft drop), so the count goes down, and the next creation is
    handed the location of the newest table record (a registered table's, with its ``_delta_log``, or a
    creation still in flight). A shallow suite creates
    tables, and restarts, but never creates one after a drop."""

    def new_location(self, table_id: str) -> str:
        return f"{self.warehouse}/cr-tables/t{len(self._by_id) + 1:06d}"


class LocationFromTableCountTarget(DroppingDurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = LocationFromTableCountCatalog


class MarkZeroFalsyCatalog(DurableCatalog):
    """cr15-cat-mark-zero-falsy. CAT-FORGET-PUBLISHED-ONLY (MUST); RFC "Publishing Commits" and
    "Terminology - Commits" (after publication up to b the catalog may drop commits at or below b and
    keeps serving every commit above b). Bug: a publication mark is defaulted with ``or`` ("no mark
    given: the writer is caught up"), ``upto = version or latest``, in ``mark_published`` and for the
    mark a proposal carries. A mark of 0, "only version 0 is published" (what a UC-style writer reports
    with its first proposals, ``latest_backfilled_version=0``), counts as a mark at the latest version:
    every ratified, unpublished commit is dropped. Marks of 1 and above are right, and a shallow suite
    only marks after it has published something."""

    def forget_published(self, t: TableState, version: int) -> None:
        super().forget_published(t, version or t.latest)


class MarkZeroFalsyTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = MarkZeroFalsyCatalog


VARIANTS: list[Variant] = [
    variant_of(
        "cr15-cat-name-limit-utf16-units",
        NameLimitUtf16Target,
        "catalog",
        "delta-cm-catalog",
        ("CAT-LIMIT-DECLARED",),
        "MUST",
        ("limits", "names-of-any-script", "astral-characters"),
    ),
    variant_of(
        "cr15-cat-staged-uuid-column-lowercase",
        StagedUuidColumnTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RETAIN-UNPUBLISHED",),
        "MUST",
        ("encodings", "staged-names", "upper-case-uuids"),
    ),
    variant_of(
        "cr15-cat-inline-nfc-text",
        InlineNfcTextTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RETAIN-UNPUBLISHED",),
        "MUST",
        ("encodings", "inline-commits", "unicode-normalisation"),
    ),
    variant_of(
        "cr15-cat-ict-bumped-monotonic",
        IctBumpedMonotonicTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RETAIN-UNPUBLISHED",),
        "MUST",
        ("time", "in-commit-timestamps", "non-rising-proposals"),
    ),
    variant_of(
        "cr15-cat-restart-inline-empty-staged-uri",
        RestartInlineEmptyUriTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RATIFY-DURABLE",),
        "MUST",
        ("restarts", "inline-commits", "null-vs-empty"),
    ),
    variant_of(
        "cr15-cat-staged-uuid-parsed-lenient",
        StagedUuidParsedTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-STAGED-NAME",),
        "MUST",
        ("staged-names", "lenient-parsers"),
    ),
    variant_of(
        "cr15-cat-location-from-table-count",
        LocationFromTableCountTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-STAGING-UNIQUE",),
        "SHOULD",
        ("drops", "creation-after-drop", "several-tables"),
    ),
    variant_of(
        "cr15-cat-mark-zero-falsy",
        MarkZeroFalsyTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-FORGET-PUBLISHED-ONLY",),
        "MUST",
        ("publication-marks", "zero-boundary", "piggy-backed-marks"),
    ),
]
