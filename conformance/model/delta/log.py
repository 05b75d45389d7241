"""The table: immutable data files and the log of commits; a snapshot replays the log.

A catalog-managed table (catalog-managed RFC) also has staged commit files and a catalog: the
table's history is then the catalog's ratified commits over the published ``_delta_log``, the
catalog's version winning where both have one ("Reading Catalog-managed Tables")."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from conformance.contract.iceberg import Row
from conformance.model.delta.actions import Add, Commit, Metadata, Protocol
from conformance.model.delta.catalog import Arbiter


@dataclass(frozen=True)
class Snapshot:
    """The table at ``version``: live logical files by path, the metadata and protocol."""

    version: int
    files: dict[str, Add]
    metadata: Metadata
    protocol: Protocol


@dataclass
class Table:
    """Data files (path -> rows, written once) and the published commits, version 0 first; for a
    catalog-managed table also its catalog and staged commit files (name -> commit)."""

    files: dict[str, tuple[Row, ...]] = field(default_factory=dict)
    commits: list[Commit] = field(default_factory=list)  # _delta_log/<v>.json, v = index
    catalog: Arbiter | None = None
    staged: dict[str, Commit] = field(default_factory=dict)
    # The catalog's answer, kept until this table proposes or publishes: the table's writers are
    # its only clients, so nothing else changes what the catalog serves for it.
    _resolved: list[Commit] | None = field(default=None, repr=False)

    @property
    def latest(self) -> int:
        """The latest version: the catalog's latest ratified one when it has a catalog."""
        return len(self.history()) - 1

    @property
    def published(self) -> int:
        return len(self.commits) - 1

    def history(self) -> list[Commit]:
        """Every version's commit as a correct reader resolves it: the catalog's ratified commit
        where it serves one, else the published file."""
        if self.catalog is None:
            return self.commits
        if self._resolved is None:
            latest, served = self.catalog.ratified()
            self._resolved = [self.staged[served[v]] if v in served else self.commits[v] for v in range(latest + 1)]
        return self._resolved

    def propose(self, catalog: Arbiter, commit: Commit) -> int | None:
        """Write a staged commit file (a fresh name, never overwritten) and propose it for its
        version: None when the catalog ratified it, else the catalog's latest ratified version."""
        name = catalog.staged_name(commit.version)
        if name in self.staged:
            raise KeyError(f"{name} exists")
        self.staged[name] = commit
        self._resolved = None
        return catalog.ratify(commit.version, name)

    def publish(self, version: int) -> list[int]:
        """Copy the ratified commits up to ``version`` into ``_delta_log``, in order ("Publishing
        Commits"), and tell the catalog; return the versions published."""
        if self.catalog is None:
            return []
        history = self.history()
        done = list(range(self.published + 1, min(version, len(history) - 1) + 1))
        self.commits.extend(history[v] for v in done)
        if done:  # the history is the same: only where its commits are served from changed
            self.catalog.published(done[-1])
        return done

    def write_file(self, path: str, rows: tuple[Row, ...]) -> None:
        if path in self.files:
            raise KeyError(f"{path} exists")  # data files are never overwritten
        self.files[path] = rows

    def snapshot(self, version: int | None = None) -> Snapshot:
        """Log replay (PROTOCOL.md "Action Reconciliation"): the last action on a path wins."""
        history = self.history()
        v = len(history) - 1 if version is None else version
        if not 0 <= v < len(history):
            raise ValueError(f"no version {v}")
        live: dict[str, Add] = {}
        metadata, protocol = Metadata(()), Protocol(1, 2)
        for commit in history[: v + 1]:
            for r in commit.removes:
                live.pop(r.path, None)
            for a in commit.adds:
                live[a.path] = a
            metadata = commit.metadata or metadata
            protocol = commit.protocol or protocol
        return Snapshot(v, live, metadata, protocol)

    def live_rows(self, snap: Snapshot) -> Iterator[tuple[str, int, Row]]:
        """(path, position, row) of every row no deletion vector removes, by path."""
        for path in sorted(snap.files):
            dv = snap.files[path].dv
            for pos, row in enumerate(self.files[path]):
                if pos not in dv:
                    yield path, pos, row
