"""Routes of UC's API that its SDKs call and that are about wire compatibility, not commit semantics.

- ``GET /delta/preview/commits``: UC reads the request (``DeltaGetCommits``) from the body of the
  GET, which Java's client sends and UC's Python SDK does not (its HTTP layer drops bodies on GET);
  here the fields may come from the query string as well. A field given in both must agree.
- ``GET /metastore_summary``: what Kernel's ``UCTokenBasedRestClient.getMetastoreId`` and the
  SDKs' ``MetastoresApi.summary`` ask for. The id is stable for one database.
"""

from __future__ import annotations

import json
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import ValidationError

from reference_impl.server import models as M
from reference_impl.server.deps import PREFIX, Svc, Who
from reference_impl.server.errors import invalid

_FIELDS = ("table_id", "table_uri", "start_version", "end_version")


async def commits_request(request: Request) -> M.DeltaGetCommits:
    """The ``DeltaGetCommits`` of a GET, from its JSON body, its query string, or both."""
    raw = await request.body()
    fields: dict[str, Any] = {}
    if raw.strip():
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError) as e:
            raise invalid("the body is not JSON") from e
        if not isinstance(body, dict):
            raise invalid("the body must be a JSON object (DeltaGetCommits)")
        fields.update(body)
    for name in _FIELDS:
        values = request.query_params.getlist(name)
        if len(values) > 1:
            raise invalid(f"query parameter {name} given more than once")
        if not values:
            continue
        value: Any = values[0]
        if name.endswith("_version"):
            try:
                value = int(value)
            except ValueError as e:
                raise invalid(f"query parameter {name} must be an integer") from e
        if name in fields and fields[name] != value:
            raise invalid(f"{name} differs between the body and the query string")
        fields[name] = value
    try:
        return M.DeltaGetCommits.model_validate(fields)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'body'}: {err['msg']}" for err in e.errors())
        raise invalid(f"invalid DeltaGetCommits: {problems}") from e


class MetastoreSummary(M.Response):
    """UC's ``GetMetastoreSummaryResponse``."""

    metastore_id: str


GetCommits = Annotated[M.DeltaGetCommits, Depends(commits_request)]


def compat_router() -> APIRouter:
    r = APIRouter(prefix=PREFIX)

    @r.get(
        "/delta/preview/commits",
        tags=["DeltaCommits"],
        operation_id="getCommits",
        response_model=M.DeltaGetCommitsResponse,
        response_model_exclude_none=True,
        description="The request's fields come from the JSON body (as UC reads them) or the query string.",
    )
    def get_commits(body: GetCommits, svc: Svc, who: Who) -> M.DeltaGetCommitsResponse:
        return svc.get_commits(who, body)

    @r.get(
        "/metastore_summary",
        tags=["Metastores"],
        operation_id="summary",
        response_model=MetastoreSummary,
    )
    def metastore_summary(svc: Svc, who: Who) -> MetastoreSummary:
        who.require("reader", action="reading the metastore summary")
        # Stable for a database: derived from its oldest catalog (the server creates one at start).
        catalogs = sorted(svc.meta.catalogs(), key=lambda c: (c.created_at, c.id))
        seed = catalogs[0].id if catalogs else svc.server_name
        return MetastoreSummary(metastore_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"lakecert:{seed}")))

    return r
