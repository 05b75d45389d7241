"""UC's ``/delta/v1`` table creation (``api/delta.yaml``): create a staging table, then create the table.

What delta-spark's UC connector and Kernel's ``UCDeltaTokenBasedRestClient`` call by default. Both
go through the same ``CatalogService`` operations as ``POST /staging-tables`` and ``POST /tables``
of the UC API, so names, roles, the staging-location check and the table id property are checked
the same way. The staging answer tells the client what a catalog-managed table needs: the
``catalogManaged`` and ``inCommitTimestamp`` features and the UC table id property. No storage
credentials are handed out (an empty list): lakecert serves tables its clients can already reach.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter
from pydantic import Field

from reference_impl.server import models as M
from reference_impl.server import models_v1 as V
from reference_impl.server.delta_v1 import ERRORS, PREFIX, load_table
from reference_impl.server.deps import Svc, Who
from reference_impl.server.errors import ApiError, invalid
from reference_impl.server.service import UC_TABLE_ID

SCHEMA = "/catalogs/{catalog}/schemas/{schema}"
CATALOG_MANAGED = "catalogManaged"
READER_FEATURES = [CATALOG_MANAGED, "vacuumProtocolCheck"]
WRITER_FEATURES = [CATALOG_MANAGED, "inCommitTimestamp", "vacuumProtocolCheck"]
CREATE_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    409: {"model": V.DeltaErrorResponse, "description": "AlreadyExistsException"},
}
# Delta's primitive type names -> UC's ColumnTypeName; decimal(p,s) is DECIMAL, nested types by "type".
_PRIMITIVE = {
    "boolean": "BOOLEAN",
    "byte": "BYTE",
    "short": "SHORT",
    "integer": "INT",
    "long": "LONG",
    "float": "FLOAT",
    "double": "DOUBLE",
    "date": "DATE",
    "timestamp": "TIMESTAMP",
    "timestamp_ntz": "TIMESTAMP_NTZ",
    "string": "STRING",
    "binary": "BINARY",
    "variant": "VARIANT",
}
_NESTED = {"struct": "STRUCT", "array": "ARRAY", "map": "MAP"}
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")


class DeltaCreateStagingTableRequest(V.V1Request):
    name: M.Name


class DeltaProtocol(V.V1Request):
    min_reader_version: Annotated[int, Field(ge=1, le=3)] = Field(alias="min-reader-version")
    min_writer_version: Annotated[int, Field(ge=1, le=7)] = Field(alias="min-writer-version")
    reader_features: list[M.Name] | None = Field(default=None, alias="reader-features")
    writer_features: list[M.Name] | None = Field(default=None, alias="writer-features")


class DeltaProtocolOut(V.V1Response):
    min_reader_version: int = Field(serialization_alias="min-reader-version")
    min_writer_version: int = Field(serialization_alias="min-writer-version")
    reader_features: list[str] = Field(serialization_alias="reader-features")
    writer_features: list[str] = Field(serialization_alias="writer-features")


class DeltaStagingTableResponse(V.V1Response):
    table_id: str = Field(serialization_alias="table-id")
    table_type: Literal["MANAGED"] = Field(serialization_alias="table-type")
    location: str
    storage_credentials: list[dict[str, Any]] = Field(serialization_alias="storage-credentials")
    required_protocol: DeltaProtocolOut = Field(serialization_alias="required-protocol")
    required_properties: dict[str, str | None] = Field(serialization_alias="required-properties")


class DeltaStructTypeIn(V.V1Request):
    type: Literal["struct"]
    fields: Annotated[list[dict[str, Any]], Field(max_length=32768)]


class DeltaCreateTableRequest(V.V1Request):
    name: M.Name
    location: M.Uri
    table_type: Literal["MANAGED", "EXTERNAL"] = Field(alias="table-type")
    comment: M.Text | None = None
    columns: DeltaStructTypeIn
    partition_columns: list[M.Name] | None = Field(default=None, alias="partition-columns")
    protocol: DeltaProtocol
    properties: M.Properties
    domain_metadata: dict[str, Any] | None = Field(default=None, alias="domain-metadata")
    last_commit_timestamp_ms: Annotated[int, Field(ge=0)] = Field(alias="last-commit-timestamp-ms")
    uniform: dict[str, Any] | None = None


def _type_name(delta_type: Any) -> str:
    if isinstance(delta_type, dict) and delta_type.get("type") in _NESTED:
        return _NESTED[str(delta_type["type"])]
    if isinstance(delta_type, str):
        if delta_type in _PRIMITIVE:
            return _PRIMITIVE[delta_type]
        if _DECIMAL.fullmatch(delta_type):
            return "DECIMAL"
    raise invalid(f"unsupported column type {delta_type!r}")


def uc_columns(fields: list[dict[str, Any]]) -> list[M.ColumnInfo]:
    """Delta schema fields as UC ``ColumnInfo``s (name, type text/name/json, position, nullable)."""
    out = []
    for position, field in enumerate(fields):
        name, delta_type = field.get("name"), field.get("type")
        if not isinstance(name, str) or not name or delta_type is None:
            raise invalid(f"column {position} needs a name and a type")
        nullable = field.get("nullable", True)
        if not isinstance(nullable, bool):
            raise invalid(f"column {name!r}: nullable must be a boolean")
        out.append(
            M.ColumnInfo(
                name=name,
                type_text=delta_type if isinstance(delta_type, str) else json.dumps(delta_type),
                type_json=json.dumps(field),
                type_name=_type_name(delta_type),  # type: ignore[arg-type]  # one of ColumnTypeName
                position=position,
                nullable=nullable,
            )
        )
    return out


def tables_router() -> APIRouter:
    r = APIRouter(prefix=PREFIX, tags=["DeltaTables"], responses=CREATE_ERRORS)

    @r.post(
        f"{SCHEMA}/staging-tables",
        operation_id="createDeltaStagingTable",  # createStagingTable in delta.yaml; unique here
        response_model=DeltaStagingTableResponse,
        response_model_by_alias=True,
    )
    def create_staging_table(
        catalog: str, schema: str, body: DeltaCreateStagingTableRequest, svc: Svc, who: Who
    ) -> DeltaStagingTableResponse:
        staged = svc.create_staging_table(
            who, M.CreateStagingTable(name=body.name, catalog_name=catalog, schema_name=schema)
        )
        return DeltaStagingTableResponse(
            table_id=staged.id,
            table_type="MANAGED",
            location=staged.staging_location,
            storage_credentials=[],
            required_protocol=DeltaProtocolOut(
                min_reader_version=3,
                min_writer_version=7,
                reader_features=READER_FEATURES,
                writer_features=WRITER_FEATURES,
            ),
            required_properties={"delta.enableInCommitTimestamps": "true", UC_TABLE_ID: staged.id},
        )

    @r.post(
        f"{SCHEMA}/tables",
        operation_id="createDeltaTable",  # createTable in delta.yaml
        response_model=V.DeltaLoadTableResponse,
        response_model_by_alias=True,
        response_model_exclude_none=True,
    )
    def create_table(
        catalog: str, schema: str, body: DeltaCreateTableRequest, svc: Svc, who: Who
    ) -> V.DeltaLoadTableResponse:
        if body.table_type != "MANAGED":
            raise invalid("lakecert serves MANAGED (catalog-managed) Delta tables only")
        features = (body.protocol.reader_features or [], body.protocol.writer_features or [])
        if not all(CATALOG_MANAGED in listed for listed in features):
            raise ApiError("INVALID_ARGUMENT", "the protocol must list catalogManaged as reader and writer feature")
        svc.create_table(
            who,
            M.CreateTable(
                name=body.name,
                catalog_name=catalog,
                schema_name=schema,
                table_type="MANAGED",
                data_source_format="DELTA",
                columns=uc_columns(body.columns.fields),
                storage_location=body.location,
                comment=body.comment,
                properties=body.properties,
            ),
        )
        return load_table(svc, who, catalog, schema, body.name)

    return r
