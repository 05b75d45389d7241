"""UC's ``/delta/v1`` table API (``api/delta.yaml``): config, load table, update table.

The update carries the commit protocol: ``add-commit`` (ratify a staged commit) and
``set-latest-backfilled-version`` (publication), guarded by ``assert-table-uuid``. Both go
through the same ``CatalogService.commit`` as the preview API, so limits, replays and roles
are the same. Errors are ``DeltaErrorResponse`` (``{"error": {"message", "type", "code"}}``).
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Query

from reference_impl.server import models as M
from reference_impl.server import models_v1 as V
from reference_impl.server.auth import Principal
from reference_impl.server.deps import Svc, Who
from reference_impl.server.errors import V1_PREFIX, ApiError, invalid
from reference_impl.server.service import CatalogService

PREFIX = V1_PREFIX
TABLE = "/catalogs/{catalog}/schemas/{schema}/tables/{table}"
ENDPOINTS = [
    f"GET /v1{TABLE}",
    f"POST /v1{TABLE}",
    "POST /v1/catalogs/{catalog}/schemas/{schema}/staging-tables",  # delta_v1_tables.py
    "POST /v1/catalogs/{catalog}/schemas/{schema}/tables",
]
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": V.DeltaErrorResponse, "description": text}
    for code, text in (
        (400, "BadRequestException or InvalidParameterValueException"),
        (401, "NotAuthorizedException"),
        (403, "PermissionDeniedException"),
        (404, "NoSuchCatalogException, NoSuchSchemaException or NoSuchTableException"),
    )
}
UPDATE_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    409: {"model": V.DeltaErrorResponse, "description": "CommitVersionConflictException or UpdateRequirementConflict"},
    429: {"model": V.DeltaErrorResponse, "description": "ResourceExhaustedException: too many unbackfilled commits"},
}


def load_table(svc: CatalogService, who: Principal, catalog: str, schema: str, table: str) -> V.DeltaLoadTableResponse:
    info, record = svc.resolve(who, f"{catalog}.{schema}.{table}")
    uc = svc.table_info(info, record)
    row = svc.meta.table_row(info.table_id)
    commits: list[V.DeltaCommitOut] = []
    latest = 0
    if row is not None:
        listing = svc.get_commits(
            who, M.DeltaGetCommits(table_id=info.table_id, table_uri=row.location, start_version=0)
        )
        latest = listing.latest_table_version
        for c in sorted(listing.commits, key=lambda c: c.version, reverse=True):  # delta.yaml: newest first
            commits.append(
                V.DeltaCommitOut(
                    version=c.version,
                    timestamp=c.timestamp,
                    file_name=c.file_name or "",
                    file_size=c.file_size or 0,
                    file_modification_timestamp=c.file_modification_timestamp or 0,
                )
            )
    metadata = V.DeltaTableMetadata(
        etag=f"{info.table_id}@{latest}",
        table_type="MANAGED",
        table_uuid=info.table_id,
        location=uc.storage_location,
        created_time=uc.created_at or 0,
        updated_time=uc.updated_at or 0,
        columns=V.DeltaStructType(fields=[]),
        properties=uc.properties,
    )
    return V.DeltaLoadTableResponse(metadata=metadata, commits=commits, latest_table_version=latest)


def v1_router() -> APIRouter:
    r = APIRouter(prefix=PREFIX, tags=["DeltaTables"], responses=ERRORS)
    get = partial(r.get, response_model_exclude_none=True, response_model_by_alias=True)
    post = partial(r.post, response_model_exclude_none=True, response_model_by_alias=True)

    @get("/config", tags=["DeltaConfiguration"], operation_id="getConfig", response_model=V.DeltaCatalogConfig)
    def get_config(
        catalog: Annotated[str, Query(max_length=255)],
        protocol_versions: Annotated[str, Query(alias="protocol-versions", max_length=255)],
        svc: Svc,
        who: Who,
    ) -> V.DeltaCatalogConfig:
        svc.get_catalog(who, catalog)
        majors = {v.strip().split(".", 1)[0] for v in protocol_versions.split(",")}
        if "1" not in majors:
            raise invalid(f"no protocol version in common: the server speaks 1.0, the client {protocol_versions}")
        return V.DeltaCatalogConfig(endpoints=ENDPOINTS, protocol_version="1.0")

    @get(TABLE, operation_id="loadTable", response_model=V.DeltaLoadTableResponse)
    def load(catalog: str, schema: str, table: str, svc: Svc, who: Who) -> V.DeltaLoadTableResponse:
        return load_table(svc, who, catalog, schema, table)

    @post(TABLE, operation_id="updateTable", response_model=V.DeltaLoadTableResponse, responses=UPDATE_ERRORS)
    def update(
        catalog: str, schema: str, table: str, body: V.DeltaUpdateTableRequest, svc: Svc, who: Who
    ) -> V.DeltaLoadTableResponse:
        info, _ = svc.resolve(who, f"{catalog}.{schema}.{table}")
        if body.requirements[0].uuid != info.table_id:
            raise ApiError("UPDATE_REQUIREMENT_CONFLICT", "assert-table-uuid failed: reload the table")
        row = svc.meta.table_row(info.table_id)
        if row is None:
            raise ApiError("TABLE_NOT_FOUND", f"table not found: {info.table_id}")
        adds = [u for u in body.updates if isinstance(u, V.DeltaAddCommitUpdate)]
        backfills = [u for u in body.updates if isinstance(u, V.DeltaSetLatestBackfilledVersionUpdate)]
        if len(adds) > 1 or len(backfills) > 1:
            raise invalid("at most one action of each type per request")
        info_in = None
        if adds:
            c = adds[0].commit
            info_in = M.DeltaCommitInfo(
                version=c.version,
                timestamp=c.timestamp,
                file_name=c.file_name,
                file_size=c.file_size,
                file_modification_timestamp=c.file_modification_timestamp,
            )
        backfilled = backfills[0].latest_published_version if backfills else None
        svc.commit(
            who,
            M.DeltaCommit(
                table_id=info.table_id,
                table_uri=row.location,
                commit_info=info_in,
                latest_backfilled_version=backfilled,
            ),
        )
        return load_table(svc, who, catalog, schema, table)

    return r
