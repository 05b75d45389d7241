"""Built-in client target ``delta-kernel``: Delta Kernel (Java) 4.4.0 with its Unity Catalog client.

Kernel is driven the way a connector drives it for a UC-managed table: tables are found and created
through UC's tables API (staging table, Kernel's create-table transaction writing version 0, then
UC's create table), snapshots come from ``UCCatalogManagedClient.loadSnapshot`` and commits go
through Kernel's UC committer to ``/delta/preview/commits``. It talks to the run's reference
catalog over HTTP (``serving.ServedCatalog``) and does its own I/O on the run's warehouse.

Evidence: every file Kernel writes, copies (publishes) or deletes passes through its ``Engine``; the
driver announces each one and waits until it is recorded in the check's transcript as a ``storage``
event, so ordering checks (staged before proposed, publication order, what a checkpoint covers)
judge Kernel from an exact, ordered record, as they judge Python clients. Reads are not recorded.

Path access (``path_contract``): ``read_path``/``append_path`` load the table with
``TableManager.loadSnapshot(location)``, as Kernel is used for tables without a catalog.

Engine (profile ``delta-row-conflicts``, ``engine.py``): path-based tables in the run's work
directory, and catalog-managed ones in a reference catalog of the engine's own served to its driver;
each commit held by a wrapper of the table's committer (Kernel's UC committer on a catalog-managed
table) until the schedule releases it; INSERT and table property changes only (what Kernel's
public write API builds).

Kernel 4.4.0 has no API for log compaction files on request or for metadata cleanup:
``compact_log`` and ``cleanup`` raise ``NotSupported``. Local (``file://``) warehouses
and ``s3://`` warehouses (Hadoop's S3A, path-style, at the run's store) are supported.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlparse

from conformance.adapters.delta_kernel.engine import KernelDeltaEngine
from conformance.adapters.delta_kernel.jvm import DEFAULT_CLASSES, DEFAULT_JARS, KernelFailed, KernelProcess
from conformance.adapters.delta_kernel.release import DEFAULT_VERSION, kernel_build
from conformance.adapters.delta_kernel.serving import UC_CATALOG, UC_SCHEMA, ServedCatalog
from conformance.artifacts.maven import manifest_version
from conformance.contract.delta import (
    Catalog,
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    NotSupported,
    ReadResult,
    TableNotFound,
)
from conformance.contract.target import Kind, Side, TargetEnv, UCEndpoint
from conformance.observe.transcript import Transcript
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.storage.local import LocalStorage
from reference_impl.storage.s3 import S3Settings

# The jars whose versions are recorded as what ran (the driver reports the same from inside the JVM).
COMPONENTS = ("delta-kernel-api", "delta-kernel-defaults", "delta-kernel-unitycatalog", "unitycatalog-client")
# A driver that is never asked for a catalog call (UC's client only stores its address).
UNUSED_CATALOG_URL = "http://127.0.0.1:9"
# The driver's classification of what Kernel raised -> the contract's error classes.
_ERRORS: dict[str, type[Exception]] = {
    "conflict": CommitConflict,
    "rejected": CommitRejected,
    "not_found": TableNotFound,
    "invalid": InvalidRequest,
}


def storage_uri(path: str) -> str:
    """Hadoop's ``file:/a/b`` as the suite's ``file:///a/b``; other URIs unchanged."""
    if path.startswith("file:") and not path.startswith("file://"):
        return "file:///" + path[len("file:") :].lstrip("/")
    if path.startswith("/"):
        return "file://" + path
    return path


def s3a_settings(s3: S3Settings | None) -> dict[str, str]:
    """Hadoop's S3A for ``s3://`` paths, at the run's store (path-style: moto, MinIO, ...)."""
    if s3 is None:
        return {}
    settings = {
        "fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "fs.s3a.endpoint": s3.endpoint_url,
        "fs.s3a.endpoint.region": s3.region,
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": str(s3.endpoint_url.startswith("https:")).lower(),
        "fs.s3a.change.detection.mode": "none",
    }
    if s3.access_key_id and s3.secret_access_key:
        settings["fs.s3a.aws.credentials.provider"] = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
        settings["fs.s3a.access.key"] = s3.access_key_id
        settings["fs.s3a.secret.key"] = s3.secret_access_key
    return settings


class KernelClient:
    """The ``DeltaClient`` of one check: requests to the run's driver, events into the check's transcript."""

    def __init__(
        self,
        process: KernelProcess,
        catalog: Catalog,
        transcript: Transcript | None,
        endpoint: UCEndpoint | None = None,
    ) -> None:
        self._process = process
        self._catalog = getattr(catalog, "inner", catalog)  # unrecorded: the check judges Kernel's calls only
        self._transcript = transcript
        self._endpoint = endpoint  # interop: a foreign UC catalog, and how it names the check's tables

    def _require_file_commits(self, name: str) -> None:
        """``NotSupported`` when the catalog holds inline commits of the table: UC's API (the only
        catalog API Kernel's UC support speaks) lists commits as staged files and cannot carry them."""
        try:
            table_id = self._catalog.resolve(name).table_id
        except TableNotFound:
            return  # Kernel is told so by the catalog itself
        if any(c.inline_content is not None for c in self._catalog.get_commits(table_id).commits):
            raise NotSupported("the table has inline commits, which Unity Catalog's API cannot give Kernel")

    def _observe(self, event: dict[str, Any]) -> None:
        if self._transcript is None:
            return
        uri = storage_uri(str(event["uri"]))
        if event["op"] == "delete":
            self._transcript.add("storage", "delete", {"uri": uri}, True)
        else:
            args = {"uri": uri, "size": event.get("size"), "if_absent": bool(event.get("if_absent"))}
            self._transcript.add("storage", "put", args, True)

    def _call(self, op: str, name: str, **args: Any) -> Any:
        if op != "create_table":
            self._require_file_commits(name)
        if name.count(".") == 2:
            catalog, schema, table = name.split(".")
        elif self._endpoint is not None:
            catalog, schema, table = self._endpoint.full_name(name)
        else:
            catalog, schema, table = UC_CATALOG, UC_SCHEMA, name
        request = {"op": op, "catalog": catalog, "schema": schema, "name": table, **args}
        try:
            return self._process.call(request, self._observe)
        except KernelFailed as e:
            error = _ERRORS.get(e.kind)
            if error is None:
                raise
            raise error(str(e)) from e

    def read_path(self, location: str) -> list[dict[str, object]]:
        """Path access (``path_contract``): ``TableManager.loadSnapshot(location)``, no catalog."""
        rows = self._process.call({"op": "read_path", "location": location}, self._observe)
        out: list[dict[str, object]] = [{"id": r.get("id"), "value": r.get("value")} for r in rows]
        return sorted(out, key=lambda r: (0, r["id"]) if isinstance(r["id"], int) else (1, 0))

    def append_path(self, location: str, rows: Sequence[dict[str, object]]) -> None:
        """Path access: a Kernel append transaction on the table at ``location``, no catalog."""
        request = {"op": "append_path", "location": location, "rows": [dict(r) for r in rows]}
        self._process.call(request, self._observe)

    def create_table(self, name: str) -> None:
        self._call("create_table", name)

    def append(self, name: str, rows: Sequence[dict[str, object]]) -> int:
        return int(self._call("append", name, rows=[{"id": r.get("id"), "value": r.get("value")} for r in rows]))

    def delete(self, name: str, ids: Sequence[int]) -> int:
        return int(self._call("delete", name, ids=list(ids)))

    def publish(self, name: str) -> None:
        self._call("publish", name)

    def checkpoint(self, name: str) -> int | None:
        version = self._call("checkpoint", name)
        return None if version is None else int(version)

    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        raise NotSupported("Delta Kernel 4.4.0 writes log compaction files only as a post-commit hook")

    def cleanup(self, name: str, cutoff_version: int) -> None:
        raise NotSupported("Delta Kernel 4.4.0 has no metadata cleanup API")

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        out = self._call("read", name, version=version, timestamp_ms=timestamp_ms)
        rows = [{"id": r.get("id"), "value": r.get("value")} for r in out["rows"]]
        rows.sort(key=lambda r: (0, r["id"]) if isinstance(r["id"], int) else (1, 0))
        return ReadResult(int(out["version"]), rows)


class DeltaKernelTarget:
    """Delta Kernel through the run's reference catalog served over HTTP; one JVM per run.

    Interop (``catalog_target``, profile ``delta-cm-interop``): when the env names a UC endpoint,
    Kernel talks to that server directly, with its token and its catalog, schema and name suffix.

    Options: ``version`` (the Kernel release under test, default the set-up's 4.4.0; another is
    fetched from Maven on first use and lakecert's driver compiled against it, ``release.py``),
    ``jars`` and ``classes`` (a build of one's own instead: the jar folder and the compiled driver),
    ``java`` (the ``java`` command), ``exhaustive`` (profile delta-row-conflicts: every two-operation
    schedule and the generated ones too; off by default, about a second per schedule)."""

    name = "delta-kernel"
    kind: Kind = "third-party"
    sides: frozenset[Side] = frozenset({"client", "engine"})
    # delta-cm-interop only with a catalog binding (``catalog_target``): Kernel ships no catalog.
    profiles: ClassVar[tuple[str, ...]] = (
        "delta-cm-writer",
        "delta-cm-reader",
        "delta-cm-path-access",
        "delta-cm-interop",
        "delta-row-conflicts",
    )
    # delta-row-conflicts: the directed checks only, by default. With copy-on-write DELETE, UPDATE
    # and OPTIMIZE the exhaustive pairs are about a thousand schedules over the configurations Kernel
    # writes, at about half a second each (8 minutes on 2 shared cores): option ``exhaustive``.
    delta_exhaustive = False

    def __init__(
        self,
        jars: str | None = None,
        classes: str | None = None,
        java: str = "java",
        version: str = DEFAULT_VERSION,
        exhaustive: bool = False,
    ) -> None:
        self.delta_exhaustive = exhaustive
        if jars or classes:  # a build of the user's own: taken as it is
            self._jars = Path(jars) if jars else DEFAULT_JARS
            self._classes = Path(classes) if classes else DEFAULT_CLASSES
        else:  # the release asked for, fetched and the driver compiled on first use (else exit 2)
            build = kernel_build(str(version))
            self._jars, self._classes = build.jars, build.classes
        self._java = java
        self._served: ServedCatalog | None = None
        self._process: KernelProcess | None = None
        self._engine_process: KernelProcess | None = None  # delta-row-conflicts: bound to the engine's catalog
        self._engine_served: ServedCatalog | None = None
        self._engine_catalog: ReferenceCatalog | None = None

    def observed_versions(self) -> dict[str, str]:
        """What the driver JVM loaded, as it reported at start; before one started, the manifests of
        the jars it would load."""
        for process in (self._process, self._engine_process):
            seen = getattr(process, "components", None)
            if seen:
                return dict(seen)
        found: dict[str, str] = {}
        for component in COMPONENTS:
            jar = next(iter(sorted(self._jars.glob(f"{component}-[0-9]*.jar"))), None)
            found[component] = (manifest_version(jar) if jar else None) or "unknown"
        return found

    def version(self) -> str:
        seen = self.observed_versions()
        parts = ", ".join(f"{k.removeprefix('delta-kernel-')} {v}" for k, v in seen.items() if k != "delta-kernel-api")
        return f"Delta Kernel {seen.get('delta-kernel-api', 'unknown')} ({parts})"

    def make_catalog(self, env: TargetEnv) -> Catalog:
        raise NotImplementedError("delta-kernel is a client; it is bound to the reference catalog")

    def _driver(self, url: str, token: str | None, env: TargetEnv) -> KernelProcess:
        return KernelProcess(
            url, token, jars=self._jars, classes=self._classes, java=self._java, hadoop=s3a_settings(env.s3)
        )

    def make_delta_engine(self, env: TargetEnv) -> KernelDeltaEngine:
        """Profile ``delta-row-conflicts``: tables under the run's work directory, in a driver of its
        own (the client's is bound to the checks' catalogs). Catalog-managed tables are registered in
        a reference catalog of the engine's own (local, in the same directory), served to it."""
        root = env.workdir / "delta-kernel-engine"
        root.mkdir(parents=True, exist_ok=True)
        if self._engine_process is None:
            storage = LocalStorage()
            self._engine_catalog = ReferenceCatalog(root / "catalog.sqlite", root.as_uri(), storage, durable=False)
            self._engine_served = ServedCatalog(self._engine_catalog, storage)
            self._engine_process = self._driver(self._engine_served.url, None, env)
        return KernelDeltaEngine(self._engine_process, root, catalog=self._engine_catalog)

    def make_client(self, catalog: Catalog, env: TargetEnv) -> KernelClient:
        scheme = urlparse(env.warehouse_uri).scheme
        if scheme not in ("file", "s3") or (scheme == "s3" and env.s3 is None):
            raise NotSupported(f"the delta-kernel target runs on file:// or s3:// warehouses, not {scheme}://")
        endpoint = env.catalog_endpoint
        # A catalog lakecert wraps to stand between a client and its catalog in process (the nemesis:
        # a lost answer is an exception raised at the client) names what to serve instead: over HTTP,
        # such an exception would reach Kernel as a server error, not as a lost answer.
        catalog = getattr(catalog, "over_http", catalog)
        if endpoint is None:
            if self._served is None:
                self._served = ServedCatalog(catalog, env.storage)
            else:
                self._served.bind(catalog)
        if endpoint is not None:
            url, token = endpoint.url, endpoint.token
        else:
            assert self._served is not None
            url, token = self._served.url, None
        if self._process is None:
            self._process = self._driver(url, token, env)
        process = self._process
        transcript = getattr(catalog, "transcript", None)
        recorded = transcript if isinstance(transcript, Transcript) else None
        return KernelClient(process, catalog, recorded, endpoint)

    def close(self) -> None:
        for process in (self._process, self._engine_process):
            if process is not None:
                process.close()
        self._process = self._engine_process = None
        for served in (self._served, self._engine_served):
            if served is not None:
                served.close()
        self._served = self._engine_served = None
        if self._engine_catalog is not None:
            self._engine_catalog.close()
            self._engine_catalog = None
