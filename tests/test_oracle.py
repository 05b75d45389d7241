"""lakecert's own decoder of the Delta log (``conformance.oracle``), on the golden tables and on
content the reference implementation's decoder accepts though the protocol forbids it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.checks.delta.catalog.staged_paths import name_misses
from conformance.oracle import checkpoint, commits, names, replay
from conformance.oracle.clock import TOLERANCE_MS, CallWindow, off_the_clock
from conformance.oracle.txn_ids import TxnIdRegistry, Use
from reference_impl.delta import actions as reference_actions
from reference_impl.delta.log_paths import parse_log_name

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "test_case_info.json").is_file())


def _log(case: str) -> Path:
    return GOLDEN / case / "table" / "_delta_log"


def _golden_snapshot(case: str, version: int) -> replay.Snapshot:
    """The oracle's snapshot of a golden table: the catalog's commits over the published files,
    over the newest checkpoint at or below ``version`` (RFC "Reading Catalog-managed Tables")."""
    log = _log(case)
    state = json.loads((GOLDEN / case / "catalog.json").read_text())
    ratified = {
        c["version"]: (log / names.STAGED_DIR / c["staged"]).read_bytes() if "staged" in c else c["inline"].encode()
        for c in state["commits"]
    }
    entries = names.entries([f"file://{p}" for p in sorted(log.iterdir())])
    published = {e.version: Path(e.uri[7:]).read_bytes() for e in entries if e.kind == "delta"}
    content = replay.table_commits(published, ratified, state["latest_version"])
    decoded = {v: commits.decode(c) for v, c in content.items()}
    # The newest whole checkpoint at or below ``version``, every part of it when it is multi-part.
    points = [v for v in names.complete_checkpoints(entries) if v <= version]
    start = None
    if points:
        at = max(points)
        files = sorted(e.uri for e in entries if e.kind == "checkpoint" and e.version == at)
        start = (at, [a for uri in files for a in checkpoint.decode(Path(uri[7:]).read_bytes())])
    return replay.replay(decoded, version, start)


def _expected_versions() -> list[tuple[str, int]]:
    out = []
    for case in CASES:
        for d in sorted((GOLDEN / case / "expected").glob("v*")):
            out.append((case, int(d.name[1:])))
    return out


@pytest.mark.parametrize(("case", "version"), _expected_versions())
def test_replay_gives_every_golden_version(case: str, version: int) -> None:
    expected: dict[str, Any] = json.loads(
        (GOLDEN / case / "expected" / f"v{version}" / "table_version_metadata.json").read_text()
    )
    snap = _golden_snapshot(case, version)
    assert sorted(snap.files) == sorted(expected["files"])
    assert snap.in_commit_timestamp == expected["in_commit_timestamp"]
    assert snap.protocol == expected["protocol"]
    assert snap.metadata is not None
    assert {k: snap.metadata.get(k) for k in expected["metadata"]} == expected["metadata"]


@pytest.mark.parametrize("case", CASES)
def test_names_agree_with_the_reference_on_every_golden_log_file(case: str) -> None:
    log = _log(case)
    uris = [f"file://{p}" for p in sorted(log.iterdir()) if p.is_file()]
    uris += (
        [f"file://{p}" for p in sorted((log / names.STAGED_DIR).iterdir())] if (log / names.STAGED_DIR).is_dir() else []
    )
    for uri in uris:
        mine, theirs = names.parse(uri), parse_log_name(uri)
        if mine is not None and mine.flavour == "multi-part":
            continue  # the reference reads no multi-part checkpoint: its parser does not name them
        assert (mine is None) == (theirs is None), uri
        if mine is not None and theirs is not None:
            assert (mine.kind, mine.version, mine.end_version, mine.uuid) == (
                theirs.kind,
                theirs.version,
                theirs.end_version,
                theirs.uuid,
            )


def test_names_of_every_kind_of_log_entry() -> None:
    log = "s3://b/t/_delta_log"
    v = "00000000000000000010"
    assert names.parse(f"{log}/{v}.checkpoint.0000000002.0000000003.parquet") == names.LogName(
        f"{log}/{v}.checkpoint.0000000002.0000000003.parquet", "checkpoint", 10, flavour="multi-part", part=2, parts=3
    )
    uuid = "80a083e8-7026-4e79-81be-64bd76c43a11"
    for ext in ("json", "parquet"):
        parsed = names.parse(f"{log}/{v}.checkpoint.{uuid}.{ext}")
        assert parsed is not None and (parsed.flavour, parsed.uuid) == ("v2", uuid)
    compaction = names.parse(f"{log}/00000000000000000003.{v}.compacted.json")
    assert compaction is not None and (compaction.version, compaction.end_version) == (3, 10)
    assert names.parse(f"{log}/{v}.crc") == names.LogName(f"{log}/{v}.crc", "checksum", 10)
    staged = names.parse(f"{log}/_staged_commits/{v}.{uuid}.json")
    assert staged is not None and (staged.kind, staged.version, staged.uuid) == ("staged", 10, uuid)
    for wrong in (
        f"{log}/10.json",  # not padded to 20 digits
        f"{log}/{v}.checkpoint.2.3.parquet",  # parts not padded to 10 digits
        f"{log}/{v}.checkpoint.0000000004.0000000003.parquet",  # part 4 of 3
        f"{log}/00000000000000000011.{v}.compacted.json",  # ends before it starts
        f"{log}/_last_checkpoint",
        f"{log}/{v}.{uuid}.json",  # a staged name outside _staged_commits
        f"s3://b/t/_staged_commits/{v}.{uuid}.json",  # a _staged_commits outside _delta_log
        f"{log}/_sidecars/{uuid}.parquet",
    ):
        assert names.parse(wrong) is None, wrong


def test_no_near_miss_of_a_staged_name_is_taken_for_a_staged_commit() -> None:
    # The names a catalog must refuse (staged_paths.name_misses) are the names a writer must not stage:
    # the oracle judging a writer's proposals (evidence.misnamed_proposal) and the reference's reader
    # take none of them for a staged commit of v3.
    location = "s3://b/t"
    for miss in name_misses(location, 3, "0f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b"):
        for parsed in (names.parse(miss.uri), parse_log_name(miss.uri)):
            assert parsed is None or parsed.kind != "staged", f"{miss.uri!r} ({miss.what})"


def test_commit_content_is_one_single_line_action_per_line() -> None:
    good = b'{"commitInfo":{"inCommitTimestamp":5,"txnId":"t"}}\n{"add":{"path":"a","size":1}}\n'
    assert [commits.kind(a) for a in commits.decode(good)] == ["commitInfo", "add"]
    assert commits.decode(good.rstrip(b"\n")) == commits.decode(good)  # newline-delimited, not -terminated
    for bad in (
        b"",
        b"\n",
        b'{"commitInfo":{}}\n\n{"add":{"path":"a"}}\n',  # a blank line
        b'{"commitInfo":\n{"inCommitTimestamp":5}}\n',  # one action over two lines
        b'{"commitInfo":{}}{"add":{"path":"a"}}\n',  # two actions on one line
        b'{"commitInfo":{},"add":{"path":"a"}}\n',  # one line, two actions
        b'{"commitInfo":{"inCommitTimestamp":5}\n',  # truncated
        b'["commitInfo"]\n',
        b'{"commitInfo":5}\n',
        b"\xff\xfe\n",
    ):
        with pytest.raises(commits.CommitFormatError):
            commits.decode(bad)


@pytest.mark.parametrize(
    "content",
    [
        # RFC 8259 section 4: repeated names make the meaning depend on the decoder.
        b'{"commitInfo":{"inCommitTimestamp":5,"txnId":"a","inCommitTimestamp":9}}\n',
        # RFC 8259 has no NaN: Python's json module reads it, a Java or Rust decoder does not.
        b'{"commitInfo":{"inCommitTimestamp":NaN}}\n',
    ],
)
def test_the_oracle_refuses_what_the_reference_decoder_tolerates(content: bytes) -> None:
    reference_actions.decode_commit(content)  # accepted by the reference: a misreading a client may share
    with pytest.raises(commits.CommitFormatError):
        commits.decode(content)


def test_a_repeated_add_is_found_though_the_reference_reads_it() -> None:
    # The shared misunderstanding behind the fault add-written-twice: both decoders read the
    # content, and a replay keyed by path gives the right files, yet PROTOCOL "Add File and Remove
    # File" allows one add per path in a commit.
    add = {"add": {"path": "part-1.parquet", "size": 1, "modificationTime": 1, "dataChange": True}}
    content = reference_actions.encode_commit([{"commitInfo": {"inCommitTimestamp": 1}}, add, add])
    assert len(reference_actions.decode_commit(content)) == 3
    actions = commits.decode(content)
    assert list(replay.replay({0: actions}, 0).files) == ["part-1.parquet"]
    assert commits.repeated_actions(actions) == ["2 add actions for part-1.parquet"]
    meta = {"metaData": {"id": "x"}}
    assert commits.repeated_actions([meta, meta]) == ["2 metaData actions"]
    remove = {"remove": {"path": "part-1.parquet"}}
    assert commits.repeated_actions([remove, add]) == []  # one of each type is allowed


def test_commit_info_fields() -> None:
    info: dict[str, Any] = {"commitInfo": {"inCommitTimestamp": 7, "txnId": "t-1"}}
    add: dict[str, Any] = {"add": {"path": "a"}}
    assert commits.first_kind([add, info]) == "add"
    assert commits.in_commit_timestamp([info, add]) == 7 and commits.txn_id([info]) == "t-1"
    for ict in (True, 7.0, "7", 2**63, None):
        assert commits.in_commit_timestamp([{"commitInfo": {"inCommitTimestamp": ict}}]) is None, ict
    for txn in ("", 5, None):
        assert commits.txn_id([{"commitInfo": {"txnId": txn}}]) is None, txn


@pytest.mark.parametrize("case", CASES)
def test_checkpoints_read_back_as_actions(case: str) -> None:
    for path in sorted(_log(case).glob("*.checkpoint.parquet")):
        actions = checkpoint.decode(path.read_bytes())
        kinds = {commits.kind(a) for a in actions}
        assert {"protocol", "metaData"} <= kinds <= {"protocol", "metaData", "add", "remove", "txn"}, kinds
        meta = commits.of_kind(actions, "metaData")[0]
        assert isinstance(meta["configuration"], dict) and isinstance(meta["format"]["options"], dict)


def test_a_checkpoint_row_is_one_action() -> None:
    with pytest.raises(checkpoint.CheckpointFormatError):
        checkpoint.decode(b"not parquet")
    both = pa.table({"add": [{"path": "a"}], "remove": [{"path": "a"}]})
    sink = pa.BufferOutputStream()
    pq.write_table(both, sink)
    with pytest.raises(checkpoint.CheckpointFormatError):
        checkpoint.decode(sink.getvalue().to_pybytes())


def test_replay_needs_every_commit_from_its_start() -> None:
    with pytest.raises(replay.ReplayError):
        replay.replay({0: [], 2: []}, 2)
    with pytest.raises(replay.ReplayError):
        replay.replay({5: []}, 4, (5, []))


NOW = 1_800_000_000_000


def test_wall_clock_judgement() -> None:
    window = CallWindow(NOW, NOW + 50)
    assert off_the_clock(NOW + 20, window, None) is None
    assert off_the_clock(NOW - TOLERANCE_MS + 1, window, None) is None  # a clock a little behind
    assert off_the_clock(NOW // 1000, window, None) is not None  # seconds
    assert off_the_clock(NOW + 19_800_000, window, None) is not None  # local time at UTC+5:30
    assert off_the_clock(NOW - 36_000_000, window, NOW - 40_000_000) is not None  # UTC-10, after an older commit
    peer = NOW + 86_400_000  # a peer a day ahead forces the next commit ahead: no fault of the writer
    assert off_the_clock(peer + 1, window, peer) is None
    assert off_the_clock(peer + 1 + TOLERANCE_MS + 1, window, peer) is not None


def test_txn_id_registry_sees_repeats_across_tables_not_rereads() -> None:
    reg = TxnIdRegistry()
    assert reg.record("t", Use("check_a", "table_1", 1)) is None
    assert reg.record("t", Use("check_b", "table_1", 1)) is None  # the same commit read by another check
    assert reg.record("t", Use("check_b", "table_2", 0)) == Use("check_a", "table_1", 1)
    assert reg.record_table("check_c", "table_3", {0: "u", 1: "u", 2: None}) == [
        "v1 of table_3 reuses txnId 'u' of v0 of table_3 (in check_c)"
    ]
