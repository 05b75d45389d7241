"""Faults for the round-17 blind misses (issue 28, session 22): see docs/mutation.md, round 17."""

from __future__ import annotations

import dataclasses
import re
import threading
import zlib
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from conformance.contract.delta import RatifiedCommit, TableInfo
from reference_impl.catalog.catalog import ReferenceCatalog, check_commit
from reference_impl.faults.base import fault


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4, segment by segment: ``.`` dropped, ``..`` takes the segment before it;
    empty segments (``//``) are kept, as the RFC keeps them."""
    out: list[str] = []
    for segment in path.split("/"):
        if segment == ".":
            continue
        if segment == "..":
            if len(out) > 1:
                out.pop()
            continue
        out.append(segment)
    return "/".join(out)


def _collapse_slashes(path: str) -> str:
    return re.sub("/{2,}", "/", path)


class _PathFoldedCatalog(ReferenceCatalog):
    """The reference with a staged URI judged, read and checked through ``fold`` of its path, and kept
    and listed as sent: the family of a catalog that normalises a path for its checks only."""

    def fold(self, path: str) -> str:
        return path

    def _folded(self, uri: str) -> str:
        parts = urlsplit(uri)
        return urlunsplit(parts._replace(path=self.fold(parts.path)))

    def _check_proposal(self, location: str, proposal: RatifiedCommit) -> None:
        uri = proposal.staged_uri
        judged = dataclasses.replace(proposal, staged_uri=self._folded(uri)) if isinstance(uri, str) else proposal
        check_commit(location, judged)  # the fault: the URI judged is not the URI kept

    def _read_staged(self, location: str, staged_uri: str) -> bytes:
        return super()._read_staged(location, self._folded(staged_uri))

    def _as_ratified(self, location: str, commit: RatifiedCommit, kept: bytes | None) -> RatifiedCommit:
        if commit.staged_uri is None:
            return commit
        folded = dataclasses.replace(commit, staged_uri=self._folded(commit.staged_uri))
        served = super()._as_ratified(location, folded, kept)
        return commit if served.staged_uri is not None else served  # listed as sent while the file holds


@fault(
    "staged-path-dot-segments-removed",
    "catalog",
    breaks=("CAT-STAGED-IN-TABLE",),
    description="Judges a staged URI after removing its dot segments (RFC 3986 section 5.2.4), then checks,"
    " ratifies and lists the URI as sent: _staged_commits/./<v>.<uuid>.json, _delta_log/tmp/../_staged_commits/..."
    " or <other table>/../<table>/... are ratified, on an object store keys outside the staging folder. A path"
    " without . or .. segments is judged exactly.",
)
class StagedPathDotSegmentsRemoved(_PathFoldedCatalog):
    def fold(self, path: str) -> str:
        return _remove_dot_segments(path)


@fault(
    "staged-path-slashes-collapsed",
    "catalog",
    breaks=("CAT-STAGED-IN-TABLE",),
    description="Judges a staged URI with every run of slashes in its path collapsed to one (a path built by"
    " joining strings), then ratifies and lists it as sent: _staged_commits//<v>.<uuid>.json or"
    " <table>//_delta_log/_staged_commits/... is ratified, on an object store another key than the staged file's.",
)
class StagedPathSlashesCollapsed(_PathFoldedCatalog):
    def fold(self, path: str) -> str:
        return _collapse_slashes(path)


@fault(
    "resolve-crc32-index-unchecked",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="Resolves names through an in-memory index keyed by the CRC-32 of the name's UTF-8 bytes (a"
    " front end's shard key), filled on registration and on each lookup, and never compares the name of the"
    " table it finds with the one asked for: of two names with one CRC-32, the first resolves to the table"
    " registered last under the second. Names of distinct CRC-32 resolve exactly.",
)
class ResolveCrc32IndexUnchecked(ReferenceCatalog):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._by_crc: dict[int, str] = {}
        self._crc_lock = threading.Lock()

    def register_table(self, name: str, table_id: str) -> TableInfo:
        info = super().register_table(name, table_id)
        with self._crc_lock:
            self._by_crc[zlib.crc32(name.encode("utf-8", "surrogatepass"))] = info.table_id
        return info

    def resolve(self, name: str) -> TableInfo:
        if isinstance(name, str):
            with self._crc_lock:
                table_id = self._by_crc.get(zlib.crc32(name.encode("utf-8", "surrogatepass")))
            if table_id is not None:
                with self._store.read() as tx:
                    row = tx.table(table_id)
                if row is not None and row.name is not None:
                    return self._table_info(row)  # the fault: row.name is never compared with name
        info = super().resolve(name)
        with self._crc_lock:
            self._by_crc[zlib.crc32(name.encode("utf-8", "surrogatepass"))] = info.table_id
        return info


def _java_hash(name: str) -> int:
    """Java's ``String.hashCode``: 31 * h + each UTF-16 code unit, in 32 bits."""
    units = name.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return h


@fault(
    "resolve-hash-cache-warmed-at-start",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="Warms a name cache keyed by Java's String.hashCode from the store when it starts (one table per"
    " hash, the first name in sort order winning) and resolves through it without comparing the name found"
    " with the name asked for; names registered since the start are looked up exactly. Of two names with one"
    " hash, the second resolves to the first's table after a restart only.",
)
class ResolveHashCacheWarmedAtStart(ReferenceCatalog):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        with self._store.read() as tx:
            rows = tx._execute("SELECT name, table_id FROM tables WHERE name IS NOT NULL ORDER BY name").fetchall()
        self._warm: dict[int, str] = {}
        for name, table_id in rows:
            self._warm.setdefault(_java_hash(name), table_id)

    def resolve(self, name: str) -> TableInfo:
        table_id = self._warm.get(_java_hash(name)) if isinstance(name, str) else None
        if table_id is not None:
            with self._store.read() as tx:
                row = tx.table(table_id)
            if row is not None and row.name is not None:
                return self._table_info(row)  # the fault: row.name is never compared with name
        return super().resolve(name)
