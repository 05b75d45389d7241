"""Faulty catalogs for the round-7 blind misses on staged paths and table names (issue 28, session 17):
each misjudges one component of a staged URI, or one event in a name's life, in a way other than the
round-7 variants did, so that the generated families (staged_paths.py, names_forms.py) are what finds it."""

from __future__ import annotations

import re
import threading
import unicodedata
from typing import Any

from conformance.contract.delta import RatifiedCommit, TableInfo, TableNotFound
from reference_impl.catalog.catalog import ReferenceCatalog, check_commit
from reference_impl.faults.base import fault

_LOG_FOLDERS = re.compile(r"/_delta_log/_staged_commits/", re.IGNORECASE)
_STAGED_TAIL = re.compile(r"(?<!\d)\d{20}\.[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\.json$")


@fault(
    "staged-log-folders-casefolded",
    "catalog",
    breaks=("CAT-STAGED-IN-TABLE",),
    description="The _delta_log/_staged_commits/ folders of a staged URI are matched case-insensitively"
    " (the table's own folder exactly): _DELTA_LOG/_Staged_Commits/<v>.<uuid>.json is ratified.",
)
class StagedLogFoldersCasefolded(ReferenceCatalog):
    def _check_proposal(self, location: str, proposal: RatifiedCommit) -> None:
        uri = proposal.staged_uri
        if isinstance(uri, str) and uri.startswith(location):
            # The fault: the folder names are spelled as the catalog expects before the exact check.
            uri = location + _LOG_FOLDERS.sub("/_delta_log/_staged_commits/", uri[len(location) :], count=1)
            proposal = RatifiedCommit(proposal.version, uri, proposal.inline_content, proposal.in_commit_timestamp)
        check_commit(location, proposal)


@fault(
    "staged-name-anchored-at-end",
    "catalog",
    breaks=("CAT-STAGED-NAME",),
    description="The staged name is checked with re.search anchored at its end only: anything before"
    " <20 digits>.<uuid>.json in the name (x<v>.<uuid>.json, a hidden .<v>.<uuid>.json) is ratified.",
)
class StagedNameAnchoredAtEnd(ReferenceCatalog):
    def _check_proposal(self, location: str, proposal: RatifiedCommit) -> None:
        uri = proposal.staged_uri
        prefix = f"{location}/_delta_log/_staged_commits/"
        name = uri[len(prefix) :] if isinstance(uri, str) and uri.startswith(prefix) else ""
        found = _STAGED_TAIL.search(name)  # the fault: not anchored at the start of the name
        if found is not None and "/" not in name:
            uri = prefix + found.group(0)
            proposal = RatifiedCommit(proposal.version, uri, proposal.inline_content, proposal.in_commit_timestamp)
        check_commit(location, proposal)


@fault(
    "name-index-nfkc",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="Names are registered under their NFKC normalisation and resolved as given: a"
    " decomposed (NFD) name or one with a compatibility ligature is accepted and never resolves.",
)
class NameIndexNfkc(ReferenceCatalog):
    def register_table(self, name: str, table_id: str) -> TableInfo:
        key = unicodedata.normalize("NFKC", name) if isinstance(name, str) else name
        info = super().register_table(key, table_id)
        return TableInfo(info.table_id, name, info.location, info.catalog_managed)


@fault(
    "resolve-miss-remembered",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="A name that was not found is remembered as missing for its next 5 lookups, and"
    " registering it does not forget that: a table resolved before its creation cannot be found after.",
)
class ResolveMissRemembered(ReferenceCatalog):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._misses: dict[str, int] = {}
        self._misses_lock = threading.Lock()

    def resolve(self, name: str) -> TableInfo:
        with self._misses_lock:
            left = self._misses.get(name, 0) if isinstance(name, str) else 0
            if left > 0:
                self._misses[name] = left - 1
                raise TableNotFound(name)
        try:
            return super().resolve(name)
        except TableNotFound:
            if isinstance(name, str):
                with self._misses_lock:
                    self._misses[name] = 5
            raise


@fault(
    "reused-name-in-memory",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="A drop is kept in memory and a dropped name given to a new table is bound to it in"
    " memory only: after a restart the name resolves to the dropped table again.",
)
class ReusedNameInMemory(ReferenceCatalog):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._dropped: set[str] = set()
        self._reused: dict[str, str] = {}  # name -> the name the new table is stored under
        self._names_lock = threading.Lock()

    def drop_table(self, name: str) -> None:
        info = self.resolve(name)
        with self._names_lock:
            self._dropped.add(info.name)  # the fault: the store keeps the old table's name
            self._reused.pop(info.name, None)

    def register_table(self, name: str, table_id: str) -> TableInfo:
        with self._names_lock:
            dropped = name in self._dropped
        if not dropped:
            return super().register_table(name, table_id)
        stored = f"{name}.reused-{table_id}"
        info = super().register_table(stored, table_id)
        with self._names_lock:
            self._dropped.discard(name)
            self._reused[name] = stored
        return TableInfo(info.table_id, name, info.location, info.catalog_managed)

    def resolve(self, name: str) -> TableInfo:
        with self._names_lock:
            stored, dropped = self._reused.get(name), name in self._dropped
        if dropped:
            raise TableNotFound(name)
        if stored is None:
            return super().resolve(name)
        info = super().resolve(stored)
        return TableInfo(info.table_id, name, info.location, info.catalog_managed)


_ANY_DIGITS_NAME = re.compile(r"(\d{20})\.[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\.json")


@fault(
    "staged-version-any-script-digits",
    "catalog",
    breaks=("CAT-STAGED-NAME",),
    description="Reads a staged name's version with a Unicode-aware digit class (\\d and int()): a name whose"
    " twenty digits are Arabic-Indic or full-width is taken for the same version in ASCII digits.",
)
class StagedVersionAnyScriptDigits(ReferenceCatalog):
    def _check_proposal(self, location: str, proposal: RatifiedCommit) -> None:
        uri = proposal.staged_uri
        name = uri.rsplit("/", 1)[-1] if isinstance(uri, str) else ""
        match = _ANY_DIGITS_NAME.fullmatch(name)
        if isinstance(uri, str) and match is not None and not match.group(1).isascii():
            # The fault: the name is spelled again with the ASCII digits int() read from it.
            ascii_name = f"{int(match.group(1)):020d}" + name[20:]
            uri = uri[: -len(name)] + ascii_name
            proposal = RatifiedCommit(proposal.version, uri, proposal.inline_content, proposal.in_commit_timestamp)
        check_commit(location, proposal)
