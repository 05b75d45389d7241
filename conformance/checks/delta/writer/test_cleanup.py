"""Metadata cleanup of a catalog-managed table (RFC changes to "Metadata Cleanup")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.checks.delta.evidence import log_files
from conformance.contract.delta import NotSupported, Storage
from conformance.observe.recording import RecordingClient
from conformance.oracle.names import LogName
from conformance.report.outcomes import not_applicable
from reference_impl.delta.client import ReferenceClient

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


def _prepare_checkpoints(suite_client: ReferenceClient, name: str) -> str:
    """v1-v8 with checkpoints of v2, v4 and v6. v5 was staged before the checkpoint of v4 and
    published after it; v7-v8 were staged before the checkpoint of v6 and are never published: their
    staged files are older than the checkpoint whose version they are above."""
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
