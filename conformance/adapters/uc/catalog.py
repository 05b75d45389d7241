"""Built-in target ``uc``: a catalog that speaks Unity Catalog's REST API, over HTTP.

Maps the ``Catalog`` contract onto UC OSS's API (``api/all.yaml`` of unitycatalog/unitycatalog):

| contract | UC API |
|---|---|
| ``create_staging_table`` | ``POST /staging-tables`` (or the next of the ``staging_tables`` option) |
| ``register_table`` | ``POST /tables`` (MANAGED, DELTA, ``storage_location`` = the staging location) |
| ``resolve`` | ``GET /tables/{catalog}.{schema}.{name}`` |
| ``drop_table`` (optional) | ``DELETE /tables/{catalog}.{schema}.{name}`` |
| ``commit`` | ``POST /delta/preview/commits`` with ``commit_info`` (+ ``latest_backfilled_version``) |
| ``get_commits`` | ``GET /delta/preview/commits`` (JSON body), following UC's paging |
| ``mark_published`` | ``POST /delta/preview/commits`` with only ``latest_backfilled_version`` |
| ``maintenance_policy`` | lakecert extension ``GET /lakecert/v1/tables/{id}/maintenance-policy`` |

Inline commits and maintenance policies are not part of UC's API: the adapter uses lakecert's
extensions when the server advertises them (``GET /lakecert/v1/capabilities``, as ``lakecert
serve`` does) and raises ``NotSupported`` otherwise. Statuses: 409 -> ``CommitConflict`` (with
the latest version when the error's ``details[].metadata.latest_table_version`` says it),
404 -> ``TableNotFound``, 403 and 429 -> ``CommitRejected``, other 4xx -> ``InvalidRequest``,
5xx -> ``UCServerError``. The adapter is safe to share between threads (``wire.UCClient``'s pooled
httpx client), and every exchange lands in the check's HTTP transcript.
"""

from __future__ import annotations

import base64
import threading
import time
import uuid
from typing import Any
from urllib.parse import quote

from conformance.adapters.uc.wire import (
    CATALOG_MANAGED_PROPS,
    COLUMNS,
    STAGED_DIR,
    TABLE_PROPERTIES,
    UC_TABLE_ID,
    UCClient,
    UCServerError,
)
from conformance.contract.delta import (
    GetCommitsResponse,
    InvalidRequest,
    MaintenancePolicy,
    NotSupported,
    RatifiedCommit,
    StagingTable,
    Storage,
    TableInfo,
)


def staged_file_name(location: str, staged_uri: str) -> str:
    """``file_name`` of UC's ``DeltaCommitInfo``: the path relative to the table's staging folder
    (``../00000000000000000003.<uuid>.json`` for a file directly in ``_delta_log/``)."""
    folder = (location + STAGED_DIR).rstrip("/").split("/")
    target = staged_uri.split("/")
    common = 0
    while common < min(len(folder), len(target) - 1) and folder[common] == target[common]:
        common += 1
    return "/".join([".."] * (len(folder) - common) + target[common:])


def check_proposal_args(staged_uri: str | None, inline_content: bytes | None, in_commit_timestamp: int | None) -> None:
    """What every UC commit API needs of a proposal before it is sent (``InvalidRequest`` if not)."""
    if (staged_uri is None) == (inline_content is None):
        raise InvalidRequest("exactly one of staged_uri and inline_content is required")
    if in_commit_timestamp is None:
        raise InvalidRequest("UC's commits API needs the in-commit timestamp")


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
        name_suffix: str = "",
    ) -> None:
        self._client = client
        # Appended to every table name in UC, so that runs against one long-lived server (same
        # seed, same check names) never collide; the checks see their own names.
        self._suffix = name_suffix
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
            "name": name + self._suffix,
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
        full = quote(f"{self._catalog}.{self._schema}.{name}{self._suffix}", safe="")
        info = self._table_info(name, self._client.call("GET", f"/tables/{full}"))
        self._remember(info.table_id, info.location, overwrite=False)  # creation's location wins
        return info

    def drop_table(self, name: str) -> None:
        """``DELETE /tables/{full_name}`` (the optional drop, ``contract.delta.DroppingCatalog``)."""
        full = quote(f"{self._catalog}.{self._schema}.{name}{self._suffix}", safe="")
        self._client.call("DELETE", f"/tables/{full}")

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
        check_proposal_args(staged_uri, inline_content, in_commit_timestamp)
        if inline_content is not None and not self._inline:
            raise NotSupported("the server does not host inline commits")
        location = self._location(table_id, staged_uri)
        info: dict[str, Any] = {"version": version, "timestamp": in_commit_timestamp}
        if staged_uri is not None:
            # Whatever the proposal names goes to the catalog, which alone may refuse it
            # (CAT-STAGED-IN-TABLE): a path outside the staging folder as UC's relative file_name.
            info["file_name"] = staged_file_name(location, staged_uri)
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
        except Exception:  # noqa: BLE001 - any failure (a URI on another scheme or bucket, no credentials for it)
            # means no size to give, never the catalog's answer: the catalog judges the proposal.
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
