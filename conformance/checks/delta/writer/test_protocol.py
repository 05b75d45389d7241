"""Table features a catalog-managed table must carry (RFC "Catalog-managed Table Enablement")."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.checks.delta.builders import premise
from conformance.checks.delta.client_histories import catalog_managed_protocol
from conformance.checks.delta.evidence import attempt, log_files
from conformance.checks.delta.writer.conftest import WrittenTable
from conformance.observe.recording import RecordingClient
from conformance.oracle import checkpoint as oracle_checkpoint
from conformance.oracle import commits as oracle_commits
from conformance.oracle.commits import Action
from conformance.oracle.names import LogName
from conformance.oracle.replay import replay
from conformance.report.outcomes import not_applicable

ICT_KEY = "delta.enableInCommitTimestamps"


def _single(actions: list[Action], kind: str) -> dict[str, Any]:
    found = [a[kind] for a in actions if kind in a]
    assert len(found) == 1, f"version 0 has {len(found)} {kind} actions"
    value: dict[str, Any] = found[0]
    return value


@pytest.mark.req("WRT-PROTOCOL-VERSIONS")
def test_protocol_enables_catalog_managed(written: WrittenTable) -> None:
    protocol = _single(written.commits[0], "protocol")
    assert protocol.get("minReaderVersion") == 3, f"minReaderVersion={protocol.get('minReaderVersion')}"
    assert protocol.get("minWriterVersion") == 7, f"minWriterVersion={protocol.get('minWriterVersion')}"
    assert "catalogManaged" in (protocol.get("readerFeatures") or []), "catalogManaged missing in readerFeatures"
    assert "catalogManaged" in (protocol.get("writerFeatures") or []), "catalogManaged missing in writerFeatures"


def _judge_ict_enabled(protocol: dict[str, Any] | None, metadata: dict[str, Any] | None, where: str) -> None:
    """In-commit timestamps are on in this state of the table: the writer feature is listed and the
    table property is the string "true" (PROTOCOL.md: ``configuration`` is a map of strings)."""
    features = (protocol or {}).get("writerFeatures") or []
    assert "inCommitTimestamp" in features, (
        f"{where}: the protocol's writerFeatures are {features!r}, without inCommitTimestamp; a catalog-managed"
        " table must have in-commit timestamps supported and active (RFC Writer Requirements)"
    )
    config = (metadata or {}).get("configuration")
    assert isinstance(config, dict), (
        f"{where}: metaData.configuration is {config!r}, not a map of settings, so {ICT_KEY} is not set"
    )
    value = config.get(ICT_KEY)
    assert value == "true", (
        f'{where}: {ICT_KEY} is {value!r} ({type(value).__name__}); it must be the string "true" (a'
        " configuration is a map of strings to strings), or in-commit timestamps are not active"
    )


@pytest.mark.req("WRT-ICT-ENABLED")
def test_in_commit_timestamps_are_enabled(written: WrittenTable) -> None:
    commits = written.commits
    _single(commits[0], "protocol")
    _single(commits[0], "metaData")
    snap = replay(commits, 0)
    _judge_ict_enabled(snap.protocol, snap.metadata, "version 0")
    # A later commit may carry a protocol or metaData of its own: the table's latest state must keep
    # in-commit timestamps on too (PROTOCOL "Action Reconciliation": the latest of each wins).
    latest = max(commits)
    snap = replay(commits, latest)
    _judge_ict_enabled(snap.protocol, snap.metadata, f"the table replayed from its commits at v{latest}")


def _checkpoint_actions(written: WrittenTable, parts: list[LogName]) -> list[Action]:
    """The actions of one checkpoint (every part of a multi-part one; the top-level file of a v2 one,
    which holds protocol and metaData), decoded by lakecert's own reader."""
    actions: list[Action] = []
    for part in sorted(parts, key=lambda p: p.part or 0):
        data = written.storage.get(part.uri)
        try:
            if part.uri.endswith(".json"):
                actions += oracle_commits.decode(data)
            else:
                actions += oracle_checkpoint.decode(data)
        except (oracle_checkpoint.CheckpointFormatError, oracle_commits.CommitFormatError) as e:
            raise AssertionError(
                f"could not interpret what the target did: its checkpoint {part.uri} is no readable Delta"
                f" checkpoint ({e}), so no reader can replay the table from it"
            ) from e
    return actions


@pytest.mark.req("WRT-ICT-ENABLED")
def test_in_commit_timestamps_stay_enabled_in_checkpoints(written: WrittenTable, client: RecordingClient) -> None:
    """A reader replays the table from its newest checkpoint (after metadata cleanup it has nothing
    else): the protocol and metaData the writer's checkpoint holds are the table's, and must keep
    in-commit timestamps on (PROTOCOL.md Checkpoints: a checkpoint holds the table's state)."""
    with premise("the writer under test publishing its table"):
        client.publish(written.info.name)
    answered = client.checkpoint(written.info.name)
    found = [f for f in log_files(written.storage, written.info.location) if f.kind == "checkpoint"]
    if not found:
        not_applicable(f"the writer writes no checkpoint (verified: checkpoint() answered {answered!r}, no file)")
    commits = written.commits
    # One checkpoint per version and kind: a classic file, the parts of a multi-part one, or a v2 one.
    for version, flavour, uuid in sorted({(f.version, f.flavour or "", f.uuid or "") for f in found}):
        parts = [f for f in found if (f.version, f.flavour or "", f.uuid or "") == (version, flavour, uuid)]
        actions = _checkpoint_actions(written, parts)
        snap = replay(commits, version, checkpoint=(version, actions))
        where = f"the checkpoint of v{version} (the table as a reader replays it from there)"
        _judge_ict_enabled(snap.protocol, snap.metadata, where)
        latest = max(commits)
        if latest > version:
            snap = replay(commits, latest, checkpoint=(version, actions))
            _judge_ict_enabled(snap.protocol, snap.metadata, f"v{latest} replayed over the checkpoint of v{version}")


def _protocol_fault(protocol: dict[str, Any] | None, where: str) -> str | None:
    """Why the protocol a reader finds in ``where`` does not keep the table catalog-managed; None when it
    does. Whether it is otherwise the table's (another feature list) is not this rule's matter: a
    compaction's header is WRT-COMPACTION-CONTENT's, in-commit timestamps WRT-ICT-ENABLED's."""
    if protocol is not None and catalog_managed_protocol(protocol):
        return None
    return (
        f"{where} holds the protocol {protocol}: not reader version 3 and writer version 7 with catalogManaged in"
        ' both feature lists (RFC "Catalog-managed Table Enablement"). A reader that starts from it (after'
        " metadata cleanup it has nothing else) no longer sees that the table is catalog-managed"
    )


@pytest.mark.req("WRT-PROTOCOL-VERSIONS")
def test_checkpoints_and_compactions_keep_the_tables_protocol(written: WrittenTable, client: RecordingClient) -> None:
    """The protocol is the table's, not version 0's only: every checkpoint the writer writes holds it
    (PROTOCOL.md Checkpoints: a checkpoint holds the table's state at its version, protocol included), and
    a log compaction of a range that starts at v0 carries v0's protocol; either must keep catalogManaged.
    A writer whose commits are right but whose checkpoint writer rebuilds the protocol row (a feature list
    of its own) loses catalogManaged only there, and path-based readers replaying from the checkpoint read
    a table that is not catalog-managed."""
    with premise("the writer under test publishing its table"):
        client.publish(written.info.name)
    commits = written.commits  # read once: each reading decodes every commit again
    answered = attempt(lambda: client.checkpoint(written.info.name))
    attempt(lambda: client.compact_log(written.info.name, 0, max(commits)))
    files = log_files(written.storage, written.info.location)
    maintained = [f for f in files if f.kind in ("checkpoint", "compaction")]
    if not maintained:
        not_applicable(
            f"the writer writes no checkpoint or compaction (verified: checkpoint() answered {answered!r}, no file)"
        )
    found = [f for f in maintained if f.kind == "checkpoint"]
    for version, flavour, uuid in sorted({(f.version, f.flavour or "", f.uuid or "") for f in found}):
        parts = [f for f in found if (f.version, f.flavour or "", f.uuid or "") == (version, flavour, uuid)]
        actions = _checkpoint_actions(written, parts)
        got = replay(commits, version, checkpoint=(version, actions)).protocol
        why = _protocol_fault(got, f"the checkpoint of v{version}")
        assert why is None, why
    for f in (f for f in maintained if f.kind == "compaction"):
        try:
            body = oracle_commits.decode(written.storage.get(f.uri))
        except oracle_commits.CommitFormatError:
            continue  # an unreadable compaction is WRT-COMPACTION-CONTENT's matter
        for protocol in (a["protocol"] for a in body if isinstance(a.get("protocol"), dict)):
            why = _protocol_fault(protocol, f"the compaction of v{f.version}-v{f.end_version}")
            assert why is None, why
