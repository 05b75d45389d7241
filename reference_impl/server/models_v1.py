"""Wire models of UC's ``/delta/v1`` table API (``api/delta.yaml``): kebab-case field names.

Only what catalog-managed commits need: ``DeltaCatalogConfig``, ``DeltaLoadTableResponse`` (with
``DeltaTableMetadata`` and ``DeltaCommit``) and ``DeltaUpdateTableRequest`` with the
``assert-table-uuid`` requirement and the ``add-commit`` and ``set-latest-backfilled-version``
updates. Other requirement and update types are refused with 400.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reference_impl.server.models import Name, Positive, Version

_KEBAB = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class V1Request(BaseModel):
    model_config = _KEBAB


class V1Response(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class DeltaCatalogConfig(V1Response):
    endpoints: list[str]
    protocol_version: str = Field(serialization_alias="protocol-version")


class DeltaCommit(V1Request):
    version: Positive
    timestamp: Positive
    file_name: Name = Field(alias="file-name")
    file_size: Positive = Field(alias="file-size")
    file_modification_timestamp: Positive = Field(alias="file-modification-timestamp")


class DeltaCommitOut(V1Response):
    version: int
    timestamp: int
    file_name: str = Field(serialization_alias="file-name")
    file_size: int = Field(serialization_alias="file-size")
    file_modification_timestamp: int = Field(serialization_alias="file-modification-timestamp")


class DeltaAssertTableUUID(V1Request):
    type: Literal["assert-table-uuid"]
    uuid: Name


class DeltaAddCommitUpdate(V1Request):
    action: Literal["add-commit"]
    commit: DeltaCommit
    uniform: dict[str, Any] | None = None


class DeltaSetLatestBackfilledVersionUpdate(V1Request):
    action: Literal["set-latest-backfilled-version"]
    latest_published_version: Version = Field(alias="latest-published-version")


Update = Annotated[DeltaAddCommitUpdate | DeltaSetLatestBackfilledVersionUpdate, Field(discriminator="action")]


class DeltaUpdateTableRequest(V1Request):
    requirements: Annotated[list[DeltaAssertTableUUID], Field(min_length=1, max_length=1)]
    updates: Annotated[list[Update], Field(min_length=1, max_length=2)]


class DeltaStructType(V1Response):
    type: Literal["struct"] = "struct"
    fields: list[dict[str, Any]]


class DeltaTableMetadata(V1Response):
    etag: str
    table_type: str = Field(serialization_alias="table-type")
    table_uuid: str = Field(serialization_alias="table-uuid")
    location: str
    created_time: int = Field(serialization_alias="created-time")
    updated_time: int = Field(serialization_alias="updated-time")
    columns: DeltaStructType
    properties: dict[str, str]


class DeltaLoadTableResponse(V1Response):
    metadata: DeltaTableMetadata
    commits: list[DeltaCommitOut]
    latest_table_version: int = Field(serialization_alias="latest-table-version")


class DeltaErrorModel(V1Response):
    message: str
    type: str
    code: int


class DeltaErrorResponse(V1Response):
    error: DeltaErrorModel
