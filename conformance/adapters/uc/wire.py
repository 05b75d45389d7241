"""Unity Catalog's REST API on the wire: JSON over HTTP, and how its errors map onto the contract's."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Mapping
from typing import Any, NoReturn
from urllib.parse import urlsplit

from conformance.contract.delta import (
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    TableNotFound,
)

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
    """The server failed (5xx) or answered something that is not UC's API."""


class UCHttpError(Exception):
    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body

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
    if error.status == 409:
        raise CommitConflict(msg, latest_version=error.latest_version()) from error
    if error.status == 404:
        raise TableNotFound(msg) from error
    if error.status in (403, 429):
        raise CommitRejected(msg) from error
    if 400 <= error.status < 500:
        raise InvalidRequest(msg) from error
    raise UCServerError(msg) from error


class UCClient:
    """JSON over HTTP(S) to ``<url>/api/2.1/unity-catalog``; one connection per thread."""

    def __init__(self, url: str, token: str | None = None, timeout_s: float = 30.0) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be http(s)://host[:port][/path], not {url!r}")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        path = parts.path.rstrip("/")
        self._base = path if path.endswith(API_PREFIX) else path + API_PREFIX
        self._token = token
        self._timeout = timeout_s
        self._local = threading.local()

    def _connection(self, fresh: bool) -> tuple[http.client.HTTPConnection, bool]:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        reused = conn is not None and not fresh
        if conn is None or fresh:
            if conn is not None:
                conn.close()
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=self._timeout)
            self._local.conn = conn
        return conn, reused

    def request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """The decoded JSON answer of a 2xx; ``UCHttpError`` otherwise."""
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        for attempt in (0, 1):
            conn, reused = self._connection(fresh=attempt > 0)
            try:
                conn.request(method, self._base + path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # A keep-alive connection the server had closed: retry once on a new one. Safe for
                # commits too, since an identical replay of an accepted commit is answered 200.
                conn.close()
                self._local.conn = None
                if attempt or not reused:
                    raise
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = raw.decode("utf-8", "replace")
            if 200 <= resp.status < 300:
                raise UCServerError(
                    f"unparseable answer to {method} {path}: HTTP {resp.status} with a body that is not JSON: "
                    f"{payload[:200]!r}"
                ) from None
        if not 200 <= resp.status < 300:
            raise UCHttpError(resp.status, payload)
        return payload

    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        try:
            return self.request(method, path, body)
        except UCHttpError as e:
            raise_for(e)

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
