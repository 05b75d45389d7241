"""A catalog-managed table handed to the client under test by its path only (no catalog).

The suite writes the table with the reference client: published versions 1-2, then versions 3-4
ratified by the catalog but not published (their commits are staged files). Every data version
``v`` adds the single row ``{id: v, value: "v<v>"}``, so the rows a client returns say which
versions it read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import pytest

from conformance.checks.delta.builders import expected_rows
from conformance.checks.delta.evidence import Attempt, attempt
from conformance.contract.delta import Storage, TableInfo
from conformance.contract.path_access import PathClient
from conformance.observe.recording import RecordingClient
from conformance.observe.transcript import Transcript
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.log_paths import log_dir

T = TypeVar("T")
PUBLISHED = range(1, 3)  # versions 1-2: in _delta_log/<v>.json
UNPUBLISHED = range(3, 5)  # versions 3-4: ratified, only staged files and the catalog know them


@dataclass
class PathTable:
    info: TableInfo
    files: dict[str, bytes]  # every file under the location after setup, by URI

    @property
    def location(self) -> str:
        return self.info.location

    @property
    def log(self) -> dict[str, bytes]:
        """The files under _delta_log (staged commits included)."""
        prefix = log_dir(self.location).rstrip("/") + "/"
        return {uri: data for uri, data in self.files.items() if uri.startswith(prefix)}


def snapshot_files(storage: Storage, prefix: str) -> dict[str, bytes]:
    return {f.uri: storage.get(f.uri) for f in storage.list(prefix.rstrip("/") + "/")}


def changes(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    """Files added or rewritten since ``before``, as ``new <uri>`` / ``changed <uri>``."""
    new = [f"new {u}" for u in sorted(after) if u not in before]
    changed = [f"changed {u}" for u in sorted(after) if u in before and after[u] != before[u]]
    return new + changed


@pytest.fixture
def path_table(
    suite_client: ReferenceClient, ref_admin: ReferenceCatalog, suite_storage: Storage, table_name: str
) -> PathTable:
    suite_client.create_table(table_name)
    for v in PUBLISHED:
        suite_client.append(table_name, expected_rows([v]))
    suite_client.publish(table_name)
    for v in UNPUBLISHED:
        suite_client.append(table_name, expected_rows([v]))
    info = ref_admin.resolve(table_name)
    return PathTable(info, snapshot_files(suite_storage, info.location))


@pytest.fixture
def path_client(path_table: PathTable, client: RecordingClient) -> PathClient | None:
    """The client under test's path access, or ``None`` when it does not offer the path contract.

    Built after the table (its ``before`` state), so whatever building the client writes shows.
    """
    inner = client.inner
    return inner if isinstance(inner, PathClient) else None


def call(transcript: Transcript, op: str, args: dict[str, object], fn: Callable[[], T]) -> Attempt[T]:
    """Call the client's path method; record the call and, for a refusal, the exception's class."""
    outcome = attempt(fn)
    error = outcome.error
    error_name = f"{type(error).__module__}.{type(error).__qualname__}" if error is not None else None
    transcript.add("client", op, args, error is None, result=outcome.value, error=error_name)
    return outcome
