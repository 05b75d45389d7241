"""Publishing ratified commits (RFC "Publishing Commits")."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest

from conformance.checks.delta.builders import LogBuilder, premise, raw_utf8
from conformance.checks.delta.evidence import (
    EarlyPublications,
    client_writes,
    log_files,
    ratified_content,
    same_actions,
)
from conformance.checks.delta.writer.conftest import WrittenTable
from conformance.checks.delta.writer.races import lose_v2
from conformance.contract.delta import NotSupported, Storage
from conformance.observe.recording import RecordingCatalog, RecordingClient
from conformance.observe.transcript import Transcript
from conformance.oracle.commits import Action, commit_info
from conformance.oracle.commits import decode as decode_actions
from conformance.oracle.names import published_uri
from conformance.report.outcomes import PremiseBroken, Violation, not_applicable
from conformance.run_context import RunContext
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.log_paths import staged_uri


def _published_versions(storage: Storage, location: str) -> set[int]:
    return {f.version for f in log_files(storage, location) if f.kind == "delta"}


@pytest.mark.req("WRT-PUBLISH-ORDER")
def test_versions_are_published_in_order(
    written: WrittenTable, client: RecordingClient, transcript: Transcript, suite_storage: Storage
) -> None:
    client.publish(written.info.name)
    order = [f.version for _, f in client_writes(transcript, "delta") if f.version > 0]
    if not order and _published_versions(suite_storage, written.info.location) == {0}:
        not_applicable("the client does not publish (verified: nothing above v0 in _delta_log)")
    assert order == sorted(order), f"published in the order {order}"
    assert order and order[0] == 1 and order == list(range(1, order[-1] + 1)), f"published {order}, skipping some"


@pytest.mark.req("WRT-PUBLISH-ORDER")
def test_an_inline_commit_is_published_in_its_place(
    lakecert: RunContext,
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    transcript: Transcript,
    suite_storage: Storage,
    table_name: str,
    seed: int,
) -> None:
    # v1 and v3 are the writer's commits, v2 between them a rival's INLINE commit: its content is held
    # by the catalog and it has no staged file, so a writer that orders its publication by staged
    # file name (an inline commit has none) publishes v2 first. Writers under test are bound to the
    # reference catalog, which hosts inline commits; a catalog that refused them could not stage this
    # case (it would be skipped, not judged), but no writer check runs on one.
    rival = ReferenceClient(
        RecordingCatalog(lakecert.reference_catalog(), transcript, actor="suite"), suite_storage, seed=seed, inline=True
    )
    # Every publication of the writer's, as it happens: one of v3 (a writer publishing its own commit at
    # once) while the inline v2 is unpublished is out of order even if v2 is published after it.
    early = EarlyPublications(suite_storage, [])
    transcript.listeners.append(early)
    with premise("the writer under test creating the table and committing v1"):
        client.create_table(table_name)
        client.append(table_name, [{"id": 1, "value": "a"}])
    with premise("the suite's writer ratifying v2 as an inline commit"):
        rival.append(table_name, [{"id": 2, "value": "inline"}])
    try:
        with premise("the writer under test committing v3 on top of the inline v2"):
            client.append(table_name, [{"id": 3, "value": "c"}])
    except PremiseBroken as e:
        # A client whose catalog API cannot carry inline commits (Kernel through Unity Catalog's)
        # refuses the table, and changed nothing: no such order can arise for it.
        if (
            not isinstance(e.__cause__, NotSupported)
            or ref_admin.get_commits(ref_admin.resolve(table_name).table_id).latest_version != 2
        ):
            raise
        not_applicable(
            "the client refuses a table that holds an inline commit (NotSupported; verified: v2 is still the latest)"
        )
    transcript.notes["schedule"] = [
        "client: create, append (v1)",
        "suite: append (v2) as an inline commit",
        "client: append (v3), publish",
    ]
    # Only the puts of this publish call are judged: a file written earlier (before its commit was
    # ratified, say) is WRT-NO-FILESYSTEM-COMMIT's matter, not this order's.
    start = len(transcript.events())
    client.publish(table_name)
    order = [f.version for e, f in client_writes(transcript, "delta") if e.seq >= start and f.version > 0]
    published = _published_versions(suite_storage, ref_admin.resolve(table_name).location)
    if not order and published == {0}:
        not_applicable("the client does not publish (verified: nothing above v0 in _delta_log)")
    transcript.listeners.remove(early)
    if early.found:
        uri, v = early.found[0]
        raise Violation(
            "WRT-PUBLISH-ORDER",
            f"the writer wrote {uri.rsplit('/', 1)[-1]} while v{v - 1} (a rival's inline commit, ratified and"
            f" unpublished) was not in _delta_log: v{v - 1} must be published before v{v}, whoever committed it",
        )
    assert order == sorted(order), f"published in the order {order} (v2 is an inline commit, v1 and v3 staged)"
    assert {1, 2, 3} <= published, f"after publishing, _delta_log holds v{sorted(published)} of the ratified v0-v3"


# Byte shapes another writer may give a commit, all of them newline-delimited JSON whose lines are
# single JSON documents (PROTOCOL "Delta Log Entries"): NDJSON needs no final newline, and a JSON
# document may carry insignificant whitespace (space, tab, carriage return) around its tokens, so a
# CRLF line ending or spaces after a line's closing brace leave every action as it was. A publisher
# that "normalises" any of them (appends a final newline, turns CRLF into LF, trims lines, re-encodes)
# publishes other bytes than were ratified. Shape name -> how a commit's actions become its bytes.
BYTE_SHAPES: dict[str, Callable[[list[Action]], bytes]] = {
    "no final newline": lambda acts: b"\n".join(_lines(acts)),
    "CRLF line endings": lambda acts: b"".join(line + b"\r\n" for line in _lines(acts)),
    "CRLF line endings, no final newline": lambda acts: b"\r\n".join(_lines(acts)),
    "spaces and a tab after each line": lambda acts: b"".join(line + b"  \t\n" for line in _lines(acts)),
    "spaced JSON, no final newline": lambda acts: b"\n".join(_lines(acts, (", ", ": "))),
    "raw UTF-8 with U+0085, U+2028 and U+2029 inside a string": raw_utf8,
}


FIRST_UUID = "00000000-0000-4000-8000-000000000000"  # sorts before any random UUID


def _lines(actions: list[Action], separators: tuple[str, str] = (",", ":")) -> list[bytes]:
    return [json.dumps(a, separators=separators).encode() for a in actions]


def _ratify_foreign(
    ref_admin: ReferenceCatalog, log: LogBuilder, table_id: str, first: int, ict: int, *, inline: bool
) -> dict[int, tuple[str, bytes]]:
    """Another writer's commits at ``first``.. one per byte shape, staged or inline: version -> (how
    it is written, its bytes)."""
    foreign: dict[int, tuple[str, bytes]] = {}
    for i, (shape, encode) in enumerate(BYTE_SHAPES.items()):
        version = first + i
        content = encode(decode_actions(log.data_commit(version, ict=ict + i)))
        if inline:
            ref_admin.commit(table_id, version, inline_content=content, in_commit_timestamp=ict + i)
        else:
            uri = log.stage(version, content)
            ref_admin.commit(table_id, version, staged_uri=uri, in_commit_timestamp=ict + i)
            # Beside it, a rejected proposal of the same version whose name sorts first: the file to
            # publish is the one the catalog names, not the first the staging folder lists.
            rejected = encode(decode_actions(log.data_commit(version, "rejected", ict=ict + i)))
            log.storage.put(staged_uri(log.location, version, FIRST_UUID), rejected)
        foreign[version] = (f"another writer's {'inline' if inline else 'staged'} commit, {shape}", content)
    return foreign


def _published_foreign_shapes(
    written: WrittenTable, client: RecordingClient, ref_admin: ReferenceCatalog, storage: Storage
) -> dict[int, tuple[str, bytes]]:
    """Above the writer's own commits, other writers' commits in every byte shape (BYTE_SHAPES), staged,
    then inline, each round published by the client: version -> (whose, the ratified bytes). The first
    foreign commit is serialised with raw UTF-8 and a space after every separator."""
    info = written.info
    latest = ref_admin.get_commits(info.table_id).latest_version
    ict = (commit_info(written.commits[latest]) or {}).get("inCommitTimestamp")
    log = LogBuilder(storage, info.location)
    with premise("the suite's writer ratifying commits serialised its own ways, staged"):
        assert isinstance(ict, int), f"v{latest} has no inCommitTimestamp"
        unicode = log.unicode_commit(latest + 1, ict + 1, (", ", ": "))
        ref_admin.commit(
            info.table_id, latest + 1, staged_uri=log.stage(latest + 1, unicode), in_commit_timestamp=ict + 1
        )
        ratified = {v: ("the ratified commit", c) for v, c in written.ratified.items()}
        ratified[latest + 1] = ("another writer's staged commit, raw UTF-8 and spaced JSON", unicode)
        ratified |= _ratify_foreign(ref_admin, log, info.table_id, latest + 2, ict + 2, inline=False)
    client.publish(info.name)
    if not _published_versions(storage, info.location) - {0}:
        not_applicable("the client does not publish (verified: nothing above v0 in _delta_log)")
    # The same shapes as inline commits (their bytes are the catalog's, not a file's).
    top = max(ratified)
    with premise("the suite's writer ratifying commits serialised its own ways, inline"):
        inline = _ratify_foreign(ref_admin, log, info.table_id, top + 1, ict + top + 1 - latest, inline=True)
    try:
        client.publish(info.name)
        ratified |= inline
    except NotSupported:
        pass  # a client whose catalog API carries no inline commits (Kernel through UC's) publishes none
    return ratified


def _each_published(
    storage: Storage, location: str, ratified: dict[int, tuple[str, bytes]]
) -> Iterator[tuple[int, str, bytes, bytes]]:
    """(version, whose, published bytes, ratified bytes) of every published file above v0."""
    for version in sorted(_published_versions(storage, location) - {0}):
        assert version in ratified, f"v{version} is published but was never ratified"
        whose, want = ratified[version]
        yield version, whose, storage.get(published_uri(location, version)), want


@pytest.mark.req("WRT-PUBLISH-IDENTICAL", "WRT-PUBLISH-BYTES")
def test_published_files_equal_the_ratified_commits(
    written: WrittenTable, client: RecordingClient, ref_admin: ReferenceCatalog, suite_storage: Storage
) -> None:
    # A client that publishes a re-serialisation of what it parsed, or tidies the bytes, publishes its
    # own commits exactly and other writers' commits changed. Other actions break the MUST at once; the
    # same actions in other bytes (a re-encoding, as Delta Kernel 4.4.0's copy through its log store
    # does) break the SHOULD, charged once every file was judged for the MUST (``at_end``).
    ratified = _published_foreign_shapes(written, client, ref_admin, suite_storage)
    re_encoded = None
    for version, whose, content, want in _each_published(suite_storage, written.info.location, ratified):
        if not same_actions(content, want):
            raise Violation(
                "WRT-PUBLISH-IDENTICAL",
                f"published v{version} ({len(content)} bytes) holds other actions than {whose} ({len(want)}"
                " bytes): publishing copies the ratified commit",
            )
        if content != want and re_encoded is None:
            re_encoded = Violation(
                "WRT-PUBLISH-BYTES",
                f"published v{version} ({len(content)} bytes, ending {content[-4:]!r}) holds {whose} in other"
                f" bytes ({len(want)}, ending {want[-4:]!r}): publishing is a copy, and a ratified commit's"
                " content is immutable",
                at_end=True,
            )
    if re_encoded is not None:
        raise re_encoded


@pytest.mark.req("WRT-PUBLISH-IDENTICAL", "WRT-PUBLISH-ORDER")
def test_a_writer_that_lost_a_race_publishes_the_winners_commit(
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    ref_catalog: RecordingCatalog,
    suite_client: ReferenceClient,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
) -> None:
    """The client loses v2 to the suite's staged commit (``lose_v2``), rebases to v3 or gives up, then
    publishes. Each published file holds the commit the catalog ratified at its version: at v2 the
    rival's, never the client's own rejected proposal for v2 (RFC "Publishing Commits": publishing copies
    the ratified commit; a rejected proposal is no commit). A publisher that copies what it uploaded or
    proposed, not what was ratified, is right after its own sequential commits and wrong only here."""
    # Its rebased v3 sits on the rival's v2, ratified and unpublished: a writer that publishes its own
    # commit at once writes v3 before v2 (the order files are created in, seen as they are put).
    early = EarlyPublications(suite_storage, [])
    transcript.listeners.append(early)
    with premise("the writer under test committing v1 and then meeting a rival's commit at v2"):
        lose_v2(client, ref_catalog, suite_client, transcript, table_name)
    info = ref_admin.resolve(table_name)
    ratified = ratified_content(transcript, suite_storage, info.table_id, ("catalog", "suite"))
    try:
        client.publish(table_name)
    except NotSupported:
        not_applicable("the client does not publish (NotSupported)")
    transcript.listeners.remove(early)
    published = _published_versions(suite_storage, info.location) - {0}
    if not published:
        not_applicable("the client does not publish (verified: nothing above v0 in _delta_log)")
    if early.found:
        uri, v = early.found[0]
        raise Violation(
            "WRT-PUBLISH-ORDER",
            f"the writer wrote {uri.rsplit('/', 1)[-1]} while v{v - 1} was not in _delta_log (v2 is the rival's"
            f" commit that won the race, ratified and unpublished): v{v - 1} is published before v{v}, whoever"
            " committed it",
        )
    for version in sorted(published & ratified.keys()):
        content = suite_storage.get(published_uri(info.location, version))
        whose = "the suite's rival commit, which won the race" if version == 2 else "the ratified commit"
        if not same_actions(content, ratified[version]):
            raise Violation(
                "WRT-PUBLISH-IDENTICAL",
                f"after losing v2 to a rival, the client published v{version} ({len(content)} bytes) holding other"
                f" actions than {whose} ({len(ratified[version])} bytes): publishing copies the commit the catalog"
                " ratified at that version, never a proposal it rejected",
            )
