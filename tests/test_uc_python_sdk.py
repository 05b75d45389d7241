"""UC's Python SDK (`unitycatalog-client` 0.7.0, PyPI) as a client of `lakecert serve`: every call it
makes for catalog-managed tables works, and its models parse what the server answers."""

from __future__ import annotations

import asyncio
import base64
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from reference_impl.delta import log_paths as P
from reference_impl.server.deps import PREFIX
from reference_impl.storage.local import LocalStorage
from tests.tooling.server import COMMITS, Driver, served

uc: Any = pytest.importorskip("unitycatalog.client")
UM: Any = pytest.importorskip("unitycatalog.client.models")  # the SDK declares no exports: typed loosely

T = TypeVar("T")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("sdk") / "catalog.sqlite"
    with served("--db", str(db)) as (url, _):
        yield url


def call(url: str, use: Callable[[Any], Awaitable[T]]) -> T:
    """Run ``use(api_client)`` with a fresh SDK client (the SDK is asyncio-based)."""

    async def run() -> T:
        async with uc.ApiClient(uc.Configuration(host=url + PREFIX)) as client:
            return await use(client)

    return asyncio.run(run())


def get_commits(url: str, table_id: str, location: str, start: int = 0) -> Any:
    """GET /delta/preview/commits through the SDK's transport and models, fields in the query string:
    the SDK's own ``get_commits`` cannot send them (its HTTP layer drops the body of a GET)."""

    async def use(client: Any) -> Any:
        query = [("table_id", table_id), ("table_uri", location), ("start_version", str(start))]
        request = client.param_serialize("GET", "/delta/preview/commits", query_params=query)
        response = await client.call_api(*request)
        await response.read()
        return client.response_deserialize(response, {"200": "DeltaGetCommitsResponse"}).data

    return call(url, use)


def create_table(url: str, name: str) -> Any:
    """Staging table, version 0 written at its location, then the table: all through the SDK."""

    async def use(client: Any) -> Any:
        tables = uc.TablesApi(client)
        staged = await tables.create_staging_table(
            UM.CreateStagingTable(name=name, catalog_name="unity", schema_name="default")
        )
        LocalStorage().put(P.delta_uri(staged.staging_location, 0), Driver.version0(staged.id))
        await tables.create_table(
            UM.CreateTable(
                name=name,
                catalog_name="unity",
                schema_name="default",
                table_type=UM.TableType.MANAGED,
                data_source_format=UM.DataSourceFormat.DELTA,
                columns=[],
                storage_location=staged.staging_location,
                properties={"io.unitycatalog.tableId": staged.id, "delta.feature.catalogManaged": "supported"},
            )
        )
        return staged

    return call(url, use)


def commit(url: str, staged: Any, version: int) -> None:
    uri = P.staged_uri(staged.staging_location, version, str(uuid.uuid4()))
    LocalStorage().put(uri, Driver.data_commit(version))
    info = UM.DeltaCommitInfo(
        version=version,
        timestamp=1000 + version,
        file_name=uri.rsplit("/", 1)[1],
        file_size=100,
        file_modification_timestamp=1000 + version,
    )
    body = UM.DeltaCommit(table_id=staged.id, table_uri=staged.staging_location, commit_info=info)
    call(url, lambda client: uc.DeltaCommitsApi(client).commit(body))


def test_catalogs_schemas_and_metastore_summary(server: str) -> None:
    async def use(client: Any) -> tuple[Any, Any, Any, Any]:
        created = await uc.CatalogsApi(client).create_catalog(UM.CreateCatalog(name="sdk_cat"))
        await uc.SchemasApi(client).create_schema(UM.CreateSchema(name="s1", catalog_name="sdk_cat"))
        listed = await uc.SchemasApi(client).list_schemas(catalog_name="sdk_cat")
        first = await uc.MetastoresApi(client).summary()
        again = await uc.MetastoresApi(client).summary()
        return created, listed, first, again

    created, listed, first, again = call(server, use)
    assert created.name == "sdk_cat"
    assert [s.name for s in listed.schemas] == ["s1"]
    assert first.metastore_id == again.metastore_id and uuid.UUID(first.metastore_id)


def test_tables_and_commits_round_trip(server: str) -> None:
    staged = create_table(server, "sdk_t1")
    commit(server, staged, 1)
    commit(server, staged, 2)

    async def tables(client: Any) -> tuple[Any, Any]:
        api = uc.TablesApi(client)
        return await api.get_table("unity.default.sdk_t1"), await api.list_tables("unity", "default")

    table, listed = call(server, tables)
    assert table.table_id == staged.id and table.storage_location == staged.staging_location
    assert "sdk_t1" in [t.name for t in listed.tables]
    listing = get_commits(server, staged.id, staged.staging_location)
    assert isinstance(listing, UM.DeltaGetCommitsResponse)
    assert listing.latest_table_version == 2
    assert sorted(c.version for c in listing.commits) == [1, 2]


def test_a_lost_race_is_a_409_through_the_sdk(server: str) -> None:
    staged = create_table(server, "sdk_t2")
    commit(server, staged, 1)
    with pytest.raises(uc.ApiException) as raised:
        commit(server, staged, 1)  # another file for a ratified version
    assert raised.value.status == 409
    assert get_commits(server, staged.id, staged.staging_location).latest_table_version == 1


def test_listing_with_an_inline_commit_parses(server: str) -> None:
    staged = create_table(server, "sdk_t3")
    content = Driver.data_commit(1)
    inline = {"version": 1, "timestamp": 1001, "inline_content": base64.b64encode(content).decode()}
    body = {"table_id": staged.id, "table_uri": staged.staging_location, "commit_info": inline}
    with httpx.Client(base_url=server) as http:
        assert http.post(COMMITS, json=body).status_code == 200  # lakecert's extension: the SDK has no field
    listing = get_commits(server, staged.id, staged.staging_location)
    assert [(c.version, c.file_size) for c in listing.commits] == [(1, len(content))]


def test_get_commits_fields_from_body_or_query_must_agree(server: str, tmp_path: Path) -> None:
    staged = create_table(server, "sdk_t4")
    commit(server, staged, 1)
    fields = {"table_id": staged.id, "table_uri": staged.staging_location, "start_version": 0}
    with httpx.Client(base_url=server) as http:
        from_body = http.request("GET", COMMITS, json=fields)
        mixed = http.request("GET", COMMITS, json={"table_id": staged.id}, params={**fields, "table_id": staged.id})
        disagree = http.request("GET", COMMITS, json=fields, params={"start_version": "1"})
        not_int = http.get(COMMITS, params={**fields, "start_version": "one"})
        repeated = http.get(COMMITS + "?start_version=0&start_version=1", params={"table_id": staged.id})
    assert from_body.status_code == mixed.status_code == 200
    assert from_body.json() == mixed.json()
    assert disagree.status_code == not_int.status_code == repeated.status_code == 400


def test_namespace_patch_and_delete(server: str) -> None:
    async def use(client: Any) -> tuple[Any, Any, Any]:
        catalogs, schemas = uc.CatalogsApi(client), uc.SchemasApi(client)
        await catalogs.create_catalog(UM.CreateCatalog(name="sdk_ns"))
        await schemas.create_schema(UM.CreateSchema(name="s1", catalog_name="sdk_ns"))
        renamed = await catalogs.update_catalog("sdk_ns", UM.UpdateCatalog(new_name="sdk_ns2", comment="c"))
        schema = await schemas.update_schema("sdk_ns2.s1", UM.UpdateSchema(comment="s", properties={"k": "v"}))
        with pytest.raises(uc.ApiException) as not_empty:
            await catalogs.delete_catalog("sdk_ns2")  # holds a schema: needs force
        assert not_empty.value.status == 400
        assert (await catalogs.get_catalog("sdk_ns2")).name == "sdk_ns2"
        await catalogs.delete_catalog("sdk_ns2", force=True)
        with pytest.raises(uc.ApiException) as gone:
            await catalogs.get_catalog("sdk_ns2")
        return renamed, schema, gone.value.status

    renamed, schema, gone = call(server, use)
    assert (renamed.name, renamed.comment) == ("sdk_ns2", "c")
    assert (schema.full_name, schema.comment, schema.properties) == ("sdk_ns2.s1", "s", {"k": "v"})
    assert gone == 404


def test_namespaces_holding_tables_are_neither_renamed_nor_deleted(server: str) -> None:
    create_table(server, "sdk_t5")

    async def use(client: Any) -> list[int]:
        statuses = []
        for attempt in (
            uc.CatalogsApi(client).delete_catalog("unity", force=True),
            uc.SchemasApi(client).delete_schema("unity.default", force=True),
            uc.SchemasApi(client).update_schema("unity.default", UM.UpdateSchema(new_name="other")),
        ):
            try:
                await attempt
                statuses.append(200)
            except uc.ApiException as e:
                statuses.append(e.status)
        await uc.TablesApi(client).get_table("unity.default.sdk_t5")  # still there
        return statuses

    assert call(server, use) == [400, 400, 400]


def test_dropped_table_is_gone_and_its_name_free(server: str) -> None:
    first = create_table(server, "sdk_drop")
    commit(server, first, 1)

    async def use(client: Any) -> int:
        tables = uc.TablesApi(client)
        await tables.delete_table("unity.default.sdk_drop")
        with pytest.raises(uc.ApiException) as gone:
            await tables.get_table("unity.default.sdk_drop")
        with pytest.raises(uc.ApiException) as again:
            await tables.delete_table("unity.default.sdk_drop")
        assert again.value.status == 404
        return int(gone.value.status)

    assert call(server, use) == 404
    with pytest.raises(uc.ApiException) as no_commit:
        commit(server, first, 2)  # the dropped table takes no commits
    assert no_commit.value.status == 404
    second = create_table(server, "sdk_drop")  # the name is free again, for a new table
    assert second.id != first.id
    assert get_commits(server, second.id, second.staging_location).latest_table_version == 0


def test_metadata_commit_replaces_properties_and_columns_as_uc_does(server: str) -> None:
    staged = create_table(server, "sdk_meta")
    uri = P.staged_uri(staged.staging_location, 1, str(uuid.uuid4()))
    LocalStorage().put(uri, Driver.metadata_commit(staged.id, 1))
    info = UM.DeltaCommitInfo(
        version=1, timestamp=1001, file_name=uri.rsplit("/", 1)[1], file_size=100, file_modification_timestamp=1001
    )
    column = UM.ColumnInfo(name="id", type_text="long", type_name=UM.ColumnTypeName.LONG, position=0, nullable=True)
    metadata = UM.DeltaMetadata(
        description="new comment",
        var_schema=UM.ColumnInfos(columns=[column]),
        properties=UM.DeltaCommitMetadataProperties(properties={"delta.enableInCommitTimestamps": "true"}),
    )
    body = UM.DeltaCommit(table_id=staged.id, table_uri=staged.staging_location, commit_info=info, metadata=metadata)
    call(server, lambda client: uc.DeltaCommitsApi(client).commit(body))
    table = call(server, lambda client: uc.TablesApi(client).get_table("unity.default.sdk_meta"))
    assert table.comment == "new comment"
    assert [(c.name, c.type_name) for c in table.columns] == [("id", UM.ColumnTypeName.LONG)]
    # Replaced whole, as UC 0.6.0 does; the catalog still says what the table is.
    assert table.properties == {
        "delta.enableInCommitTimestamps": "true",
        "delta.feature.catalogManaged": "supported",
        "io.unitycatalog.tableId": staged.id,
    }
