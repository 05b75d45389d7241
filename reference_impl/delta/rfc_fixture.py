"""The RFC's worked example ("Reading Catalog-managed Tables") as a deterministic golden table.

``write_fixture(out)`` builds ``out/table``, ``out/catalog.json``, ``out/expected/v9.json``
and ``out/README.md``; ``scripts/make_rfc_fixture.py`` runs it for ``fixtures/``.
``catalog_commits(fixture, location)`` turns ``catalog.json`` into the catalog's state.

Every version v adds one row ``{"id": v, "value": "v<v>"}`` (version 4 instead deletes
row 1), and every file the catalog did not ratify carries rows of its own, so reading
the wrong file shows up in the rows.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

from conformance.contract.delta import RatifiedCommit
from reference_impl.delta import actions as act
from reference_impl.delta.actions import Action
from reference_impl.delta.checkpoint import encode_checkpoint
from reference_impl.delta.compaction import reconcile
from reference_impl.delta.data_files import write_data_file
from reference_impl.delta.golden_case import catalog_state
from reference_impl.delta.log_paths import (
    checkpoint_uri,
    compaction_uri,
    delta_uri,
    staged_dir,
    staged_name,
)
from reference_impl.delta.snapshot import replay
from reference_impl.storage.local import LocalStorage, path_to_uri

LATEST = 9
BASE_TS = 1_700_000_000_000  # 2023-11-14T22:13:20Z; version v commits at BASE_TS + v minutes
NS = uuid.UUID("6c0a3f5e-2b1d-4c8e-9f4a-0d1e2f3a4b5c")  # namespace of the fixture's derived ids
TABLE_ID = str(uuid.uuid5(NS, "table"))

# The staged commits of the RFC's listing, with the UUIDs it uses.
STAGED_7 = staged_name(7, "016ae953-37a9-438e-8683-9a9a4a79a395")  # ratified and published
STAGED_8 = staged_name(8, "7d17ac10-5cc3-401b-bd1a-9c82dd2ea032")  # ratified
STAGED_8_REJECTED = staged_name(8, "b91807ba-fe18-488c-a15e-c4807dbd2174")
STAGED_10 = staged_name(10, "0f707846-cd18-4e01-b40e-84ee0ae987b0")  # not yet ratified
STAGED_10_PARTIAL = staged_name(10, "7a980438-cb67-4b89-82d2-86f73239b6d6")


def _ict(version: int) -> int:
    return BASE_TS + version * 60_000


class _Writer:
    """Writes the table through LocalStorage with fixed ids and times."""

    def __init__(self, table_dir: Path) -> None:
        self.storage = LocalStorage()
        self.location = path_to_uri(table_dir)

    def add_row(self, row_id: int, value: str, ts: int) -> Action:
        rows: list[dict[str, object]] = [{"id": row_id, "value": value}]
        file_id = str(uuid.uuid5(NS, f"data-{row_id}-{value}"))
        return write_data_file(self.storage, self.location, rows, modification_time=ts, file_id=file_id)

    def commit(self, version: int, body: list[Action], tag: str = "") -> bytes:
        ts = _ict(version)
        txn = str(uuid.uuid5(NS, f"txn-{version}{tag}"))
        op = "CREATE TABLE" if version == 0 else "WRITE"
        return act.encode_commit([act.commit_info_action(ts, txn, op), *body])


def _build_table(table_dir: Path) -> dict[int, bytes]:
    """Writes the table; returns the commit content of every version 0..9."""
    w = _Writer(table_dir)
    adds = {v: w.add_row(v, f"v{v}", _ict(v)) for v in range(LATEST + 1) if v != 4}
    commits: dict[int, bytes] = {}
    for v in range(LATEST + 1):
        if v == 0:
            body = [
                act.protocol_action(),
                act.metadata_action(TABLE_ID, _ict(0), act.default_configuration()),
                adds[0],
            ]
        elif v == 4:
            body = [act.remove_action(adds[1], _ict(4))]
        else:
            body = [adds[v]]
        commits[v] = w.commit(v, body)

    put = w.storage.put
    for v in range(8):  # published 0..7
        put(delta_uri(w.location, v), commits[v])
    state = replay([], [(v, act.decode_commit(commits[v])) for v in range(3)])
    protocol, metadata, files = state[0], state[1], state[2]
    cp_actions = [{"protocol": protocol}, {"metaData": metadata}] + [files[p] for p in sorted(files)]
    put(checkpoint_uri(w.location, 2), encode_checkpoint(cp_actions))
    compacted = reconcile(act.decode_commit(commits[v]) for v in range(3, 6))
    put(compaction_uri(w.location, 3, 5), act.encode_commit(compacted))

    staged = staged_dir(w.location) + "/"
    put(staged + STAGED_7, commits[7])
    put(staged + STAGED_8, commits[8])
    # Losing and unratified attempts carry rows of their own.
    rejected = w.commit(8, [w.add_row(108, "rejected-v8", _ict(8))], tag="-rejected")
    put(staged + STAGED_8_REJECTED, rejected)
    put(staged + STAGED_10, w.commit(10, [w.add_row(110, "unratified-v10", _ict(10))]))
    partial = w.commit(10, [w.add_row(111, "partial-v10", _ict(10))], tag="-partial")
    put(staged + STAGED_10_PARTIAL, partial[: len(partial) - 40])  # cut inside the last line
    return commits


def _expected(commits: dict[int, bytes]) -> dict[str, Any]:
    protocol, metadata, files, _ = replay([], [(v, act.decode_commit(commits[v])) for v in commits])
    assert protocol is not None and metadata is not None
    ids = sorted(v for v in range(LATEST + 1) if v not in (1, 4))
    return {
        "version": LATEST,
        "in_commit_timestamp": _ict(LATEST),
        "rows": [{"id": i, "value": f"v{i}"} for i in ids],
        "files": sorted(files),
        "protocol": protocol,
        "metadata": {k: metadata[k] for k in ("id", "schemaString", "partitionColumns", "configuration")},
    }


def write_fixture(out: Path) -> None:
    """(Re)create the fixture under ``out``; byte-for-byte reproducible."""
    for name in ("table", "expected"):
        shutil.rmtree(out / name, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    commits = _build_table(out / "table")
    catalog = {
        "latest_version": LATEST,
        "latest_published_version": 6,  # the catalog missed that 7 was published
        "commits": [
            {"version": 7, "staged": STAGED_7, "in_commit_timestamp": _ict(7)},
            {"version": 8, "staged": STAGED_8, "in_commit_timestamp": _ict(8)},
            {"version": 9, "inline": commits[9].decode(), "in_commit_timestamp": _ict(9)},
        ],
    }
    _dump(out / "catalog.json", catalog)
    (out / "expected").mkdir()
    _dump(out / "expected" / "v9.json", _expected(commits))
    (out / "README.md").write_text(README)


def _dump(path: Path, obj: object) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")


def catalog_commits(fixture: Path, location: str) -> tuple[int, int, list[RatifiedCommit]]:
    """``catalog.json`` for a copy of the table at ``location``: (latest, published mark, commits)."""
    state, commits = catalog_state(fixture, location)
    return state["latest_version"], state["latest_published_version"], commits


README = """\
# RFC worked example: mixing published, staged and inline commits

The golden table of the catalog-managed RFC's section "Reading Catalog-managed Tables",
generated by `scripts/make_rfc_fixture.py` (deterministic: fixed ids and timestamps; run it
again and the bytes do not change).

## What is on storage (`table/`)

- `_delta_log/0..7.json`: published commits. Version 0 creates the table (protocol 3/7 with
  `catalogManaged`, in-commit timestamps on) and adds row 0; version 4 deletes row 1; every
  other version v adds the row `{"id": v, "value": "v<v>"}` in its own Parquet file.
- `_delta_log/2.checkpoint.parquet`: checkpoint of version 2.
- `_delta_log/3.5.compacted.json`: log compaction of versions 3 to 5.
- `_delta_log/_staged_commits/`:
  - version 7, `016ae953...`: the ratified commit 7, byte-identical to the published `7.json`;
  - version 8, `7d17ac10...`: the ratified commit 8 (adds row 8), not published;
  - version 8, `b91807ba...`: a rejected attempt at 8 (adds row 108);
  - version 10, `0f707846...`: an attempt at 10 the catalog has not ratified (adds row 110);
  - version 10, `7a980438...`: a partially written attempt at 10 (truncated JSON, row 111).

## What the catalog says (`catalog.json`)

Latest ratified version 9. It still stores commit 7 (staged; it does not know 7 was
published, so its published mark is 6), commit 8 (staged) and commit 9 (inline: the
commit's NDJSON content is in the file; it adds row 9). Staged names are relative to
`_delta_log/_staged_commits/` of wherever the table is placed.

## What a correct reader returns (`expected/v9.json`)

Version 9 is built from published 0-6 (or checkpoint 2 plus 3-6), the catalog's 7 and 8,
and the inline 9: rows 0, 2, 3, 5, 6, 7, 8, 9. Row 108, 110 or 111 means the reader
trusted `_staged_commits` on its own; missing rows 8 and 9 mean it did not ask the catalog;
an error means it could not fall back to the published files.
"""
