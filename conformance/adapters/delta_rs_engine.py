"""Built-in target ``delta-rs-engine``: delta-rs (the ``deltalake`` package) as the Delta engine of
profile ``delta-row-conflicts``.

Tables are path-based, on moto's S3 server (conditional writes: moto honours ``If-None-Match: *``)
reached through ``RecordingProxy``, which holds each writer's PUT of ``_delta_log/<version>.json``
until the schedule releases it. Each writer signs with its own access key id, which is how the
proxy tells writers apart. delta-rs then finds its version taken or not, runs its own conflict
checker and retries or fails, exactly as against a real store.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from importlib.metadata import distributions
from importlib.metadata import version as dist_version
from typing import Any

from conformance.adapters.delta_rs_worker import serve
from conformance.artifacts.pypi import installed
from conformance.contract.delta import AdapterBroken
from conformance.contract.delta_engine import DeltaSetup, NotSupported
from conformance.contract.iceberg import CommitResult, Operation, TableRead
from conformance.contract.target import Kind, Side, TargetBase, TargetEnv
from conformance.observe.object_proxy import RecordingProxy

VERSION_ENV = "LAKECERT_DELTALAKE_VERSION"
DIST = "deltalake"
BUCKET = "lakecert-delta-rs"


CONFLICT_ERRORS = frozenset({"CommitFailedError"})  # delta-rs's conflict checker said no


# Raised by Python itself when lakecert's worker calls an API the deltalake release under test does
# not have (another release: a renamed argument, a moved function): lakecert's fault, never the
# engine's refusal of a table.
HARNESS_ERRORS = frozenset({"AttributeError", "TypeError", "NameError", "ImportError", "ModuleNotFoundError"})


class RemoteError(Exception):
    """A delta-rs call failed in its worker for a reason other than a conflict (``kind``: the
    exception's class name)."""

    def __init__(self, kind: str, text: str) -> None:
        super().__init__(f"{kind}: {text}")
        self.kind = kind

    @property
    def harness(self) -> bool:
        return self.kind in HARNESS_ERRORS


class _Worker:
    """A process running ``delta_rs_worker.serve``."""

    def __init__(self, name: str, site: str | None = None) -> None:
        ctx = multiprocessing.get_context("spawn")  # no fork of this process's threads (moto, proxy)
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=serve, args=(child, site), name=f"delta-rs-{name}", daemon=True)
        self.process.start()

    def receive(self, timeout: float) -> tuple[Any, ...]:
        if not self.conn.poll(timeout):
            raise TimeoutError(f"{self.process.name} did not answer within {timeout}s")
        reply: tuple[Any, ...] = self.conn.recv()
        return reply

    def call(self, timeout: float, *msg: object) -> Any:
        self.conn.send(msg)
        reply = self.receive(timeout)
        if reply[0] == "error":
            raise RemoteError(str(reply[1]), str(reply[2]))
        return reply[1]

    def stop(self) -> None:
        if self.process.is_alive():
            self.conn.send(("stop",))
            self.process.join(10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(10)


class DeltaRsHeldCommit:
    """A delta-rs operation running in its writer's process, its commit PUT held in the proxy."""

    def __init__(self, engine: DeltaRsEngine, client: str, worker: _Worker, start: int, since: int) -> None:
        self._engine = engine
        self._client = client
        self._worker = worker
        self._start = start
        self._since = since  # the proxy log's length when the operation began
        self._result: CommitResult | None = None

    @property
    def start_version(self) -> int:
        return self._start

    def release(self) -> CommitResult:
        if self._result is None:
            self._engine.proxy.release(self._client)
            self._result = self._judge(self._worker.receive(self._engine.hold_timeout_s))
        return self._result

    def _judge(self, reply: tuple[Any, ...]) -> CommitResult:
        """What the store saw decides the version: the commit file PUTs of this writer that succeeded."""
        written = [
            r.commit_version
            for r in self._engine.proxy.events(self._client)
            if r.seq >= self._since and r.commit_version is not None and 200 <= r.status < 300
        ]
        if reply[0] == "error" and reply[1] not in CONFLICT_ERRORS:
            raise RemoteError(str(reply[1]), str(reply[2]))
        if written:  # it wrote a version (even if it then reported a failure): committed there
            return CommitResult(True, written[-1], "" if reply[0] == "ok" else f"{reply[1]} after writing")
        if reply[0] == "error":
            return CommitResult(False, None, f"{reply[1]}: {str(reply[2]).splitlines()[0]}")
        return CommitResult(False, None, "nothing to commit: no version written")


class DeltaRsEngine:
    """One moto server and one recording proxy for the run; a worker process per writer."""

    def __init__(self, hold_timeout_s: float = 120.0, site: str | None = None) -> None:
        import boto3
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's access log
        self.hold_timeout_s = hold_timeout_s
        self._site = site  # the release under test, when it is not lakecert's own (``artifacts.pypi``)
        self._moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._moto.start()
        host, port = self._moto.get_host_and_port()
        upstream = f"http://{host}:{port}"
        boto3.client(
            "s3", endpoint_url=upstream, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="x"
        ).create_bucket(Bucket=BUCKET)
        # No 503 from the proxy: begin() and release() guard every wait with hold_timeout_s.
        self.proxy = RecordingProxy(upstream, hold_timeout_s=None).start()
        self._workers: dict[str, _Worker] = {}

    def _worker(self, client: str) -> _Worker:
        if client not in self._workers:
            self._workers[client] = _Worker(client, self._site)
        return self._workers[client]

    def observed_version(self) -> str:
        """The deltalake version the engine's processes really import."""
        return str(self._worker("setup").call(self.hold_timeout_s, "version"))

    def _options(self, client: str) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.proxy.url,
            "AWS_ALLOW_HTTP": "true",
            "AWS_ACCESS_KEY_ID": client,  # how the proxy tells writers apart
            "AWS_SECRET_ACCESS_KEY": "lakecert",
            "AWS_REGION": "us-east-1",
            "AWS_CONDITIONAL_PUT": "etag",  # commit files written with If-None-Match: *
        }

    def _uri(self, table: str) -> str:
        return f"s3://{BUCKET}/{table}"

    def create_table(self, name: str, setup: DeltaSetup) -> TableRead:
        if setup.catalog_managed:  # the DELTA_RS_1_6 preset's catalog_managed=False
            # Observed with 1.6.6: a table property delta.feature.catalogManaged is refused at
            # creation ("Error parsing property"); there is no catalog commit path either.
            raise NotSupported("delta-rs 1.6 refuses the catalogManaged table feature: path-based tables only")
        config = {"delta.isolationLevel": setup.isolation.value}
        if setup.deletion_vectors:
            config["delta.enableDeletionVectors"] = "true"
        if setup.row_tracking:
            config["delta.enableRowTracking"] = "true"
        files = [list(rows) for rows in setup.data_files]
        try:
            self._worker("setup").call(
                self.hold_timeout_s, "create", self._uri(name), self._options("setup"), config, files
            )
        except RemoteError as e:
            if e.harness:  # lakecert's call does not fit this release: an ERROR, not a refusal
                raise AdapterBroken(f"lakecert's delta-rs worker does not fit this deltalake release: {e}") from e
            raise NotSupported(f"delta-rs refuses a table with {config}: {e}") from e
        try:
            return self.read(name)
        except RemoteError as e:  # deletion vectors: delta-rs writes the table but cannot read it
            if e.harness:
                raise AdapterBroken(f"lakecert's delta-rs worker does not fit this deltalake release: {e}") from e
            raise NotSupported(f"delta-rs cannot read back a table with {config}: {e}") from e

    def begin(self, table: str, writer: int, op: Operation) -> DeltaRsHeldCommit:
        client = f"writer{writer}"
        worker = self._worker(client)
        since = len(self.proxy.events())
        self.proxy.arm(client)
        worker.conn.send(("begin", self._uri(table), self._options(client), op))
        started = worker.receive(self.hold_timeout_s)
        if started[0] != "started":
            raise RemoteError(str(started[1]), str(started[2]))
        held = DeltaRsHeldCommit(self, client, worker, int(started[1]), since)
        # Held at the commit PUT, or ended without one (nothing to commit, or an error).
        for _ in range(int(self.hold_timeout_s * 20)):
            if self.proxy.wait_held(client, 0.05) or worker.conn.poll():
                return held
        raise TimeoutError(f"{client}: delta-rs did not reach its commit within {self.hold_timeout_s}s")

    def read(self, table: str, version: int | None = None) -> TableRead:
        v, rows = self._worker("setup").call(
            self.hold_timeout_s, "read", self._uri(table), self._options("reader"), version
        )
        return TableRead(v, tuple(tuple(r) for r in rows))

    def close(self) -> None:
        self.proxy.stop()  # opens every gate first
        for w in self._workers.values():
            w.stop()
        self._moto.stop()


class DeltaRsEngineTarget(TargetBase):
    """Options (``targets: {delta-rs-engine: {options: {...}}}``): ``version`` (the ``deltalake``
    release under test; also from ``LAKECERT_DELTALAKE_VERSION``; default the one installed beside
    lakecert; another is installed from PyPI on first use into lakecert's version cache and imported
    by the engine's processes only) and ``hold_timeout_s`` (hang guard per held step)."""

    name = "delta-rs-engine"
    kind: Kind = "third-party"
    sides: frozenset[Side] = frozenset({"engine"})
    profiles: frozenset[str] | None = frozenset({"delta-row-conflicts"})
    delta_exhaustive = False  # seconds per schedule: the directed checks only, by default
    # The model's preset of delta-rs's conflict checker as observed (conformance/model/delta/presets.py):
    # the checks the model predicts to fail run first, one engine run per class of equivalent schedules.
    model_preset: str | None = "delta-rs-1.6"

    def __init__(self, version: str | None = None, hold_timeout_s: float = 120.0, exhaustive: bool = False) -> None:
        wanted = str(version or os.environ.get(VERSION_ENV) or dist_version("deltalake"))
        self._site: str | None = None
        if wanted != dist_version("deltalake"):  # fetched now if need be: a release PyPI lacks is exit 2
            self._site = str(installed(DIST, wanted))
        self.hold_timeout_s = hold_timeout_s
        self.delta_exhaustive = exhaustive
        self._seen: str | None = None  # what the engine's processes import, once one started

    def observed_versions(self) -> dict[str, str]:
        """Asked of the engine's own process (``deltalake.__version__``); before it started, read
        from the installed release's metadata."""
        if self._seen is not None:
            return {DIST: self._seen}
        found = [d.version for d in distributions(name=DIST, path=[self._site])] if self._site else []
        return {DIST: found[0] if found else dist_version(DIST)}

    def version(self) -> str:
        return f"deltalake {self.observed_versions()[DIST]}"

    def make_delta_engine(self, env: TargetEnv) -> DeltaRsEngine:
        engine = DeltaRsEngine(self.hold_timeout_s, self._site)
        self._seen = engine.observed_version()
        return engine

    def make_catalog(self, env: TargetEnv) -> object:
        raise NotImplementedError("delta-rs-engine has only the engine side")

    def make_client(self, catalog: object, env: TargetEnv) -> object:
        raise NotImplementedError("delta-rs-engine has only the engine side")

    def close(self) -> None:
        return None
