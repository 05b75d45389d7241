"""The ``uc`` target over UC's Delta REST API, ``/delta/v1`` (option ``api: v1``).

Maps the ``Catalog`` contract onto the table API of UC OSS 0.6.0's ``api/delta.yaml`` and
``spec/protocols/ManagedTablesSpec.md`` (paths under ``/api/2.1/unity-catalog``; ``{schema}`` is
``/delta/v1/catalogs/{catalog}/schemas/{schema}``, ``{table}`` is ``{schema}/tables/{name}``):

| contract | UC ``/delta/v1`` API |
|---|---|
| (once, first) | ``GET /delta/v1/config?catalog=..&protocol-versions=1.0``: the endpoints the server offers |
| ``create_staging_table`` | ``POST {schema}/staging-tables`` (or the next of the ``staging_tables`` option) |
| ``register_table`` | ``POST {schema}/tables`` (MANAGED, ``location`` = the staging location, protocol and |
| | properties: version 0's, plus what the staging answer requires) |
| ``resolve`` | ``GET {table}`` (``metadata.table-uuid``, ``metadata.location``, ``metadata.properties``) |
| ``drop_table`` (optional) | ``DELETE {table}`` when ``config`` lists it, else UC's ``DELETE /tables/{full_name}`` |
| ``commit`` | ``POST {table}``: ``assert-table-uuid`` + ``add-commit`` (+ ``set-latest-backfilled-version``) |
| ``get_commits`` | ``GET {table}``: ``commits`` and ``latest-table-version``, cut to [start, end] here |
| ``mark_published`` | ``POST {table}``: ``assert-table-uuid`` + ``set-latest-backfilled-version`` |
| ``maintenance_policy`` | lakecert extension, as with the preview API (``UCCatalog``) |

The API names tables, not ids: the adapter keeps the name of every table id it registered or
resolved, and a commit, listing or publication report for an id it never saw under a name is
``TableNotFound`` without a request. Every request that changes a table asserts its id
(``assert-table-uuid``); a name that now holds another table answers 409
``UpdateRequirementConflictException``, which is ``TableNotFound`` here, not a lost race. The API
has no version range: ``get_commits`` reads the whole (bounded, newest-first) list and keeps
[start, end]. Inline commits are not part of this API ("staged commits only"): ``commit`` with
``inline_content`` raises ``NotSupported`` whatever the server advertises. Statuses map as in
``wire.raise_for``; UC's 409 carries no latest version (``CommitConflict.latest_version`` is None).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, NoReturn
from urllib.parse import quote, urlencode

from conformance.adapters.uc.catalog import UCCatalog, check_proposal_args, staged_file_name
from conformance.adapters.uc.wire import (
    CATALOG_MANAGED_PROPS,
    COLUMNS,
    STAGED_DIR,
    UC_TABLE_ID,
    UCClient,
    UCHttpError,
    UCServerError,
    raise_for,
)
from conformance.contract.delta import (
    GetCommitsResponse,
    InvalidRequest,
    NotSupported,
    RatifiedCommit,
    StagingTable,
    Storage,
    TableInfo,
    TableNotFound,
)
from reference_impl.delta.log_paths import delta_uri

V1 = "/delta/v1"
PROTOCOL_VERSIONS = "1.0"
DELETE_TABLE = "DELETE /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}"
# What lakecert's tables are at least (the preview adapter's TABLE_PROPERTIES, as a protocol).
BASE_PROTOCOL: dict[str, Any] = {
    "min-reader-version": 3,
    "min-writer-version": 7,
    "reader-features": ["catalogManaged", "vacuumProtocolCheck"],
    "writer-features": ["catalogManaged", "inCommitTimestamp", "vacuumProtocolCheck"],
}
BASE_PROPERTIES = {"delta.enableInCommitTimestamps": "true"}
# The suite's columns as a Delta struct (wire.COLUMNS keeps each field's Delta JSON).
STRUCT: dict[str, Any] = {"type": "struct", "fields": [json.loads(c["type_json"]) for c in COLUMNS]}


def _merged(*lists: Any) -> list[str]:
    """The strings of ``lists`` in first-seen order, once each."""
    return list(dict.fromkeys(str(x) for listed in lists if isinstance(listed, list) for x in listed))


class UCDeltaV1Catalog(UCCatalog):
    """``contract.Catalog`` over UC's ``/delta/v1`` API; helpers and options as ``UCCatalog``."""

    def __init__(
        self,
        client: UCClient,
        storage: Storage | None,
        *,
        catalog: str,
        schema: str,
        inline_commits: bool = False,
        maintenance_policies: bool,
        staging_tables: list[StagingTable] | None = None,
        name_suffix: str = "",
    ) -> None:
        # ``inline_commits`` is taken for the same signature, and ignored: the API has none.
        del inline_commits
        super().__init__(
            client,
            storage,
            catalog=catalog,
            schema=schema,
            inline_commits=False,
            maintenance_policies=maintenance_policies,
            staging_tables=staging_tables,
            name_suffix=name_suffix,
        )
        self._names: dict[str, str] = {}  # table id -> the table's name in UC (suffixed)
        self._required: dict[str, dict[str, Any]] = {}  # staging table id -> its staging answer
        self._endpoints: frozenset[str] | None = None

    # -------------------------------------------------------------- helpers

    def _schema_path(self) -> str:
        return f"{V1}/catalogs/{quote(self._catalog, safe='')}/schemas/{quote(self._schema, safe='')}"

    def _table_path(self, uc_name: str) -> str:
        return f"{self._schema_path()}/tables/{quote(uc_name, safe='')}"

    def _config(self) -> frozenset[str]:
        """``GET /delta/v1/config`` once (the API's bootstrap): the endpoints the server offers."""
        with self._lock:
            if self._endpoints is not None:
                return self._endpoints
        query = urlencode({"catalog": self._catalog, "protocol-versions": PROTOCOL_VERSIONS})
        try:
            data = self._client.request("GET", f"{V1}/config?{query}")
        except UCHttpError as e:
            if e.status in (401, 403) or e.status >= 500:
                raise_for(e)
            raise UCServerError(
                f"GET {V1}/config answered {e.message}: the server offers no /delta/v1 API for catalog"
                f" {self._catalog!r} (the target option api: preview drives UC's preview commits API)"
            ) from e
        endpoints = data.get("endpoints") if isinstance(data, dict) else None
        if not isinstance(endpoints, list):
            raise UCServerError(f"not a DeltaCatalogConfig: {data!r}")
        with self._lock:
            self._endpoints = frozenset(str(e) for e in endpoints)
            return self._endpoints

    def _name_of(self, table_id: str) -> str:
        with self._lock:
            name = self._names.get(table_id)
        if name is None:
            raise TableNotFound(f"no table with id {table_id!r} was registered or resolved by name here")
        return name

    def _known(self, table_id: str, uc_name: str, location: str, *, overwrite: bool) -> None:
        with self._lock:
            self._names[table_id] = uc_name
        self._remember(table_id, location, overwrite=overwrite)

    def _v1_table_info(self, name: str, data: Any) -> TableInfo:
        meta = data.get("metadata") if isinstance(data, dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get("table-uuid"), str):
            raise UCServerError(f"not a DeltaLoadTableResponse: {data!r}")
        props = meta.get("properties") or {}
        managed = isinstance(props, dict) and any(props.get(k) == "supported" for k in CATALOG_MANAGED_PROPS)
        return TableInfo(meta["table-uuid"], name, str(meta.get("location", "")), managed)

    def _version0(self, location: str) -> tuple[dict[str, Any], dict[str, str], int | None]:
        """Protocol, configuration and in-commit timestamp of the table's version 0, as far as
        storage lets the adapter read them (the create request declares what the log says)."""
        protocol: dict[str, Any] = {}
        config: dict[str, str] = {}
        ict = None
        if self._storage is None:
            return protocol, config, ict
        try:
            lines = self._storage.get(delta_uri(location, 0)).decode("utf-8").splitlines()
            actions = [json.loads(line) for line in lines if line.strip()]
        except (OSError, ValueError):
            return protocol, config, ict
        for action in actions:
            if not isinstance(action, dict):
                continue
            p, m, c = action.get("protocol"), action.get("metaData"), action.get("commitInfo")
            if isinstance(p, dict):
                protocol = {
                    "min-reader-version": p.get("minReaderVersion"),
                    "min-writer-version": p.get("minWriterVersion"),
                    "reader-features": p.get("readerFeatures"),
                    "writer-features": p.get("writerFeatures"),
                }
            if isinstance(m, dict) and isinstance(m.get("configuration"), dict):
                config = {str(k): str(v) for k, v in m["configuration"].items()}
            if isinstance(c, dict) and isinstance(c.get("inCommitTimestamp"), int):
                ict = c["inCommitTimestamp"]
        return protocol, config, ict

    def _update(self, table_id: str, updates: list[dict[str, Any]]) -> None:
        """``POST {table}`` with ``assert-table-uuid``; the answer (the loaded table) is not read."""
        uc_name = self._name_of(table_id)
        body = {"requirements": [{"type": "assert-table-uuid", "uuid": table_id}], "updates": updates}
        try:
            self._client.request("POST", self._table_path(uc_name), body)
        except UCHttpError as e:
            self._raise_v1(e, table_id, uc_name)

    @staticmethod
    def _raise_v1(error: UCHttpError, table_id: str, uc_name: str) -> NoReturn:
        inner = error.body.get("error") if isinstance(error.body, dict) else None
        if (
            error.status == 409
            and isinstance(inner, dict)
            and inner.get("type") == "UpdateRequirementConflictException"
        ):
            raise TableNotFound(f"{uc_name} no longer holds table {table_id}: {error.message}") from error
        raise_for(error)

    # -------------------------------------------------------------- tables

    def create_staging_table(self) -> StagingTable:
        self._config()
        if self._pool is not None:
            return super().create_staging_table()  # the pre-created ones: no request
        name = f"lakecert_staging_{uuid.uuid4().hex[:16]}"  # not reserved by UC; the table gets its own
        data = self._client.call("POST", f"{self._schema_path()}/staging-tables", {"name": name})
        if not isinstance(data, dict) or not isinstance(data.get("table-id"), str):
            raise UCServerError(f"not a DeltaStagingTableResponse: {data!r}")
        staged = StagingTable(data["table-id"], str(data.get("location", "")))
        with self._lock:
            self._required[staged.table_id] = data
        self._remember(staged.table_id, staged.location)
        return staged

    def register_table(self, name: str, table_id: str) -> TableInfo:
        self._config()
        with self._lock:
            location = self._locations.get(table_id)
            staged = self._required.get(table_id, {})
        if location is None:
            raise InvalidRequest(f"unknown staging table {table_id!r}")
        logged, config, ict = self._version0(location)
        required = staged.get("required-protocol")
        needed = staged.get("required-properties")
        protocols: list[dict[str, Any]] = [BASE_PROTOCOL, logged, required if isinstance(required, dict) else {}]
        readers = _merged(*(p.get("reader-features") for p in protocols))
        writers = _merged(readers, *(p.get("writer-features") for p in protocols))
        versions = {
            key: max(p[key] for p in protocols if isinstance(p.get(key), int))
            for key in ("min-reader-version", "min-writer-version")
        }
        properties = {
            **config,
            **BASE_PROPERTIES,
            **{str(k): str(v) for k, v in (needed if isinstance(needed, dict) else {}).items() if v is not None},
            UC_TABLE_ID: table_id,
        }
        body = {
            "name": name + self._suffix,
            "location": location,
            "table-type": "MANAGED",
            "columns": STRUCT,
            "protocol": {**versions, "reader-features": readers, "writer-features": writers},
            "properties": properties,
            "last-commit-timestamp-ms": ict if ict is not None else int(time.time() * 1000),
        }
        info = self._v1_table_info(name, self._client.call("POST", f"{self._schema_path()}/tables", body))
        self._known(info.table_id, name + self._suffix, info.location or location, overwrite=True)
        return info

    def resolve(self, name: str) -> TableInfo:
        self._config()
        info = self._v1_table_info(name, self._client.call("GET", self._table_path(name + self._suffix)))
        self._known(info.table_id, name + self._suffix, info.location, overwrite=False)  # creation's location wins
        return info

    def drop_table(self, name: str) -> None:
        """``DELETE {table}`` where the server's config offers it, else UC's ``DELETE /tables/..``."""
        if DELETE_TABLE not in self._config():
            super().drop_table(name)
            return
        self._client.call("DELETE", self._table_path(name + self._suffix))

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
        if staged_uri is None:
            raise NotSupported("UC's /delta/v1 API carries staged commits only (no inline commits)")
        self._config()
        location = self._location(table_id, staged_uri)
        # Whatever the proposal names goes to the catalog, which alone may refuse it
        # (CAT-STAGED-IN-TABLE): a path outside the staging folder as UC's relative file-name.
        commit = {
            "version": version,
            "timestamp": in_commit_timestamp,
            "file-name": staged_file_name(location, staged_uri),
            "file-size": self._size(staged_uri),
            "file-modification-timestamp": int(time.time() * 1000),
        }
        updates: list[dict[str, Any]] = [{"action": "add-commit", "commit": commit}]
        if latest_published_version is not None:
            updates.append(
                {"action": "set-latest-backfilled-version", "latest-published-version": latest_published_version}
            )
        self._update(table_id, updates)

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        self._config()
        uc_name = self._name_of(table_id)
        try:
            data = self._client.request("GET", self._table_path(uc_name))
        except UCHttpError as e:
            self._raise_v1(e, table_id, uc_name)
        if self._v1_table_info(uc_name, data).table_id != table_id:
            raise TableNotFound(f"{uc_name} no longer holds table {table_id}")
        latest = data.get("latest-table-version")
        listed = data.get("commits") or []
        if not isinstance(latest, int) or not isinstance(listed, list):
            raise UCServerError(f"not a DeltaLoadTableResponse of a managed table: {data!r}")
        location = self._location(table_id)
        start = 0 if start_version is None else start_version
        commits = [self._v1_ratified(location, c) for c in listed]
        kept = [c for c in commits if c.version >= start and (end_version is None or c.version <= end_version)]
        return GetCommitsResponse(kept, latest)

    @staticmethod
    def _v1_ratified(location: str, c: Any) -> RatifiedCommit:
        if not isinstance(c, dict) or not isinstance(c.get("version"), int) or not isinstance(c.get("file-name"), str):
            raise UCServerError(f"not a DeltaCommit: {c!r}")
        ict = c.get("timestamp") if isinstance(c.get("timestamp"), int) else None
        # An empty file-name names no file (lakecert serve's answer for a commit whose content it
        # bound, which this API cannot carry): listed without content, for the checks to judge.
        staged = f"{location}{STAGED_DIR}{c['file-name']}" if c["file-name"] else None
        return RatifiedCommit(c["version"], staged, None, ict)

    def mark_published(self, table_id: str, version: int) -> None:
        self._config()
        self._update(table_id, [{"action": "set-latest-backfilled-version", "latest-published-version": version}])
