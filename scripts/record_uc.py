"""Record what a real Unity Catalog server answers, as test data (issue 27).

Run against a UC server you started yourself on loopback (for Unity Catalog OSS: built by hand from
its sources, for observation only; nothing that builds it belongs in this repository), with a
schema that has a managed storage root (docs/certify.md, "Unity Catalog OSS"):

    .venv/bin/python scripts/record_uc.py --upstream http://127.0.0.1:8080 --schema lakecert \\
        --server "Unity Catalog OSS 0.6.0" --out fixtures/uc-exchanges/uc-oss-0.6.0.json

A recording proxy (``observe.object_proxy``) sits between the clients and the server and keeps
every exchange: method, path, status, the answer's media type and both bodies. Through it run the
stock ``lakecert run --target uc`` (seeds 1-3), the interop profile with Delta Kernel and the
reference client through the server (``--catalog-target uc``), and a short session of UC's own
Python SDK (``make uc-sdk``). Exchanges that say the same thing (same client, endpoint, status,
media type and answer shape) are kept up to ``--per-shape`` times. ``tests/test_uc_replay.py``
feeds every recorded answer through the ``uc`` adapter.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from conformance.adapters.uc.wire import endpoint_of  # noqa: E402
from conformance.observe.object_proxy import Answer, Forward, RecordingProxy  # noqa: E402

SDK_PYTHON = REPO / ".cache" / "venvs" / "uc-sdk" / "bin" / "python"
BRIDGE = REPO / "tests" / "uc_sdk" / "bridge.py"  # one SDK call per JSON line (its own venv)


def _sdk_session(url: str, catalog: str, schema: str) -> list[dict[str, Any]]:
    """A short session of UC's Python SDK: a staging table, its table, a commit, the listing
    (through the SDK's get_commits, which sends a GET without its body)."""
    name = f"sdk_{uuid.uuid4().hex[:8]}"
    host = url + "/api/2.1/unity-catalog"

    def model(kind: str, **fields: Any) -> dict[str, Any]:
        return {"$model": kind, "fields": fields}

    staging = {
        "call": "TablesApi.create_staging_table",
        "args": [model("CreateStagingTable", name=name, catalog_name=catalog, schema_name=schema)],
    }
    proc = subprocess.Popen([str(SDK_PYTHON), str(BRIDGE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None

    def ask(request: dict[str, Any]) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"host": host, **request}) + "\n")
        proc.stdin.flush()
        answer: dict[str, Any] = json.loads(proc.stdout.readline())
        return {"request": request.get("call", "get_commits"), **answer}

    try:
        done = [ask(staging)]
        staged = done[0].get("value") or {}
        table_id, location = staged.get("id"), staged.get("staging_location")
        column = {
            "name": "id",
            "type_text": "long",
            "type_name": "LONG",
            "position": 0,
            "nullable": True,
            "type_json": '{"name":"id","type":"long","nullable":true,"metadata":{}}',
        }
        table = model(
            "CreateTable",
            name=name,
            catalog_name=catalog,
            schema_name=schema,
            table_type="MANAGED",
            data_source_format="DELTA",
            columns=[column],
            storage_location=location,
            properties={"delta.feature.catalogManaged": "supported", "io.unitycatalog.tableId": table_id},
        )
        done.append(ask({"call": "TablesApi.create_table", "args": [table]}))
        now = int(time.time() * 1000)
        info = {
            "version": 1,
            "timestamp": now,
            "file_name": f"{1:020d}.{uuid.uuid4()}.json",
            "file_size": 10,
            "file_modification_timestamp": now,
        }
        commit = model("DeltaCommit", table_id=table_id, table_uri=location, commit_info=info)
        done.append(ask({"call": "DeltaCommitsApi.commit", "args": [commit]}))
        fields = {"table_id": table_id, "table_uri": location, "start_version": 0}
        done.append(ask({"call": "DeltaCommitsApi.get_commits", "args": [model("DeltaGetCommits", **fields)]}))
        return done
    finally:
        proc.stdin.close()
        proc.wait()


def _client_of(headers: dict[str, str]) -> str:
    agent = next((v for k, v in headers.items() if k.lower() == "user-agent"), "")
    if agent.startswith("python-httpx"):
        return "lakecert uc adapter (httpx)"
    if agent.startswith("Java-http-client"):
        return "Delta Kernel / UC Java client"
    if "OpenAPI-Generator" in agent or "python" in agent.lower():
        return "UC Python SDK"
    return agent.split("/", 1)[0] or "unknown"


def _body(data: bytes) -> Any:
    try:
        return json.loads(data) if data else None
    except ValueError:
        return data.decode("utf-8", "replace")


def _shape(value: Any) -> Any:
    """What an answer looks like, without its values: the key that says two answers are alike."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


class Recorder:
    def __init__(self, per_shape: int) -> None:
        self.exchanges: list[dict[str, Any]] = []
        self._seen: Counter[str] = Counter()
        self._per_shape = per_shape
        self._lock = threading.Lock()

    def wrap(self, method: str, target: str, headers: dict[str, str], body: bytes, forward: Forward) -> Answer:
        status, answer_headers, data = forward()
        media = next((v for k, v in answer_headers if k.lower() == "content-type"), None)
        row = {
            "client": _client_of(headers),
            "method": method,
            "path": target,
            "endpoint": endpoint_of(target),
            "status": status,
            "media_type": media,
            "request": _body(body),
            "response": _body(data),
        }
        key = json.dumps([row["client"], method, row["endpoint"], status, media, _shape(row["response"])])
        with self._lock:
            self._seen[key] += 1
            if self._seen[key] <= self._per_shape:
                self.exchanges.append(row)
        return status, answer_headers, data


def _lakecert(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run([str(REPO / ".venv" / "bin" / "lakecert"), *args], env=env, capture_output=True, text=True)
    out = Path(args[args.index("--out") + 1])
    results = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else {}
    return {
        "command": "lakecert " + " ".join(args[: args.index("--out")]),
        "exit": proc.returncode,
        "verdict": results.get("verdict"),
        "counts": results.get("counts"),
        "failed": sorted(r for r, v in results.get("requirements", {}).items() if v["status"] in ("FAIL", "ERROR")),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", required=True, help="the UC server's root URL (loopback)")
    ap.add_argument("--catalog", default="unity")
    ap.add_argument("--schema", required=True, help="a schema with a managed storage root")
    ap.add_argument("--server", required=True, help="what the server is, for the record (name and version)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--per-shape", type=int, default=3)
    args = ap.parse_args()
    recorder = Recorder(args.per_shape)
    proxy = RecordingProxy(args.upstream, hold_timeout_s=None).start()
    proxy.around(lambda method, path: True, recorder.wrap)
    env = {
        **os.environ,
        "LAKECERT__targets__uc__options__url": proxy.url,
        "LAKECERT__targets__uc__options__catalog": args.catalog,
        "LAKECERT__targets__uc__options__schema": args.schema,
    }
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds.split(","):
            runs.append(_lakecert(["run", "--target", "uc", "--seed", seed, "--out", f"{tmp}/uc-{seed}"], env))
        for client in ("delta-kernel", "reference"):
            interop = ["run", "--target", client, "--catalog-target", "uc", "--profile", "delta-cm-interop"]
            runs.append(_lakecert([*interop, "--seed", "1", "--out", f"{tmp}/interop-{client}"], env))
    sdk: Any = "not run (make uc-sdk)"
    if SDK_PYTHON.exists():
        sdk = _sdk_session(proxy.url, args.catalog, args.schema)
    proxy.stop()
    data = {
        "server": args.server,
        "recorded": datetime.date.today().isoformat(),
        "how": "scripts/record_uc.py: lakecert's uc target (seeds " + args.seeds + "), the interop profile "
        "with delta-kernel and reference through the server, and UC's Python SDK; through a recording proxy",
        "runs": runs,
        "uc_python_sdk_session": sdk,
        "exchanges": recorder.exchanges,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(json.dumps({"runs": runs, "sdk": sdk, "exchanges": len(recorder.exchanges)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
