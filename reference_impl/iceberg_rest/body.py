"""Reading a request body within bounds, before any of it is parsed.

Every request body of the REST catalog is JSON (``rest-catalog-open-api.yaml``: each
``requestBody`` is ``application/json``). A body declared as something else is a 415; one larger
than the cap is a 413, found from ``Content-Length`` when the client sends it, else while
streaming, so an oversized body is never held in memory whole. A body without a ``Content-Type``
is taken as JSON: some clients omit it, and the JSON parser still judges the bytes.
"""

from __future__ import annotations

import asyncio
import time

from starlette.requests import Request

from reference_impl.iceberg_rest import errors

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024  # far above a commit of a wide table's schema and snapshots
# As ``lakecert serve``'s --body-timeout: a body that has not arrived by then is a 408 (a Content-Length
# larger than what is sent, a client trickling bytes), and the connection is closed.
DEFAULT_BODY_TIMEOUT_S = 30.0


def is_json(content_type: str) -> bool:
    """``application/json`` or a ``+json`` type; a charset, if given, must be UTF-8 (RFC 8259 section 8.1)."""
    media, *params = (p.strip().lower() for p in content_type.split(";"))
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        return False
    charsets = [p.partition("=")[2].strip('"') for p in params if p.startswith("charset=")]
    return all(c in ("utf-8", "utf8") for c in charsets)


def body_timeout_of(request: Request) -> float:
    timeout: float = getattr(request.app.state, "body_timeout_s", DEFAULT_BODY_TIMEOUT_S)
    return timeout


async def read_body(request: Request, max_bytes: int) -> bytes:
    content_type = request.headers.get("content-type")
    if content_type is not None and not is_json(content_type):
        raise errors.unsupported_media_type(content_type)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise errors.payload_too_large(max_bytes)
    chunks: list[bytes] = []
    size = 0
    timeout = body_timeout_of(request)
    deadline = time.monotonic() + timeout
    stream = request.stream().__aiter__()
    while True:
        try:
            chunk = await asyncio.wait_for(stream.__anext__(), max(deadline - time.monotonic(), 0.0))
        except StopAsyncIteration:
            return b"".join(chunks)
        except TimeoutError:
            raise errors.request_timeout(timeout) from None
        size += len(chunk)
        if size > max_bytes:
            raise errors.payload_too_large(max_bytes)
        chunks.append(chunk)
