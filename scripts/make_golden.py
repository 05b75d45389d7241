"""Generate the golden catalog-managed tables under fixtures/golden/ (or --out DIR).

Every case is written by the reference client (``ReferenceClient``) against a temporary
reference catalog, with a fixed clock, deterministic UUIDs and pinned Parquet options, so
running the script again gives identical bytes (for a given pyarrow version: Parquet
footers name the writer). States no correct writer leaves behind (a stale published file,
files above the catalog's latest version, rejected and partial staged files) are small
direct edits on top. Before a case is written out, the reference reader reads its copy
back through a fresh catalog seeded from ``catalog.json`` and must agree with the
generator's own model of every version.

Only the case directories are (re)written; ``schema/`` and ``README.md`` are maintained by
hand. The layout is documented in fixtures/golden/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reference_impl.catalog.catalog import ReferenceCatalog  # noqa: E402
from reference_impl.delta import actions as act  # noqa: E402
from reference_impl.delta import rfc_fixture  # noqa: E402
from reference_impl.delta.checkpoint import (  # noqa: E402
    encode_checkpoint,
    read_checkpoint,
    read_last_checkpoint,
    write_checkpoint,
    write_last_checkpoint,
    write_multipart_checkpoint,
)
from reference_impl.delta.client import ReferenceClient  # noqa: E402
from reference_impl.delta.compaction import reconcile  # noqa: E402
from reference_impl.delta.data_files import write_data_file  # noqa: E402
from reference_impl.delta.golden_case import seed_commits  # noqa: E402
from reference_impl.delta.log_paths import checkpoint_uri, compaction_uri, delta_uri, staged_dir, staged_uri  # noqa: E402
from reference_impl.delta.snapshot import LogReader, read_rows  # noqa: E402
from reference_impl.storage.local import TEMP_PREFIX, LocalStorage, path_to_uri, uri_to_path  # noqa: E402

NS = uuid.UUID("3d5c1f0e-8a47-4b52-9b1e-6f2a7c9d0e11")  # namespace of every generated UUID
BASE_TS = 1_700_000_000_000  # 2023-11-14T22:13:20Z
STEP = 60_000  # one minute between commits unless a case says otherwise
TABLE = "golden"  # the table's name in the temporary catalog

# Every Parquet option pinned (these are pyarrow's defaults today): a change of defaults in a
# later pyarrow must not change the bytes. ``store_schema=False``: no Arrow schema blob.
PARQUET_OPTIONS: dict[str, Any] = {
    "version": "2.6",
    "compression": "snappy",
    "use_dictionary": True,
    "write_statistics": True,
    "data_page_version": "1.0",
    "store_schema": False,
    "write_page_index": False,
    "write_page_checksum": False,
}
_WRITE_TABLE = pq.write_table

Row = dict[str, object]
Model = dict[int, list[Row]]  # version -> rows sorted by id


def _pinned_write_table(table: Any, where: Any, **_ignored: Any) -> None:
    _WRITE_TABLE(table, where, **PARQUET_OPTIONS)


@contextlib.contextmanager
def deterministic(case: str) -> Iterator[None]:
    """Fixed UUIDs (uuid5 of a per-case counter) and pinned Parquet options while a case is built."""
    counter = itertools.count()

    def uuid4() -> uuid.UUID:
        return uuid.uuid5(NS, f"{case}/{next(counter)}")

    with mock.patch("uuid.uuid4", uuid4), mock.patch("pyarrow.parquet.write_table", _pinned_write_table):
        yield


class FixedClock:
    """The clock of the reference client (in-commit timestamps) and of data file times."""

    def __init__(self, start_ms: int) -> None:
        self.t = start_ms

    def now(self) -> int:
        return self.t

    def advance(self, ms: int) -> int:
        self.t += ms
        return self.t


class _Interrupted(Exception):
    """Cleanup stopped part-way (a crash of the maintenance job)."""


class _InterruptedDeletes(LocalStorage):
    """Local storage whose ``delete`` fails after ``allowed`` deletions."""

    def __init__(self, allowed: int) -> None:
        super().__init__()
        self.allowed = allowed

    def delete(self, uri: str) -> None:
        if self.allowed <= 0:
            raise _Interrupted(uri)
        self.allowed -= 1
        super().delete(uri)


@dataclass
class CaseInfo:
    name: str
    description: str
    requirements: list[str]


class Gen:
    """One table written by the reference client, and the model of every version's rows."""

    def __init__(self, work: Path, start_ms: int = BASE_TS) -> None:
        work.mkdir(parents=True)
        self.storage = LocalStorage()
        self.catalog = ReferenceCatalog(work / "catalog.db", path_to_uri(work / "warehouse"), self.storage)
        self.clock = FixedClock(start_ms)
        with mock.patch("reference_impl.delta.client.wall_clock_ms", self.clock.now):
            self._client().create_table(TABLE)
        self.table = self.catalog.resolve(TABLE)
        self.location = self.table.location
        self.live: dict[int, str] = {}
        self.model: Model = {0: []}
        self.icts: dict[int, int] = {0: start_ms}

    def _client(self, *, inline: bool = False, storage: LocalStorage | None = None) -> ReferenceClient:
        return ReferenceClient(self.catalog, storage or self.storage, inline=inline, clock=self.clock.now)

    def _commit(self, after_ms: int, do: Callable[[], int]) -> int:
        self.clock.advance(after_ms)
        # File modification times (add actions, rewrites) follow the same fixed clock.
        with mock.patch("reference_impl.delta.client.wall_clock_ms", self.clock.now):
            version = do()
        assert version == max(self.model) + 1, f"unexpected version {version}"
        self.model[version] = [{"id": i, "value": self.live[i]} for i in sorted(self.live)]
        self.icts[version] = self.clock.now()
        return version

    # --------------------------------------------------------- through the reference client

    def append(self, rows: dict[int, str], *, inline: bool = False, after_ms: int = STEP) -> int:
        self.live.update(rows)
        records: list[Row] = [{"id": i, "value": s} for i, s in rows.items()]
        return self._commit(after_ms, lambda: self._client(inline=inline).append(TABLE, records))

    def delete(self, ids: list[int], *, inline: bool = False, after_ms: int = STEP) -> int:
        for i in ids:
            del self.live[i]
        return self._commit(after_ms, lambda: self._client(inline=inline).delete(TABLE, ids))

    def publish(self) -> None:
        self._client().publish(TABLE)

    def checkpoint(self) -> int | None:
        return self._client().checkpoint(TABLE)

    def interrupted_cleanup(self, cutoff_version: int, deletes: int) -> None:
        """Metadata cleanup by the reference client, stopped after ``deletes`` deletions."""
        with contextlib.suppress(_Interrupted):
            self._client(storage=_InterruptedDeletes(deletes)).cleanup(TABLE, cutoff_version)

    # --------------------------------------------------------- direct edits (no correct writer)

    def raw_commit(self, rows: dict[int, str], ict: int) -> bytes:
        """Commit content adding ``rows`` in a new data file (not proposed, not published)."""
        records: list[Row] = [{"id": i, "value": s} for i, s in rows.items()]
        body = [write_data_file(self.storage, self.location, records, modification_time=ict)] if records else []
        return act.encode_commit([act.commit_info_action(ict, str(uuid.uuid4()), "WRITE"), *body])

    def put_staged(self, version: int, content: bytes) -> str:
        uri = staged_uri(self.location, version, str(uuid.uuid4()))
        self.storage.put(uri, content, if_absent=True)
        return uri

    def put_published(self, version: int, content: bytes) -> None:
        self.storage.put(delta_uri(self.location, version), content, if_absent=True)

    # --------------------------------------------------------- the catalog's state

    def catalog_state(self) -> dict[str, Any]:
        resp = self.catalog.get_commits(self.table.table_id)
        commits: list[dict[str, Any]] = []
        for c in resp.commits:
            entry: dict[str, Any] = {"version": c.version, "in_commit_timestamp": c.in_commit_timestamp}
            if c.staged_uri is not None:
                prefix = staged_dir(self.location) + "/"
                assert c.staged_uri.startswith(prefix)
                entry["staged"] = c.staged_uri[len(prefix) :]
            else:
                assert c.inline_content is not None
                entry["inline"] = c.inline_content.decode()
            commits.append(entry)
        # The reference catalog drops exactly the commits at or below its published mark.
        published = resp.commits[0].version - 1 if resp.commits else resp.latest_version
        return {"latest_version": resp.latest_version, "latest_published_version": published, "commits": commits}

    def table_dir(self) -> Path:
        return uri_to_path(self.location)


# ============================================================================ writing a case


def _dump(path: Path, obj: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")


def write_case(
    out: Path,
    info: CaseInfo,
    table_src: Path,
    state: dict[str, Any],
    model: Model,
    versions: list[int],
    timestamps: list[tuple[int, int]] | None = None,
) -> None:
    """Copy the table, write catalog.json, and the expected files checked against the reference reader."""
    case = out / info.name
    shutil.rmtree(case, ignore_errors=True)
    case.mkdir(parents=True)
    shutil.copytree(table_src, case / "table", ignore=shutil.ignore_patterns(f"{TEMP_PREFIX}*"))
    _dump(case / "catalog.json", state)
    latest = state["latest_version"]
    assert max(versions) == latest, f"{info.name}: the latest version {latest} must be readable"

    with tempfile.TemporaryDirectory() as tmp:
        storage = LocalStorage()
        catalog = ReferenceCatalog(Path(tmp) / "catalog.db", path_to_uri(Path(tmp) / "warehouse"))
        location = path_to_uri(case / "table")
        table = catalog.import_table(
            TABLE, location, latest, seed_commits(state, location), state["latest_published_version"]
        )
        reader = LogReader(catalog, storage)
        client = ReferenceClient(catalog, storage)
        for v in versions:
            snap = reader.snapshot(table.table_id, location, v)
            rows = read_rows(storage, snap)
            assert rows == model[v], f"{info.name} v{v}: reference reader {rows} != model {model[v]}"
            assert client.read(TABLE, version=v).rows == rows
            meta = {
                "version": v,
                "in_commit_timestamp": snap.in_commit_timestamp,
                "protocol": snap.protocol,
                "metadata": {k: snap.metadata[k] for k in ("id", "schemaString", "partitionColumns", "configuration")},
                "files": sorted(snap.files),
            }
            for name in (f"v{v}", "latest") if v == latest else (f"v{v}",):
                _dump(case / "expected" / name / "table_version_metadata.json", meta)
                _dump(case / "expected" / name / "rows.json", rows)
        assert client.read(TABLE).version == latest
        if timestamps is not None:
            for ts, v in timestamps:
                got = client.read(TABLE, timestamp_ms=ts).version
                assert got == v, f"{info.name}: timestamp {ts} resolves to v{got}, the model says v{v}"
            entries = [{"timestamp_ms": ts, "version": v} for ts, v in timestamps]
            _dump(case / "expected" / "timestamps.json", {"timestamps": entries})
        catalog.close()

    _dump(
        case / "test_case_info.json",
        {
            "name": info.name,
            "description": info.description,
            "requirements": info.requirements,
            "versions": versions,
            "latest_version": latest,
        },
    )


@dataclass
class Built:
    """What a case builder hands to ``write_case``."""

    table_src: Path
    state: dict[str, Any]
    model: Model
    versions: list[int]
    timestamps: list[tuple[int, int]] | None = None


# ============================================================================ the cases

CASES: dict[str, tuple[str, list[str]]] = {
    "rfc-worked-example": (
        'The RFC\'s worked example ("Reading Catalog-managed Tables"): published commits 0-7 with a '
        "checkpoint at 2 and a log compaction of 3-5; the catalog stores 7 (staged, already published "
        "without its knowledge), 8 (staged) and 9 (inline) and says 9 is the latest; a rejected staged "
        "attempt at 8 and an unratified and a partial staged attempt at 10 lie beside them.",
        [
            "RDR-RFC-EXAMPLE",
            "RDR-UNPUBLISHED",
            "RDR-CATALOG-PRECEDENCE",
            "RDR-IGNORE-ABOVE-LATEST",
            "RDR-IGNORE-UNRATIFIED",
            "RDR-LIST-FALLBACK",
        ],
    ),
    "unpublished-commits": (
        "Versions 0-2 are published (checkpoint at 2) and dropped by the catalog; versions 3-5 are "
        "ratified staged commits the catalog stores and nobody published yet (5 deletes row 1). "
        "Only the catalog knows 3-5; only the listing knows 0-2.",
        ["RDR-UNPUBLISHED", "RDR-LIST-FALLBACK"],
    ),
    "inline-commits": (
        "Versions 0-1 are published; 2, 3 and 4 are inline commits (their content is only in the "
        "catalog, nothing in _staged_commits; 4 deletes row 2); 5 is a ratified staged commit.",
        ["RDR-UNPUBLISHED", "RDR-LIST-FALLBACK"],
    ),
    "rejected-and-partial-staged": (
        "Versions 0-2 are published, 3 and 4 are ratified staged commits. Beside them in "
        "_staged_commits: rejected attempts at 2, 3 and 4 (rows 102-104), a complete but unratified "
        "attempt at 5 (row 105) and a partially written attempt at 5 (truncated JSON, row 115). "
        "None of them is part of any version.",
        ["RDR-IGNORE-UNRATIFIED", "RDR-IGNORE-ABOVE-LATEST", "RDR-UNPUBLISHED"],
    ),
    "published-beyond-latest": (
        "The catalog's latest version is 4 (0-3 published, 4 a ratified staged commit), but "
        "_delta_log also holds published commits 5 and 6 (rows 105, 106; e.g. written through the "
        "filesystem behind the catalog's back), a checkpoint of 6, and _last_checkpoint points at 6. "
        "Everything above 4 must be ignored.",
        ["RDR-IGNORE-ABOVE-LATEST"],
    ),
    "stale-published-file": (
        "Versions 0-2 are published; the catalog ratified 3 (staged) and 4 (inline), both "
        "unpublished. _delta_log/3.json and 4.json exist too but differ from the catalog's commits "
        "(rows 103 and 104 instead of 3 and 4, other timestamps): stale files of the same versions. "
        "The catalog's commits win.",
        ["RDR-CATALOG-PRECEDENCE", "RDR-UNPUBLISHED"],
    ),
    "time-travel-ict": (
        "Commits at irregular in-commit timestamps (1 s, 1 h, 1 ms, 1 day, 1 min, 5 s apart; 5 "
        "deletes row 1): 0-4 published with a checkpoint at 4, 5 staged and 6 inline, both "
        "unpublished. expected/timestamps.json maps timestamps to the version a reader resolves by "
        "in-commit timestamp; file modification times carry no meaning (the files are copied).",
        ["RDR-TIME-TRAVEL-ICT", "RDR-UNPUBLISHED"],
    ),
    "mid-cleanup": (
        "Checkpoints at 2 and 5, 0-6 published, 7 a ratified staged commit. Metadata cleanup with "
        "cut-off checkpoint 5 stopped after deleting 0.json, 1.json and the checkpoint of 2: "
        "2.json-4.json and the old staged commits are still there, but versions below 5 can no "
        "longer be built. A whole multi-part checkpoint of 6 (three parts) sits beside them. Readable: 5, 6 and 7.",
        ["RDR-LIST-FALLBACK", "RDR-UNPUBLISHED"],
    ),
    "engine-maintenance-shapes": (
        "Written as Delta engines write maintenance and rewrites: every add of the checkpoints (at 3 and "
        "5) and of the log compaction of 4-5 carries dataChange false, and 4 is an OPTIMIZE commit "
        "(removes of every live file and one add of their rows, all dataChange false). 0-5 published, "
        "6 a ratified staged commit. A file added with dataChange false is live like any other.",
        ["RDR-LIST-FALLBACK", "RDR-UNPUBLISHED"],
    ),
}
ALL_CASES_REQ = "RDR-GOLDEN-TABLES"


def build_rfc(work: Path) -> Built:
    """The RFC's worked example from the existing generator (reference_impl/delta/rfc_fixture.py)."""
    rfc_fixture.write_fixture(work)
    state = json.loads((work / "catalog.json").read_text())
    model: Model = {}
    for n in range(rfc_fixture.LATEST + 1):
        ids = [i for i in range(n + 1) if i != 4 and not (i == 1 and n >= 4)]
        model[n] = [{"id": i, "value": f"v{i}"} for i in ids]
    return Built(work / "table", state, model, list(range(rfc_fixture.LATEST + 1)))


def build_unpublished(work: Path) -> Built:
    g = Gen(work)
    g.append({1: "a1"})
    g.append({2: "a2"})
    g.publish()
    assert g.checkpoint() == 2
    g.append({3: "a3"})
    g.append({4: "a4"})
    g.delete([1])
    return Built(g.table_dir(), g.catalog_state(), g.model, sorted(g.model))


def build_inline(work: Path) -> Built:
    g = Gen(work)
    g.append({1: "a1"})
    g.publish()
    g.append({2: "inline-2"}, inline=True)
    g.append({3: "inline-3", 4: "inline-4"}, inline=True)
    g.delete([2], inline=True)
    g.append({5: "staged-5"})
    return Built(g.table_dir(), g.catalog_state(), g.model, sorted(g.model))


def build_rejected(work: Path) -> Built:
    g = Gen(work)
    g.append({1: "a1"})
    g.append({2: "a2"})
    g.publish()
    g.append({3: "a3"})
    g.append({4: "a4"})
    # Losing attempts: complete commits the catalog never ratified (at published 2 and at 3, 4).
    for v in (2, 3, 4):
        g.put_staged(v, g.raw_commit({100 + v: f"rejected-{v}"}, g.icts[v] + 1))
    after = g.icts[4] + STEP
    g.put_staged(5, g.raw_commit({105: "unratified-5"}, after))
    partial = g.raw_commit({115: "partial-5"}, after + 1)
    g.put_staged(5, partial[: len(partial) - 40])  # cut inside the last line
    return Built(g.table_dir(), g.catalog_state(), g.model, sorted(g.model))


def build_beyond_latest(work: Path) -> Built:
    g = Gen(work)
    for v in (1, 2, 3):
        g.append({v: f"a{v}"})
    g.publish()
    g.append({4: "a4"})
    state = g.catalog_state()
    model, versions = dict(g.model), sorted(g.model)
    # Behind the catalog's back: 5 and 6 published, a checkpoint of 6 and _last_checkpoint on it.
    adds: list[act.Action] = []
    for v in (5, 6):
        content = g.raw_commit({100 + v: f"beyond-{v}"}, g.icts[4] + (v - 4) * STEP)
        adds.extend(a for a in act.decode_commit(content) if "add" in a)
        g.put_published(v, content)
    table = g.catalog.resolve(TABLE)
    snap = LogReader(g.catalog, g.storage).snapshot(table.table_id, g.location, 4)
    assert write_checkpoint(g.storage, g.location, 6, snap.state_actions() + adds)
    return Built(g.table_dir(), state, model, versions)


def build_stale(work: Path) -> Built:
    g = Gen(work)
    g.append({1: "a1"})
    g.append({2: "a2"})
    g.publish()
    g.append({3: "a3"})
    g.append({4: "a4"}, inline=True)
    for v in (3, 4):
        g.put_published(v, g.raw_commit({100 + v: f"stale-{v}"}, g.icts[v] - 30_000))
    return Built(g.table_dir(), g.catalog_state(), g.model, sorted(g.model))


def build_time_travel(work: Path) -> Built:
    g = Gen(work)
    g.append({1: "a1"}, after_ms=1_000)
    g.append({2: "a2"}, after_ms=3_600_000)
    g.append({3: "a3"}, after_ms=1)
    g.append({4: "a4"}, after_ms=86_400_000)
    g.publish()
    assert g.checkpoint() == 4
    g.delete([1], after_ms=60_000)
    g.append({6: "a6"}, inline=True, after_ms=5_000)
    latest = max(g.model)
    probes: dict[int, int] = {}
    for v, ict in g.icts.items():
        probes[ict] = v  # exactly at a commit: that commit
        if v > 0:
            probes[ict - 1] = v - 1  # just before it: the one before
        if v < latest and ict + 1 < g.icts[v + 1]:
            probes[ict + 1] = v  # just after it
    probes[g.icts[latest] + 10 * 86_400_000] = latest  # far in the future: the latest
    return Built(g.table_dir(), g.catalog_state(), g.model, sorted(g.model), sorted(probes.items()))


def build_mid_cleanup(work: Path) -> Built:
    g = Gen(work)
    g.append({1: "a1"})
    g.append({2: "a2"})
    g.publish()
    assert g.checkpoint() == 2
    g.append({3: "a3"})
    g.delete([2])
    g.append({5: "a5"})
    g.publish()
    assert g.checkpoint() == 5
    g.append({6: "a6"})
    g.publish()
    g.append({7: "a7"})
    # Deletes in URI order: 0.json, 1.json, 2.checkpoint.parquet, then it stops.
    g.interrupted_cleanup(6, deletes=3)
    # Direct edit: a whole multi-part checkpoint of 6 in three parts (PROTOCOL.md "Checkpoints": the
    # union of parts 1..n; protocol and metaData land in the first, the files after them), as engines
    # write for large tables. A reader that reads no multi-part checkpoint builds 6 and 7 from the
    # checkpoint of 5; one that reads the set must read all of it (round 17: a reader read one part).
    snap = LogReader(g.catalog, g.storage).snapshot(g.table.table_id, g.location, 6)
    write_multipart_checkpoint(g.storage, g.location, 6, snap.state_actions(), 3)
    return Built(g.table_dir(), g.catalog_state(), g.model, [5, 6, 7])


def _engine_checkpoint(g: Gen, version: int) -> None:
    """The reference client's checkpoint of ``version`` rewritten as engines write it: every add with
    dataChange false (PROTOCOL.md Checkpoints: the flag means nothing in a checkpoint)."""
    actions = [_no_data_change(a) for a in read_checkpoint(g.storage, g.location, version)]
    data = encode_checkpoint(actions)
    g.storage.put(checkpoint_uri(g.location, version), data)
    hint = read_last_checkpoint(g.storage, g.location)
    assert hint is not None and hint["version"] == version
    write_last_checkpoint(g.storage, g.location, {**hint, "sizeInBytes": len(data)})


def _no_data_change(action: act.Action) -> act.Action:
    return {"add": {**action["add"], "dataChange": False}} if "add" in action else action


def build_engine_shapes(work: Path) -> Built:
    g = Gen(work)
    g.append({1: "a1", 2: "a2"})
    g.append({3: "a3"})
    g.delete([1])
    g.publish()
    assert g.checkpoint() == 3
    _engine_checkpoint(g, 3)
    # Direct edit: an OPTIMIZE of every live file into one, proposed to the catalog as a staged commit.
    snap = LogReader(g.catalog, g.storage).snapshot(g.table.table_id, g.location, 3)
    ict = g.clock.advance(STEP)
    new = write_data_file(g.storage, g.location, read_rows(g.storage, snap), modification_time=ict)
    removes = [act.remove_action(snap.files[p], ict, data_change=False) for p in sorted(snap.files)]
    info = act.commit_info_action(ict, str(uuid.uuid4()), "OPTIMIZE")
    content = act.encode_commit([info, *removes, _no_data_change(new)])
    g.catalog.commit(g.table.table_id, 4, staged_uri=g.put_staged(4, content), in_commit_timestamp=ict)
    g.model[4], g.icts[4] = g.model[3], ict
    g.append({4: "a4"})
    g.publish()
    assert g.checkpoint() == 5
    _engine_checkpoint(g, 5)
    reader = LogReader(g.catalog, g.storage)
    seg = reader.segment(g.table.table_id, g.location)
    body = reconcile([reader.commit_actions(seg.commits[v]) for v in (4, 5)])
    g.storage.put(compaction_uri(g.location, 4, 5), act.encode_commit([_no_data_change(a) for a in body]))
    g.append({5: "a5"})
    return Built(g.table_dir(), g.catalog_state(), g.model, sorted(g.model))


BUILDERS: dict[str, Callable[[Path], Built]] = {
    "rfc-worked-example": build_rfc,
    "unpublished-commits": build_unpublished,
    "inline-commits": build_inline,
    "rejected-and-partial-staged": build_rejected,
    "published-beyond-latest": build_beyond_latest,
    "stale-published-file": build_stale,
    "time-travel-ict": build_time_travel,
    "mid-cleanup": build_mid_cleanup,
    "engine-maintenance-shapes": build_engine_shapes,
}


def generate(out: Path, only: list[str] | None = None) -> list[str]:
    names = only or list(BUILDERS)
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        description, reqs = CASES[name]
        with tempfile.TemporaryDirectory() as tmp, deterministic(name):
            built = BUILDERS[name](Path(tmp) / "work")
            info = CaseInfo(name, description, [*reqs, ALL_CASES_REQ])
            write_case(out, info, built.table_src, built.state, built.model, built.versions, built.timestamps)
    return names


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "fixtures" / "golden")
    parser.add_argument("--case", action="append", choices=sorted(BUILDERS), help="only this case (repeatable)")
    args = parser.parse_args(argv)
    for name in generate(args.out.resolve(), args.case):
        print(f"wrote {args.out / name}")


if __name__ == "__main__":
    main()
