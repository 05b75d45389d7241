"""Built-in target ``uc``: a catalog that speaks Unity Catalog's REST API, over HTTP.

Maps the ``Catalog`` contract onto UC OSS's API (``api/all.yaml`` of unitycatalog/unitycatalog):

| contract | UC API |
|---|---|
| ``create_staging_table`` | ``POST /staging-tables`` (or the next of the ``staging_tables`` option) |
| ``register_table`` | ``POST /tables`` (MANAGED, DELTA, ``storage_location`` = the staging location) |
| ``resolve`` | ``GET /tables/{catalog}.{schema}.{name}`` |
| ``commit`` | ``POST /delta/preview/commits`` with ``commit_info`` (+ ``latest_backfilled_version``) |
| ``get_commits`` | ``GET /delta/preview/commits`` (JSON body), following UC's paging |
| ``mark_published`` | ``POST /delta/preview/commits`` with only ``latest_backfilled_version`` |
| ``maintenance_policy`` | lakecert extension ``GET /lakecert/v1/tables/{id}/maintenance-policy`` |

Inline commits and maintenance policies are not part of UC's API: the adapter uses lakecert's
extensions when the server advertises them (``GET /lakecert/v1/capabilities``, as ``lakecert
serve`` does) and raises ``NotSupported`` otherwise. Statuses: 409 -> ``CommitConflict`` (with
the latest version when the error's ``details[].metadata.latest_table_version`` says it),
404 -> ``TableNotFound``, 403 and 429 -> ``CommitRejected``, other 4xx -> ``InvalidRequest``,
5xx -> ``UCServerError``. The adapter is safe to share between threads (one keep-alive
connection per thread).
"""

from __future__ import annotations

import base64
import http.client
import json
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any, NoReturn
from urllib.parse import quote, urlsplit

from conformance.targets.contract import (
    Catalog,
    CommitConflict,
    CommitRejected,
    DeltaClient,
    GetCommitsResponse,
    InvalidRequest,
    MaintenancePolicy,
    NotSupported,
    RatifiedCommit,
    StagingTable,
    Storage,
    TableInfo,
    TableNotFound,
)
from conformance.targets.target import Kind, Side, TargetEnv

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


class UCCatalog:
    """``contract.Catalog`` over a UC server."""

    def __init__(
        self,
        client: UCClient,
        storage: Storage | None,
        *,
        catalog: str,
        schema: str,
        inline_commits: bool,
        maintenance_policies: bool,
        staging_tables: list[StagingTable] | None = None,
    ) -> None:
        self._client = client
        self._storage = storage
        self._catalog = catalog
        self._schema = schema
        self._inline = inline_commits
        self._policies = maintenance_policies
        self._pool = list(staging_tables) if staging_tables is not None else None
        self._locations: dict[str, str] = {}
        self._lock = threading.Lock()

    # -------------------------------------------------------------- helpers

    def _remember(self, table_id: str, location: str, *, overwrite: bool = True) -> None:
        with self._lock:
            if overwrite or table_id not in self._locations:
                self._locations[table_id] = location.rstrip("/")

    def _location(self, table_id: str, staged_uri: str | None = None) -> str:
        with self._lock:
            known = self._locations.get(table_id)
        if known is not None:
            return known
        if staged_uri is not None and STAGED_DIR in staged_uri:
            return staged_uri.rsplit(STAGED_DIR, 1)[0]
        return "unknown:" + table_id  # the server answers 404 (unknown id) or 400 (wrong table_uri)

    def _table_info(self, name: str, data: Any) -> TableInfo:
        if not isinstance(data, dict) or not isinstance(data.get("table_id"), str):
            raise UCServerError(f"not a TableInfo: {data!r}")
        props = data.get("properties") or {}
        managed = isinstance(props, dict) and any(props.get(k) == "supported" for k in CATALOG_MANAGED_PROPS)
        return TableInfo(data["table_id"], name, str(data.get("storage_location", "")), managed)

    # -------------------------------------------------------------- tables

    def create_staging_table(self) -> StagingTable:
        if self._pool is not None:
            with self._lock:
                if not self._pool:
                    raise InvalidRequest("no pre-created staging table left (option staging_tables)")
                staged = self._pool.pop(0)
        else:
            name = f"lakecert_staging_{uuid.uuid4().hex[:16]}"  # UC names staging tables; the name is not kept
            data = self._client.call(
                "POST", "/staging-tables", {"name": name, "catalog_name": self._catalog, "schema_name": self._schema}
            )
            if not isinstance(data, dict) or not isinstance(data.get("id"), str):
                raise UCServerError(f"not a StagingTableInfo: {data!r}")
            staged = StagingTable(data["id"], str(data.get("staging_location", "")))
        self._remember(staged.table_id, staged.location)
        return staged

    def register_table(self, name: str, table_id: str) -> TableInfo:
        with self._lock:
            location = self._locations.get(table_id)
        if location is None:
            raise InvalidRequest(f"unknown staging table {table_id!r}")
        body = {
            "name": name,
            "catalog_name": self._catalog,
            "schema_name": self._schema,
            "table_type": "MANAGED",
            "data_source_format": "DELTA",
            "columns": COLUMNS,
            "storage_location": location,
            "properties": {**TABLE_PROPERTIES, UC_TABLE_ID: table_id},
        }
        info = self._table_info(name, self._client.call("POST", "/tables", body))
        self._remember(info.table_id, info.location or location)
        return info

    def resolve(self, name: str) -> TableInfo:
        full = quote(f"{self._catalog}.{self._schema}.{name}", safe="")
        info = self._table_info(name, self._client.call("GET", f"/tables/{full}"))
        self._remember(info.table_id, info.location, overwrite=False)  # creation's location wins
        return info

    # -------------------------------------------------------------- commits

    def commit(
        self,
        table_id: str,
        version: int,
        *,
        staged_uri: str | None = None,
        inline_content: bytes | None = None,
        in_commit_timestamp: int | None = None,
        latest_published_version: int | None = None,
    ) -> None:
        if (staged_uri is None) == (inline_content is None):
            raise InvalidRequest("exactly one of staged_uri and inline_content is required")
        if in_commit_timestamp is None:
            raise InvalidRequest("UC's commits API needs the in-commit timestamp")
        if inline_content is not None and not self._inline:
            raise NotSupported("the server does not host inline commits")
        location = self._location(table_id, staged_uri)
        info: dict[str, Any] = {"version": version, "timestamp": in_commit_timestamp}
        if staged_uri is not None:
            if not staged_uri.startswith(location + STAGED_DIR):
                raise InvalidRequest(f"{staged_uri} is not in the table's {STAGED_DIR}")
            info["file_name"] = staged_uri[len(location + STAGED_DIR) :]
            info["file_size"] = self._size(staged_uri)
            info["file_modification_timestamp"] = int(time.time() * 1000)
        else:
            assert inline_content is not None
            info["inline_content"] = base64.b64encode(inline_content).decode("ascii")
        body: dict[str, Any] = {"table_id": table_id, "table_uri": location, "commit_info": info}
        if latest_published_version is not None:
            body["latest_backfilled_version"] = latest_published_version
        self._client.call("POST", "/delta/preview/commits", body)

    def _size(self, uri: str) -> int:
        """The staged file's size (UC requires a positive ``file_size``); 1 when it cannot be read."""
        if self._storage is None:
            return 1
        try:
            return max(1, len(self._storage.get(uri)))
        except (OSError, ValueError):
            return 1

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        location = self._location(table_id)
        start = 0 if start_version is None else start_version
        commits: list[RatifiedCommit] = []
        seen: set[int] = set()
        while True:
            body: dict[str, Any] = {"table_id": table_id, "table_uri": location, "start_version": start}
            if end_version is not None:
                body["end_version"] = end_version
            data = self._client.call("GET", "/delta/preview/commits", body)
            if not isinstance(data, dict) or not isinstance(data.get("latest_table_version"), int):
                raise UCServerError(f"not a DeltaGetCommitsResponse: {data!r}")
            latest = data["latest_table_version"]
            page = [self._ratified(location, c) for c in data.get("commits") or []]
            fresh = [c for c in page if c.version not in seen]
            commits += page
            seen |= {c.version for c in page}
            # UC pages: the answer may stop short of min(end, latest); ask again above what came.
            target = latest if end_version is None else min(end_version, latest)
            top = max((c.version for c in page), default=None)
            if not fresh or top is None or top >= target:
                return GetCommitsResponse(commits, latest)
            start = top + 1

    @staticmethod
    def _ratified(location: str, c: Any) -> RatifiedCommit:
        if not isinstance(c, dict) or not isinstance(c.get("version"), int):
            raise UCServerError(f"not a DeltaCommitInfo: {c!r}")
        ict = c.get("timestamp") if isinstance(c.get("timestamp"), int) else None
        inline = c.get("inline_content")
        if isinstance(inline, str):
            return RatifiedCommit(c["version"], None, base64.b64decode(inline), ict)
        return RatifiedCommit(c["version"], f"{location}{STAGED_DIR}{c.get('file_name')}", None, ict)

    def mark_published(self, table_id: str, version: int) -> None:
        location = self._location(table_id)
        body = {"table_id": table_id, "table_uri": location, "latest_backfilled_version": version}
        self._client.call("POST", "/delta/preview/commits", body)

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        if not self._policies:
            raise NotSupported("the server has no maintenance policies (UC's API has none)")
        data = self._client.call("GET", f"/lakecert/v1/tables/{quote(table_id, safe='')}/maintenance-policy")
        allowed = data.get("allowed") if isinstance(data, dict) else None
        if not isinstance(allowed, list):
            raise UCServerError(f"not a maintenance policy: {data!r}")
        return MaintenancePolicy(allowed=frozenset(str(a) for a in allowed))


class UCTarget:
    """A Unity Catalog compatible server (``lakecert serve``, UC OSS, ...) as a catalog target.

    Options (``targets: {uc: {options: {...}}}``): ``url`` (server root), ``token`` (bearer),
    ``catalog`` and ``schema`` (where test tables are created; they must exist), ``inline_commits``
    and ``maintenance_policies`` (true/false; default: what the server advertises),
    ``staging_tables`` (a list of ``{table_id, location}`` created beforehand, for catalogs that
    cannot create staging tables through the API), ``timeout_s``.
    """

    name = "uc"
    kind: Kind = "third-party"
    sides: frozenset[Side] = frozenset({"catalog"})

    def __init__(
        self,
        url: str = "http://127.0.0.1:8080",
        token: str | None = None,
        catalog: str = "unity",
        schema: str = "default",
        inline_commits: bool | None = None,
        maintenance_policies: bool | None = None,
        staging_tables: list[dict[str, str]] | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        self.url = url
        self._client = UCClient(url, token, timeout_s)
        self._catalog, self._schema = catalog, schema
        self._inline, self._policies = inline_commits, maintenance_policies
        self._staging = None
        if staging_tables is not None:
            if not all(isinstance(s, dict) and {"table_id", "location"} <= set(s) for s in staging_tables):
                raise ValueError("staging_tables: a list of {table_id, location}")
            self._staging = [StagingTable(str(s["table_id"]), str(s["location"])) for s in staging_tables]
        self._capabilities: dict[str, Any] | None = None

    def capabilities(self) -> dict[str, Any]:
        """lakecert's extensions the server advertises; ``{}`` for a plain UC server."""
        if self._capabilities is None:
            try:
                data = self._client.request("GET", "/lakecert/v1/capabilities")
            except UCHttpError as e:
                if e.status not in (404, 405):
                    raise_for(e)
                data = {}
            self._capabilities = data if isinstance(data, dict) else {}
        return self._capabilities

    def version(self) -> str:
        try:
            server = self.capabilities().get("server")
        except Exception:  # the version line must not break a run; the checks will say what is wrong
            server = None
        return f"{server or 'Unity Catalog API'} at {self.url}"

    def make_catalog(self, env: TargetEnv) -> Catalog:
        caps = self.capabilities()
        inline = bool(caps.get("inline_commits")) if self._inline is None else self._inline
        policies = bool(caps.get("maintenance_policy")) if self._policies is None else self._policies
        return UCCatalog(
            self._client,
            env.storage,
            catalog=self._catalog,
            schema=self._schema,
            inline_commits=inline,
            maintenance_policies=policies,
            staging_tables=self._staging,
        )

    def make_client(self, catalog: Catalog, env: TargetEnv) -> DeltaClient:
        raise NotImplementedError("the uc target is a catalog; its client side is not offered")

    def close(self) -> None:
        self._client.close()
