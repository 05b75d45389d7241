"""How the writer stages and proposes commits (RFC "Delta Log Entries", "Commit Protocol")."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.checks.delta.builders import UC_TABLE_ID, LogBuilder, non_ascii_value, premise, version0, when
from conformance.checks.delta.evidence import attempt, client_writes, misnamed_proposals, proposals
from conformance.checks.delta.long_names import long_name, prefix_names
from conformance.checks.delta.writer.conftest import WrittenTable, ahead_client
from conformance.checks.delta.writer.races import lose_v2
from conformance.contract.delta import CommitConflict, Storage, TableNotFound
from conformance.observe.recording import RecordingCatalog, RecordingClient
from conformance.observe.transcript import Transcript
from conformance.oracle.commits import CommitFormatError, decode, in_commit_timestamp
from conformance.oracle.names import published_uri
from conformance.report.outcomes import Violation, not_applicable
from conformance.run_context import RunContext
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient


def _staged_proposals(transcript: Transcript, table_id: str) -> list[tuple[int, str]]:
    found = [
        (e.args["version"], e.args["staged_uri"])
        for e in proposals(transcript, table_id)
        if e.args["staged_uri"] is not None
    ]
    if not found and proposals(transcript, table_id):
        not_applicable("the writer proposes inline commits only (verified: no staged proposal)")
    return found


@pytest.mark.req("WRT-STAGED-NAME")
def test_staged_files_are_named_for_their_version(
    client: RecordingClient, ref_admin: ReferenceCatalog, transcript: Transcript, table_name: str
) -> None:
    client.create_table(table_name)
    # Up to v11: a name padded as 19 zeros and the version is right only below 10.
    outcome = attempt(lambda: [client.append(table_name, [{"id": i, "value": "x"}]) for i in range(11)])
    table = ref_admin.resolve(table_name)
    _staged_proposals(transcript, table.table_id)  # NOT_APPLICABLE for a writer proposing inline only
    # Every proposal, refused ones too: a strict catalog refuses a misnamed file, and the writer named it.
    misnamed = misnamed_proposals(transcript, table.table_id, table.location)
    assert not misnamed, f"{misnamed[0]} ({len(misnamed)} misnamed proposal(s))"
    outcome.unwrap()


# PROTOCOL.md's map-typed fields of the actions a writer writes (Map[String, String]: a JSON object).
MAP_FIELDS = {"add": ("partitionValues", "tags"), "remove": ("partitionValues", "tags"), "metaData": ("configuration",)}
BOM = b"\xef\xbb\xbf"  # U+FEFF in UTF-8


def _staged_actions(storage: Storage, version: int, uri: str) -> list[dict[str, Any]]:
    """The staged file's actions, each map-typed field of which must be a JSON object. Read strictly
    (``oracle.commits.decode``): UTF-8, one JSON object per line, no byte order mark (RFC 8259 8.1: JSON
    text exchanged between systems carries none; a reader parsing the first line fails on it)."""
    data = storage.get(uri)
    assert not data.startswith(BOM), f"v{version} staged file starts with a UTF-8 byte order mark: {data[:40]!r}"
    try:
        actions = decode(data)
    except CommitFormatError as e:
        raise AssertionError(f"v{version} staged file is not one JSON action per line: {e}") from e
    for action in actions:
        for kind, fields in MAP_FIELDS.items():
            body = action.get(kind)
            bad = [
                f
                for f in fields
                if isinstance(body, dict) and body.get(f) is not None and not isinstance(body[f], dict)
            ]
            assert not bad, f"v{version}: {kind}.{bad[0]} is not a JSON object (a map): {body[bad[0]]!r}"  # type: ignore[index]
    return actions


@pytest.mark.req("WRT-STAGED-FORMAT")
def test_staged_files_have_the_published_format(
    written: WrittenTable, transcript: Transcript, suite_storage: Storage
) -> None:
    for version, uri in _staged_proposals(transcript, written.info.table_id):
        _staged_actions(suite_storage, version, uri)


@pytest.mark.req("WRT-STAGED-FORMAT")
def test_a_delete_after_a_checkpoint_has_the_published_format(
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    transcript: Transcript,
    suite_storage: Storage,
    table_name: str,
) -> None:
    """The removes of a delete are built from the adds of the snapshot, here read from a
    checkpoint: a writer that copies what its Parquet reader gives (maps as lists of pairs) writes
    a remove whose partitionValues is no map."""
    with premise("the writer under test writing v0-v2, publishing them and checkpointing v2"):
        client.create_table(table_name)
        client.append(table_name, [{"id": 1, "value": non_ascii_value(0)}, {"id": 3, "value": non_ascii_value(1)}])
        client.append(table_name, [{"id": 2, "value": non_ascii_value(2)}, {"id": 4, "value": non_ascii_value(3)}])
        client.publish(table_name)
        checkpointed = client.checkpoint(table_name)
    if checkpointed is None:
        not_applicable("the writer writes no checkpoint (verified: checkpoint() answered None)")
    version = client.delete(table_name, [1])
    staged = dict(_staged_proposals(transcript, ref_admin.resolve(table_name).table_id))
    if version not in staged:
        not_applicable("the delete was proposed inline (verified: no staged file for it)")
    actions = _staged_actions(suite_storage, version, staged[version])
    assert any("remove" in a for a in actions), f"v{version}, a delete, removes no file"


# Data files the suite writes for the writer's delete to rewrite: a remove and an add each, some 20 KiB
# of commit in all, well past the sizes (4 or 8 KiB) at which a writer might pack large commits otherwise.
WIDE_FILES = 48


@pytest.mark.req("WRT-STAGED-FORMAT")
def test_a_large_staged_commit_has_the_published_format(
    client: RecordingClient,
    suite_client: ReferenceClient,
    ref_admin: ReferenceCatalog,
    transcript: Transcript,
    suite_storage: Storage,
    table_name: str,
) -> None:
    """A commit of many actions is staged like a small one (RFC "Terminology - Commits": a staged
    commit has the format of a published Delta file): a writer that compresses, splits or otherwise
    packs large commits only shows it past some size, which appends never reach. The suite writes the
    files (cheap, in-process); the writer under test makes one call, a delete that rewrites them all."""
    with premise(f"the writer under test creating a table, and the suite appending {WIDE_FILES} files to it"):
        client.create_table(table_name)
        for i in range(WIDE_FILES):
            kept, gone = non_ascii_value(2 * i), non_ascii_value(2 * i + 1)  # the rewritten files' statistics
            suite_client.append(table_name, [{"id": 2 * i + 1, "value": kept}, {"id": 2 * i + 2, "value": gone}])
        suite_client.publish(table_name)
    # The delete landing at all is this check's premise (a refusal is judged by the rule it breaks).
    with premise(f"the writer under test deleting a row from each of {WIDE_FILES} files in one commit"):
        version = client.delete(table_name, [2 * i + 2 for i in range(WIDE_FILES)])
    staged = dict(_staged_proposals(transcript, ref_admin.resolve(table_name).table_id))
    if version not in staged:
        not_applicable("the large delete was proposed inline (verified: no staged file for it)")
    size = len(suite_storage.get(staged[version]))
    transcript.notes["large_staged_commit"] = {"version": version, "uri": staged[version], "bytes": size}
    actions = _staged_actions(suite_storage, version, staged[version])
    removed = sum(1 for a in actions if "remove" in a)
    assert removed == WIDE_FILES, (
        f"v{version}, a delete of a row in each of {WIDE_FILES} files, staged {size} bytes that remove"
        f" {removed} files: the staged commit must hold the whole commit, as its published file would"
    )


@pytest.mark.req("WRT-STAGED-NO-REUSE", "WRT-STAGED-NAME", "WRT-ICT-MONOTONIC")
def test_conflict_rewrites_the_commit_in_a_new_file(
    lakecert: RunContext,
    ref_admin: ReferenceCatalog,
    client: RecordingClient,
    ref_catalog: RecordingCatalog,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
    seed: int,
) -> None:
    # The rival's clock runs a day ahead: a retry that keeps the lost attempt's commitInfo (or
    # stamps its own clock) goes back in time; one rebuilt on the new snapshot cannot.
    rival_client = ahead_client(lakecert, transcript, suite_storage, seed)
    outcome = lose_v2(client, ref_catalog, rival_client, transcript, table_name)
    table_id = ref_admin.resolve(table_name).table_id
    staged = _staged_proposals(transcript, table_id)
    uris = [uri for _, uri in staged]
    if len(uris) != len(set(uris)):
        raise Violation("WRT-STAGED-NO-REUSE", f"a staged file was proposed twice: {staged}")
    # A file named for another version but never proposed before is no reuse: it is misnamed. The
    # retry after the lost race is where a writer that fixed its staging key at the transaction's start
    # (the version it first tried) names the rebuilt commit for the old version (RFC "Delta Log Entries").
    misnamed = misnamed_proposals(transcript, table_id, ref_admin.resolve(table_name).location)
    if misnamed:
        raise Violation(
            "WRT-STAGED-NAME",
            f"after losing v2 to a rival: {misnamed[0]}; a staged file is named for the version it is proposed"
            " as, on every attempt (the retry for v3 in a v3 name)",
        )
    if isinstance(outcome.error, CommitConflict) and [v for v, _ in staged].count(2) == 1 and 3 not in dict(staged):
        # Giving up is allowed (WRT-REBASE-UNPUBLISHED is a MAY); then nothing was retried to judge.
        not_applicable("the writer did not retry after the conflict (verified: one proposal, for v2 only)")
    outcome.unwrap()
    # The lost attempt's staged file may be gone: a rejected proposal's file is garbage a writer may
    # delete (RFC "Commit Protocol"); then there are no bytes to compare, and the file was not reused.
    contents = [suite_storage.get(uri) for _, uri in staged[-2:] if suite_storage.exists(uri)]
    if len(contents) == 2 and contents[0] == contents[1]:
        raise Violation("WRT-STAGED-NO-REUSE", "the retry re-proposed the lost attempt's bytes, not a rebuilt commit")
    rival_ict = in_commit_timestamp(decode(_content(ref_admin, suite_storage, table_id, 2)))
    retry_ict = in_commit_timestamp(decode(_content(ref_admin, suite_storage, table_id, 3)))
    if not (isinstance(retry_ict, int) and isinstance(rival_ict, int) and retry_ict > rival_ict):
        raise Violation(
            "WRT-ICT-MONOTONIC",
            f"the retried v3 has inCommitTimestamp {when(retry_ict)}, not after the rival v2's {when(rival_ict)}",
        )


def _content(ref_admin: ReferenceCatalog, storage: Storage, table_id: str, version: int) -> bytes:
    (commit,) = ref_admin.get_commits(table_id, version, version).commits
    if commit.staged_uri is not None:
        return storage.get(commit.staged_uri)
    assert commit.inline_content is not None, f"v{version} has neither a staged file nor inline content"
    return commit.inline_content


@pytest.mark.req("WRT-NO-FILESYSTEM-COMMIT")
def test_no_published_file_before_ratification(
    written: WrittenTable, client: RecordingClient, transcript: Transcript
) -> None:
    client.publish(written.info.name)
    ratified_at = {e.args["version"]: e.seq for e in proposals(transcript, written.info.table_id, ok=True)}
    for event, f in client_writes(transcript, "delta"):
        if f.version == 0:
            continue  # created at the unnamed staging location, before the catalog manages the table
        assert f.version in ratified_at, f"{f.uri} written but v{f.version} was never ratified"
        assert event.seq > ratified_at[f.version], f"{f.uri} written before the catalog ratified v{f.version}"


@pytest.mark.req("WRT-DISCOVERY")
def test_writer_uses_the_resolved_location(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, transcript: Transcript, table_name: str
) -> None:
    info = ref_admin.import_table(table_name, seeded.location, 0, [], 0)
    # The catalog's id in the configuration, as a table created through Unity Catalog's API has it
    # (UC demands it at creation; Kernel's UC committer refuses tables without it); others ignore it.
    properties = {UC_TABLE_ID: info.table_id}
    seeded.storage.put(published_uri(seeded.location, 0), version0("seeded-" + table_name, properties))
    seeded.create_folders()  # as a creator would: the rule judges where the writer writes, not mkdir
    outcome = attempt(lambda: client.append(table_name, [{"id": 1, "value": "a"}]))
    writes = [e.args["uri"] for e in transcript.events(actor="storage", op="put")]
    outside = [u for u in writes if not u.startswith(seeded.location + "/")]
    assert writes, "the writer wrote nothing"
    assert not outside, f"wrote outside the location the catalog resolved ({seeded.location}): {outside}"
    outcome.unwrap()


@pytest.mark.req("WRT-DISCOVERY")
def test_writer_follows_a_name_given_to_a_new_table(
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    transcript: Transcript,
    table_name: str,
) -> None:
    """The name is dropped and given to a new table by another client; the writer's next append must
    go to the table the name now resolves to, or be refused, and never write the dropped table's files
    (RFC "Table Discovery": a writer accesses a table through the catalog, at the location it resolves;
    a resolution cached from an earlier call is the catalog's answer no longer)."""
    with premise("the writer under test creating a table and appending to it"):
        client.create_table(table_name)
        client.append(table_name, [{"id": 1, "value": "old"}])
    try:
        dropped = ref_admin.resolve(table_name)
    except TableNotFound:
        not_applicable("the writer's table is not in lakecert's catalog (verified): the suite cannot drop it there")
    with premise("the suite dropping the name and registering a new table under it with another client"):
        RecordingCatalog(ref_admin, transcript, actor="suite").drop_table(table_name)
        suite_client.create_table(table_name)
        suite_client.append(table_name, [{"id": 2, "value": "new"}])
    fresh = ref_admin.resolve(table_name)
    puts_before = len(transcript.events(actor="storage", op="put"))
    outcome = attempt(lambda: client.append(table_name, [{"id": 3, "value": "after"}]))
    writes = [e.args["uri"] for e in transcript.events(actor="storage", op="put")[puts_before:]]
    stale = [u for u in writes if u.startswith(dropped.location + "/")]
    assert not stale, (
        f"after {table_name!r} was dropped and given to a new table at {fresh.location}, the writer's append"
        f" {'raised' if outcome.error else f'reported v{outcome.value}'} and wrote in the dropped table's"
        f" location: {stale}; a writer resolves the name through the catalog and writes where it resolves now"
    )
    committed = [e.args["version"] for e in proposals(transcript, dropped.table_id, ok=True)]
    assert max(committed, default=1) <= 1, (
        f"after {table_name!r} was dropped, the catalog ratified the writer's v{max(committed)} of the dropped"
        " table: the writer committed to a table the name no longer resolves to"
    )
    if outcome.error is not None:
        return  # refused: allowed, and nothing was written to the dropped table
    rows = sorted(suite_client.read(table_name, version=outcome.value).rows, key=lambda r: str(r["id"]))
    assert rows == [{"id": 2, "value": "new"}, {"id": 3, "value": "after"}], (
        f"the writer's append after the name was given to a new table reported v{outcome.value}, and the table"
        f" the name resolves to reads {rows} there; its row must be added to the new table, after its own row"
    )


@pytest.mark.req("WRT-DISCOVERY")
def test_writer_finds_a_long_named_table_beside_its_prefixes(
    client: RecordingClient, suite_client: ReferenceClient, table_name: str
) -> None:
    """A 200-character name, and tables named by its first 32, 64, 100 and 128 characters and by its lower-case spelling
    (``long_names.py``): the writer's append to the table it created under the whole name lands there,
    and nowhere else."""
    name = long_name(table_name)
    neighbours = prefix_names(name)
    with premise("the suite creating tables named by the prefixes of a 200-character name"):
        for i, other in enumerate(neighbours):
            suite_client.create_table(other)
            suite_client.append(other, [{"id": 100 + i, "value": "neighbour"}])
    # The writer creates its own table (a table made by it carries what it needs, e.g. Kernel's UC id).
    with premise(f"the writer under test creating a table with a {len(name)}-character name"):
        client.create_table(name)
    outcome = attempt(lambda: client.append(name, [{"id": 1, "value": "long"}]))
    for i, other in enumerate(neighbours):
        rows = suite_client.read(other).rows
        if rows != [{"id": 100 + i, "value": "neighbour"}]:
            raise Violation(
                "WRT-DISCOVERY",
                f"the writer's append to the table named by {len(name)} characters changed the table named {other!r}"
                f" ({'its lower-case spelling' if other == name.lower() else f'its first {len(other)}'}), which now"
                f" reads {rows}: a writer finds its table through the catalog by its whole name, as given",
            )
    if isinstance(outcome.error, TableNotFound):
        raise Violation(
            "WRT-DISCOVERY",
            f"the writer's append to {name!r} ({len(name)} characters) raised TableNotFound, yet the catalog"
            " resolves that name to its table: a writer finds its table through the catalog by its whole name",
        )
    with premise(f"the writer under test appending to a table with a {len(name)}-character name"):
        outcome.unwrap()
    rows = suite_client.read(name).rows
    assert rows == [{"id": 1, "value": "long"}], (
        f"after the writer's append, the table named by {len(name)} characters reads {rows}; its row must be there"
    )
