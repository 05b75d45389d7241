"""Scenario builders: the suite writes table states directly, as a trusted writer would.

Reader checks need states no correct writer leaves behind on purpose (a stale
published file beside the catalog's commit, files above the latest version,
rejected and partial staged files), so the suite writes them itself and seeds
the reference catalog with ``import_table``.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from conformance.contract.delta import Catalog, StagingTable, Storage, TableInfo
from conformance.report.outcomes import PremiseBroken
from reference_impl.delta import actions as A
from reference_impl.delta import log_paths as P
from reference_impl.delta.data_files import read_data_file, write_data_file
from reference_impl.storage.local import uri_to_path

BASE_ICT = 1_600_000_000_000  # 2020-09-13: far from "now", so file times never agree by chance
ICT_STEP = 60_000


# Unity Catalog clients (Delta Kernel's among them) read a table's id from this table property.
UC_TABLE_ID = "io.unitycatalog.tableId"

_names = random.Random(0)


def reseed(seed: int) -> None:
    """Called before every check with the check's seed, so that the suite's own names and ids
    (staged files, txnIds, table folders) are the same in every run with the run's seed."""
    _names.seed(seed)


def new_uuid() -> str:
    return str(uuid.UUID(int=_names.getrandbits(128), version=4))


# Characters JSON keeps raw inside a string (RFC 8259 escapes only those below U+0020) that Python's
# str.splitlines(), unlike a newline-delimited JSON reader, takes for line breaks: NEL, LINE SEPARATOR,
# PARAGRAPH SEPARATOR. A reader or a publisher that splits a commit with it cuts an action in two.
UNICODE_BREAKS = "next\u0085line\u2028separator\u2029paragraph"

# Values a writer under test appends where the check judges the bytes of its commits: a writer that
# keeps string statistics (minValues/maxValues, as engines do) puts them in the commit's JSON, and
# ASCII data never shows how it encodes other text (a byte order mark, Latin-1, Java's modified UTF-8,
# a normalisation). One of each: two-byte accents, three-byte CJK, four-byte (astral) letters,
# right-to-left script, a combining mark, and one text in its two normalisation forms (NFC, NFD). Short:
# the statistics of each file hold two of them.
NON_ASCII_VALUES = (
    "caf\u00e9",  # precomposed (NFC) e acute
    "\u6771\u4eac",  # CJK
    "\U00010437\U0001d538",  # DESERET SMALL LETTER YEE, MATHEMATICAL DOUBLE-STRUCK A: UTF-16 surrogate pairs
    "\u05e9\u05dc\u05d5\u05dd",  # Hebrew, right to left
    "cafe\u0301",  # the first value decomposed (NFD): the same text, other code points
    "n\u0303o\u0308",  # combining tilde and diaeresis
)


def non_ascii_value(i: int) -> str:
    """The ``i``-th of ``NON_ASCII_VALUES``, in turn."""
    return NON_ASCII_VALUES[i % len(NON_ASCII_VALUES)]


def raw_utf8(actions: list[dict[str, Any]], separators: tuple[str, str] = (",", ":")) -> bytes:
    """The actions, the first one's commitInfo carrying ``UNICODE_BREAKS`` in ``userMetadata``, one
    line each in raw UTF-8 (as Spark and Kernel write text), with a final newline."""
    first = actions[0]
    if "commitInfo" in first:
        actions = [{"commitInfo": {**first["commitInfo"], "userMetadata": UNICODE_BREAKS}}, *actions[1:]]
    return b"".join(json.dumps(a, separators=separators, ensure_ascii=False).encode() + b"\n" for a in actions)


def when(ms: object) -> str:
    """A timestamp in epoch milliseconds for a message: the UTC time a reader can place, then the
    number the product wrote (which the reproducer's transcript holds too)."""
    if not isinstance(ms, int) or isinstance(ms, bool):
        return repr(ms)
    try:
        text = datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
    return f"{text} UTC ({ms})"


def ict_of(version: int) -> int:
    """The in-commit timestamp the builders give a version."""
    return BASE_ICT + version * ICT_STEP


def ict_ms_of(version: int) -> int:
    """``ict_of`` plus a millisecond part that differs from version to version, for the catalog's
    histories: a store that keeps times in whole seconds, or as floating-point seconds, serves another
    value for some of them (a served in-commit timestamp is the one proposed, docs/certify.md)."""
    return ict_of(version) + (version * 389 + 17) % 1000


def engine_timestamp_of(version: int) -> int:
    """The ``commitInfo.timestamp`` the builders give a version: running backwards and far from
    every in-commit timestamp, so a reader that resolves time by it (not by the ICT) is seen."""
    return BASE_ICT + (1000 - version) * ICT_STEP + 7


@contextmanager
def premise(what: str) -> Iterator[None]:
    """A set-up step the check relies on but does not judge.

    When the target misbehaves inside it, the check's own rule was never put to the test: the
    failure is reported as "premise broken: <what>" and charged to no requirement of the check
    (conformance/plugin/outcomes.py; docs/results.md "Who is wrong"). Whether the exception is
    about the product at all is decided from its cause, as for any other exception.
    """
    try:
        yield
    except PremiseBroken:
        raise
    except Exception as e:
        raise PremiseBroken(f"{what}: {type(e).__name__}: {e}") from e


def version0(table_id: str, properties: dict[str, str] | None = None) -> bytes:
    """The creating commit of a catalog-managed table (RFC "Catalog-managed Table Enablement"),
    with ``properties`` added to its configuration."""
    return A.encode_commit(
        [
            A.commit_info_action(ict_of(0), new_uuid(), "CREATE TABLE"),
            A.protocol_action(),
            A.metadata_action(table_id, ict_of(0), {**A.default_configuration(), **(properties or {})}),
        ]
    )


@dataclass
class LogBuilder:
    """Writes data files and commit files of one table."""

    storage: Storage
    location: str
    staged: dict[int, list[str]] = field(default_factory=dict)

    def data_commit(self, version: int, value: str | None = None, ict: int | None = None) -> bytes:
        """A commit adding one row ``{id: version, value}`` in its own data file."""
        add = write_data_file(
            self.storage,
            self.location,
            [{"id": version, "value": value or f"v{version}"}],
            modification_time=ict_of(version),
        )
        info = A.commit_info_action(ict if ict is not None else ict_of(version), new_uuid(), "WRITE")
        info["commitInfo"]["timestamp"] = engine_timestamp_of(version)  # disagrees with the ICT on purpose
        return A.encode_commit([info, add])

    def unicode_commit(self, version: int, ict: int | None = None, separators: tuple[str, str] = (",", ":")) -> bytes:
        """``data_commit``'s commit with text outside ASCII in its commitInfo, written as raw UTF-8 (as
        Spark and Kernel write it): a store or a publisher that re-encodes text (``\\u`` escapes,
        another normal form, other ``separators``) changes the bytes but not the JSON."""
        actions = A.decode_commit(self.data_commit(version, ict=ict))
        actions[0]["commitInfo"]["userMetadata"] = "Zürich, Ωmega, 東京 ✓"
        return b"".join(json.dumps(a, separators=separators, ensure_ascii=False).encode() + b"\n" for a in actions)

    def remove_commit(self, version: int, removed: bytes) -> bytes:
        """A commit removing the data file that the commit ``removed`` added."""
        (add,) = [a for a in A.decode_commit(removed) if "add" in a]
        info = A.commit_info_action(ict_of(version), new_uuid(), "DELETE")
        info["commitInfo"]["timestamp"] = engine_timestamp_of(version)
        return A.encode_commit([info, A.remove_action(add, ict_of(version))])

    def rewrite_commit(self, version: int, rewritten: list[bytes]) -> bytes:
        """An OPTIMIZE commit as Delta engines write it: the data files the commits ``rewritten`` added
        are removed and their rows added back in one new file, every add and remove with ``dataChange:
        false`` (PROTOCOL.md Add File and Remove File: the rows are unchanged). The new file is live."""
        adds = [a for c in rewritten for a in A.decode_commit(c) if "add" in a]
        rows = [r for a in adds for r in read_data_file(self.storage, self.location, a["add"]["path"])]
        new = write_data_file(self.storage, self.location, rows, modification_time=ict_of(version))
        info = A.commit_info_action(ict_of(version), new_uuid(), "OPTIMIZE")
        info["commitInfo"]["timestamp"] = engine_timestamp_of(version)
        removes = [A.remove_action(a, ict_of(version), data_change=False) for a in adds]
        return A.encode_commit([info, *removes, without_data_change(new)])

    def create_folders(self) -> None:
        """What the creator of a table makes besides version 0: ``_delta_log/_staged_commits/`` on a
        file system (Delta Kernel and delta-spark make it when they create a catalog-managed table;
        Kernel's writer of a staged commit on a local or HDFS path does not make parent folders).
        Object stores have no folders: nothing to do."""
        if self.location.startswith("file://"):
            uri_to_path(P.staged_dir(self.location)).mkdir(parents=True, exist_ok=True)

    def publish(self, version: int, content: bytes) -> str:
        uri = P.delta_uri(self.location, version)
        self.storage.put(uri, content)
        return uri

    def stage(self, version: int, content: bytes) -> str:
        uri = P.staged_uri(self.location, version, new_uuid())
        self.storage.put(uri, content)
        self.staged.setdefault(version, []).append(uri)
        return uri


def without_data_change(action: dict[str, Any]) -> dict[str, Any]:
    """``action`` with ``dataChange: false`` if it is an add: how Delta engines (Spark, Kernel) write
    every add of a checkpoint and of a log compaction, and the adds of OPTIMIZE; the file stays live."""
    if "add" not in action:
        return action
    return {"add": {**action["add"], "dataChange": False}}


def expected_rows(versions: range | list[int], values: dict[int, str] | None = None) -> list[dict[str, object]]:
    """Rows a reader must return when the given data versions are in its snapshot."""
    values = values or {}
    return [{"id": v, "value": values.get(v, f"v{v}")} for v in versions if v > 0]


def check_listing_complete(
    catalog: Catalog, table_id: str, listed: set[int], start: int, latest: int, published: int
) -> None:
    """Premise of checks that read the listing as evidence about another rule.

    A listing from ``start`` up to the latest must reach the latest version the same response
    reports (unless that version was published, ``published`` being the mark the suite recorded),
    and must leave out no commit that the catalog serves when asked for it alone (a listing of
    [v, v + 1]). Either gap is a listing fault, judged by the listing checks (CAT-LIST-CONTIGUOUS,
    CAT-LIST-RANGE) and not evidence that the commit was lost or never ratified, so the check's
    own rule is not blamed."""
    if latest > max(published, start - 1, 0) and latest not in listed:
        raise PremiseBroken(f"the listing does not reach v{latest}, the latest version it reports")
    for version in range(max(start, published + 1, 1), latest + 1):
        if version in listed:
            continue
        with premise(f"listing v{version} alone"):
            probe = catalog.get_commits(table_id, version, version + 1)
        if any(c.version == version for c in probe.commits):
            raise PremiseBroken(f"the catalog serves v{version} alone, but a listing up to the latest leaves it out")


PUBLISH_EVERY = 8  # a long history publishes this often: at most 10 unpublished commits at any time


@dataclass
class CatalogDriver:
    """Drives a catalog the way a well-behaved client would: create, stage, propose."""

    catalog: Catalog
    storage: Storage
    published: dict[str, int] = field(default_factory=dict)  # table id -> publication mark recorded
    # location -> table id of every table this run's drivers created (the conftest shares one
    # dict per run): a premise of every check is that its tables do not share files with others.
    locations: dict[str, str] = field(default_factory=dict)

    def new_table(self, name: str) -> TableInfo:
        with premise("creating a table (staging location, version 0, registration)"):
            st: StagingTable = self.catalog.create_staging_table()
            self._own_location(st)
            self.storage.put(P.delta_uri(st.location, 0), version0(st.table_id), if_absent=True)
            return self.catalog.register_table(name, st.table_id)

    def _own_location(self, st: StagingTable) -> None:
        """Premise: distinct tables have distinct locations. Two tables at one location overwrite
        each other's published commits, so whatever a check then sees of either is not about the
        rule it judges. Handing out a location twice is CAT-STAGING-UNIQUE's business (a SHOULD,
        judged by its own check); here it only stops the check from blaming its own rules."""
        other = self.locations.setdefault(st.location.rstrip("/"), st.table_id)
        if other != st.table_id:
            raise PremiseBroken(
                f"distinct tables have distinct locations: staging table {st.table_id} was given"
                f" {st.location}, already the location of table {other} (see CAT-STAGING-UNIQUE)"
            )

    def stage(self, table: TableInfo, version: int, ict: int | None = None) -> str:
        """Stage a data commit of ``version`` (its commitInfo dated ``ict``, else ``ict_of(version)``:
        the in-commit timestamp its proposal must carry, for a catalog that reads it from the file)."""
        log = LogBuilder(self.storage, table.location)
        return log.stage(version, log.data_commit(version, ict=ict))

    def propose(self, table: TableInfo, version: int) -> str:
        """Stage and propose ``version``; return the staged URI (raises what the catalog raises)."""
        uri = self.stage(table, version)
        self.catalog.commit(table.table_id, version, staged_uri=uri, in_commit_timestamp=ict_of(version))
        return uri

    def commit_range(self, table: TableInfo, first: int, last: int) -> dict[int, str]:
        """Ratify ``first``..``last`` in order: a premise of the checks that use it."""
        with premise(f"ratifying well-formed proposals v{first}-v{last} in order"):
            return {v: self.propose(table, v) for v in range(first, last + 1)}

    def history(self, table: TableInfo, last: int, *, unpublished: int) -> dict[int, str]:
        """Ratify v1-v``last`` in order and publish all but the last ``unpublished`` on the way
        (every ``PUBLISH_EVERY`` versions, so that no more than 10 are ever unpublished: Unity
        Catalog refuses more). Long histories are what make versions sorted as text (100 before
        99), names padded to the wrong width and off-by-one ranges show (issue 18). Returns the
        staged URI of every version."""
        mark = last - unpublished
        staged: dict[int, str] = {}
        with premise(f"ratifying v1-v{last} in order, publishing up to v{mark} on the way"):
            for version in range(1, last + 1):
                staged[version] = self.propose(table, version)
                if version <= mark and (version % PUBLISH_EVERY == 0 or version == mark):
                    self.publish(table, version)
        return staged

    def listing(self, table: TableInfo, start: int | None = None) -> dict[int, str | None]:
        """Version -> staged URI of the listing from ``start``, for checks that use the listing as
        evidence about another rule (see ``check_listing_complete``)."""
        with premise("listing the ratified commits"):
            resp = self.catalog.get_commits(table.table_id, start, None)
        listed = {c.version: c.staged_uri for c in resp.commits}
        mark = self.published.get(table.table_id, 0)
        check_listing_complete(self.catalog, table.table_id, set(listed), start or 0, resp.latest_version, mark)
        return listed

    def publish(self, table: TableInfo, upto: int) -> None:
        """Publish every listed commit up to ``upto`` (copy to ``_delta_log/<v>.json``), then tell the catalog."""
        self.copy_published(table, upto)
        self.catalog.mark_published(table.table_id, upto)
        self.published[table.table_id] = max(upto, self.published.get(table.table_id, 0))

    def copy_published(self, table: TableInfo, upto: int) -> None:
        """Copy every listed commit up to ``upto`` to ``_delta_log/<v>.json`` without telling the catalog:
        a mark up to ``upto`` then reports a true publication, however it reaches the catalog."""
        for commit in self.catalog.get_commits(table.table_id, None, upto).commits:
            uri = P.delta_uri(table.location, commit.version)
            content = commit.inline_content if commit.staged_uri is None else self.storage.get(commit.staged_uri)
            if content is not None and not self.storage.exists(uri):
                self.storage.put(uri, content, if_absent=True)
