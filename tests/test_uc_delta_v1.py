"""The `uc` target over UC's Delta REST API (`api: v1`): the catalog contract mapped onto
`/delta/v1` (conformance/adapters/uc/delta_v1.py), against `lakecert serve`."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.uc import UCDeltaV1Catalog, UCTarget
from conformance.contract.delta import (
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    NotSupported,
    TableNotFound,
)
from conformance.contract.target import TargetEnv
from conformance.observe.http_transcript import HttpLog, capture
from reference_impl.asgi_thread import ServerThread
from reference_impl.delta import actions as A
from reference_impl.delta import log_paths as P
from reference_impl.server.cli import build
from reference_impl.storage.local import LocalStorage
from tests.helpers import lakecert, results
from tests.tooling.server import serve_args

API = "/api/2.1/unity-catalog"
V1 = f"{API}/delta/v1"
PREVIEW = f"{API}/delta/preview/commits"
BUDGET = {"model": {"examples": 6, "steps": 12}, "race": {"proposers": 4, "repeats": 2}}


@contextmanager
def served_seen(db: Path) -> Iterator[tuple[str, list[str]]]:
    """`lakecert serve --db DB` on a loopback port (as `tests.tooling.server.served`), and the
    ``METHOD path`` of every request it is sent."""
    built = build(serve_args("--db", str(db)))
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append(f"{scope['method']} {scope['path']}")
        await built.app(scope, receive, send)

    try:
        with ServerThread(app) as server:
            yield server.url, seen
    finally:
        built.close()


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[tuple[UCDeltaV1Catalog, LocalStorage, list[str]]]:
    with served_seen(tmp_path / "catalog.sqlite") as (url, seen):
        target = UCTarget(url=url, api="v1")
        storage = LocalStorage()
        catalog = target.make_catalog(TargetEnv(tmp_path, (tmp_path / "wh").as_uri(), storage))
        assert isinstance(catalog, UCDeltaV1Catalog)
        yield catalog, storage, seen
        target.close()


def new_table(catalog: UCDeltaV1Catalog, storage: LocalStorage, name: str) -> tuple[str, str]:
    staged = catalog.create_staging_table()
    version0 = A.encode_commit(
        [
            A.commit_info_action(1_600_000_000_000, str(uuid.uuid4()), "CREATE TABLE"),
            A.protocol_action(),
            A.metadata_action(staged.table_id, 1_600_000_000_000, A.default_configuration()),
        ]
    )
    storage.put(P.delta_uri(staged.location, 0), version0)
    info = catalog.register_table(name, staged.table_id)
    assert (info.table_id, info.catalog_managed) == (staged.table_id, True)
    return staged.table_id, staged.location


def stage(storage: LocalStorage, location: str, version: int) -> str:
    uri = P.staged_uri(location, version, str(uuid.uuid4()))
    storage.put(uri, A.encode_commit([A.commit_info_action(1_600_000_000_000 + version, str(uuid.uuid4()), "WRITE")]))
    return uri


def test_commits_listing_and_publication_go_through_delta_v1(
    v1: tuple[UCDeltaV1Catalog, LocalStorage, list[str]],
) -> None:
    catalog, storage, seen = v1
    log = HttpLog()
    with capture(log):
        table_id, location = new_table(catalog, storage, "t_v1")
        assert catalog.resolve("t_v1").table_id == table_id
        staged = {v: stage(storage, location, v) for v in (1, 2)}
        for v, uri in staged.items():
            catalog.commit(table_id, v, staged_uri=uri, in_commit_timestamp=1_600_000_000_000 + v)
        listed = catalog.get_commits(table_id)
        assert listed.latest_version == 2
        assert {c.version: c.staged_uri for c in listed.commits} == staged
        assert [c.version for c in catalog.get_commits(table_id, 2, 2).commits] == [2]  # the range, kept here
        with pytest.raises(CommitConflict) as lost:
            catalog.commit(table_id, 2, staged_uri=stage(storage, location, 2), in_commit_timestamp=1)
        assert lost.value.latest_version is None  # /delta/v1's errors carry no latest version
        with pytest.raises((InvalidRequest, CommitRejected)):
            catalog.commit(table_id, 5, staged_uri=stage(storage, location, 5), in_commit_timestamp=5)
        catalog.mark_published(table_id, 1)
        after = catalog.get_commits(table_id)
        assert (after.latest_version, [c.version for c in after.commits]) == (2, [2])
    own = [e for e in log.exchanges() if not e.target.startswith(f"{API}/lakecert/")]
    assert own and all(e.target.startswith(V1) for e in own), [e.target for e in own]
    commits = [json.loads(e.request_body) for e in own if e.method == "POST" and "/tables/t_v1" in e.target]
    assert commits[0] == {
        "requirements": [{"type": "assert-table-uuid", "uuid": table_id}],
        "updates": [
            {
                "action": "add-commit",
                "commit": {
                    "version": 1,
                    "timestamp": 1_600_000_000_001,
                    "file-name": staged[1].rsplit("/", 1)[1],
                    "file-size": len(storage.get(staged[1])),
                    "file-modification-timestamp": commits[0]["updates"][0]["commit"]["file-modification-timestamp"],
                },
            }
        ],
    }
    assert commits[-1]["updates"] == [{"action": "set-latest-backfilled-version", "latest-published-version": 1}]
    assert not [s for s in seen if s.startswith(PREVIEW)]


def test_names_that_hold_another_table_and_unknown_ids_are_not_found(
    v1: tuple[UCDeltaV1Catalog, LocalStorage, list[str]],
) -> None:
    catalog, storage, _ = v1
    old_id, old_location = new_table(catalog, storage, "t_again")
    catalog.drop_table("t_again")  # lakecert serve's /delta/v1 has no DELETE: UC's REST API drops it
    with pytest.raises(TableNotFound):
        catalog.resolve("t_again")
    new_table(catalog, storage, "t_again")
    with pytest.raises(TableNotFound):  # assert-table-uuid refuses: the name holds another table now
        catalog.commit(old_id, 1, staged_uri=stage(storage, old_location, 1), in_commit_timestamp=1)
    with pytest.raises(TableNotFound):
        catalog.get_commits(old_id)
    with pytest.raises(TableNotFound):
        catalog.mark_published(str(uuid.uuid4()), 0)
    with pytest.raises(NotSupported):  # the API carries staged commits only
        catalog.commit(old_id, 1, inline_content=b"{}\n", in_commit_timestamp=1)


def test_a_run_over_delta_v1_certifies_lakecert_serve(tmp_path: Path) -> None:
    with served_seen(tmp_path / "catalog.sqlite") as (url, seen):
        options = {"url": url, "api": "v1"}
        config = {**BUDGET, "target": "uc", "profiles": ["delta-cm-catalog"], "targets": {"uc": {"options": options}}}
        (tmp_path / "lakecert.yaml").write_text(json.dumps(config))
        proc = lakecert("run", "--config", str(tmp_path / "lakecert.yaml"), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert results(tmp_path / "out")["verdict"] == "CERTIFIED"
    assert any(s.startswith(f"POST {V1}/catalogs/unity/schemas/default/tables/") for s in seen)
    assert any(s.startswith(f"GET {V1}/config") for s in seen)
    assert not [s for s in seen if s.startswith(f"POST {PREVIEW}") or s.startswith(f"GET {PREVIEW}")]


def test_the_api_option_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"api must be one of preview, v1 .* not 'nonsense'"):
        UCTarget(api="nonsense")
    env = {"LAKECERT__targets__uc__options__api": "nonsense"}
    proc = lakecert("run", "--target", "uc", "--out", str(tmp_path / "out"), env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "api must be one of preview, v1" in proc.stdout + proc.stderr
