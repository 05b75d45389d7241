"""What the catalog ratified is what it serves: a staged file rewritten after ratification is
never served as that version (RFC "Publishing Commits": the content of a ratified commit is
immutable; motivation 1: a catalog that judges commits must serve what it judged)."""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import CatalogDriver, ict_of, version0
from conformance.contract.delta import CatalogError
from conformance.observe.recording import RecordingCatalog


@pytest.mark.req("CAT-RATIFIED-CONTENT-BOUND")
def test_rewritten_staged_commit_is_not_served(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 1)
    staged = driver.stage(table, 2)
    ratified = driver.storage.get(staged)
    catalog.commit(table.table_id, 2, staged_uri=staged, in_commit_timestamp=ict_of(2))
    # The writer rewrites its staged file: now it changes the protocol and the metadata.
    rewritten = version0(table.table_id)
    driver.storage.put(staged, rewritten)
    try:
        listed = {c.version: c for c in catalog.get_commits(table.table_id).commits}
    except CatalogError:
        return  # refusing to list a commit whose file changed serves nothing changed
    assert 2 in listed, "the ratified, unpublished version 2 is no longer listed"
    commit = listed[2]
    served = commit.inline_content if commit.staged_uri is None else driver.storage.get(commit.staged_uri)
    assert served != rewritten, "the catalog serves the staged file rewritten after ratification as version 2"
    assert served == ratified, "version 2 is served with content that is neither the ratified nor the rewritten"
