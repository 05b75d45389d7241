"""Issue 31, rows 11 and 13: a well-behaved client's latency while other clients hold idle connections
or send 1,000 GETs at once, against `lakecert serve` (SQLite) and the standalone Iceberg REST server,
each in its own process on loopback.

``python bench/hardening_load.py [--burst 1000] [--rounds 5] [--idle 5000]``: prints one line per
figure (p50, p99 and max of the well-behaved client's sequential GETs, in ms; how many of the burst
answered 200). The well-behaved client sends one GET after another on its own keep-alive connection
for as long as the load lasts, from a process of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reference_impl.server.runner import ServerProcess  # noqa: E402
from reference_impl.storage.local import path_to_uri  # noqa: E402

UC_GET = "/api/2.1/unity-catalog/catalogs/unity"


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _well_behaved(base: str, path: str, started: Any, stop: Any, out: Any) -> None:
    """The well-behaved client, in a process of its own: on the load's event loop (1,000 connections
    of one client) its answers waited to be read, and the figure was the load client's, not the server's."""
    latencies: list[float] = []
    with httpx.Client(base_url=base, timeout=120) as client:
        client.get(path)  # connected before the load starts
        started.set()
        while not stop.is_set():
            t0 = time.perf_counter()
            answer = client.get(path)
            latencies.append(time.perf_counter() - t0)
            if answer.status_code != 200:
                out.put(f"well-behaved client answered {answer.status_code}: {answer.text[:200]}")
                return
    out.put(latencies)


async def _with_probe(base: str, path: str, load: Callable[[], Awaitable[str]]) -> str:
    ctx = multiprocessing.get_context("spawn")
    started, stop, out = ctx.Event(), ctx.Event(), ctx.Queue()
    probe = ctx.Process(target=_well_behaved, args=(base, path, started, stop, out))
    probe.start()
    await asyncio.to_thread(started.wait)
    outcome = await load()
    stop.set()
    got = await asyncio.to_thread(out.get)
    probe.join()
    if isinstance(got, str):
        raise RuntimeError(got)
    latencies = sorted(got)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return (
        f"{outcome}; well-behaved client: {len(latencies)} GETs, p50 {statistics.median(latencies) * 1000:.0f} ms,"
        f" p99 {p99 * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms"
    )


async def burst(base: str, path: str, count: int, rounds: int) -> str:
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:

        async def load() -> str:
            ok = total = 0
            for _ in range(rounds):
                answers = await asyncio.gather(*(client.get(path) for _ in range(count)), return_exceptions=True)
                total += len(answers)
                ok += sum(1 for a in answers if isinstance(a, httpx.Response) and a.status_code == 200)
            return f"{rounds} x {count} simultaneous GETs: {ok}/{total} answered 200"

        return await _with_probe(base, path, load)


async def idle(base: str, path: str, count: int, hold_s: float) -> str:
    host, port = base.removeprefix("http://").rsplit(":", 1)

    async def load() -> str:
        socks = []
        for _ in range(count):
            sock = socket.socket()
            sock.setblocking(False)
            try:
                await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
            except OSError:
                sock.close()
                continue
            socks.append(sock)
        await asyncio.sleep(hold_s)
        for sock in socks:
            sock.close()
        return f"{len(socks)} idle connections held {hold_s:g} s"

    return await _with_probe(base, path, load)


def _iceberg(tmp: Path) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "reference_impl.iceberg_rest", "--warehouse", (tmp / "wh").as_uri()]
    command += ["--database", str(tmp / "iceberg.sqlite"), "--port", "0"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    base = proc.stdout.readline().split(" at ", 1)[1].split()[0]
    # Its access log goes to stdout: drained, or the server blocks once the pipe is full.
    threading.Thread(target=proc.stdout.read, daemon=True).start()
    for _ in range(600):  # the line is printed just before uvicorn starts
        try:
            httpx.get(f"{base}/v1/config", timeout=5)
            break
        except httpx.TransportError:
            time.sleep(0.05)
    created = httpx.post(f"{base}/v1/lakecert/namespaces", json={"namespace": ["bench"]}, timeout=30)
    assert created.status_code == 200, created.text
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}]}
    table = {"name": "t", "schema": schema}
    created = httpx.post(f"{base}/v1/lakecert/namespaces/bench/tables", json=table, timeout=30)
    assert created.status_code == 200, created.text
    return proc, base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--idle", type=int, default=5000)
    parser.add_argument("--idle-hold", type=float, default=15.0)
    parser.add_argument("--iceberg-only", action="store_true")
    args = parser.parse_args()
    _raise_fd_limit()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if not args.iceberg_only:
            with ServerProcess(str(tmp / "uc.sqlite"), path_to_uri(tmp / "warehouse")) as uc:
                print("uc burst:", asyncio.run(burst(uc.url, UC_GET, args.burst, args.rounds)), flush=True)
                print("uc idle:", asyncio.run(idle(uc.url, UC_GET, args.idle, args.idle_hold)), flush=True)
        proc, base = _iceberg(tmp)
        try:
            path = "/v1/lakecert/namespaces/bench/tables/t"
            print("iceberg burst:", asyncio.run(burst(base, path, args.burst, args.rounds)), flush=True)
            print("iceberg idle:", asyncio.run(idle(base, path, args.idle, args.idle_hold)), flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=60)


if __name__ == "__main__":
    main()
