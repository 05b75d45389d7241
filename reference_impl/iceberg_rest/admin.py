"""The schedule controller over HTTP, under ``/lakecert``, for a harness in another process.

``POST /holds`` registers a hold, ``POST /holds/{id}/wait`` blocks until its commits are held,
``POST /holds/{id}/commits/{seq}/release`` releases one (and by default answers its outcome),
``DELETE /holds/{id}`` cancels it, ``GET /commits`` is the history. A wait that times out is a 504
with error type ``ScheduleTimeout``, the in-process API's exception.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response

from reference_impl.iceberg_rest import errors
from reference_impl.iceberg_rest.body import read_body
from reference_impl.iceberg_rest.controller import (
    CommitOutcome,
    CommitRecord,
    HeldCommit,
    Hold,
    ScheduleController,
    ScheduleTimeout,
)
from reference_impl.iceberg_rest.requests import json_body, namespace_of, parse


class HoldRequest(BaseModel):
    model_config = ConfigDict(strict=True, populate_by_name=True)
    namespace: list[str] = Field(min_length=1)
    table: str = Field(min_length=1)
    count: int = Field(default=1, ge=1, le=1000)
    writer: str | None = None
    timeout_s: float | None = Field(default=None, alias="timeout-s", gt=0, le=3600)


class WaitRequest(BaseModel):
    model_config = ConfigDict(strict=True, populate_by_name=True)
    count: int | None = Field(default=None, ge=1)
    timeout_s: float | None = Field(default=None, alias="timeout-s", gt=0, le=3600)


class ReleaseRequest(BaseModel):
    model_config = ConfigDict(strict=True, populate_by_name=True)
    wait: bool = True
    timeout_s: float | None = Field(default=None, alias="timeout-s", gt=0, le=3600)


def outcome_json(outcome: CommitOutcome | None) -> dict[str, Any] | None:
    if outcome is None:
        return None
    return {
        "status": outcome.status,
        "committed": outcome.committed,
        "error-type": outcome.error_type,
        "metadata-location": outcome.metadata_location,
        "snapshot-id": outcome.snapshot_id,
    }


def commit_json(commit: HeldCommit) -> dict[str, Any]:
    return {
        "seq": commit.seq,
        "writer": commit.arrival.writer,
        "state": commit.state.value,
        "added-snapshot-ids": list(commit.arrival.added_snapshot_ids),
        "expected-main": commit.arrival.expected_main,
        "outcome": outcome_json(commit.result),
    }


def hold_json(hold: Hold) -> dict[str, Any]:
    return {
        "id": hold.id,
        "namespace": list(hold.namespace),
        "table": hold.table,
        "count": hold.count,
        "writer": hold.writer,
        "timeout-s": hold.timeout_s,
        "cancelled": hold.cancelled,
        "commits": [commit_json(c) for c in hold.commits],
    }


def record_json(record: CommitRecord) -> dict[str, Any]:
    return {
        "seq": record.seq,
        "namespace": list(record.arrival.namespace),
        "table": record.arrival.table,
        "writer": record.arrival.writer,
        "held": record.held,
        "added-snapshot-ids": list(record.arrival.added_snapshot_ids),
        "expected-main": record.arrival.expected_main,
        "outcome": outcome_json(record.outcome),
    }


def _timeout(exc: ScheduleTimeout) -> errors.IcebergApiError:
    return errors.IcebergApiError(504, "ScheduleTimeout", str(exc))


def admin_router(controller: ScheduleController, max_body_bytes: int) -> APIRouter:
    router = APIRouter()

    async def body_of(request: Request, empty: bytes = b"") -> Any:
        return json_body(await read_body(request, max_body_bytes) or empty)

    def find(hold_id: int) -> Hold:
        hold = controller.get(hold_id)
        if hold is None:
            raise errors.IcebergApiError(404, "NoSuchHoldException", f"No hold {hold_id}")
        return hold

    @router.post("/holds")
    async def create_hold(request: Request) -> JSONResponse:
        body = parse(HoldRequest, await body_of(request))
        ns = namespace_of(body.namespace)
        hold = controller.hold(ns, body.table, body.count, writer=body.writer, timeout_s=body.timeout_s)
        return JSONResponse(hold_json(hold), status_code=201)

    @router.get("/holds")
    async def list_holds() -> JSONResponse:
        return JSONResponse({"holds": [hold_json(h) for h in controller.holds()]})

    @router.get("/holds/{hold_id}")
    async def get_hold(hold_id: int) -> JSONResponse:
        return JSONResponse(hold_json(find(hold_id)))

    @router.post("/holds/{hold_id}/wait")
    async def wait_held(hold_id: int, request: Request) -> JSONResponse:
        hold = find(hold_id)
        body = parse(WaitRequest, await body_of(request, b"{}"))
        try:
            await run_in_threadpool(hold.wait_held, body.count, body.timeout_s)
        except ScheduleTimeout as e:
            raise _timeout(e) from None
        except ValueError as e:
            raise errors.bad_request(str(e)) from None
        return JSONResponse(hold_json(hold))

    @router.post("/holds/{hold_id}/commits/{seq}/release")
    async def release(hold_id: int, seq: int, request: Request) -> JSONResponse:
        hold = find(hold_id)
        body = parse(ReleaseRequest, await body_of(request, b"{}"))
        commit = next((c for c in hold.commits if c.seq == seq), None)
        if commit is None:
            raise errors.IcebergApiError(404, "NoSuchCommitException", f"Hold {hold_id} holds no commit #{seq}")
        try:
            commit.release()
            if body.wait:
                await run_in_threadpool(commit.outcome, body.timeout_s)
        except ScheduleTimeout as e:
            raise _timeout(e) from None
        return JSONResponse(commit_json(commit))

    @router.delete("/holds/{hold_id}")
    async def cancel_hold(hold_id: int) -> Response:
        find(hold_id).cancel()
        return Response(status_code=204)

    @router.get("/commits")
    async def history() -> JSONResponse:
        return JSONResponse({"commits": [record_json(r) for r in controller.history()]})

    return router
