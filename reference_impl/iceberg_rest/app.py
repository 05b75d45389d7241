"""The ASGI app: the Iceberg REST catalog routes (``open-api/rest-catalog-open-api.yaml``) over a
``RestCatalogService``, every commit going through the ``ScheduleController``.

Routes are ``async`` only to read the body; the catalog work (SQLite, FileIO, a held commit that
blocks) runs in the thread pool, so a held commit occupies one pool thread while it waits.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from reference_impl.iceberg_rest import errors
from reference_impl.iceberg_rest.admin import admin_router
from reference_impl.iceberg_rest.body import DEFAULT_BODY_TIMEOUT_S, DEFAULT_MAX_BODY_BYTES, read_body
from reference_impl.iceberg_rest.catalog import RestCatalogService
from reference_impl.iceberg_rest.controller import WRITER_HEADER, CommitArrival, ScheduleController, writer_of
from reference_impl.iceberg_rest.names import Namespace, split_namespace, valid_name
from reference_impl.iceberg_rest.requests import (
    CommitTableRequest,
    CreateNamespaceRequest,
    CreateTableRequest,
    RegisterTableRequest,
    RenameTableRequest,
    UpdateNamespacePropertiesRequest,
    identifier_of,
    json_body,
    namespace_of,
    parse,
)
from reference_impl.iceberg_rest.view_metadata import CommitViewRequest, CreateViewRequest, RegisterViewRequest
from reference_impl.iceberg_rest.views import ViewService

# Every route below, as ``CatalogConfig.endpoints`` names them. Clients (Java's RESTSessionCatalog,
# pyiceberg) call only declared endpoints, and use HEAD for existence checks when it is declared.
ENDPOINTS = [
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "GET /v1/{prefix}/namespaces/{namespace}/views",
    "POST /v1/{prefix}/namespaces/{namespace}/views",
    "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/views/rename",
    "POST /v1/{prefix}/namespaces/{namespace}/register-view",
]
_log = logging.getLogger("lakecert.iceberg_rest")
_ERROR_TYPES = {404: "NotFoundException", 405: "MethodNotAllowedException", 415: "UnsupportedMediaTypeException"}


def _json(model: BaseModel) -> Response:
    return Response(model.model_dump_json(), media_type="application/json")


def _no_content() -> Response:
    return Response(status_code=204)


def _namespace(segment: str) -> Namespace:
    namespace = split_namespace(segment)
    if namespace is None:
        raise errors.bad_request(f"Invalid namespace in path: {segment!r}")
    return namespace


def _table(name: str) -> str:
    if not valid_name(name):
        raise errors.bad_request(f"Invalid table name in path: {name!r}")
    return name


def _catalog_router(service: RestCatalogService, controller: ScheduleController, max_body_bytes: int) -> APIRouter:
    router = APIRouter()
    run = run_in_threadpool

    async def _body(request: Request) -> Any:
        return json_body(await read_body(request, max_body_bytes))

    @router.get("/namespaces")
    async def list_namespaces(parent: str | None = None) -> Response:
        levels = _namespace(parent) if parent else ()  # the spec treats an empty parent as absent
        return _json(await run(service.list_namespaces, levels))

    @router.post("/namespaces")
    async def create_namespace(request: Request) -> Response:
        body = parse(CreateNamespaceRequest, await _body(request))
        return _json(await run(service.create_namespace, namespace_of(body.namespace), body.properties))

    @router.get("/namespaces/{namespace}")
    async def load_namespace(namespace: str) -> Response:
        return _json(await run(service.load_namespace, _namespace(namespace)))

    @router.head("/namespaces/{namespace}")
    async def namespace_exists(namespace: str) -> Response:
        await run(service.load_namespace, _namespace(namespace))
        return _no_content()

    @router.delete("/namespaces/{namespace}")
    async def drop_namespace(namespace: str) -> Response:
        await run(service.drop_namespace, _namespace(namespace))
        return _no_content()

    @router.post("/namespaces/{namespace}/properties")
    async def update_namespace_properties(namespace: str, request: Request) -> Response:
        ns = _namespace(namespace)
        body = parse(UpdateNamespacePropertiesRequest, await _body(request))
        return _json(await run(service.update_namespace_properties, ns, set(body.removals), body.updates))

    @router.get("/namespaces/{namespace}/tables")
    async def list_tables(namespace: str) -> Response:
        return _json(await run(service.list_tables, _namespace(namespace)))

    @router.post("/namespaces/{namespace}/tables")
    async def create_table(namespace: str, request: Request) -> Response:
        ns = _namespace(namespace)
        body = parse(CreateTableRequest, await _body(request))
        _table(body.name)
        return _json(await run(service.create_table, ns, body))

    @router.post("/namespaces/{namespace}/register")
    async def register_table(namespace: str, request: Request) -> Response:
        ns = _namespace(namespace)
        body = parse(RegisterTableRequest, await _body(request))
        name = _table(body.name)
        return _json(await run(service.register_table, ns, name, body.metadata_location, body.overwrite))

    @router.get("/namespaces/{namespace}/tables/{table}")
    async def load_table(namespace: str, table: str, snapshots: str = "all") -> Response:
        if snapshots not in ("all", "refs"):
            raise errors.bad_request(f"snapshots must be 'all' or 'refs', not {snapshots!r}")
        return _json(await run(service.load_table, _namespace(namespace), _table(table), snapshots))

    @router.head("/namespaces/{namespace}/tables/{table}")
    async def table_exists(namespace: str, table: str) -> Response:
        await run(service.table_exists, _namespace(namespace), _table(table))
        return _no_content()

    @router.post("/namespaces/{namespace}/tables/{table}")
    async def commit_table(namespace: str, table: str, request: Request) -> Response:
        ns, name = _namespace(namespace), _table(table)
        body = parse(CommitTableRequest, await _body(request))
        if body.identifier is not None and identifier_of(body.identifier) != (ns, name):
            raise errors.bad_request("The body's identifier is not the table of the path")
        writer = writer_of(request.headers.get(WRITER_HEADER), body.updates)
        arrival = CommitArrival(ns, name, writer, body.requirements, body.updates)
        commit = partial(service.commit, ns, name, body.requirements, body.updates)
        return _json(await run(controller.run_commit, arrival, commit))

    @router.delete("/namespaces/{namespace}/tables/{table}")
    async def drop_table(namespace: str, table: str, purgeRequested: bool = False) -> Response:  # noqa: N803
        await run(service.drop_table, _namespace(namespace), _table(table))
        return _no_content()

    @router.post("/namespaces/{namespace}/tables/{table}/metrics")
    async def report_metrics(namespace: str, table: str, request: Request) -> Response:
        # Accepted and dropped: declaring it keeps Java clients from logging a failed report per scan.
        if not isinstance(await _body(request), dict):
            raise errors.bad_request("The metrics report must be a JSON object")
        await run(service.table_exists, _namespace(namespace), _table(table))
        return _no_content()

    views = ViewService(service)

    @router.get("/namespaces/{namespace}/views")
    async def list_views(namespace: str) -> Response:
        return _json(await run(views.list_views, _namespace(namespace)))

    @router.post("/namespaces/{namespace}/views")
    async def create_view(namespace: str, request: Request) -> Response:
        ns = _namespace(namespace)
        body = parse(CreateViewRequest, await _body(request))
        _table(body.name)
        return _json(await run(views.create_view, ns, body))

    @router.get("/namespaces/{namespace}/views/{view}")
    async def load_view(namespace: str, view: str) -> Response:
        return _json(await run(views.load_view, _namespace(namespace), _table(view)))

    @router.head("/namespaces/{namespace}/views/{view}")
    async def view_exists(namespace: str, view: str) -> Response:
        await run(views.view_exists, _namespace(namespace), _table(view))
        return _no_content()

    @router.post("/namespaces/{namespace}/views/{view}")
    async def replace_view(namespace: str, view: str, request: Request) -> Response:
        ns, name = _namespace(namespace), _table(view)
        body = parse(CommitViewRequest, await _body(request))
        if body.identifier is not None and identifier_of(body.identifier) != (ns, name):
            raise errors.bad_request("The body's identifier is not the view of the path")
        return _json(await run(views.replace_view, ns, name, body))

    @router.delete("/namespaces/{namespace}/views/{view}")
    async def drop_view(namespace: str, view: str) -> Response:
        await run(views.drop_view, _namespace(namespace), _table(view))
        return _no_content()

    @router.post("/views/rename")
    async def rename_view(request: Request) -> Response:
        body = parse(RenameTableRequest, await _body(request))
        await run(views.rename_view, identifier_of(body.source), identifier_of(body.destination))
        return _no_content()

    @router.post("/namespaces/{namespace}/register-view")
    async def register_view(namespace: str, request: Request) -> Response:
        ns = _namespace(namespace)
        body = parse(RegisterViewRequest, await _body(request))
        return _json(await run(views.register_view, ns, _table(body.name), body.metadata_location))

    @router.post("/tables/rename")
    async def rename_table(request: Request) -> Response:
        body = parse(RenameTableRequest, await _body(request))
        await run(service.rename_table, identifier_of(body.source), identifier_of(body.destination))
        return _no_content()

    return router


def _error(error: errors.IcebergApiError) -> Response:
    response = Response(error.body(), status_code=error.code, media_type="application/json")
    if errors.closes_connection(error):
        response.headers["connection"] = "close"
    return response


def build_app(
    service: RestCatalogService,
    controller: ScheduleController,
    prefix: str = "",
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
) -> FastAPI:
    """The catalog under ``/v1/<prefix>`` (announced as ``overrides.prefix``), the holds under ``/lakecert``;
    a request body over ``max_body_bytes`` is a 413, one not there within ``body_timeout_s`` a 408."""
    app = FastAPI(title="lakecert reference Iceberg REST catalog", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.body_timeout_s = body_timeout_s
    base = f"/v1/{prefix.strip('/')}" if prefix.strip("/") else "/v1"

    @app.get("/v1/config")
    async def get_config(warehouse: str | None = None) -> JSONResponse:
        # One warehouse per server: the ``warehouse`` a client asks for does not select anything.
        overrides = {"prefix": prefix.strip("/")} if prefix.strip("/") else {}
        return JSONResponse({"defaults": {}, "overrides": overrides, "endpoints": ENDPOINTS})

    app.include_router(_catalog_router(service, controller, max_body_bytes), prefix=base)
    app.include_router(admin_router(controller, max_body_bytes), prefix="/lakecert")

    async def api_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, errors.IcebergApiError)
        return _error(exc)

    async def invalid_request(_: Request, exc: Exception) -> Response:
        return _error(errors.bad_request(f"Invalid request: {exc}"))

    async def http_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        kind = _ERROR_TYPES.get(exc.status_code, "BadRequestException")
        return _error(errors.IcebergApiError(exc.status_code, kind, str(exc.detail)))

    async def unexpected(request: Request, exc: Exception) -> Response:
        # The message stays in the log: an exception's text may quote a file or the database.
        _log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
        response = _error(errors.IcebergApiError(500, "InternalServerError", f"internal error: {type(exc).__name__}"))
        response.headers["connection"] = "close"
        return response

    app.add_exception_handler(errors.IcebergApiError, api_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
    return app
