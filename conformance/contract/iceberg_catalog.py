"""The contract between lakecert and an Iceberg REST catalog under test (profile ``iceberg-catalog-commit``).

A target with the ``iceberg-catalog`` side hands lakecert an endpoint: the base URL of the catalog's
routes (``.../v1/{prefix}``, the prefix resolved from ``/v1/config``) and, when lakecert can see it,
the local directory holding the catalog's files (so a check can tell that a refused commit wrote
nothing). The checks speak the REST API over HTTP and judge only its answers and what it serves.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

from conformance.contract.env import TargetEnv


@dataclass
class RestCatalogEndpoint:
    base: str  # http://host:port/v1/<prefix> (or /v1 without a prefix)
    warehouse: Path | None = None  # where the catalog writes its files, when local and known
    headers: Mapping[str, str] = field(default_factory=dict)  # e.g. Authorization
    close: Callable[[], None] = lambda: None


@runtime_checkable
class IcebergCatalogTarget(Protocol):
    def make_iceberg_catalog(self, env: TargetEnv) -> RestCatalogEndpoint:
        """Called once per run when "iceberg-catalog" is in the target's ``sides``."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any  # parsed JSON, or None for an empty or non-JSON body

    @property
    def error_type(self) -> str | None:
        error = self.body.get("error") if isinstance(self.body, dict) else None
        return error.get("type") if isinstance(error, dict) else None


def call(url: str, method: str, body: Any = None, headers: Mapping[str, str] | None = None) -> Answer:
    """One request on its own connection (racing commits run in threads), JSON in and out."""
    parts = urlsplit(url)
    conn_cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_cls(parts.netloc, timeout=120)  # a hang guard only
    try:
        data = None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json", **dict(headers or {})} if data is not None else dict(headers or {})
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        raw = response.read()
    finally:
        conn.close()
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = None
    return Answer(response.status, parsed)


def endpoint_of(uri: str, headers: Mapping[str, str] | None = None) -> RestCatalogEndpoint:
    """The endpoint of a catalog at ``uri``, its prefix taken from ``GET /v1/config`` (``overrides``)."""
    root = uri.rstrip("/")
    config = call(f"{root}/v1/config", "GET", headers=headers)
    if config.status != 200 or not isinstance(config.body, dict):
        raise ConnectionError(f"{root}/v1/config answered {config.status}")
    prefix = str(config.body.get("overrides", {}).get("prefix") or config.body.get("defaults", {}).get("prefix") or "")
    base = f"{root}/v1/{prefix.strip('/')}" if prefix.strip("/") else f"{root}/v1"
    return RestCatalogEndpoint(base, None, dict(headers or {}))
