"""What a writer's checkpoint or log compaction file holds, judged against the suite's own replay of
the table's commits (conformance/oracle: its own decoders, not the reference implementation's).

Shared by ``writer/test_maintenance.py`` and usable by any history that checkpoints or compacts
while ratified, unpublished commits sit above the newest published version:

- ``checkpoint_fault``: a checkpoint of v must hold the replay of commits 0..v (PROTOCOL
  "Checkpoints"); one that holds later versions' changes is, in substance, a checkpoint of
  unpublished versions under a published version's name (RFC "Maintenance Operations on
  Catalog-managed Tables", WRT-CHECKPOINT-PUBLISHED).
- ``compaction_fault``: a compaction of x..y holds the reconciled actions of exactly the commits x..y,
  removes of files added before x included, one action per file (a file added and removed in the
  range only as its remove), and the range's last protocol and metaData (none when the range has
  none) (PROTOCOL.md Log Compaction Files, WRT-COMPACTION-CONTENT).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from conformance.contract.delta import Catalog, Storage, TableInfo
from conformance.oracle import commits as C
from conformance.oracle.checkpoint import CheckpointFormatError
from conformance.oracle.checkpoint import decode as checkpoint_actions
from conformance.oracle.commits import Action
from conformance.oracle.names import compaction_uri, parse, published_uri
from conformance.oracle.replay import replay, table_commits

Commits = Mapping[int, Sequence[Action]]


def current_commits(catalog: Catalog, storage: Storage, info: TableInfo) -> dict[int, list[Action]]:
    """Version -> actions of every commit of the table now: the catalog's ratified commits (staged
    or inline) over the published files of ``_delta_log`` (RFC "Reading Catalog-managed Tables")."""
    resp = catalog.get_commits(info.table_id)
    ratified = {
        c.version: c.inline_content if c.staged_uri is None else storage.get(c.staged_uri)
        for c in resp.commits
        if c.inline_content is not None or c.staged_uri is not None
    }
    published: dict[int, bytes] = {}
    for f in (parse(i.uri) for i in storage.list(f"{info.location}/_delta_log/")):
        if f is not None and f.kind == "delta" and f.version <= resp.latest_version:
            published[f.version] = storage.get(f.uri)
    merged = table_commits(published, {v: c for v, c in ratified.items() if c is not None}, resp.latest_version)
    return {v: C.decode(c) for v, c in sorted(merged.items())}


def _later_changes(commits: Commits, version: int, got: set[str]) -> list[int]:
    """The later versions whose changes a checkpoint of ``version`` listing ``got`` as live shows:
    files added after ``version`` that it lists, files live at ``version`` that a later commit
    removed and it leaves out."""
    at = set(replay(commits, version).files)
    shown: set[int] = set()
    for v in sorted(u for u in commits if u > version):
        for a in commits[v]:
            if "add" in a and str(a["add"]["path"]) in got - at:
                shown.add(v)
            if "remove" in a and str(a["remove"]["path"]) in at - got:
                shown.add(v)
    return sorted(shown)


def checkpoint_fault(storage: Storage, uris: Sequence[str], version: int, commits: Commits) -> str | None:
    """Why the checkpoint of ``version`` in the files ``uris`` (one, or every part of a multi-part
    one) does not hold the state at ``version``; None when it does. ``commits`` must reach
    ``version`` and, to name the later changes a wrong one holds, the versions after it."""
    actions: list[Action] = []
    for uri in uris:
        try:
            actions += checkpoint_actions(storage.get(uri))
        except CheckpointFormatError as e:
            return f"the checkpoint file {uri} is not a readable checkpoint: {e}"
    got = set(replay({}, version, (version, actions)).files)
    want = set(replay(commits, version).files)
    if got == want:
        return None
    later = _later_changes(commits, version, got)
    why = (
        f"the checkpoint of v{version} lists {len(got)} live files, the replay of commits 0-{version} gives"
        f" {len(want)}: it adds {sorted(got - want)} and leaves out {sorted(want - got)}"
    )
    if later:
        why += (
            f": it holds the changes of the later versions {later}, ratified but unpublished when it was"
            " written. A checkpoint of v holds v's state only; this one is in substance a checkpoint of"
            " unpublished versions, named after a published one"
        )
    return why


def compaction_fault(storage: Storage, location: str, start: int, end: int, commits: Commits) -> str | None:
    """Why the compaction of ``start``..``end`` at ``location`` is not the reconciliation of exactly
    the commits ``start``..``end``; None when it is. Files are compared by path and kind (the last
    ``add`` or ``remove`` of each path in the range)."""
    expected: dict[str, str] = {}
    for v in range(start, end + 1):
        for a in commits[v]:
            for kind in ("add", "remove"):
                if kind in a:
                    expected[str(a[kind]["path"])] = kind
    try:
        body = C.decode(storage.get(compaction_uri(location, start, end)))
    except C.CommitFormatError as e:
        return f"the compaction of v{start}-v{end} is not newline-delimited JSON actions: {e}"
    header = _header_fault(start, end, commits, body)
    if header is not None:
        return header
    # The file's own shape before its replay: a replay in order (add, then remove) hides a file left
    # both added and removed, which the reconciliation forbids.
    shape = _unreconciled_files(start, end, body)
    if shape is not None:
        return shape
    got = {str(a[k]["path"]): k for a in body for k in ("add", "remove") if k in a}
    if got == expected:
        return None
    missing = sorted(p for p, k in expected.items() if k == "remove" and got.get(p) != "remove")
    return f"the compaction of v{start}-v{end} holds {got}; its commits reconcile to {expected}" + (
        f" (the removes of {missing} are missing: a compaction keeps every remove of its range, of files"
        " added before it too)"
        if missing
        else ""
    )


def _unreconciled_files(start: int, end: int, body: Sequence[Action]) -> str | None:
    """Why the compaction's file actions are not reconciled; None when they are.

    PROTOCOL.md "Log Compaction Files" builds the file by "Action Reconciliation" of its commits, and
    reconciled actions hold each logical file (its path: the suite writes no deletion vectors) once,
    in the add collection or in the remove collection, never both: a file added and removed inside
    the range is there as its remove only (the protocol's example keeps such tombstones). Readers may
    apply a compaction's actions in any order, so a second action for a path leaves the file's state
    undefined."""
    kinds: dict[str, list[str]] = {}
    for a in body:
        for kind in ("add", "remove"):
            if kind in a:
                kinds.setdefault(str(a[kind]["path"]), []).append(kind)
    repeated = {path: found for path, found in sorted(kinds.items()) if len(found) > 1}
    if not repeated:
        return None
    shown = "; ".join(f"{path}: {' then '.join(found)}" for path, found in list(repeated.items())[:3])
    more = f" (and {len(repeated) - 3} more)" if len(repeated) > 3 else ""
    return (
        f"the compaction of v{start}-v{end} holds {len(repeated)} file(s) more than once ({shown}{more}): its"
        " actions must be the reconciliation of its commits, one action per file; a file added and removed"
        " inside the range appears only as its remove"
    )


# The metaData fields that make a table's state (the rest, e.g. createdTime, a writer may leave out).
_METADATA_FIELDS = ("id", "schemaString", "partitionColumns", "configuration")


def _header_fault(start: int, end: int, commits: Commits, body: Sequence[Action]) -> str | None:
    """Why the compaction's protocol and metaData are not the last of its range (none when the range
    changes neither: a compaction is read in place of its commits, on top of what comes before it);
    None when they are. The range is replayed by the suite's oracle from nothing below ``start``."""
    want = replay(commits, end, (start - 1, []))
    protocols = [a["protocol"] for a in body if "protocol" in a]
    metadatas = [a["metaData"] for a in body if "metaData" in a]
    got_protocol = protocols[-1] if protocols else None
    got_metadata = {k: metadatas[-1].get(k) for k in _METADATA_FIELDS} if metadatas else None
    want_metadata = {k: want.metadata.get(k) for k in _METADATA_FIELDS} if want.metadata is not None else None
    where = f"the compaction of v{start}-v{end}"
    if got_protocol != want.protocol:
        last = want.protocol or "none (the range changes no protocol)"
        return (
            f"{where} holds the protocol {got_protocol}; the last protocol action of commits {start}-{end} is"
            f" {last} (a compaction keeps the range's last protocol, and only the range's)"
        )
    if got_metadata != want_metadata:
        last_md = want_metadata or "none (the range changes no metaData)"
        return (
            f"{where} holds the metaData {got_metadata}; the last metaData action of commits {start}-{end} is"
            f" {last_md} (a compaction keeps the range's last metaData, and only the range's)"
        )
    return None


def published_commits(storage: Storage, location: str, start: int, end: int) -> dict[int, list[Action]]:
    """Version -> actions of the published files ``start``..``end`` (what a compaction may cover)."""
    return {v: C.decode(storage.get(published_uri(location, v))) for v in range(start, end + 1)}
