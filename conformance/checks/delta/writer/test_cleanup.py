"""Metadata cleanup of a catalog-managed table (RFC changes to "Metadata Cleanup")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.checks.delta.evidence import log_files
from conformance.contract.delta import NotSupported, Storage
from conformance.observe.recording import RecordingClient
from conformance.oracle.names import LogName, complete_checkpoints
from conformance.report.outcomes import Violation, not_applicable
from reference_impl.delta.checkpoint import read_checkpoint, write_last_checkpoint, write_multipart_checkpoint
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.log_paths import checkpoint_uri

CUTOFF = 5  # the cut-off commit; the newest checkpoint at or before it is v3


def _prepare(suite_client: ReferenceClient, name: str, *, checkpoint: bool) -> str:
    """v1-v6 published with compactions 1-2 and 3-4 (and a checkpoint at v3 when asked), v7 ratified
    only. The compaction 3-4 starts exactly at the cut-off checkpoint: cleanup deletes it too. Without
    the checkpoint the compactions are still there: a compaction file is no cut-off checkpoint."""
    suite_client.create_table(name)
    for v in range(1, 4):
        suite_client.append(name, [{"id": v, "value": "x"}])
    suite_client.publish(name)
    if (checkpoint and suite_client.checkpoint(name) != 3) or not suite_client.compact_log(name, 1, 2):
        raise RuntimeError("the suite's own client could not prepare the checkpoint and compaction")
    for v in range(4, 7):
        suite_client.append(name, [{"id": v, "value": "x"}])
    suite_client.publish(name)
    if not suite_client.compact_log(name, 3, 4):
        raise RuntimeError("the suite's own client could not prepare the compaction 3-4")
    suite_client.append(name, [{"id": 7, "value": "x"}])
    return suite_client.catalog.resolve(name).location


def _cleanup(
    client: RecordingClient, storage: Storage, location: str, name: str, cutoff: int = CUTOFF
) -> tuple[set[LogName], set[LogName]]:
    """Run the client's cleanup; return (files before, files deleted)."""
    before = set(log_files(storage, location))
    try:
        client.cleanup(name, cutoff)
    except NotSupported:
        assert set(log_files(storage, location)) == before, "cleanup refused, yet files changed"
        not_applicable("the client does not run metadata cleanup (verified: nothing deleted)")
    return before, before - set(log_files(storage, location))


@pytest.mark.req("WRT-CLEANUP-NEEDS-CHECKPOINT")
def test_no_cleanup_without_a_checkpoint(
    client: RecordingClient, suite_client: ReferenceClient, suite_storage: Storage, table_name: str
) -> None:
    location = _prepare(suite_client, table_name, checkpoint=False)
    _, deleted = _cleanup(client, suite_storage, location, table_name)
    assert not deleted, f"deleted without any checkpoint at or before v{CUTOFF}: {sorted(f.uri for f in deleted)}"
    # Now a checkpoint exists, but only after the cut-off (v6, the newest published version): it is no
    # cut-off checkpoint, so cleanup must still delete nothing. A writer that takes the checkpoint
    # nearest the cut-off, or the newest one, would delete v0-v5, which the cut-off keeps.
    if suite_client.checkpoint(table_name) != CUTOFF + 1:
        raise RuntimeError(f"the suite's own client could not write the checkpoint of v{CUTOFF + 1}")
    _, deleted = _cleanup(client, suite_storage, location, table_name)
    assert not deleted, (
        f"deleted with the only checkpoint (v{CUTOFF + 1}) after the cut-off v{CUTOFF}:"
        f" {sorted(f.uri for f in deleted)}"
    )


@pytest.mark.req("WRT-CLEANUP-KEEPS")
def test_cleanup_keeps_checkpoint_and_later_commits(
    client: RecordingClient, suite_client: ReferenceClient, suite_storage: Storage, table_name: str
) -> None:
    location = _prepare(suite_client, table_name, checkpoint=True)
    _, deleted = _cleanup(client, suite_storage, location, table_name)
    lost = [
        f.uri for f in deleted if (f.kind == "checkpoint" and f.version == 3) or (f.kind == "delta" and f.version > 3)
    ]
    assert not lost, f"cleanup removed the cut-off checkpoint or published commits after it: {lost}"


@pytest.mark.req("WRT-CLEANUP-STAGED-ABOVE")
def test_cleanup_keeps_staged_commits_above_the_checkpoint(
    client: RecordingClient, suite_client: ReferenceClient, suite_storage: Storage, table_name: str
) -> None:
    location = _prepare(suite_client, table_name, checkpoint=True)
    _, deleted = _cleanup(client, suite_storage, location, table_name)
    lost = [f.uri for f in deleted if f.kind == "staged" and f.version > 3]
    assert not lost, f"staged commits above the cut-off checkpoint (v3) deleted: {lost}"


@pytest.mark.req("WRT-CLEANUP-STAGED-BELOW")
def test_cleanup_removes_staged_commits_up_to_the_checkpoint(
    client: RecordingClient, suite_client: ReferenceClient, suite_storage: Storage, table_name: str
) -> None:
    location = _prepare(suite_client, table_name, checkpoint=True)
    before, deleted = _cleanup(client, suite_storage, location, table_name)
    left = [f.uri for f in before - deleted if f.kind == "staged" and f.version <= 3]
    assert not left, f"staged commits at or below v3 left behind: {left}"


@pytest.mark.req("WRT-CLEANUP-COMPACTION")
def test_cleanup_removes_old_compactions(
    client: RecordingClient, suite_client: ReferenceClient, suite_storage: Storage, table_name: str
) -> None:
    location = _prepare(suite_client, table_name, checkpoint=True)
    before, deleted = _cleanup(client, suite_storage, location, table_name)
    left = [f.uri for f in before - deleted if f.kind == "compaction" and f.version <= 3]
    assert not left, f"log compaction files starting at or below v3 left behind: {left}"


# Several checkpoints, each written while ratified commits sat unpublished above it, then cleanup at
# every cut-off from the first checkpoint on, at each checkpoint and between them. The two checks
# above see one checkpoint, written before the commits above it: a cleanup that takes a newer
# checkpoint to supersede the cut-off one, or judges a staged commit by its age (older than the
# cut-off checkpoint file) rather than its version, deletes nothing there that it must keep.
CHECKPOINTS = (2, 4, 6)
PUBLISHED = 6  # v7-v8 stay ratified, unpublished


COMPACTIONS = ((1, 2), (3, 4), (5, 6))  # each starts just after a checkpoint or below one


def _prepare_checkpoints(suite_client: ReferenceClient, name: str) -> str:
    """v1-v8 with checkpoints of v2, v4 and v6 and compactions of ``COMPACTIONS``. v5 was staged before
    the checkpoint of v4 and published after it; v7-v8 were staged before the checkpoint of v6 and are
    never published: their staged files are older than the checkpoint whose version they are above."""
    suite_client.create_table(name)
    for v in (1, 2):
        suite_client.append(name, [{"id": v, "value": "x"}])
    suite_client.publish(name)
    took = [suite_client.checkpoint(name)]
    for v in (3, 4):
        suite_client.append(name, [{"id": v, "value": "x"}])
    suite_client.publish(name)
    suite_client.append(name, [{"id": 5, "value": "x"}])
    took.append(suite_client.checkpoint(name))
    suite_client.publish(name)
    suite_client.append(name, [{"id": 6, "value": "x"}])
    suite_client.publish(name)
    if not all(suite_client.compact_log(name, lo, hi) for lo, hi in COMPACTIONS):
        raise RuntimeError(f"the suite's own client could not write the compactions {COMPACTIONS}")
    for v in (7, 8):
        suite_client.append(name, [{"id": v, "value": "x"}])
    took.append(suite_client.checkpoint(name))
    if tuple(took) != CHECKPOINTS:
        raise RuntimeError(f"the suite's own client wrote the checkpoints {took}, not {CHECKPOINTS}")
    return suite_client.catalog.resolve(name).location


def _each_cut_off(
    client: RecordingClient, storage: Storage, location: str, name: str
) -> Iterator[tuple[int, int, set[LogName], set[LogName]]]:
    """Cleanup at the cut-offs v2..v6 in turn, every published version from the first checkpoint on
    (each on what the one before left): (cut-off, its cut-off checkpoint's version, files left, files
    deleted by this call)."""
    for cutoff in range(CHECKPOINTS[0], PUBLISHED + 1):
        before, deleted = _cleanup(client, storage, location, name, cutoff)
        yield cutoff, max(c for c in CHECKPOINTS if c <= cutoff), before - deleted, deleted


def _unreadable(left: set[LogName], first: int, last: int) -> list[int]:
    """The published versions first..last that the files left in _delta_log no longer rebuild: none of
    the checkpoints left at or below v has every published commit after it up to v."""
    deltas = {f.version for f in left if f.kind == "delta"}
    starts = {-1} | {f.version for f in left if f.kind == "checkpoint"}
    return [
        v
        for v in range(first, last + 1)
        if not any(c <= v and all(u in deltas for u in range(c + 1, v + 1)) for c in starts)
    ]


@pytest.mark.req("WRT-CLEANUP-KEEPS")
def test_cleanup_at_every_cut_off_keeps_what_later_versions_need(
    client: RecordingClient, suite_client: ReferenceClient, suite_storage: Storage, table_name: str
) -> None:
    location = _prepare_checkpoints(suite_client, table_name)
    for cutoff, kept, left, deleted in _each_cut_off(client, suite_storage, location, table_name):
        lost = sorted(
            f.uri.rsplit("/", 1)[-1]
            for f in deleted
            if (f.kind == "checkpoint" and f.version == kept) or (f.kind == "delta" and f.version > kept)
        )
        unreadable = _unreadable(left, kept, PUBLISHED)
        assert not lost, (
            f"cleanup at the cut-off v{cutoff} (checkpoints of v{list(CHECKPOINTS)}; the cut-off checkpoint is"
            f" v{kept}'s) deleted {lost}"
            + (f"; the published versions {unreadable} can no longer be rebuilt from _delta_log" if unreadable else "")
            + ". The cut-off checkpoint and every published commit after it stay, whatever newer checkpoints exist"
        )


@pytest.mark.req("WRT-CLEANUP-STAGED-ABOVE")
def test_cleanup_at_every_cut_off_keeps_staged_commits_above_it(
    client: RecordingClient, suite_client: ReferenceClient, suite_storage: Storage, table_name: str
) -> None:
    location = _prepare_checkpoints(suite_client, table_name)
    for cutoff, kept, _, deleted in _each_cut_off(client, suite_storage, location, table_name):
        lost = sorted(f.version for f in deleted if f.kind == "staged" and f.version > kept)
        assert not lost, (
            f"cleanup at the cut-off v{cutoff} deleted the staged commits of v{lost}, above the cut-off"
            f" checkpoint v{kept} (v{PUBLISHED + 1}-v{PUBLISHED + 2} unpublished; their staged files, and v5's, were"
            " written before the checkpoint above whose version they are): a staged commit goes by its version,"
            " not its age"
        )


def _covered_left(
    client: RecordingClient, suite_client: ReferenceClient, storage: Storage, name: str, kind: str
) -> Iterator[tuple[str, list[tuple[int, int | None]]]]:
    """Cleanup at the cut-offs v2..v6 in turn (``_each_cut_off``): at a checkpoint (v2, the only one
    there; v4; v6), just above one (v3, v5) and with several checkpoints below. The cut-off checkpoint
    is the newest one not newer than the cut-off commit, the one AT it included (RFC "Metadata Cleanup"
    step 2; the ideal cut-off is a checkpoint's own version), and step 3 deletes the staged commits
    and the log compaction files (by start version) at or below it. Yields, per cut-off, where it
    stands and the files of ``kind`` at or below the cut-off checkpoint left: (version, end version)."""
    location = _prepare_checkpoints(suite_client, name)
    for cutoff, kept, left, _ in _each_cut_off(client, storage, location, name):
        where = (
            f"cleanup at the cut-off v{cutoff} (checkpoints of v{list(CHECKPOINTS)}: the cut-off checkpoint is"
            f" v{kept}'s, the newest not newer than the cut-off commit{', the one at it' if kept == cutoff else ''})"
        )
        yield where, sorted((f.version, f.end_version) for f in left if f.kind == kind and f.version <= kept)


# The single-checkpoint checks above clean up two versions above their checkpoint: a cleanup that takes
# the cut-off commit as exclusive (the newest checkpoint strictly before it) passes them and, at the
# usual cut-off (a checkpoint's own version), deletes nothing of what step 3 names.
@pytest.mark.req("WRT-CLEANUP-STAGED-BELOW")
def test_cleanup_at_every_cut_off_removes_staged_commits_up_to_its_checkpoint(
    client: RecordingClient, suite_client: ReferenceClient, suite_storage: Storage, table_name: str
) -> None:
    for where, left in _covered_left(client, suite_client, suite_storage, table_name, "staged"):
        assert not left, (
            f"{where} left the staged commits of v{[v for v, _ in left]}, at or below the cut-off checkpoint:"
            " step 3 deletes them"
        )


@pytest.mark.req("WRT-CLEANUP-COMPACTION")
def test_cleanup_at_every_cut_off_removes_compactions_from_its_checkpoint_down(
    client: RecordingClient, suite_client: ReferenceClient, suite_storage: Storage, table_name: str
) -> None:
    for where, left in _covered_left(client, suite_client, suite_storage, table_name, "compaction"):
        assert not left, (
            f"{where} left the log compaction files {left} (start, end), starting at or below the cut-off"
            " checkpoint: step 3 deletes them"
        )


# Checkpoints in every form PROTOCOL.md "Checkpoints" allows a table without the v2Checkpoint feature
# (the suite's tables; UUID-named V2 checkpoints need that feature), whole and not, with the
# _last_checkpoint hint in every state it can be in. The checks above see only single-file checkpoints
# written whole by the suite's own client, and a hint that names the newest of them; a cleanup that
# counts one part of a multi-part set as a checkpoint, or takes the hint's word for a checkpoint, shows
# only on a log that holds the others. (version, parts, part left out): parts 1 is a single file.
CHECKPOINT_FORMS = (
    (2, 2, 2),  # multi-part, its last part missing (its writer died between parts): no checkpoint
    (4, 2, None),  # multi-part, whole: a checkpoint
    (6, 3, 2),  # multi-part, a middle part missing (first and last there): no checkpoint
    (7, 1, None),  # single file, whole: a checkpoint
)
# What _last_checkpoint says when the cleanup at each cut-off runs (planted before the call, as a
# writer of that form leaves it): the incomplete set of v2; v3, which has no checkpoint file at all (a
# writer that died after the hint, or a file since lost); the whole set of v4; the incomplete set of
# v6; the single file of v7; and at the end v4 while v7 is newer (stale: a hint may lag).
HINTS = {
    1: {"version": 2, "size": 4, "parts": 2},
    3: {"version": 3, "size": 5},
    4: {"version": 4, "size": 6, "parts": 2},
    6: {"version": 6, "size": 8, "parts": 3},
    7: {"version": 7, "size": 9},
    9: {"version": 4, "size": 6, "parts": 2},
}
FORMS_PUBLISHED = 9  # v10-v11 stay ratified, unpublished


def _prepare_checkpoint_forms(suite_client: ReferenceClient, storage: Storage, name: str) -> str:
    """v1-v9 published, v10-v11 ratified only, with ``CHECKPOINT_FORMS`` planted. The
    suite's client writes each checkpoint as a single file of the newest published version; a
    multi-part one is then rewritten as its parts (the reference reads only single files, so it never
    starts from the parts it is given)."""
    suite_client.create_table(name)
    location = suite_client.catalog.resolve(name).location
    forms = {version: (parts, skip) for version, parts, skip in CHECKPOINT_FORMS}
    for v in range(1, FORMS_PUBLISHED + 1):
        suite_client.append(name, [{"id": v, "value": "x"}])
        suite_client.publish(name)
        if v in forms:
            parts, skip = forms[v]
            if suite_client.checkpoint(name) != v:
                raise RuntimeError(f"the suite's own client could not write the checkpoint of v{v}")
            if parts > 1:
                actions = read_checkpoint(storage, location, v)
                storage.delete(checkpoint_uri(location, v))
                write_multipart_checkpoint(storage, location, v, actions, parts, skip=skip)
    for v in (FORMS_PUBLISHED + 1, FORMS_PUBLISHED + 2):
        suite_client.append(name, [{"id": v, "value": "x"}])
    return location


def _hint_at(cutoff: int) -> str:
    """What the planted _last_checkpoint says at ``cutoff``, for the why line."""
    hint = HINTS[max(c for c in HINTS if c <= cutoff)]
    return f"v{hint['version']}" + (f" in {hint['parts']} parts" if "parts" in hint else " as a single file")


@pytest.mark.req("WRT-CLEANUP-NEEDS-CHECKPOINT", "WRT-CLEANUP-KEEPS")
def test_cleanup_takes_only_a_whole_checkpoint_for_the_cut_off(
    client: RecordingClient, suite_client: ReferenceClient, suite_storage: Storage, table_name: str
) -> None:
    """Cleanup at every cut-off v1..v9 in turn (each on what the one before left) on a log holding a
    multi-part checkpoint with a part missing at v2 and v6, a whole multi-part one at v4 and a single
    file at v7, under a _last_checkpoint in each state ``HINTS`` plants (naming an incomplete set, a
    version with no checkpoint, a whole one, or a stale one). The cut-off checkpoint is the newest
    WHOLE checkpoint at or before the cut-off (``complete_checkpoints``, from the files there before
    the call): an incomplete set or a hint is never one. With none, nothing may be deleted (RFC
    "Metadata Cleanup" step 2); with one, it and every published commit after it stay. A client that
    reads no multi-part checkpoint may keep more."""
    location = _prepare_checkpoint_forms(suite_client, suite_storage, table_name)
    for cutoff in range(1, FORMS_PUBLISHED + 1):
        if cutoff in HINTS:
            write_last_checkpoint(suite_storage, location, HINTS[cutoff])
        before, deleted = _cleanup(client, suite_storage, location, table_name, cutoff)
        whole = [v for v in complete_checkpoints(before) if v <= cutoff]
        present = sorted({f.version for f in before if f.kind == "checkpoint" and f.version <= cutoff})
        gone = sorted(f.uri.rsplit("/", 1)[-1] for f in deleted)
        # Step 2: no whole checkpoint at or before the cut-off: what is there is a part, or a hint.
        if not whole and deleted:
            raise Violation(
                "WRT-CLEANUP-NEEDS-CHECKPOINT",
                f"cleanup at the cut-off v{cutoff} deleted {gone}, yet no whole checkpoint exists at or before"
                f" v{cutoff}: the checkpoint files of v{present} are multi-part sets with a part missing (no"
                " checkpoint: a reader starting there loses the missing part's files), and _last_checkpoint is"
                f" only a hint (it names {_hint_at(cutoff)})",
            )
        if not whole:
            continue
        # Step 2 with a whole checkpoint: the newest whole one is the cut-off, never a newer incomplete set.
        kept = max(whole)
        lost = sorted(
            f.uri.rsplit("/", 1)[-1]
            for f in deleted
            if (f.kind == "checkpoint" and f.version == kept) or (f.kind == "delta" and f.version > kept)
        )
        if lost:
            raise Violation(
                "WRT-CLEANUP-KEEPS",
                f"cleanup at the cut-off v{cutoff} deleted {lost}: the cut-off checkpoint is v{kept}'s, the newest"
                f" whole one at or before v{cutoff} (checkpoint files there: v{present}; an incomplete multi-part"
                f" set or the _last_checkpoint hint, here {_hint_at(cutoff)}, is never the cut-off), and it and"
                " every published commit after it stay",
            )
