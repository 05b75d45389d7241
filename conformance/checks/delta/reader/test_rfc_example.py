"""The RFC's worked example (RFC "Reading Catalog-managed Tables"), from fixtures/rfc-worked-example."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.checks.delta.builders import LogBuilder
from conformance.fixtures_dir import fixtures_dir
from conformance.observe.recording import RecordingClient
from conformance.targets.contract import RatifiedCommit
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.log_paths import staged_dir


def _load_case(seeded: LogBuilder) -> tuple[dict[str, Any], list[RatifiedCommit]]:
    case = fixtures_dir() / "rfc-worked-example"
    for path in sorted((case / "table").rglob("*")):
        if path.is_file():
            seeded.storage.put(f"{seeded.location}/{path.relative_to(case / 'table').as_posix()}", path.read_bytes())
    state = json.loads((case / "catalog.json").read_text())
    commits = [
        RatifiedCommit(
            c["version"],
            staged_uri=f"{staged_dir(seeded.location)}/{c['staged']}" if "staged" in c else None,
            inline_content=c["inline"].encode() if "inline" in c else None,
            in_commit_timestamp=c["in_commit_timestamp"],
        )
        for c in state["commits"]
    ]
    return state, commits


@pytest.mark.req("RDR-RFC-EXAMPLE")
def test_reader_builds_version_9_of_the_worked_example(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    state, commits = _load_case(seeded)
    ref_admin.import_table(
        table_name,
        seeded.location,
        state["latest_version"],
        commits,
        state["latest_published_version"],
    )
    expected = json.loads((fixtures_dir() / "rfc-worked-example" / "expected" / "v9.json").read_text())
    latest = client.read(table_name)
    assert latest.version == 9, f"latest read resolved v{latest.version}; the catalog says 9"
    assert latest.rows == expected["rows"], f"v9 rows {latest.rows} differ from the RFC's v9"
