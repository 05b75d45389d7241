"""A table written by the client under test, with the evidence of how it was written."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from conformance.checks.delta.evidence import ratified_content, table_commits
from conformance.contract.delta import Storage, TableInfo
from conformance.observe.recording import RecordingClient
from conformance.observe.transcript import Transcript
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.actions import Action


@dataclass
class WrittenTable:
    info: TableInfo
    ratified: dict[int, bytes]  # version -> exact ratified bytes (versions >= 1)
    storage: Storage

    @property
    def commits(self) -> dict[int, list[Action]]:
        """Version -> actions, version 0 included; content that does not parse fails the check."""
        return table_commits(self.storage, self.info.location, self.ratified)


@pytest.fixture
def written(
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
) -> WrittenTable:
    """create, three appends, a delete: five commits through the catalog, nothing published."""
    client.create_table(table_name)
    for i in range(3):
        client.append(table_name, [{"id": 10 * i + 1, "value": "a"}, {"id": 10 * i + 2, "value": "b"}])
    client.delete(table_name, [1])
    info = ref_admin.resolve(table_name)
    ratified = ratified_content(transcript, suite_storage, info.table_id)
    return WrittenTable(info, ratified, suite_storage)
