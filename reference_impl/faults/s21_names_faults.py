"""Faults for the round-15 blind misses (issue 28, session 21): see docs/mutation.md, round 15."""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from typing import Any

from conformance.contract.delta import InvalidRequest, RatifiedCommit
from reference_impl.catalog.catalog import NAME_LENGTH, ReferenceCatalog, check_commit, staged_dir_uri
from reference_impl.catalog.store import Tx
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.log_paths import staged_dir
from reference_impl.faults.base import fault


@fault(
    "name-column-three-bytes-a-letter",
    "catalog",
    breaks=("CAT-LIMIT-DECLARED",),
    description=f"Counts a table name's length in characters, as declared ({NAME_LENGTH}), but keeps names in a"
    f" column of {3 * NAME_LENGTH} UTF-8 bytes (three a letter, the widest of the Basic Multilingual Plane, as"
    " MySQL's utf8mb3 sizing): ASCII, accented and CJK names of the declared length fit, a name at it made of"
    " letters outside the BMP (four bytes each: Fraktur letters, CJK Extension B) is refused.",
)
class NameColumnThreeBytesALetter(ReferenceCatalog):
    def _check_name_length(self, name: str) -> None:
        super()._check_name_length(name)
        # the fault: the column's size in bytes, sized for letters of at most three bytes
        if len(name.encode()) > 3 * NAME_LENGTH:
            raise InvalidRequest(f"table names have at most {3 * NAME_LENGTH} bytes")


@fault(
    "name-length-letters-on-screen",
    "catalog",
    breaks=("CAT-LIMIT-DECLARED",),
    description=f"Counts a table name's length in letters as shown (a combining mark counts with its base"
    f" letter, not as a character of its own) against the declared {NAME_LENGTH} characters: a name one past"
    " the limit (and further) is accepted when it holds combining marks. Names without them are counted"
    " exactly.",
)
class NameLengthLettersOnScreen(ReferenceCatalog):
    def _check_name_length(self, name: str) -> None:
        shown = sum(1 for c in name if not unicodedata.combining(c))  # the fault: marks are not counted
        if shown > NAME_LENGTH:
            raise InvalidRequest(f"table names have at most {NAME_LENGTH} letters, this one {shown}")


@fault(
    "staged-name-lower-cased-on-store",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="Keeps a ratified staged commit's file name lower-cased (a name index with a case-insensitive"
    " collation, made to agree with it): a commit staged as <v>.<UUID>.json with upper-case or mixed-case hex"
    " digits, a valid UUID, is served under a lower-case name, another object on a case-sensitive store."
    " Names staged in lower case, as str(uuid4()) writes them, are served exactly.",
)
class StagedNameLowerCasedOnStore(ReferenceCatalog):
    def _write_commit(self, tx: Tx, table_id: str, commit: RatifiedCommit) -> None:
        if commit.staged_uri is not None:
            # the fault: the file name's case is the index's, not the file's
            commit = dataclasses.replace(commit, staged_uri=_lower_name(commit.staged_uri))
        super()._write_commit(tx, table_id, commit)


@fault(
    "staged-name-case-kept-in-memory-only",
    "catalog",
    breaks=("CAT-RATIFY-DURABLE",),
    description="Records a ratified staged commit's file name lower-cased (a name index with a case-insensitive"
    " collation) and keeps the name as proposed only in memory, where it serves it from: a commit staged as"
    " <v>.<UUID>.json with upper-case or mixed-case hex digits is served as proposed until the catalog"
    " restarts, then under the lower-case name its record holds (another object, so its kept bytes are served"
    " in its place). Names staged in lower case survive restarts exactly.",
)
class StagedNameCaseKeptInMemoryOnly(ReferenceCatalog):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._as_proposed: dict[tuple[str, int], str] = {}  # the fault: lost with the process

    def _write_commit(self, tx: Tx, table_id: str, commit: RatifiedCommit) -> None:
        if commit.staged_uri is None:
            return super()._write_commit(tx, table_id, commit)
        super()._write_commit(tx, table_id, dataclasses.replace(commit, staged_uri=_lower_name(commit.staged_uri)))
        self._as_proposed[(table_id, commit.version)] = commit.staged_uri

    def _stored_commits(self, tx: Tx, table_id: str) -> list[RatifiedCommit]:
        served = []
        for c in super()._stored_commits(tx, table_id):
            kept = self._as_proposed.get((table_id, c.version))
            # Only the name this very record was written from (never a losing proposal's).
            if c.staged_uri is not None and kept is not None and _lower_name(kept) == c.staged_uri:
                c = dataclasses.replace(c, staged_uri=kept)
            served.append(c)
        return served


def _lower_name(uri: str) -> str:
    """``uri`` with its last segment (the file name) lower-cased."""
    folder, _, name = uri.rpartition("/")
    return f"{folder}/{name.lower()}"


# Round 16 (cr16-cat-staged-name-unescaped-dot): a staged name judged by a pattern looser than
# <20 digits>.<uuid>.json in one fixed character; staged_paths.character_misses proposes each.
_H = "[0-9a-f]"
_WELL_FORMED_UUID = "00000000-0000-4000-8000-000000000000"


def _judged_as_well_formed(location: str, proposal: RatifiedCommit, loose: re.Pattern[str]) -> RatifiedCommit:
    """``proposal`` with its staged name, when ``loose`` takes it, replaced for the judgement by a
    well-formed name of the version ``loose`` read: every other part of the proposal is judged exactly,
    and the name ratified (and listed) is still the one proposed."""
    uri, prefix = proposal.staged_uri, staged_dir_uri(location)
    if not isinstance(uri, str) or not uri.startswith(prefix):
        return proposal
    m = loose.fullmatch(uri[len(prefix) :])
    if m is None:
        return proposal
    return dataclasses.replace(proposal, staged_uri=f"{prefix}{m.group(1)}.{_WELL_FORMED_UUID}.json")


@fault(
    "staged-name-json-dot-unescaped",
    "catalog",
    breaks=("CAT-STAGED-NAME",),
    description="Judges a staged file's name with a pattern whose dot before json is unescaped"
    r" (``([0-9]{20})\.<uuid>.json``): <v>.<uuid>_json, <v>.<uuid>-json or <v>.<uuid>xjson is ratified, a"
    " file no reader or cleanup takes for a staged commit. The dot after the version is escaped, and every"
    " other name is judged exactly.",
)
class StagedNameJsonDotUnescaped(ReferenceCatalog):
    LOOSE = re.compile(rf"([0-9]{{20}})\.{_H}{{8}}-{_H}{{4}}-{_H}{{4}}-{_H}{{4}}-{_H}{{12}}.json")  # the fault

    def _check_proposal(self, location: str, proposal: RatifiedCommit) -> None:
        check_commit(location, _judged_as_well_formed(location, proposal, self.LOOSE))


@fault(
    "staged-name-uuid-dashes-optional",
    "catalog",
    breaks=("CAT-STAGED-NAME",),
    description="Judges a staged file's UUID with a pattern that makes each dash optional (``-?``, written to"
    " take the 32-digit hex form too, as uuid.UUID() reads it): a name with one of the UUID's dashes, or all"
    " four, left out is ratified, a file no reader or cleanup takes for a staged commit. Dashes moved,"
    " doubled or replaced, and every other part of the name, are judged exactly.",
)
class StagedNameUuidDashesOptional(ReferenceCatalog):
    LOOSE = re.compile(rf"([0-9]{{20}})\.{_H}{{8}}-?{_H}{{4}}-?{_H}{{4}}-?{_H}{{4}}-?{_H}{{12}}\.json")  # the fault

    def _check_proposal(self, location: str, proposal: RatifiedCommit) -> None:
        check_commit(location, _judged_as_well_formed(location, proposal, self.LOOSE))


@fault(
    "writer-staged-name-upper-case-extension",
    "client",
    breaks=("WRT-STAGED-NAME",),
    description="Stages every commit as <20-digit version>.<uuid>.JSON (the extension upper-cased, as a writer"
    " that builds names from a constant spelled for a case-insensitive file system): another object than the"
    " RFC's <v>.<uuid>.json on every case-sensitive store, which no reader or cleanup takes for a staged"
    " commit. The version and the UUID are right.",
)
class WriterStagedNameUpperCaseExtension(ReferenceClient):
    def _staged_uri(self, location: str, version: int) -> str:
        return f"{staged_dir(location)}/{version:020d}.{self._uuid()}.JSON"  # the fault: the extension's case
