"""Wire models of the Unity Catalog REST API (``api/all.yaml`` of unitycatalog/unitycatalog).

Field names, required fields and types follow ``components.schemas`` of ``all.yaml``
(paths ``/catalogs``, ``/schemas``, ``/staging-tables``, ``/tables``, ``/delta/preview/commits``).
Requests are strict: unknown fields, wrong JSON types (``"1"`` or ``1.0`` for an integer,
``true`` for a number) and out-of-range int64 values are refused with 400. lakecert's
extensions are marked "lakecert extension" and are all optional.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

INT64_MAX = 2**63 - 1

Long = Annotated[int, Field(ge=-(2**63), le=INT64_MAX)]
Version = Annotated[int, Field(ge=0, le=INT64_MAX)]
Positive = Annotated[int, Field(gt=0, le=INT64_MAX)]
Name = Annotated[str, Field(min_length=1, max_length=255)]
Uri = Annotated[str, Field(min_length=1, max_length=4096)]
Text = Annotated[str, Field(max_length=65536)]
Properties = dict[Annotated[str, Field(max_length=4096)], Annotated[str, Field(max_length=65536)]]

TableType = Literal["MANAGED", "EXTERNAL", "STREAMING_TABLE", "MATERIALIZED_VIEW", "METRIC_VIEW", "VIEW"]
DataSourceFormat = Literal["DELTA", "CSV", "JSON", "AVRO", "PARQUET", "ORC", "TEXT"]
ColumnTypeName = Literal[
    "BOOLEAN", "BYTE", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE", "DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "STRING",
    "BINARY", "DECIMAL", "INTERVAL", "ARRAY", "STRUCT", "MAP", "VARIANT", "CHAR", "NULL", "USER_DEFINED_TYPE",
    "TABLE_TYPE",
]  # fmt: skip


class Request(BaseModel):
    """A request body: strict JSON types, no unknown fields."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Response(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ------------------------------------------------------------------ catalogs and schemas


class CreateCatalog(Request):
    name: Name
    comment: Text | None = None
    properties: Properties | None = None
    storage_root: Uri | None = None


class CatalogInfo(Response):
    name: str
    comment: str | None = None
    properties: dict[str, str] | None = None
    owner: str | None = None
    created_at: int | None = None
    created_by: str | None = None
    updated_at: int | None = None
    updated_by: str | None = None
    id: str | None = None
    storage_root: str | None = None
    storage_location: str | None = None


class ListCatalogsResponse(Response):
    catalogs: list[CatalogInfo]
    next_page_token: str | None = None


class CreateSchema(Request):
    name: Name
    catalog_name: Name
    comment: Text | None = None
    properties: Properties | None = None
    storage_root: Uri | None = None


class SchemaInfo(Response):
    name: str
    catalog_name: str
    comment: str | None = None
    properties: dict[str, str] | None = None
    full_name: str
    owner: str | None = None
    created_at: int | None = None
    created_by: str | None = None
    updated_at: int | None = None
    updated_by: str | None = None
    schema_id: str | None = None
    storage_root: str | None = None
    storage_location: str | None = None


class ListSchemasResponse(Response):
    schemas: list[SchemaInfo]
    next_page_token: str | None = None


# ------------------------------------------------------------------ tables


class ColumnInfo(Request):
    name: Name | None = None
    type_text: Text | None = None
    type_json: Text | None = None
    type_name: ColumnTypeName | None = None
    type_precision: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None
    type_scale: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None
    type_interval_type: Text | None = None
    position: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None
    comment: Text | None = None
    nullable: bool | None = None
    partition_index: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None


class CreateStagingTable(Request):
    name: Name
    catalog_name: Name
    schema_name: Name


class StagingTableInfo(Response):
    name: str
    catalog_name: str
    schema_name: str
    id: str
    staging_location: str


class CreateTable(Request):
    name: Name
    catalog_name: Name
    schema_name: Name
    table_type: TableType
    data_source_format: DataSourceFormat | None = None
    columns: Annotated[list[ColumnInfo], Field(max_length=32768)]
    storage_location: Uri | None = None
    comment: Text | None = None
    properties: Properties | None = None
    view_definition: Text | None = None
    view_dependencies: dict[str, Any] | None = None


class TableInfo(Response):
    name: str
    catalog_name: str
    schema_name: str
    table_type: str
    data_source_format: str
    columns: list[dict[str, Any]]
    storage_location: str
    comment: str | None = None
    properties: dict[str, str]
    owner: str | None = None
    created_at: int | None = None
    created_by: str | None = None
    updated_at: int | None = None
    updated_by: str | None = None
    table_id: str


class ListTablesResponse(Response):
    tables: list[TableInfo]
    next_page_token: str | None = None


# ------------------------------------------------------------------ Delta commits (preview)


class DeltaCommitInfo(Request):
    """``DeltaCommitInfo``. UC requires ``file_name``, ``file_size`` and ``file_modification_timestamp``;
    lakecert also accepts an inline commit (``inline_content`` instead of the three)."""

    version: Positive
    timestamp: Positive
    file_name: Name | None = None
    file_size: Positive | None = None
    file_modification_timestamp: Positive | None = None
    inline_content: Annotated[str, Field(min_length=1)] | None = Field(
        default=None, description="lakecert extension: the commit's bytes, base64 (an inline commit)"
    )


class ColumnInfos(Request):
    columns: Annotated[list[ColumnInfo], Field(max_length=32768)] | None = None


class DeltaCommitMetadataProperties(Request):
    properties: Properties | None = None


class DeltaMetadata(Request):
    description: Text | None = None
    schema_: ColumnInfos | None = Field(default=None, alias="schema")
    properties: DeltaCommitMetadataProperties | None = None


class DeltaUniformIceberg(Request):
    metadata_location: Uri
    converted_delta_version: Version
    converted_delta_timestamp: Text
    base_converted_delta_version: Version | None = None


class DeltaUniform(Request):
    iceberg: DeltaUniformIceberg


class DeltaCommit(Request):
    """``DeltaCommit``: at least one of ``commit_info`` and ``latest_backfilled_version``."""

    table_id: Name
    table_uri: Uri
    commit_info: DeltaCommitInfo | None = None
    latest_backfilled_version: Version | None = None
    metadata: DeltaMetadata | None = None
    uniform: DeltaUniform | None = None


class DeltaCommitResponse(Response):
    pass


class DeltaGetCommits(Request):
    table_id: Name
    table_uri: Uri
    start_version: Version
    end_version: Version | None = None


class DeltaCommitInfoOut(Response):
    version: int
    timestamp: int
    file_name: str | None = None
    file_size: int | None = None
    file_modification_timestamp: int | None = None
    inline_content: str | None = Field(default=None, description="lakecert extension: an inline commit, base64")


class DeltaGetCommitsResponse(Response):
    commits: list[DeltaCommitInfoOut]
    latest_table_version: int


# ------------------------------------------------------------------ lakecert extensions


class Capabilities(Response):
    """lakecert extension: what this server offers beyond UC's API."""

    server: str
    inline_commits: bool
    maintenance_policy: bool
    max_unpublished_commits: int | None


class MaintenancePolicyInfo(Response):
    """lakecert extension: the maintenance operations clients may run (RFC "Maintenance Operations")."""

    table_id: str
    allowed: list[str]


class UCErrorDetail(Response):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    type_: str = Field(alias="@type")
    reason: str
    metadata: dict[str, str] | None = None


class UCError(Response):
    """The error body of UC's server (``GlobalExceptionHandler``); not declared in ``all.yaml``."""

    error_code: str
    message: str
    details: list[UCErrorDetail]
