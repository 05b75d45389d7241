"""Errors in Unity Catalog's shapes.

The UC REST API (``/api/2.1/unity-catalog/...``) answers errors as UC's server does
(``GlobalExceptionHandler``): ``{"error_code", "message", "details": [google.rpc.ErrorInfo]}``.
The ``/delta/v1`` API answers ``DeltaErrorResponse`` of ``api/delta.yaml``:
``{"error": {"message", "type", "code"}}``. ``api/all.yaml`` declares no error schema.
"""

from __future__ import annotations

import errno
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
V1_PREFIX = "/api/2.1/unity-catalog/delta/v1"

# UC's ErrorCode enum (server/.../exception/ErrorCode.java): name -> (UC REST status, Delta API type).
ERROR_CODES: dict[str, tuple[int, str]] = {
    "INVALID_ARGUMENT": (400, "InvalidParameterValueException"),
    "NOT_FOUND": (404, "NotFoundException"),
    "CATALOG_NOT_FOUND": (404, "NoSuchCatalogException"),
    "SCHEMA_NOT_FOUND": (404, "NoSuchSchemaException"),
    "TABLE_NOT_FOUND": (404, "NoSuchTableException"),
    "ALREADY_EXISTS": (409, "AlreadyExistsException"),
    "PERMISSION_DENIED": (403, "PermissionDeniedException"),
    "UNAUTHENTICATED": (401, "NotAuthorizedException"),
    "RESOURCE_EXHAUSTED": (429, "ResourceExhaustedException"),
    "FAILED_PRECONDITION": (400, "InvalidParameterValueException"),
    "COMMIT_VERSION_CONFLICT": (409, "CommitVersionConflictException"),
    "UPDATE_REQUIREMENT_CONFLICT": (409, "UpdateRequirementConflictException"),
    "UNIMPLEMENTED": (501, "NotImplementedException"),
    "INTERNAL": (500, "InternalServerErrorException"),
    # UC REST answers "already exists" with 400 (legacy); the Delta API with 409.
    "CATALOG_ALREADY_EXISTS": (400, "AlreadyExistsException"),
    "SCHEMA_ALREADY_EXISTS": (400, "AlreadyExistsException"),
    "TABLE_ALREADY_EXISTS": (400, "AlreadyExistsException"),
    # HTTP-level refusals UC's enum has no entry for (lakecert's choice of code).
    "PAYLOAD_TOO_LARGE": (413, "BadRequestException"),
    "UNSUPPORTED_MEDIA_TYPE": (415, "BadRequestException"),
    "METHOD_NOT_ALLOWED": (405, "BadRequestException"),
    "REQUEST_TIMEOUT": (408, "BadRequestException"),
    # The catalog's database is out of space: nothing was done, the same request may succeed later.
    "UNAVAILABLE": (503, "ServiceUnavailableException"),
}
_V1_STATUS_OVERRIDES = {"CATALOG_ALREADY_EXISTS": 409, "SCHEMA_ALREADY_EXISTS": 409, "TABLE_ALREADY_EXISTS": 409}


class ApiError(Exception):
    """A refusal with a UC error code; ``metadata`` goes into the ErrorInfo detail."""

    def __init__(self, error_code: str, message: str, metadata: dict[str, str] | None = None) -> None:
        super().__init__(message)
        if error_code not in ERROR_CODES:
            raise ValueError(f"unknown error code {error_code}")
        self.error_code = error_code
        self.message = message
        self.metadata = metadata or {}

    def status(self, delta_v1: bool = False) -> int:
        if delta_v1 and self.error_code in _V1_STATUS_OVERRIDES:
            return _V1_STATUS_OVERRIDES[self.error_code]
        return ERROR_CODES[self.error_code][0]


def invalid(message: str) -> ApiError:
    return ApiError("INVALID_ARGUMENT", message)


def uc_error_body(error: ApiError) -> dict[str, Any]:
    detail: dict[str, Any] = {"@type": ERROR_INFO_TYPE, "reason": error.error_code}
    if error.metadata:
        detail["metadata"] = dict(error.metadata)
    return {"error_code": error.error_code, "message": error.message, "details": [detail]}


def v1_error_body(error: ApiError) -> dict[str, Any]:
    return {"error": {"message": error.message, "type": ERROR_CODES[error.error_code][1], "code": error.status(True)}}


def error_response(request_path: str, error: ApiError) -> JSONResponse:
    """The error in the shape of the API the path belongs to."""
    if request_path.startswith(V1_PREFIX):
        return JSONResponse(v1_error_body(error), status_code=error.status(True))
    return JSONResponse(uc_error_body(error), status_code=error.status())


async def handle_api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(request.url.path, exc)


async def handle_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        problems.append(f"{where or 'body'}: {err.get('msg', 'invalid')}")
    return error_response(request.url.path, invalid("; ".join(problems) or "invalid request"))


_HTTP_CODES = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}


async def handle_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "INVALID_ARGUMENT" if exc.status_code < 500 else "INTERNAL")
    return error_response(request.url.path, ApiError(code, str(exc.detail)))


_SQLITE_FULL = 13  # SQLite's result code for "database or disk is full"
_PG_DISK_FULL = "53100"  # PostgreSQL's SQLSTATE disk_full


def storage_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is the database running out of space, as SQLite
    (``SQLITE_FULL``), PostgreSQL (SQLSTATE 53100) or the file system (ENOSPC) reports it: by code,
    never by message."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if getattr(current, "sqlite_errorcode", None) == _SQLITE_FULL:
            return True
        if getattr(current, "sqlstate", None) == _PG_DISK_FULL:
            return True
        if isinstance(current, OSError) and current.errno == errno.ENOSPC:
            return True
        current = current.__cause__ or current.__context__
    return False


def unexpected_response(request_path: str, exc: BaseException) -> JSONResponse:
    """A 500 that closes the connection: the server's state after an unexpected error is unknown, and
    a client must never send its next request (a commit) on a connection the server then drops.

    A full database is not unexpected: its transaction was rolled back, so the answer says so (503,
    with the cause) and the client may retry once space is freed."""
    if storage_full(exc):
        error = ApiError(
            "UNAVAILABLE", "the catalog's database is out of space (disk full): nothing was changed; retry later"
        )
        response = error_response(request_path, error)
        response.headers["retry-after"] = "5"
        return response
    response = error_response(request_path, ApiError("INTERNAL", f"internal error: {type(exc).__name__}"))
    response.headers["connection"] = "close"
    return response


async def handle_unexpected(request: Request, exc: Exception) -> JSONResponse:
    return unexpected_response(request.url.path, exc)
