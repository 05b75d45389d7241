"""Benchmark: the `uc` target's wire client, per request, against `lakecert serve` on loopback.

The same sequence of requests (a table, then per round a staged commit proposed and the table's
commits listed) through ``UCClient``: the httpx client with its recording hooks, with no HTTP
transcript open and with one open (what a check pays), and optionally the previous client built
on ``http.client`` from another checkout (``--before /work/main``: its ``wire.py`` loaded by path).
Prints a Markdown table and the command. Not a test: nothing here asserts a time.

    .venv/bin/python bench/uc_wire.py [--rounds 300] [--repeat 3] [--before PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import shlex
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.adapters.uc.wire import UCClient
from conformance.observe.http_transcript import HttpLog, capture
from reference_impl.delta import log_paths as P
from reference_impl.storage.local import LocalStorage
from tests.tooling.server import Driver, served

Request = Callable[[str, str, dict[str, Any] | None], Any]


def _table(request: Request, storage: LocalStorage) -> tuple[str, str]:
    names = {"name": f"b_{uuid.uuid4().hex[:10]}", "catalog_name": "unity", "schema_name": "default"}
    staged = request("POST", "/staging-tables", names)
    table_id, location = staged["id"], staged["staging_location"]
    storage.put(P.delta_uri(location, 0), Driver.version0(table_id))
    body = {
        **names,
        "table_type": "MANAGED",
        "data_source_format": "DELTA",
        "columns": [],
        "storage_location": location,
        "properties": {"io.unitycatalog.tableId": table_id, "delta.feature.catalogManaged": "supported"},
    }
    request("POST", "/tables", body)
    return table_id, location


def workload(request: Request, rounds: int) -> tuple[int, float, float]:
    """Requests made, wall seconds and CPU seconds of this process (client and server threads: the
    server's share is the same for every client): per round one proposal and one listing
    (publishing every 5 versions, to stay under the server's cap of unpublished commits)."""
    storage = LocalStorage()
    table_id, location = _table(request, storage)
    made = 0
    started, cpu = time.perf_counter(), time.process_time()
    for version in range(1, rounds + 1):
        uri = P.staged_uri(location, version, str(uuid.uuid4()))
        storage.put(uri, Driver.data_commit(version))
        info = {
            "version": version,
            "timestamp": 1000 + version,
            "file_name": uri.rsplit("/", 1)[1],
            "file_size": 100,
            "file_modification_timestamp": 1000 + version,
        }
        body: dict[str, Any] = {"table_id": table_id, "table_uri": location, "commit_info": info}
        if version > 5:
            body["latest_backfilled_version"] = version - 5
            storage.put(P.delta_uri(location, version - 5), b"{}\n")
        request("POST", "/delta/preview/commits", body)
        request("GET", "/delta/preview/commits", {"table_id": table_id, "table_uri": location, "start_version": 0})
        made += 2
    return made, time.perf_counter() - started, time.process_time() - cpu


def _old_client(checkout: Path) -> Any:
    path = checkout / "conformance" / "adapters" / "uc" / "wire.py"
    spec = importlib.util.spec_from_file_location("lakecert_wire_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.UCClient


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a checkout whose http.client wire client to compare")
    args = parser.parse_args()
    rows: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp, served("--db", f"{tmp}/c.sqlite") as (url, _):
        clients: dict[str, Callable[[], tuple[Any, bool]]] = {
            "httpx, no transcript open": lambda: (UCClient(url), False),
            "httpx, transcript open": lambda: (UCClient(url), True),
        }
        if args.before:
            old = _old_client(args.before)
            clients["http.client (before)"] = lambda: (old(url), False)
        for _ in range(args.repeat):
            for name, make in clients.items():
                client, recording = make()
                log = HttpLog(limit=10**6)
                if recording:
                    with capture(log):
                        made, wall, cpu = workload(client.request, args.rounds)
                else:
                    made, wall, cpu = workload(client.request, args.rounds)
                client.close()
                rows.setdefault(name, []).append((wall / made * 1000, cpu / made * 1000))
    print(f"`{shlex.join([sys.executable, *sys.argv])}` on {platform.machine()}, Python {platform.python_version()}")
    print()
    print("| client | wall ms per request (median) | CPU ms per request, client + server (median) | runs (wall/CPU) |")
    print("|---|---|---|---|")
    for name, values in rows.items():
        runs = ", ".join(f"{w:.2f}/{c:.2f}" for w, c in values)
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {runs} |")


if __name__ == "__main__":
    main()
