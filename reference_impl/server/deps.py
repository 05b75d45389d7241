"""What every route of ``lakecert serve`` depends on: the path prefix, the service and the caller.

Kept apart from ``app`` so that the routers (``app``, ``uc_compat``, ``namespaces``, ``delta_v1``,
``delta_v1_tables``) import it, and ``app`` imports the routers, without an import circle.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from reference_impl.server.auth import Authenticator, Principal
from reference_impl.server.errors import ApiError
from reference_impl.server.service import CatalogService

PREFIX = "/api/2.1/unity-catalog"
_bearer = HTTPBearer(auto_error=False, description="A token of the server's tokens file (none: open server)")


def service(request: Request) -> CatalogService:
    svc: CatalogService = request.app.state.service
    return svc


def principal(
    request: Request, _: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)] = None
) -> Principal:
    auth: Authenticator = request.app.state.auth
    given = request.headers.getlist("authorization")
    if len(given) > 1:
        # Which one counts would be the server's guess (it took the first): refused, whatever they hold.
        raise ApiError("INVALID_ARGUMENT", "a request may carry one Authorization header, not several")
    return auth.authenticate(given[0] if given else None)


Svc = Annotated[CatalogService, Depends(service)]
Who = Annotated[Principal, Depends(principal)]
