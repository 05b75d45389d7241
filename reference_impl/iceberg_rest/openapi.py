"""The served routes as an OpenAPI 3.1 document, with the request bodies the routes parse.

The routes read their bodies themselves (to answer every parse failure as a 400 in the Iceberg
error shape), so FastAPI's generated document knows their paths and parameters but not their
bodies; this adds them from the same pydantic models the routes parse with. The document is what
``tests/test_iceberg_rest_fuzz.py`` generates requests from; it is not served.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from reference_impl.iceberg_rest.requests import (
    CommitTableRequest,
    CreateNamespaceRequest,
    CreateTableRequest,
    RegisterTableRequest,
    RenameTableRequest,
    UpdateNamespacePropertiesRequest,
)
from reference_impl.iceberg_rest.view_metadata import CommitViewRequest, CreateViewRequest, RegisterViewRequest

# Path suffix after /v1/{prefix} -> the model the POST route parses its body with.
BODIES: dict[str, type[BaseModel]] = {
    "/namespaces": CreateNamespaceRequest,
    "/namespaces/{namespace}/properties": UpdateNamespacePropertiesRequest,
    "/namespaces/{namespace}/tables": CreateTableRequest,
    "/namespaces/{namespace}/tables/{table}": CommitTableRequest,
    "/namespaces/{namespace}/register": RegisterTableRequest,
    "/tables/rename": RenameTableRequest,
    "/namespaces/{namespace}/views": CreateViewRequest,
    "/namespaces/{namespace}/views/{view}": CommitViewRequest,
    "/views/rename": RenameTableRequest,
    "/namespaces/{namespace}/register-view": RegisterViewRequest,
}
_REF = "#/components/schemas/{model}"


def document(app: FastAPI, base: str) -> dict[str, Any]:
    """``app``'s document for the catalog routes under ``base`` (``/v1/<prefix>``), holds left out."""
    doc = app.openapi()
    refs, top = models_json_schema([(m, "validation") for m in BODIES.values()], ref_template=_REF, by_alias=True)
    doc["paths"] = {path: ops for path, ops in doc["paths"].items() if path.startswith("/v1/")}
    doc.setdefault("components", {}).setdefault("schemas", {}).update(top.get("$defs", {}))
    for suffix, model in BODIES.items():
        operation = doc["paths"][base + suffix]["post"]
        schema = refs[(model, "validation")]
        operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}}}
    metrics = doc["paths"][base + "/namespaces/{namespace}/tables/{table}/metrics"]["post"]
    metrics["requestBody"] = {"required": True, "content": {"application/json": {"schema": {"type": "object"}}}}
    return doc
