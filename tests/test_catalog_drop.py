"""Dropping a table from the reference catalog (RFC "Creating and Dropping": a soft drop)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.contract.delta import InvalidRequest, TableNotFound
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.storage.local import LocalStorage, path_to_uri
from tests.test_reference_catalog import new_table, staged


@pytest.fixture
def catalog(tmp_path: Path) -> ReferenceCatalog:
    return ReferenceCatalog(tmp_path / "c.sqlite", path_to_uri(tmp_path / "wh"), LocalStorage())


def test_a_dropped_table_is_gone_and_never_registered_again(catalog: ReferenceCatalog) -> None:
    table = new_table(catalog, "t")
    catalog.commit(table.table_id, 1, staged_uri=staged(table.location, 1))
    catalog.drop_table("t")
    with pytest.raises(TableNotFound):
        catalog.resolve("t")
    with pytest.raises(TableNotFound):
        catalog.drop_table("t")
    with pytest.raises(InvalidRequest):
        catalog.register_table("again", table.table_id)
    with pytest.raises(InvalidRequest):
        catalog.commit(table.table_id, 2, staged_uri=staged(table.location, 2))
    assert new_table(catalog, "t").table_id != table.table_id  # the name is free
