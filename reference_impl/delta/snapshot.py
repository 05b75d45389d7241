"""Snapshot reconstruction with catalog precedence (RFC "Reading Catalog-managed Tables").

The combined log, as Delta Kernel builds it: ask the catalog for its ratified commits and
latest version L; LIST ``_delta_log`` for published commits and checkpoints; ignore every
file above L; for each version use the catalog's commit when it supplies one, else the
published ``<v>.json``. ``_staged_commits`` is never interpreted on its own: only the
catalog says which staged file is ratified. Log compaction files are not used for reading.

``LogReader``'s underscore methods are the hooks that faulty readers override.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from conformance.contract.delta import Catalog, FileInfo, GetCommitsResponse, RatifiedCommit, Storage
from reference_impl.delta.actions import Action, commit_info, decode_commit, in_commit_timestamp
from reference_impl.delta.checkpoint import read_checkpoint
from reference_impl.delta.data_files import Row, read_data_file, row_id
from reference_impl.delta.log_paths import LogFile, log_dir, parse_log_name


class SnapshotError(Exception):
    """The table state cannot be reconstructed."""


class MissingVersionError(SnapshotError):
    """A version needed for the snapshot is neither supplied by the catalog nor published."""

    def __init__(self, version: int) -> None:
        super().__init__(f"version {version} is neither ratified by the catalog nor published")
        self.version = version


class VersionOutOfRange(SnapshotError):
    """The asked version is negative or above the catalog's latest ratified version."""


class TimestampOutOfRange(SnapshotError):
    """The asked timestamp precedes the first commit whose timestamp is known."""


@dataclass(frozen=True)
class CommitRef:
    """Where the content of one commit comes from."""

    version: int
    uri: str | None = None  # staged or published file
    inline_content: bytes | None = None
    mtime_ms: int | None = None  # of the file, when it was listed
    from_catalog: bool = False


@dataclass(frozen=True)
class LogSegment:
    """The combined log of a table up to the catalog's latest ratified version."""

    location: str
    latest_version: int
    commits: dict[int, CommitRef]  # every version <= latest whose content is reachable
    checkpoints: list[int]  # checkpoint versions <= latest, ascending
    published: frozenset[int]  # versions with a _delta_log/<v>.json, <= latest


@dataclass(frozen=True)
class Snapshot:
    location: str
    version: int
    protocol: dict[str, Any]
    metadata: dict[str, Any]
    files: dict[str, Action]  # active add actions by path
    commit_infos: dict[int, dict[str, Any]] = field(default_factory=dict)  # of replayed versions
    checkpoint_version: int | None = None

    @property
    def in_commit_timestamp(self) -> int | None:
        ict = self.commit_infos.get(self.version, {}).get("inCommitTimestamp")
        return ict if isinstance(ict, int) else None

    def state_actions(self) -> list[Action]:
        """The table state as actions (what a checkpoint stores): protocol, metaData, adds by path."""
        return [{"protocol": self.protocol}, {"metaData": self.metadata}] + [self.files[p] for p in sorted(self.files)]


def listed_log_files(listing: Iterable[FileInfo]) -> list[tuple[LogFile, FileInfo]]:
    """The versioned log entries of a listing, with their file info."""
    found = []
    for info in listing:
        parsed = parse_log_name(info.uri)
        if parsed is not None:
            found.append((parsed, info))
    return found


def replay(
    base: list[Action], commits: Iterable[tuple[int, list[Action]]]
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, dict[str, Action], dict[int, dict[str, Any]]]:
    """Apply actions in order: last protocol/metaData win, removes cancel adds."""
    protocol: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    files: dict[str, Action] = {}
    infos: dict[int, dict[str, Any]] = {}

    def apply(action: Action) -> None:
        nonlocal protocol, metadata
        if "protocol" in action:
            protocol = action["protocol"]
        elif "metaData" in action:
            metadata = action["metaData"]
        elif "add" in action:
            files[action["add"]["path"]] = action
        elif "remove" in action:
            files.pop(action["remove"]["path"], None)

    for action in base:
        apply(action)
    for version, actions in commits:
        for action in actions:
            if "commitInfo" in action:
                infos.setdefault(version, action["commitInfo"])
            apply(action)
    return protocol, metadata, files, infos


class LogReader:
    """Builds snapshots of catalog-managed tables from one catalog and one storage."""

    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        self.catalog = catalog
        self.storage = storage

    # ------------------------------------------------------------ hooks

    def _list_log(self, location: str) -> list[FileInfo]:
        """LIST ``_delta_log`` (RFC: needed when the catalog's commits do not reach back far enough)."""
        return self.storage.list(log_dir(location) + "/")

    def _ratified_commits(self, table_id: str, listing: list[FileInfo]) -> GetCommitsResponse:
        """The catalog's ratified commits and its authoritative latest version."""
        return self.catalog.get_commits(table_id)

    def _pick_commit(self, ratified: CommitRef | None, published: CommitRef | None) -> CommitRef | None:
        """RFC: for a version both ratified by the catalog and published, the catalog's commit wins."""
        return ratified if ratified is not None else published

    def _decode(self, content: bytes) -> list[Action]:
        """Commits are strict NDJSON; partial or malformed content is an error, never skipped."""
        return decode_commit(content)

    def _commit_timestamp(self, ref: CommitRef, actions: list[Action]) -> int:
        """Time travel uses in-commit timestamps: publishing makes file times meaningless (RFC)."""
        ict = in_commit_timestamp(actions)
        if ict is None:
            raise SnapshotError(f"version {ref.version} has no inCommitTimestamp")
        return ict

    # ------------------------------------------------------------ log segment

    def _published_meanwhile(self, listing: list[FileInfo], ratified: GetCommitsResponse) -> bool:
        """Whether the catalog no longer stores versions above every published file the LIST saw: then
        another client published and marked them after the LIST, before the catalog answered. The RFC
        has readers ask the catalog first and LIST after, so that both answers overlap; a reader that
        LISTed first must LIST again (a commit leaves the catalog only once its published file exists)."""
        listed = [lf.version for lf, _ in listed_log_files(listing) if lf.kind == "delta"]
        top = max(listed, default=-1)
        first_stored = min((c.version for c in ratified.commits), default=ratified.latest_version + 1)
        return top < ratified.latest_version and first_stored > top + 1

    def segment(self, table_id: str, location: str) -> LogSegment:
        listing = self._list_log(location)
        ratified = self._ratified_commits(table_id, listing)
        if self._published_meanwhile(listing, ratified):
            listing = self._list_log(location)
        latest = ratified.latest_version
        mtimes = {f.uri: f.mtime_ms for f in listing}
        # RFC: ignore any file with a version greater than the catalog's latest.
        entries = [(lf, fi) for lf, fi in listed_log_files(listing) if lf.version <= latest]
        published = {
            lf.version: CommitRef(lf.version, uri=lf.uri, mtime_ms=fi.mtime_ms)
            for lf, fi in entries
            if lf.kind == "delta"
        }
        from_catalog = {c.version: self.catalog_ref(c, mtimes) for c in ratified.commits if 0 <= c.version <= latest}
        commits: dict[int, CommitRef] = {}
        for v in sorted(set(published) | set(from_catalog)):
            ref = self._pick_commit(from_catalog.get(v), published.get(v))
            if ref is not None:
                commits[v] = ref
        checkpoints = sorted({lf.version for lf, _ in entries if lf.kind == "checkpoint"})
        return LogSegment(location, latest, commits, checkpoints, frozenset(published))

    @staticmethod
    def catalog_ref(commit: RatifiedCommit, mtimes: dict[str, int] | None = None) -> CommitRef:
        if (commit.staged_uri is None) == (commit.inline_content is None):
            raise SnapshotError(f"catalog commit {commit.version} must have a staged URI or inline content")
        mtime = (mtimes or {}).get(commit.staged_uri) if commit.staged_uri else None
        return CommitRef(commit.version, commit.staged_uri, commit.inline_content, mtime_ms=mtime, from_catalog=True)

    def commit_bytes(self, ref: CommitRef) -> bytes:
        if ref.inline_content is not None:
            return ref.inline_content
        assert ref.uri is not None
        return self.storage.get(ref.uri)

    def commit_actions(self, ref: CommitRef) -> list[Action]:
        return self._decode(self.commit_bytes(ref))

    # ------------------------------------------------------------ snapshots

    def snapshot(self, table_id: str, location: str, version: int | None = None) -> Snapshot:
        return self.snapshot_of(self.segment(table_id, location), version)

    def snapshot_of(self, seg: LogSegment, version: int | None = None) -> Snapshot:
        target = seg.latest_version if version is None else version
        if target < 0 or target > seg.latest_version:
            raise VersionOutOfRange(f"version {target} is outside 0..{seg.latest_version}")
        cp, base = self._base_checkpoint(seg, target)
        first = 0 if cp is None else cp + 1
        missing = [v for v in range(first, target + 1) if v not in seg.commits]
        if missing:
            raise MissingVersionError(missing[0])
        commits = [(v, self.commit_actions(seg.commits[v])) for v in range(first, target + 1)]
        protocol, metadata, files, infos = replay(base, commits)
        if cp is not None and cp in seg.commits:
            # Checkpoints hold no commitInfo; the checkpointed commit, if kept, still has it.
            cp_info = commit_info(self.commit_actions(seg.commits[cp]))
            if cp_info is not None:
                infos[cp] = cp_info
        if protocol is None or metadata is None:
            raise SnapshotError(f"no protocol or metaData at version {target}")
        return Snapshot(seg.location, target, protocol, metadata, files, infos, cp)

    def _base_checkpoint(self, seg: LogSegment, target: int) -> tuple[int | None, list[Action]]:
        """The newest readable checkpoint <= target with every later commit reachable."""
        for cp in reversed([c for c in seg.checkpoints if c <= target]):
            if any(v not in seg.commits for v in range(cp + 1, target + 1)):
                continue
            try:
                return cp, read_checkpoint(self.storage, seg.location, cp)
            except (OSError, ValueError, pa.ArrowException):
                continue  # unusable checkpoint: try an older one
        return None, []

    # ------------------------------------------------------------ time travel

    def version_at(self, table_id: str, location: str, timestamp_ms: int) -> int:
        """The latest version whose commit timestamp is <= ``timestamp_ms``."""
        seg = self.segment(table_id, location)
        for v in range(seg.latest_version, -1, -1):
            ref = seg.commits.get(v)
            if ref is None:
                break  # history before this point is gone (cleaned up)
            if self._commit_timestamp(ref, self.commit_actions(ref)) <= timestamp_ms:
                return v
        raise TimestampOutOfRange(f"no commit at or before {timestamp_ms}")


def read_rows(storage: Storage, snapshot: Snapshot) -> list[Row]:
    """Every row of the snapshot's active files, sorted by id."""
    rows: list[Row] = []
    for path in sorted(snapshot.files):
        rows.extend(read_data_file(storage, snapshot.location, path))
    return sorted(rows, key=row_id)
