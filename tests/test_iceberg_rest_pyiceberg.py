"""pyiceberg's REST catalog against the reference Iceberg REST server, warehouse on local disk and on
S3 (moto's server over real HTTP)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError

from conformance.adapters.spark_iceberg.pyiceberg_writer import PyIcebergWriter
from reference_impl.iceberg_rest import IcebergRestServer
from reference_impl.iceberg_rest.fileio import s3_properties
from tests.moto_s3 import BUCKET

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("color", pa.string())])


@pytest.fixture(params=["file", "s3"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A fresh warehouse URI and the FileIO properties to reach it."""
    if request.param == "file":
        return (tmp_path / "warehouse").as_uri(), {}
    return f"s3://{BUCKET}/{tmp_path.name}", s3_properties(request.getfixturevalue("s3"))


def new_server(storage: tuple[str, dict[str, str]], database: Path) -> IcebergRestServer:
    warehouse, io = storage
    return IcebergRestServer(warehouse, database, io_properties=io)


@pytest.fixture
def server(storage: tuple[str, dict[str, str]], tmp_path: Path) -> Iterator[IcebergRestServer]:
    with new_server(storage, tmp_path / "catalog.sqlite") as srv:
        yield srv


def client(server: IcebergRestServer, storage: tuple[str, dict[str, str]], name: str = "client") -> Catalog:
    return load_catalog(name, **server.client_properties(), **storage[1])


def rows(catalog: Catalog, identifier: str) -> list[dict[str, object]]:
    return sorted(catalog.load_table(identifier).scan().to_arrow().to_pylist(), key=lambda r: str(r["id"]))


def test_create_append_load_commit(server: IcebergRestServer, storage: tuple[str, dict[str, str]]) -> None:
    catalog = client(server, storage)
    assert isinstance(catalog, RestCatalog)
    catalog.create_namespace("db", {"owner": "lakecert"})
    table = catalog.create_table("db.t", schema=SCHEMA)
    v0 = table.metadata_location
    assert v0.startswith(storage[0] + "/db/t/metadata/00000-")

    table.append(pa.table({"id": [1, 2], "color": ["red", "green"]}, schema=SCHEMA))
    v1, first = table.metadata_location, table.current_snapshot()
    assert first is not None

    other = client(server, storage, "other")  # a second client sees what the first committed
    loaded = other.load_table("db.t")
    assert loaded.metadata_location == table.metadata_location
    assert loaded.current_snapshot() == first
    loaded.append(pa.table({"id": [3], "color": ["blue"]}, schema=SCHEMA))

    assert rows(catalog, "db.t") == [
        {"id": 1, "color": "red"},
        {"id": 2, "color": "green"},
        {"id": 3, "color": "blue"},
    ]
    final = catalog.load_table("db.t")
    assert [s.parent_snapshot_id for s in final.snapshots()] == [None, first.snapshot_id]
    assert [entry.metadata_file for entry in final.metadata.metadata_log] == [v0, v1]
    assert final.metadata_location.startswith(storage[0] + "/db/t/metadata/00002-")
    assert catalog.load_namespace_properties("db") == {"owner": "lakecert"}


def test_restart_keeps_tables(storage: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    database = tmp_path / "catalog.sqlite"
    with new_server(storage, database) as first:
        catalog = client(first, storage)
        catalog.create_namespace("db")
        table = catalog.create_table("db.t", schema=SCHEMA)
        table.append(pa.table({"id": [7], "color": ["teal"]}, schema=SCHEMA))
        location = table.metadata_location
    with new_server(storage, database) as second:
        catalog = client(second, storage)
        assert catalog.list_tables("db") == [("db", "t")]
        assert catalog.load_table("db.t").metadata_location == location
        assert rows(catalog, "db.t") == [{"id": 7, "color": "teal"}]


def test_create_table_transaction(server: IcebergRestServer, storage: tuple[str, dict[str, str]]) -> None:
    """stage-create returns metadata without creating; the commit with assert-create creates."""
    catalog = client(server, storage)
    catalog.create_namespace("db")
    transaction = catalog.create_table_transaction("db.ctas", schema=SCHEMA)
    assert catalog.list_tables("db") == []
    transaction.append(pa.table({"id": [1], "color": ["red"]}, schema=SCHEMA))
    transaction.commit_transaction()
    assert catalog.list_tables("db") == [("db", "ctas")]
    assert rows(catalog, "db.ctas") == [{"id": 1, "color": "red"}]


def test_namespaces_and_tables(server: IcebergRestServer, storage: tuple[str, dict[str, str]]) -> None:
    catalog = client(server, storage)
    catalog.create_namespace("a")
    catalog.create_namespace(("a", "b"))
    catalog.create_namespace("z")
    assert catalog.list_namespaces() == [("a",), ("z",)]
    assert catalog.list_namespaces("a") == [("a", "b")]
    assert catalog.namespace_exists(("a", "b")) and not catalog.namespace_exists("nope")
    catalog.create_table(("a", "b", "t"), schema=SCHEMA)
    assert catalog.table_exists(("a", "b", "t")) and not catalog.table_exists(("a", "b", "u"))
    catalog.rename_table(("a", "b", "t"), "z.t2")
    assert catalog.list_tables(("a", "b")) == [] and catalog.list_tables("z") == [("z", "t2")]
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace("z")
    catalog.drop_table("z.t2")
    catalog.drop_namespace("z")
    assert catalog.list_namespaces() == [("a",)]
    with pytest.raises(NoSuchTableError):
        catalog.load_table("z.t2")
    with pytest.raises(NoSuchNamespaceError):
        catalog.list_tables("z")


def test_pyiceberg_does_not_write_v3_as_the_adapter_says(
    server: IcebergRestServer, storage: tuple[str, dict[str, str]]
) -> None:
    """pyiceberg 0.12 loads a v3 table but refuses to write one; the spark-pyiceberg adapter makes v3
    NOT_APPLICABLE for that reason. When pyiceberg learns v3, this fails and the adapter must follow."""
    catalog = client(server, storage)
    catalog.create_namespace("db")
    table = catalog.create_table("db.v3", schema=SCHEMA, properties={"format-version": "3"})
    assert catalog.load_table("db.v3").format_version == 3
    with pytest.raises(ValueError):
        table.append(pa.table({"id": [1], "color": ["red"]}, schema=SCHEMA))
    assert catalog.load_table("db.v3").metadata_location == table.metadata_location
    assert not PyIcebergWriter.writes_format(3) and PyIcebergWriter.writes_format(2)
