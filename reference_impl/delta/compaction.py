"""Log compaction content (PROTOCOL.md "Log Compaction Files").

A ``<start>.<end>.compacted.json`` file holds the reconciled actions of commits
start..end: the newest protocol and metaData of the range, the adds still active at
``end`` and the removes of files not re-added. commitInfo is not carried over.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from reference_impl.delta.actions import Action


def reconcile(commits: Iterable[Sequence[Action]]) -> list[Action]:
    """Reconciled actions of consecutive commits, oldest first."""
    protocol: Action | None = None
    metadata: Action | None = None
    files: dict[str, Action] = {}  # path -> its last add or remove
    for actions in commits:
        for action in actions:
            if "protocol" in action:
                protocol = action
            elif "metaData" in action:
                metadata = action
            elif "add" in action:
                files[action["add"]["path"]] = action
            elif "remove" in action:
                files[action["remove"]["path"]] = action
    header = [a for a in (protocol, metadata) if a is not None]
    return header + [files[p] for p in sorted(files)]
