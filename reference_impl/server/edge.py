"""The HTTP edge, before any route: body size and time, content type, well-formed JSON, and the
last guard against unexpected errors.

A pure ASGI middleware that reads the whole body (at most ``max_body_bytes``, within
``body_timeout_s``) and hands it on unchanged, so every refusal here happens before
authentication or the catalog: 413 for an oversized body, 408 for a body that does not arrive
in time (a Content-Length larger than what is sent), 415 for a body that is not
``application/json``, 400 for a body that is not one JSON object in UTF-8 (malformed, too deep,
another encoding, duplicate keys) or that holds a string no store can keep (NUL, a lone
surrogate), and 400 for such characters in the path or query. Any exception the app lets
through becomes a 500 in the API's error shape with ``Connection: close``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reference_impl.server.errors import ApiError, error_response, invalid, storage_full, unexpected_response

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
DEFAULT_BODY_TIMEOUT_S = 30.0
_log = logging.getLogger("lakecert.serve")


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


class _DuplicateKey(ValueError):
    pass


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique: with duplicates, which value wins is parser-dependent."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKey("duplicate key in a JSON object")
    return out


def storable(text: str) -> bool:
    """Whether a string can be stored by every store: UTF-8 encodable (no lone surrogate), no NUL
    (PostgreSQL's text refuses it; SQLite would keep it and cut it short elsewhere)."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _all_storable(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not storable(item):
                return False
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def _target_is_storable(scope: Scope) -> bool:
    path = scope.get("path", "")
    query = bytes(scope.get("query_string", b""))
    try:
        decoded_query = unquote_to_bytes(query.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return storable(path) and storable(decoded_query)


def parse_body(body: bytes) -> ApiError | None:
    """Why ``body`` is not an acceptable JSON request body, or None."""
    try:
        # Decoded as UTF-8 first: json.loads of bytes would also accept UTF-16 and UTF-32.
        parsed = json.loads(body.decode("utf-8"), object_pairs_hook=_object)
    except _DuplicateKey:
        return invalid("the request body has a duplicate key in a JSON object")
    except (ValueError, RecursionError):
        return invalid("the request body is not valid JSON in UTF-8")
    if not isinstance(parsed, dict):
        return invalid("the request body must be a JSON object")
    if not _all_storable(parsed):
        return invalid("the request body holds a NUL character or a lone surrogate")
    return None


class EdgeMiddleware:
    def __init__(
        self, app: ASGIApp, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, error: ApiError, close: bool = False) -> None:
        response = error_response(scope.get("path", ""), error)
        if close:  # the rest of the body may still come: this connection cannot carry another request
            response.headers["connection"] = "close"
        await response(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._handle(scope, receive, tracking_send)
        except Exception as e:
            if storage_full(e):  # a condition of the database, not a bug: one line, no traceback
                _log.warning(
                    "the catalog's database is out of space: %s %s refused", scope.get("method"), scope.get("path")
                )
            else:
                _log.exception("unexpected error on %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise  # the answer is under way: the server can only drop the connection
            await unexpected_response(scope.get("path", ""), e)(scope, receive, send)

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not _target_is_storable(scope):
            await self._refuse(scope, receive, send, invalid("the path or query holds a NUL or is not UTF-8"))
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        declared = headers.get("content-length")
        if declared is not None and (not declared.strip().isdigit() or int(declared) > self.max_body_bytes):
            too_big = declared.strip().isdigit()
            error = ApiError("PAYLOAD_TOO_LARGE", f"body over {self.max_body_bytes} bytes") if too_big else None
            await self._refuse(scope, receive, send, error or invalid("invalid Content-Length"), close=True)
            return
        chunks: list[bytes] = []
        size = 0
        deadline = time.monotonic() + self.body_timeout_s
        while True:
            try:
                message = await asyncio.wait_for(receive(), timeout=max(deadline - time.monotonic(), 0.0))
            except TimeoutError:
                error = ApiError("REQUEST_TIMEOUT", f"the body did not arrive within {self.body_timeout_s} s")
                await self._refuse(scope, receive, send, error, close=True)
                return
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                error = ApiError("PAYLOAD_TOO_LARGE", "body too large")
                await self._refuse(scope, receive, send, error, close=True)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body:
            if not _is_json(headers.get("content-type", "")):
                error = ApiError("UNSUPPORTED_MEDIA_TYPE", "the request body must be application/json")
                await self._refuse(scope, receive, send, error)
                return
            problem = parse_body(body)
            if problem is not None:
                await self._refuse(scope, receive, send, problem)
                return
        await self.app(scope, self._replay(body, receive), send)

    @staticmethod
    def _replay(body: bytes, receive: Receive) -> Receive:
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay
