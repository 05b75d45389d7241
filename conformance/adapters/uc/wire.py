"""Unity Catalog's REST API on the wire: JSON over HTTP, and how its errors map onto the contract's."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, NoReturn
from urllib.parse import urlsplit

import httpx

from conformance.contract.delta import (
    CommitConflict,
    CommitRejected,
    CredentialRefused,
    InvalidRequest,
    TableNotFound,
)
from conformance.observe.http_transcript import exchange, record

API_PREFIX = "/api/2.1/unity-catalog"
STAGED_DIR = "/_delta_log/_staged_commits/"
CATALOG_MANAGED_PROPS = ("delta.feature.catalogManaged", "delta.feature.catalogOwned-preview")
UC_TABLE_ID = "io.unitycatalog.tableId"
# The suite's tables: id long, value string (contract.DeltaClient).
COLUMNS: list[dict[str, Any]] = [
    {
        "name": name,
        "type_text": type_text,
        "type_name": type_name,
        "type_json": json.dumps({"name": name, "type": type_text, "nullable": True, "metadata": {}}),
        "position": i,
        "nullable": True,
    }
    for i, (name, type_text, type_name) in enumerate((("id", "long", "LONG"), ("value", "string", "STRING")))
]
# What a catalog-managed table created through UC carries (delta-spark sends these).
TABLE_PROPERTIES = {
    "delta.feature.catalogManaged": "supported",
    "delta.feature.inCommitTimestamp": "supported",
    "delta.feature.vacuumProtocolCheck": "supported",
    "delta.enableInCommitTimestamps": "true",
}


class UCServerError(Exception):
    """The server failed (5xx), or a body lakecert needs is not the shape UC's API gives it."""


class UCHttpError(Exception):
    def __init__(self, status: int, body: Any, method: str = "", path: str = "") -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body
        self.method, self.path = method, path  # the request it answered

    @property
    def proposal(self) -> bool:
        """Whether it answered a commit proposal or publication mark (the preview commits endpoint,
        or /delta/v1's table update), which a catalog may refuse by rule."""
        endpoint = endpoint_of(self.path)
        return self.method == "POST" and (endpoint.endswith("/commits") or endpoint.endswith("/tables/{name}"))

    @property
    def message(self) -> str:
        if isinstance(self.body, dict):
            nested = self.body.get("error")
            inner: dict[str, Any] = nested if isinstance(nested, dict) else self.body
            return f"HTTP {self.status} {inner.get('error_code') or inner.get('type') or ''}: {inner.get('message')}"
        return f"HTTP {self.status}: {self.body!r}"[:500]

    def latest_version(self) -> int | None:
        """``latest_table_version`` from the ErrorInfo details, when the server says it."""
        details = self.body.get("details") if isinstance(self.body, dict) else None
        for detail in details if isinstance(details, list) else []:
            meta = detail.get("metadata") if isinstance(detail, dict) else None
            value = meta.get("latest_table_version") if isinstance(meta, dict) else None
            if isinstance(value, (str, int)) and str(value).lstrip("-").isdigit():
                return int(value)
        return None


def raise_for(error: UCHttpError) -> NoReturn:
    msg = error.message
    if error.status == 401 or (error.status == 403 and not error.proposal):
        raise CredentialRefused(
            f"the catalog refused lakecert's credential for {error.method} {endpoint_of(error.path)} ({msg}): "
            "lakecert needs a token that may create, commit to, read and drop tables in its schema"
        ) from error
    if error.status == 409:
        raise CommitConflict(msg, latest_version=error.latest_version()) from error
    if error.status == 404:
        raise TableNotFound(msg) from error
    if error.status in (403, 429):
        raise CommitRejected(msg) from error
    if 400 <= error.status < 500:
        raise InvalidRequest(msg) from error
    raise UCServerError(msg) from error


def endpoint_of(path: str) -> str:
    """A request's endpoint, the same for every table: the path under ``API_PREFIX`` without its
    query, a table's name as ``{name}`` (``/tables/{name}``)."""
    endpoint = re.sub(r"^.*?" + re.escape(API_PREFIX), "", path.partition("?")[0])
    return re.sub(r"/tables/[^/]+", "/tables/{name}", endpoint)


def unexpected_shape(method: str, path: str, status: int, media_type: str | None, body: bytes) -> str | None:
    """An observation when an answer is not JSON as UC's OpenAPI declares (``None`` when it is,
    or when it is empty). Said per endpoint, not per table, so that one run notes it once."""
    if not body or not 200 <= status < 300:  # an error's body is read only for its status
        return None
    try:
        json.loads(body)
        if media_type is None or media_type == "application/json" or media_type.endswith("+json"):
            return None
    except ValueError:
        pass
    return (
        f"{method} {endpoint_of(path)} answered {status} {media_type or 'without a media type'} {body[:40]!r}, not JSON"
    )


class UCConnectionError(ConnectionError):
    """No answer from the server (refused, reset, timed out): an ``OSError``, as before httpx."""


def _root_cause(error: BaseException) -> str:
    """``Class: message`` of the socket-level error under httpx's (``ConnectionRefusedError: ...``):
    what a user can act on; httpx's own class when there is none."""
    root: BaseException = error
    seen = error.__cause__ or error.__context__
    while seen is not None:
        if isinstance(seen, OSError):
            root = seen
        seen = seen.__cause__ or seen.__context__
    return f"{type(root).__name__}: {root}"


class UCClient:
    """JSON over HTTP(S) to ``<url>/api/2.1/unity-catalog`` on one pooled ``httpx.Client``.

    Safe to share between threads (httpx's pool hands each request a connection of its own). Every
    exchange is handed to ``observe.http_transcript.record`` by the client's event hooks (request
    body kept, answer as digest and size, credentials redacted): the HTTP transcript of a check's
    reproducer. ``timeout_s`` bounds connecting and each read or write, not the whole call.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        timeout_s: float = 30.0,
        *,
        pool_size: int = 16,
        transport: httpx.BaseTransport | None = None,  # the tests' replay of recorded answers
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be http(s)://host[:port][/path], not {url!r}")
        path = parts.path.rstrip("/")
        self._base = path if path.endswith(API_PREFIX) else path + API_PREFIX
        self._origin = f"{parts.scheme}://{parts.netloc}"
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(
            base_url=self._origin,
            headers=headers,
            timeout=httpx.Timeout(timeout_s),
            limits=httpx.Limits(max_connections=pool_size, max_keepalive_connections=pool_size),
            event_hooks={"response": [self._recorded]},
            follow_redirects=False,
            trust_env=False,  # a proxy from the environment would change what is certified
            transport=transport,
        )

    def _recorded(self, response: httpx.Response) -> None:
        """Response hook: the exchange into the HTTP transcript (the answer read in full first)."""
        response.read()
        request = response.request
        media_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower() or None
        record(
            exchange(
                self._origin,
                request.method,
                request.url.raw_path.decode("ascii", "replace"),
                response.status_code,
                request.headers.multi_items(),
                request.content,
                response.content,
                media_type=media_type,
                note=unexpected_shape(
                    request.method, request.url.path, response.status_code, media_type, response.content
                ),
            )
        )

    def _send(self, method: str, target: str, data: bytes | None, headers: dict[str, str]) -> httpx.Response:
        for attempt in (0, 1):
            try:
                return self._http.request(method, target, content=data, headers=headers)
            except httpx.RemoteProtocolError as e:
                # A keep-alive connection the server had closed: retry once (the pool opens a new
                # one). Safe for commits too, since an identical replay of an accepted commit is
                # answered 200.
                self._no_answer(method, target, data, headers, e)
                if attempt:
                    raise UCConnectionError(f"{method} {target}: {_root_cause(e)}") from e
            except httpx.TransportError as e:
                self._no_answer(method, target, data, headers, e)
                raise UCConnectionError(f"{method} {target}: {_root_cause(e)}") from e
        raise AssertionError("unreachable")

    def _no_answer(
        self, method: str, target: str, data: bytes | None, headers: dict[str, str], error: Exception
    ) -> None:
        sent = [*self._http.headers.multi_items(), *headers.items()]
        record(exchange(self._origin, method, target, None, sent, data or b"", b"", type(error).__name__))

    def request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """The answer of a 2xx, decoded: JSON when it parses, else its text (``None`` when empty);
        ``UCHttpError`` for any other status.

        Any 2xx is a success and any media type is accepted: real servers answer an accepted commit
        with ``200 text/plain`` ``200 OK`` (UC OSS 0.6.0) although their OpenAPI declares JSON, and
        lakecert does not need that body. A caller that does need a body checks its shape and
        raises ``UCServerError`` only then; an answer that is not JSON is noted on the exchange
        (``HttpExchange.note``) and shows as an observation of the check.
        """
        headers: dict[str, str] = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        resp = self._send(method, self._base + path, data, headers)
        raw = resp.content
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = raw.decode("utf-8", "replace")
        if not 200 <= resp.status_code < 300:
            raise UCHttpError(resp.status_code, payload, method, path)
        return payload

    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        try:
            return self.request(method, path, body)
        except UCHttpError as e:
            raise_for(e)

    def close(self) -> None:
        self._http.close()
