"""Clients handed only a catalog-managed table's path, no catalog, must refuse it.

RFC "Catalog-managed tables": filesystem-based access is not supported; the feature warns
filesystem-based readers and blocks filesystem-based writers. Delta's reader-feature rule makes
a reader that cannot honour ``catalogManaged`` refuse the table. Any exception is a refusal;
what the client returned or wrote is the evidence.
"""

from __future__ import annotations

from typing import NoReturn

import pytest

from conformance.checks.delta.path_access.conftest import (
    PUBLISHED,
    UNPUBLISHED,
    PathTable,
    call,
    changes,
    snapshot_files,
)
from conformance.contract.delta import Storage
from conformance.contract.path_access import PathClient
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import not_applicable
from reference_impl.delta.log_paths import log_dir


def _unchanged_then_not_applicable(table: PathTable, storage: Storage) -> NoReturn:
    written = changes(table.files, snapshot_files(storage, table.location))
    assert not written, f"the client offers no path access, yet the table changed: {written}"
    not_applicable("the client does not offer path access (verified: the table is unchanged)")


def _versions_of(rows: list[dict[str, object]]) -> str:
    """Which of the table's versions the returned rows come from (row id v was added by version v)."""
    ids = {r.get("id") for r in rows}
    published = [v for v in PUBLISHED if v in ids]
    unpublished = [v for v in UNPUBLISHED if v in ids]
    other = sorted((i for i in ids if i not in set(PUBLISHED) | set(UNPUBLISHED)), key=repr)
    parts = [
        f"published versions {published}" if published else "",
        f"ratified but unpublished versions {unpublished} (read from their data files without the catalog)"
        if unpublished
        else "",
        f"rows of no version: ids {other}" if other else "",
    ]
    return "; ".join(p for p in parts if p) or "no version (no rows)"


@pytest.mark.req("RDR-PATH-READ-REFUSED")
def test_reader_refuses_a_catalog_managed_table_by_path(
    path_table: PathTable, path_client: PathClient | None, suite_storage: Storage, transcript: Transcript
) -> None:
    transcript.notes["schedule"] = [
        f"suite: create; append v{min(PUBLISHED)}-v{max(PUBLISHED)}; publish",
        f"suite: append v{min(UNPUBLISHED)}-v{max(UNPUBLISHED)} (ratified, not published)",
        "client: read_path(location), no catalog",
    ]
    if path_client is None:
        _unchanged_then_not_applicable(path_table, suite_storage)
    reader = path_client
    outcome = call(
        transcript,
        "read_path",
        {"location": path_table.location},
        lambda: reader.read_path(path_table.location),
    )
    if outcome.error is not None:
        return  # refused
    rows = list(outcome.value or [])
    raise AssertionError(
        f"read_path returned {len(rows)} row(s) of a catalog-managed table instead of refusing it: "
        f"{rows[:20]}{' ...' if len(rows) > 20 else ''}; they come from {_versions_of(rows)}; "
        f"the catalog's latest version is {max(UNPUBLISHED)}"
    )


@pytest.mark.req("WRT-PATH-WRITE-REFUSED")
def test_writer_refuses_a_catalog_managed_table_by_path(
    path_table: PathTable, path_client: PathClient | None, suite_storage: Storage, transcript: Transcript
) -> None:
    transcript.notes["schedule"] = [
        f"suite: create; append v{min(PUBLISHED)}-v{max(PUBLISHED)}; publish",
        f"suite: append v{min(UNPUBLISHED)}-v{max(UNPUBLISHED)} (ratified, not published)",
        "client: append_path(location, [id 100]), no catalog",
    ]
    if path_client is None:
        _unchanged_then_not_applicable(path_table, suite_storage)
    writer = path_client
    rows: list[dict[str, object]] = [{"id": 100, "value": "by-path"}]
    outcome = call(
        transcript,
        "append_path",
        {"location": path_table.location, "rows": rows},
        lambda: writer.append_path(path_table.location, rows),
    )
    written = changes(path_table.log, snapshot_files(suite_storage, log_dir(path_table.location)))
    how = "refused (raised)" if outcome.error is not None else "returned normally"
    assert not written, f"append_path {how} but wrote into _delta_log: {written}"
