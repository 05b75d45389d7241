"""The holding proxy: lakecert's schedule controller in front of any Iceberg REST catalog.

An engine is pointed at the proxy instead of the catalog. Every request is forwarded and recorded
(``RecordingProxy``); a commit request (``POST .../namespaces/{namespace}/tables/{table}``) goes
through ``ScheduleController.run``, the very code that holds commits inside lakecert's reference
catalog: a hold captures it before it is forwarded, the harness releases it when the schedule says,
and the upstream's answer (200, or 409 for a failed requirement...) is its outcome. So
``controller.hold(...)``, ``wait_held``, ``release`` and ``history()`` mean the same whichever
catalog applies the commits, and engine checks run unchanged through a third-party catalog.

A catalog may tell its clients to use another address (``uri`` in the ``/v1/config`` overrides, as
Nessie does): the proxy rewrites the upstream's address to its own in that answer, so the engine
keeps talking through it.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote, urlsplit

from pydantic import TypeAdapter, ValidationError
from pyiceberg.table.update import TableRequirement, TableUpdate

from conformance.observe.object_proxy import Answer, Forward, Headers, RecordingProxy
from reference_impl.iceberg_rest import errors
from reference_impl.iceberg_rest.controller import (
    WRITER_HEADER,
    CommitArrival,
    CommitOutcome,
    ScheduleController,
    writer_of,
)

TABLE_COMMIT = re.compile(r"/namespaces/(?P<namespace>[^/]+)/tables/(?P<table>[^/]+)$")
CONFIG = re.compile(r"/v1/config$")
_REQUIREMENT: TypeAdapter[TableRequirement] = TypeAdapter(TableRequirement)
_UPDATE: TypeAdapter[TableUpdate] = TypeAdapter(TableUpdate)


def is_table_commit(method: str, path: str) -> bool:
    return method == "POST" and TABLE_COMMIT.search(path) is not None


def is_config(method: str, path: str) -> bool:
    return method == "GET" and CONFIG.search(path) is not None


def _parsed(adapter: TypeAdapter[Any], items: Any) -> tuple[Any, ...]:
    # What pyiceberg does not model (a newer update action) is left out of the arrival, not refused:
    # the proxy only needs the writer and the requirements; the upstream judges the request.
    found = []
    for item in items if isinstance(items, list) else []:
        try:
            found.append(adapter.validate_python(item))
        except (ValidationError, ValueError, TypeError):
            continue
    return tuple(found)


def arrival_of(path: str, headers: dict[str, str], body: bytes) -> CommitArrival:
    """The commit request as the controller sees it: table, writer, requirements, updates."""
    match = TABLE_COMMIT.search(path)
    assert match is not None
    namespace = tuple(unquote(match.group("namespace")).split("\x1f"))
    try:
        document = json.loads(body or b"{}")
    except ValueError:
        document = {}
    document = document if isinstance(document, dict) else {}
    requirements = _parsed(_REQUIREMENT, document.get("requirements"))
    updates = _parsed(_UPDATE, document.get("updates"))
    header = next((v for k, v in headers.items() if k.lower() == WRITER_HEADER.lower()), None)
    return CommitArrival(namespace, unquote(match.group("table")), writer_of(header, updates), requirements, updates)


def answer_outcome(answer: Answer) -> CommitOutcome:
    """What the upstream answered, in the controller's terms."""
    status, _, data = answer
    try:
        body = json.loads(data) if data else {}
    except ValueError:
        body = {}
    body = body if isinstance(body, dict) else {}
    if status == 200:
        metadata = body.get("metadata")
        current = metadata.get("current-snapshot-id") if isinstance(metadata, dict) else None
        return CommitOutcome(200, None, body.get("metadata-location"), current)
    error = body.get("error")
    return CommitOutcome(status, error.get("type") if isinstance(error, dict) else None)


class HoldingCatalogProxy:
    """``HoldingCatalogProxy(upstream_uri).start()``; point the engine at ``uri``. ``controller``
    holds and records its commits; ``proxy`` has the record of every request."""

    def __init__(self, upstream_uri: str, *, controller: ScheduleController | None = None) -> None:
        parts = urlsplit(upstream_uri.rstrip("/"))
        self._upstream_origin = f"{parts.scheme}://{parts.netloc}"
        self._upstream_path = parts.path
        self.controller = controller or ScheduleController()
        # Commits wait in the controller, which has its own timeouts; the proxy's own holds are unused.
        self.proxy = RecordingProxy(upstream_uri, hold_timeout_s=None)
        self.proxy.around(is_table_commit, self._commit)
        self.proxy.around(is_config, self._config)

    @property
    def uri(self) -> str:
        """The catalog's URI through the proxy (the upstream's path on the proxy's address)."""
        return self.proxy.url + self._upstream_path

    def start(self) -> HoldingCatalogProxy:
        self.proxy.start()
        return self

    def stop(self) -> None:
        self.controller.close()  # nothing stays held
        self.proxy.stop()

    def _commit(self, method: str, target: str, headers: dict[str, str], body: bytes, forward: Forward) -> Answer:
        arrival = arrival_of(target.partition("?")[0], headers, body)
        try:
            return self.controller.run(arrival, forward, answer_outcome)
        except errors.IcebergApiError as e:  # the hold expired or was cancelled: nothing was forwarded
            return e.code, [("Content-Type", "application/json")], e.body().encode()

    def _config(self, method: str, target: str, headers: dict[str, str], body: bytes, forward: Forward) -> Answer:
        status, answer_headers, data = forward()
        if status == 200:
            data = data.replace(self._upstream_origin.encode(), self.proxy.url.encode())
        kept: Headers = [(k, v) for k, v in answer_headers if k.lower() != "content-length"]
        return status, kept, data
