"""The ASGI app: Unity Catalog's REST paths (``api/all.yaml``) over a ``CatalogService``.

Paths are under ``/api/2.1/unity-catalog`` (the ``servers`` URL of ``all.yaml``). Handlers
are plain functions: FastAPI runs them in its thread pool, and the SQLite catalog is safe to
share between threads. lakecert's own additions live under ``/lakecert/v1``.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Query
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from reference_impl.server import models as M
from reference_impl.server.auth import Authenticator
from reference_impl.server.delta_v1 import v1_router
from reference_impl.server.delta_v1_tables import tables_router
from reference_impl.server.deps import PREFIX, Svc, Who
from reference_impl.server.edge import DEFAULT_BODY_TIMEOUT_S, DEFAULT_MAX_BODY_BYTES, EdgeMiddleware
from reference_impl.server.errors import (
    ApiError,
    handle_api_error,
    handle_http_error,
    handle_unexpected,
    handle_validation_error,
)
from reference_impl.server.namespaces import namespaces_router
from reference_impl.server.service import CatalogService
from reference_impl.server.uc_compat import compat_router

VERSION = "0.1.0"
MaxResults = Annotated[int | None, Query(ge=0, le=1000, description="Ignored beyond validation: no paging")]
PageToken = Annotated[str | None, Query(max_length=1024)]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": M.UCError, "description": text}
    for code, text in (
        (400, "Bad request or invalid argument"),
        (401, "Missing or invalid bearer token (when tokens are configured)"),
        (403, "The token's role or table scope does not allow it"),
        (404, "Not found"),
        (413, "Body too large"),
        (408, "The body did not arrive in time"),
        (415, "Body is not application/json"),
    )
}
COMMIT_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    409: {"model": M.UCError, "description": "Version conflict; details[0].metadata.latest_table_version"},
    429: {"model": M.UCError, "description": "Too many unpublished (unbackfilled) commits"},
}


def uc_router() -> APIRouter:
    r = APIRouter(prefix=PREFIX, responses=ERRORS)
    get = partial(r.get, response_model_exclude_none=True)
    post = partial(r.post, response_model_exclude_none=True)

    @post("/catalogs", tags=["Catalogs"], operation_id="createCatalog", response_model=M.CatalogInfo)
    def create_catalog(body: M.CreateCatalog, svc: Svc, who: Who) -> M.CatalogInfo:
        return svc.create_catalog(who, body)

    @get("/catalogs", tags=["Catalogs"], operation_id="listCatalogs", response_model=M.ListCatalogsResponse)
    def list_catalogs(svc: Svc, who: Who, max_results: MaxResults = None, page_token: PageToken = None) -> Any:
        return svc.list_catalogs(who)

    @get("/catalogs/{name}", tags=["Catalogs"], operation_id="getCatalog", response_model=M.CatalogInfo)
    def get_catalog(name: str, svc: Svc, who: Who) -> M.CatalogInfo:
        return svc.get_catalog(who, name)

    @post("/schemas", tags=["Schemas"], operation_id="createSchema", response_model=M.SchemaInfo)
    def create_schema(body: M.CreateSchema, svc: Svc, who: Who) -> M.SchemaInfo:
        return svc.create_schema(who, body)

    @get("/schemas", tags=["Schemas"], operation_id="listSchemas", response_model=M.ListSchemasResponse)
    def list_schemas(
        catalog_name: Annotated[str, Query(max_length=255)],
        svc: Svc,
        who: Who,
        max_results: MaxResults = None,
        page_token: PageToken = None,
    ) -> Any:
        return svc.list_schemas(who, catalog_name)

    @get("/schemas/{full_name}", tags=["Schemas"], operation_id="getSchema", response_model=M.SchemaInfo)
    def get_schema(full_name: str, svc: Svc, who: Who) -> M.SchemaInfo:
        return svc.get_schema(who, full_name)

    @post("/staging-tables", tags=["Tables"], operation_id="createStagingTable", response_model=M.StagingTableInfo)
    def create_staging_table(body: M.CreateStagingTable, svc: Svc, who: Who) -> M.StagingTableInfo:
        return svc.create_staging_table(who, body)

    @post("/tables", tags=["Tables"], operation_id="createTable", response_model=M.TableInfo)
    def create_table(body: M.CreateTable, svc: Svc, who: Who) -> M.TableInfo:
        return svc.create_table(who, body)

    @get("/tables", tags=["Tables"], operation_id="listTables", response_model=M.ListTablesResponse)
    def list_tables(
        catalog_name: Annotated[str, Query(max_length=255)],
        schema_name: Annotated[str, Query(max_length=255)],
        svc: Svc,
        who: Who,
        max_results: Annotated[int | None, Query(ge=0, le=50)] = None,
        page_token: PageToken = None,
    ) -> Any:
        return svc.list_tables(who, catalog_name, schema_name)

    @get("/tables/{full_name}", tags=["Tables"], operation_id="getTable", response_model=M.TableInfo)
    def get_table(
        full_name: str,
        svc: Svc,
        who: Who,
        read_streaming_table_as_managed: bool | None = None,
        read_materialized_view_as_managed: bool | None = None,
    ) -> M.TableInfo:
        return svc.get_table(who, full_name)

    @post(
        "/delta/preview/commits",
        tags=["DeltaCommits"],
        operation_id="commit",
        response_model=M.DeltaCommitResponse,
        responses=COMMIT_ERRORS,
    )
    def commit(body: M.DeltaCommit, svc: Svc, who: Who) -> M.DeltaCommitResponse:
        svc.commit(who, body)
        return M.DeltaCommitResponse()

    # GET /delta/preview/commits and GET /metastore_summary: reference_impl/server/uc_compat.py.

    @get("/lakecert/v1/capabilities", tags=["lakecert"], operation_id="capabilities", response_model=M.Capabilities)
    def capabilities(svc: Svc, who: Who) -> M.Capabilities:
        return svc.capabilities(who)

    @get(
        "/lakecert/v1/tables/{table_id}/maintenance-policy",
        tags=["lakecert"],
        operation_id="getMaintenancePolicy",
        response_model=M.MaintenancePolicyInfo,
    )
    def maintenance_policy(table_id: str, svc: Svc, who: Who) -> M.MaintenancePolicyInfo:
        return svc.maintenance_policy(who, table_id)

    return r


def build_app(
    svc: CatalogService,
    auth: Authenticator,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
    delta_v1: bool = True,
) -> FastAPI:
    app = FastAPI(
        title="lakecert reference catalog: the Unity Catalog API subset for catalog-managed Delta tables",
        version=VERSION,
        description=(
            "What `lakecert serve` serves. Paths, fields and statuses follow Unity Catalog OSS's "
            "`api/all.yaml` and `api/delta.yaml`; see docs/server.md for the differences."
        ),
        openapi_url="/openapi.json",
        servers=[{"url": "http://127.0.0.1:8080", "description": "lakecert serve, default address"}],
        docs_url=None,
        redoc_url=None,
    )
    app.state.service = svc
    app.state.auth = auth
    app.add_exception_handler(ApiError, handle_api_error)
    app.add_exception_handler(RequestValidationError, handle_validation_error)
    app.add_exception_handler(StarletteHTTPException, handle_http_error)
    app.add_exception_handler(Exception, handle_unexpected)
    app.add_middleware(EdgeMiddleware, max_body_bytes=max_body_bytes, body_timeout_s=body_timeout_s)
    app.include_router(uc_router())
    app.include_router(compat_router())
    app.include_router(namespaces_router())
    if delta_v1:
        app.include_router(v1_router())
        app.include_router(tables_router())
    return app
