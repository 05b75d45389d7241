"""Checkpoints, log compaction and the catalog's policy (RFC "Maintenance Operations ...")."""

from __future__ import annotations

import itertools
import random
from functools import partial

import pytest

from conformance.checks.delta.builders import premise
from conformance.checks.delta.evidence import attempt, client_deletes, client_writes, speaks_only_uc_api
from conformance.contract.delta import MaintenancePolicy, NotSupported, Storage
from conformance.observe.recording import RecordingClient
from conformance.observe.transcript import Transcript
from conformance.oracle.commits import decode
from conformance.oracle.names import compaction_uri, parse, published_uri
from conformance.report.outcomes import not_applicable
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient


def _half_published(client: RecordingClient, name: str) -> None:
    """v1-v2 published, v3-v4 ratified but not published."""
    client.create_table(name)
    client.append(name, [{"id": 1, "value": "a"}])
    client.append(name, [{"id": 2, "value": "b"}])
    client.publish(name)
    client.append(name, [{"id": 3, "value": "c"}])
    client.append(name, [{"id": 4, "value": "d"}])


def _published_by(transcript: Transcript, location: str, version: int, seq: int) -> bool:
    target = published_uri(location, version)
    return version == 0 or any(
        e.args["uri"] == target and e.seq < seq
        for e in transcript.events(op="put", ok=True)
        if e.actor in ("storage", "suite")
    )


@pytest.mark.req("WRT-CHECKPOINT-PUBLISHED")
def test_checkpoints_only_published_versions(
    client: RecordingClient, ref_admin: ReferenceCatalog, transcript: Transcript, table_name: str
) -> None:
    _half_published(client, table_name)
    client.checkpoint(table_name)
    location = ref_admin.resolve(table_name).location
    written = client_writes(transcript, "checkpoint")
    if not written:
        not_applicable("the client wrote no checkpoint (verified: no checkpoint file was written)")
    for event, f in written:
        assert _published_by(transcript, location, f.version, event.seq), (
            f"checkpoint of v{f.version} written while {published_uri(location, f.version)} did not exist"
        )


@pytest.mark.req("WRT-COMPACTION-PUBLISHED")
def test_compacts_only_published_versions(
    client: RecordingClient, ref_admin: ReferenceCatalog, transcript: Transcript, table_name: str
) -> None:
    _half_published(client, table_name)
    # (2, 3): only the range's last version is unpublished (an exclusive end would miss it).
    for start, end in ((1, 4), (2, 3), (1, 2)):
        try:
            client.compact_log(table_name, start, end)
        except NotSupported:
            assert not client_writes(transcript, "compaction"), "compaction refused, yet a file was written"
            not_applicable("the client does not write log compaction files (verified)")
    location = ref_admin.resolve(table_name).location
    for event, f in client_writes(transcript, "compaction"):
        missing = [
            v
            for v in range(f.version, (f.end_version or f.version) + 1)
            if not _published_by(transcript, location, v, event.seq)
        ]
        assert not missing, f"compaction {f.version}-{f.end_version} covers unpublished versions {missing}"


def _active_files(storage: Storage, location: str, start: int, end: int) -> dict[str, str]:
    """Path -> "add" or "remove" after replaying the published commits start..end, read from
    _delta_log by the suite itself (the expected content of a compaction of that range)."""
    files: dict[str, str] = {}
    for version in range(start, end + 1):
        for action in decode(storage.get(published_uri(location, version))):
            for kind in ("add", "remove"):
                if kind in action:
                    files[action[kind]["path"]] = kind
    return files


@pytest.mark.req("WRT-COMPACTION-CONTENT")
def test_compaction_holds_exactly_its_range(
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    suite_storage: Storage,
    table_name: str,
) -> None:
    # v1-v4 published; v2 removes v1's file. A compaction of (1, 3) must hold v1's file as removed
    # and v3's as added, and stop at v3: v4's file in it, or either action missing, changes the
    # table for every reader that uses it.
    client.create_table(table_name)
    client.append(table_name, [{"id": 1, "value": "a"}])
    client.delete(table_name, [1])
    client.append(table_name, [{"id": 3, "value": "c"}])
    client.append(table_name, [{"id": 4, "value": "d"}])
    client.publish(table_name)
    # v5-v9 add a file each and v10 removes v9's: a compaction of (5, 10) replayed in the versions'
    # text order ("10" before "5".."9") brings v9's file back as added. The suite writes these
    # (cheaply); the writer under test only has to read and reconcile them.
    with premise("the suite's writer appending v5-v9, deleting v9's row at v10 and publishing"):
        for i in range(5, 10):
            suite_client.append(table_name, [{"id": i, "value": "x"}])
        suite_client.delete(table_name, [9])
        suite_client.publish(table_name)
    location = ref_admin.resolve(table_name).location
    ranges = ((1, 3), (5, 10))
    for start, end in ranges:
        try:
            client.compact_log(table_name, start, end)
        except NotSupported:
            not_applicable("the client does not write log compaction files")
    written = [(start, end) for start, end in ranges if suite_storage.exists(compaction_uri(location, start, end))]
    if not written:
        not_applicable("the client wrote no compaction of v1-v3 or v5-v10 (declining is allowed)")
    for start, end in written:
        got = {
            a[k]["path"]: k
            for a in decode(suite_storage.get(compaction_uri(location, start, end)))
            for k in ("add", "remove")
            if k in a
        }
        expected = _active_files(suite_storage, location, start, end)
        assert got == expected, f"compaction of v{start}-v{end} holds {got}; its commits reconcile to {expected}"


@pytest.mark.req("WRT-MAINTENANCE-POLICY")
def test_forbidden_maintenance_is_not_run(
    client: RecordingClient, ref_admin: ReferenceCatalog, transcript: Transcript, table_name: str
) -> None:
    client.create_table(table_name)
    for i in range(1, 4):
        client.append(table_name, [{"id": i, "value": "x"}])
    client.publish(table_name)
    table_id = ref_admin.resolve(table_name).table_id
    ref_admin.set_maintenance_policy(table_id, MaintenancePolicy(allowed=frozenset()))
    transcript.notes["schedule"] = [
        "catalog policy: no maintenance allowed",
        "client: checkpoint, compact_log(1,2), cleanup(3)",
    ]
    attempt(lambda: client.checkpoint(table_name))
    attempt(lambda: client.compact_log(table_name, 1, 2))
    attempt(lambda: client.cleanup(table_name, 3))
    maint = [f.uri for _, f in client_writes(transcript) if f.kind in ("checkpoint", "compaction")]
    deleted = client_deletes(transcript)
    if (maint or deleted) and speaks_only_uc_api(transcript):
        # The rule binds a writer to the catalog's policies; a policy its catalog API cannot carry
        # never reached it. Unity Catalog's API has none (its ManagedTablesSpec: no per-table policy
        # or API), and the policy set here is lakecert's extension, which this client never asked for.
        not_applicable(
            "the client reaches its catalog over Unity Catalog's API, which carries no maintenance policy "
            "(verified: every catalog request it made is UC's, none asked for lakecert's policy extension)"
        )
    assert not maint, f"maintenance files written against the catalog's policy: {maint}"
    assert not deleted, f"cleanup deleted files against the catalog's policy: {deleted}"


# The dimensions a policy can forbid that the contract can drive or observe: checkpoints, log
# compaction and metadata cleanup are called; version checksum files are seen when a client writes
# them (with a commit or a checkpoint). VACUUM has no call in the contract.
POLICY_DIMENSIONS = ("checkpoint", "log_compaction", "checksum", "metadata_cleanup")
_WRITTEN_KIND = {"checkpoint": "checkpoint", "compaction": "log_compaction", "checksum": "checksum"}


@pytest.mark.req("WRT-MAINTENANCE-POLICY")
def test_maintenance_obeys_every_policy_combination(
    client: RecordingClient, ref_admin: ReferenceCatalog, transcript: Transcript, table_name: str, seed: int
) -> None:
    """Every combination of the four policy dimensions on one table whose policy changes between
    rounds (a client that asked once and kept the answer is caught when the policy narrows): each
    round commits, publishes, checkpoints, compacts and cleans up to its own commit, and nothing the
    round's policy forbids may be written or deleted (RFC "Maintenance Operations on Catalog-managed
    Tables": the policies cover checkpoints, log compaction, checksum files and metadata cleanup)."""
    combos = [
        frozenset(op for op, on in zip(POLICY_DIMENSIONS, bits, strict=True) if on)
        for bits in itertools.product((True, False), repeat=len(POLICY_DIMENSIONS))
    ]
    # Everything allowed first (what a client that asks once and keeps the answer would keep), then
    # the other fifteen in the seed's order.
    combos = [combos[0], *random.Random(seed).sample(combos[1:], len(combos) - 1)]
    with premise("the writer under test creating the table and publishing v1"):
        client.create_table(table_name)
        client.append(table_name, [{"id": 0, "value": "x"}])
        client.publish(table_name)
    table_id = ref_admin.resolve(table_name).table_id
    found: list[str] = []
    schedule: list[str] = []
    transcript.notes["schedule"] = schedule
    for i, allowed in enumerate(combos, start=1):
        ref_admin.set_maintenance_policy(table_id, MaintenancePolicy(allowed=allowed | {"vacuum"}))
        schedule.append(f"round {i}: the policy allows {sorted(allowed) or 'nothing'}")
        start = len(transcript.events())
        with premise(f"the writer under test committing and publishing v{i + 1}"):
            client.append(table_name, [{"id": i, "value": "x"}])
            client.publish(table_name)
        attempt(lambda: client.checkpoint(table_name))
        attempt(partial(client.compact_log, table_name, max(1, i - 2), i))
        cleanup_start = len(transcript.events())
        attempt(partial(client.cleanup, table_name, i + 1))  # v(i+1): this round's commit
        step = transcript.events()[start:]
        written = [
            (_WRITTEN_KIND[f.kind], f.uri)
            for e in step
            if e.actor == "storage"
            and e.op == "put"
            and e.ok
            and (f := parse(e.args["uri"]))
            and f.kind in _WRITTEN_KIND
        ]
        found += [f"round {i}: {op} wrote {uri.rsplit('/', 1)[-1]}" for op, uri in written if op not in allowed]
        # Deletes during the cleanup call only: a client may remove its own staged files as it publishes.
        deleted = [e for e in transcript.events()[cleanup_start:] if e.actor == "storage" and e.op == "delete" and e.ok]
        if deleted and "metadata_cleanup" not in allowed:
            found.append(f"round {i}: cleanup deleted {len(deleted)} files")
        if found:
            break
    if found and speaks_only_uc_api(transcript):
        # As in test_forbidden_maintenance_is_not_run: UC's API carries no policy, so none reached it.
        not_applicable(
            "the client reaches its catalog over Unity Catalog's API, which carries no maintenance policy "
            "(verified: every catalog request it made is UC's, none asked for lakecert's policy extension)"
        )
    assert not found, f"maintenance the catalog's policy forbade: {found} (policies in order: {schedule})"
