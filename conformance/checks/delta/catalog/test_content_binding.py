"""A catalog that binds a ratified staged commit to its bytes serves those bytes (a MAY: the RFC's
catalog "stores only the location, not the content", "Terminology: Commits"; the YAML argues the
level). A catalog that serves the file as it now is follows the RFC's design: NOT_APPLICABLE."""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import CatalogDriver, ict_of, premise, version0
from conformance.contract.delta import CatalogError
from conformance.observe.recording import RecordingCatalog
from conformance.report.outcomes import not_applicable


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
    driver.commit_range(table, 3, 3)  # so that v2, judged below, is not the latest
    try:
        listed = {c.version: c for c in catalog.get_commits(table.table_id).commits}
    except CatalogError:
        return  # refusing to list a commit whose file changed serves nothing changed
    with premise("the ratified, unpublished v2 is listed (CAT-RETAIN-UNPUBLISHED judges it)"):
        assert 2 in listed, f"the ratified, unpublished v2 is not listed: {sorted(listed)}"
    commit = listed[2]
    # A binding catalog serves the kept bytes inline once the file changed (docs/certify.md).
    served = commit.inline_content if commit.inline_content is not None else driver.storage.get(commit.staged_uri or "")
    if served == rewritten:
        not_applicable(
            "the catalog keeps the staged file's location only, as the RFC describes "
            "(verified: it serves the file as it is now)"
        )
    assert served == ratified, "version 2 is served with content that is neither the ratified nor the rewritten"
