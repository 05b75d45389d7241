"""Helpers to drive a served catalog in tests and demos: tables, staged commits, snapshots of state."""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from reference_impl.asgi_thread import ServerThread
from reference_impl.delta import actions as A
from reference_impl.delta import log_paths as P
from reference_impl.server.cli import Built, build, parse_serve_args
from reference_impl.server.deps import PREFIX
from reference_impl.storage.local import LocalStorage

API = PREFIX
COMMITS = f"{API}/delta/preview/commits"


def serve_args(*argv: str) -> argparse.Namespace:
    return parse_serve_args(list(argv))


@contextmanager
def served(*argv: str) -> Iterator[tuple[str, Built]]:
    """The app for ``lakecert serve ARGV`` on a loopback port, stopped and closed at the end."""
    built = build(serve_args(*argv))
    try:
        with ServerThread(built.app) as server:
            yield server.url, built
    finally:
        built.close()


@dataclass(frozen=True)
class Table:
    table_id: str
    location: str
    full_name: str


class Driver:
    """A well-behaved UC client for the tests: creates tables, stages and proposes commits."""

    def __init__(self, http: httpx.Client, storage: LocalStorage | None = None) -> None:
        self.http = http
        self.storage = storage or LocalStorage()

    def create_table(self, name: str | None = None, catalog: str = "unity", schema: str = "default") -> Table:
        name = name or f"t_{uuid.uuid4().hex[:12]}"
        names = {"name": name, "catalog_name": catalog, "schema_name": schema}
        staged = self.http.post(f"{API}/staging-tables", json=names)
        staged.raise_for_status()
        table_id, location = staged.json()["id"], staged.json()["staging_location"]
        self.storage.put(P.delta_uri(location, 0), self.version0(table_id))
        body = {
            **names,
            "table_type": "MANAGED",
            "data_source_format": "DELTA",
            "columns": [],
            "storage_location": location,
            "properties": {"io.unitycatalog.tableId": table_id, "delta.feature.catalogManaged": "supported"},
        }
        created = self.http.post(f"{API}/tables", json=body)
        created.raise_for_status()
        return Table(table_id, location, f"{catalog}.{schema}.{name}")

    @staticmethod
    def version0(table_id: str) -> bytes:
        return A.encode_commit(
            [
                A.commit_info_action(1, str(uuid.uuid4()), "CREATE TABLE"),
                A.protocol_action(),
                A.metadata_action(table_id, 1, A.default_configuration()),
            ]
        )

    @staticmethod
    def data_commit(version: int) -> bytes:
        return A.encode_commit([A.commit_info_action(1000 + version, str(uuid.uuid4()), "WRITE")])

    @staticmethod
    def protocol_commit(version: int) -> bytes:
        return A.encode_commit([A.commit_info_action(1000 + version, str(uuid.uuid4()), "ALTER"), A.protocol_action()])

    @staticmethod
    def metadata_commit(table_id: str, version: int) -> bytes:
        config = {**A.default_configuration(), "owner.team": "x"}
        action = A.metadata_action(table_id, 1000 + version, config)
        return A.encode_commit([A.commit_info_action(1000 + version, str(uuid.uuid4()), "SET TBLPROPERTIES"), action])

    def stage(self, table: Table, version: int, content: bytes | None = None) -> str:
        """Write a staged commit for ``version``; return its file name."""
        uri = P.staged_uri(table.location, version, str(uuid.uuid4()))
        self.storage.put(uri, content if content is not None else self.data_commit(version))
        return uri.rsplit("/", 1)[1]

    @staticmethod
    def commit_body(table: Table, version: int, file_name: str, **extra: Any) -> dict[str, Any]:
        info = {
            "version": version,
            "timestamp": 1000 + version,
            "file_name": file_name,
            "file_size": 100,
            "file_modification_timestamp": 1000 + version,
        }
        return {"table_id": table.table_id, "table_uri": table.location, "commit_info": info, **extra}

    def commit(self, table: Table, version: int, content: bytes | None = None, **extra: Any) -> httpx.Response:
        return self.http.post(
            COMMITS, json=self.commit_body(table, version, self.stage(table, version, content), **extra)
        )

    def publish(self, table: Table, upto: int) -> httpx.Response:
        """Copy every listed commit up to ``upto`` to ``_delta_log`` and report it (backfill)."""
        for c in self.listing(table)["commits"]:
            if c["version"] <= upto:
                staged = f"{table.location}/_delta_log/_staged_commits/{c['file_name']}"
                self.storage.put(P.delta_uri(table.location, c["version"]), self.storage.get(staged))
        body = {"table_id": table.table_id, "table_uri": table.location, "latest_backfilled_version": upto}
        return self.http.post(COMMITS, json=body)

    def listing(self, table: Table) -> dict[str, Any]:
        body = {"table_id": table.table_id, "table_uri": table.location, "start_version": 0}
        resp = self.http.request("GET", COMMITS, json=body)
        resp.raise_for_status()
        data: dict[str, Any] = resp.json()
        return data

    def state(self, *tables: Table) -> list[Any]:
        """What a refused request must not change: each table's listing and the tables of unity.default."""
        listed = self.http.get(f"{API}/tables", params={"catalog_name": "unity", "schema_name": "default"})
        listed.raise_for_status()
        names = sorted(t["name"] for t in listed.json()["tables"])
        return [names, *[self.listing(t) for t in tables]]
