"""Changing and deleting catalogs and schemas (UC's ``PATCH``/``DELETE /catalogs/{name}`` and
``/schemas/{full_name}``) and dropping tables (``DELETE /tables/{full_name}``), as UC's SDKs offer them.

Tables are registered in the reference catalog under their full names, so a namespace that holds
a table can be neither renamed nor deleted, even with ``force``: the request
is refused (400) and changes nothing; drop its tables first. A dropped table's name is free again. An empty namespace
is deleted; one with only schemas needs ``force`` (UC's rule), and its schemas go with it.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from reference_impl.server import models as M
from reference_impl.server.auth import Principal
from reference_impl.server.deps import PREFIX, Svc, Who
from reference_impl.server.errors import ApiError, invalid
from reference_impl.server.service import CatalogService, check_name

Force = Annotated[bool | None, Query(description="Delete what the namespace holds too (not tables)")]


class UpdateNamespace(M.Request):
    """UC's ``UpdateCatalog`` and ``UpdateSchema``."""

    comment: M.Text | None = None
    properties: M.Properties | None = None
    new_name: M.Name | None = None


def _admin(who: Principal, action: str) -> None:
    who.require("admin", action=action)
    if not who.unscoped:
        raise ApiError("PERMISSION_DENIED", f"a token scoped to tables cannot be used for {action}")


def _schema_name(full_name: str) -> tuple[str, str]:
    parts = full_name.split(".")
    if len(parts) != 2 or not all(parts):
        raise invalid(f"invalid schema name {full_name!r}: expected catalog.schema")
    return parts[0], parts[1]


def _update(svc: CatalogService, catalog: str, schema: str | None, body: UpdateNamespace) -> None:
    what = "catalog" if schema is None else "schema"
    if body.new_name is not None:
        check_name(body.new_name, what)
        if svc.meta.namespace_holds_tables(catalog, schema):
            raise ApiError("FAILED_PRECONDITION", f"cannot rename a {what} that holds tables")
    if not svc.meta.update_namespace(
        catalog, schema, new_name=body.new_name, comment=body.comment, props=body.properties
    ):
        code = "CATALOG_ALREADY_EXISTS" if schema is None else "SCHEMA_ALREADY_EXISTS"
        raise ApiError(code, f"{what} already exists: {body.new_name}")


def namespaces_router() -> APIRouter:
    r = APIRouter(prefix=PREFIX)

    @r.patch("/catalogs/{name}", tags=["Catalogs"], operation_id="updateCatalog", response_model=M.CatalogInfo)
    def update_catalog(name: str, body: UpdateNamespace, svc: Svc, who: Who) -> M.CatalogInfo:
        _admin(who, "changing a catalog")
        svc.get_catalog(who, name)
        _update(svc, name, None, body)
        return svc.get_catalog(who, body.new_name or name)

    @r.delete("/catalogs/{name}", tags=["Catalogs"], operation_id="deleteCatalog")
    def delete_catalog(name: str, svc: Svc, who: Who, force: Force = None) -> dict[str, Any]:
        _admin(who, "deleting a catalog")
        svc.get_catalog(who, name)
        if svc.meta.namespace_holds_tables(name):
            raise ApiError("FAILED_PRECONDITION", f"catalog {name} holds tables, drop them first")
        if svc.meta.schemas(name) and not force:
            raise ApiError("FAILED_PRECONDITION", f"catalog {name} is not empty: delete its schemas or use force")
        svc.meta.delete_namespace(name)
        return {}

    @r.patch("/schemas/{full_name}", tags=["Schemas"], operation_id="updateSchema", response_model=M.SchemaInfo)
    def update_schema(full_name: str, body: UpdateNamespace, svc: Svc, who: Who) -> M.SchemaInfo:
        _admin(who, "changing a schema")
        catalog, schema = _schema_name(full_name)
        svc.get_schema(who, full_name)
        _update(svc, catalog, schema, body)
        return svc.get_schema(who, f"{catalog}.{body.new_name or schema}")

    @r.delete("/schemas/{full_name}", tags=["Schemas"], operation_id="deleteSchema")
    def delete_schema(full_name: str, svc: Svc, who: Who, force: Force = None) -> dict[str, Any]:
        _admin(who, "deleting a schema")
        catalog, schema = _schema_name(full_name)
        svc.get_schema(who, full_name)
        if svc.meta.namespace_holds_tables(catalog, schema):
            raise ApiError("FAILED_PRECONDITION", f"schema {full_name} holds tables, drop them first")
        svc.meta.delete_namespace(catalog, schema)
        return {}

    @r.delete("/tables/{full_name}", tags=["Tables"], operation_id="deleteTable")
    def delete_table(full_name: str, svc: Svc, who: Who) -> dict[str, Any]:
        # RFC "Creating and Dropping": a soft drop (the name goes; files stay, as UC leaves them too).
        _admin(who, "dropping a table")
        svc.drop_table(who, full_name)
        return {}

    return r
