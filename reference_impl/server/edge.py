"""The HTTP edge, before any route: body size, content type, well-formed JSON.

A pure ASGI middleware that reads the whole body (at most ``max_body_bytes``) and hands it
on unchanged, so every refusal here happens before authentication or the catalog:
413 for an oversized body, 415 for a body that is not ``application/json``, 400 for a body
that is not a JSON object (malformed, too deep, invalid UTF-8).
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reference_impl.server.errors import ApiError, error_response, invalid

DEFAULT_MAX_BODY_BYTES = 1024 * 1024


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


class EdgeMiddleware:
    def __init__(self, app: ASGIApp, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, error: ApiError) -> None:
        await error_response(scope.get("path", ""), error)(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        declared = headers.get("content-length")
        if declared is not None and (not declared.strip().isdigit() or int(declared) > self.max_body_bytes):
            too_big = declared.strip().isdigit()
            error = ApiError("PAYLOAD_TOO_LARGE", f"body over {self.max_body_bytes} bytes") if too_big else None
            await self._refuse(scope, receive, send, error or invalid("invalid Content-Length"))
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                await self._refuse(scope, receive, send, ApiError("PAYLOAD_TOO_LARGE", "body too large"))
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
            try:
                parsed = json.loads(body)
            except (ValueError, RecursionError):
                await self._refuse(scope, receive, send, invalid("the request body is not valid JSON"))
                return
            if not isinstance(parsed, dict):
                await self._refuse(scope, receive, send, invalid("the request body must be a JSON object"))
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
