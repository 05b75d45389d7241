"""The state of a table at a version: replay of its commits over a checkpoint.

PROTOCOL "Action Reconciliation": the latest ``protocol`` and ``metaData`` win; a logical file is
identified by its path (and deletion vector id: the suite writes none, so by path here) and the
newest ``add`` or ``remove`` of it decides whether it is live; ``commitInfo`` is read only from the
commit at the snapshot version. RFC "Reading Catalog-managed Tables": the catalog's ratified
commits take precedence over published files of the same version, and nothing above the catalog's
latest ratified version belongs to the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.oracle.commits import Action, in_commit_timestamp


class ReplayError(ValueError):
    """The log cannot give the version asked for (a missing commit, nothing to start from)."""


@dataclass
class Snapshot:
    version: int
    protocol: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    files: dict[str, dict[str, Any]] = field(default_factory=dict)  # path -> its live add action's body
    in_commit_timestamp: int | None = None  # of the commit at ``version``; None from a checkpoint alone


def _apply(snap: Snapshot, actions: Sequence[Action]) -> None:
    for a in actions:
        if "protocol" in a:
            snap.protocol = a["protocol"]
        elif "metaData" in a:
            snap.metadata = a["metaData"]
        elif "add" in a:
            snap.files[str(a["add"]["path"])] = a["add"]
        elif "remove" in a:
            snap.files.pop(str(a["remove"]["path"]), None)


def table_commits(published: Mapping[int, bytes], ratified: Mapping[int, bytes], latest: int) -> dict[int, bytes]:
    """Version -> content of every commit up to ``latest``: the catalog's ratified content where it
    has one (RFC "Reading Catalog-managed Tables": the catalog is the source of truth), otherwise
    the published file; published files above ``latest`` are not part of the table."""
    merged = {v: c for v, c in published.items() if v <= latest}
    merged.update({v: c for v, c in ratified.items() if v <= latest})
    return merged


def replay(
    commits: Mapping[int, Sequence[Action]],
    version: int,
    checkpoint: tuple[int, Sequence[Action]] | None = None,
) -> Snapshot:
    """The snapshot at ``version`` from decoded commits, optionally over a checkpoint
    ``(its version, its actions)`` at or below ``version`` (PROTOCOL "Checkpoints": for time travel
    the checkpoint used must not be newer than the version read)."""
    start = 0
    snap = Snapshot(version)
    if checkpoint is not None:
        at, actions = checkpoint
        if at > version:
            raise ReplayError(f"a checkpoint of v{at} cannot give v{version}")
        _apply(snap, actions)
        start = at + 1
    missing = [v for v in range(start, version + 1) if v not in commits]
    if missing:
        raise ReplayError(f"v{version} needs commits {missing} that the log does not have")
    for v in range(start, version + 1):
        _apply(snap, commits[v])
    if version in commits:
        snap.in_commit_timestamp = in_commit_timestamp(commits[version])
    return snap
