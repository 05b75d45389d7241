"""A Nessie server for one run: the Quarkus runner jar on a Java >= 21, on loopback, in-memory.

Nessie refuses ``file://`` warehouses, so its warehouse is on S3: the run's store when the run is on
S3, else a moto server of its own (path-style addressing, one bucket). Both HTTP interfaces bind
127.0.0.1 on ports the kernel picks; the ports are read from Nessie's start-up line, and the server
is ready when ``/iceberg/v1/config`` answers. It is stopped by its process id.
"""

from __future__ import annotations

import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from conformance.contract.target import S3Settings

VERSION = "0.99.0"  # the release `make setup` fetches; option ``version`` runs another
JAR = f"nessie-quarkus-{VERSION}-runner.jar"
DEFAULT_JARS = Path(__file__).resolve().parents[3] / ".cache" / "jars"
BUCKET = "lakecert-nessie"
_LISTENING = re.compile(r"Listening on: (http://127\.0\.0\.1:\d+)")
_SECRET = "lakecert.s3"  # a Quarkus property holding the store's key pair, named by a Nessie secret URN


class NessieStartError(Exception):
    """Nessie did not start; the message names its log."""


def jar_path(jars: Path | None = None, version: str = VERSION) -> Path:
    return (jars or DEFAULT_JARS) / f"nessie-quarkus-{version}-runner.jar"


def runner_jar(version: str, jars: Path | None = None, *, fetch: bool = True) -> Path:
    """The runner jar of ``version``: the set-up's when it holds it, else fetched from Maven (once;
    with ``fetch=False``, where it would be)."""
    in_setup = jar_path(jars, version)
    if in_setup.is_file():
        return in_setup
    from conformance.artifacts import maven
    from conformance.artifacts.cache import cache_root, complete, filled

    if not fetch:
        return cache_root() / "nessie" / version / in_setup.name
    if complete(f"nessie/{version}") is None:  # before any progress line
        maven.require("org.projectnessie.nessie", "nessie-quarkus", version)

    def fill(folder: Path) -> None:
        maven.download("org.projectnessie.nessie", "nessie-quarkus", version, folder, classifier="runner")

    return filled(f"nessie/{version}", f"Nessie {version} (runner jar, ~250 MB)", fill) / in_setup.name


def observed_version(jar: Path | str | None) -> str:
    """The version the runner jar says it is (its manifest), or "unknown"."""
    from conformance.artifacts.maven import manifest_version

    path = Path(jar) if jar else jar_path()
    if path.is_dir():
        path = jar_path(path)
    return manifest_version(path) or "unknown"


def nessie_properties(s3: S3Settings, warehouse: str) -> dict[str, str]:
    """The system properties of a loopback-only, in-memory Nessie with one S3 warehouse."""
    props = {
        "quarkus.http.host": "127.0.0.1",
        "quarkus.http.port": "0",
        "quarkus.management.host": "127.0.0.1",
        "quarkus.management.port": "0",
        "quarkus.otel.sdk.disabled": "true",  # no exporter dialling a collector that is not there
        "nessie.version.store.type": "IN_MEMORY",
        "nessie.catalog.default-warehouse": "lakecert",
        "nessie.catalog.warehouses.lakecert.location": warehouse,
        "nessie.catalog.service.s3.default-options.endpoint": s3.endpoint_url,
        "nessie.catalog.service.s3.default-options.path-style-access": "true",
        "nessie.catalog.service.s3.default-options.region": s3.region,
    }
    if s3.access_key_id:
        props["nessie.catalog.service.s3.default-options.access-key"] = f"urn:nessie-secret:quarkus:{_SECRET}"
        props[f"{_SECRET}.name"] = s3.access_key_id
        props[f"{_SECRET}.secret"] = s3.secret_access_key or ""
    return props


class NessieServer:
    """``NessieServer(java, workdir, s3=None, warehouse=None).start()``; ``url`` is Nessie's root,
    ``iceberg_uri`` its Iceberg REST root. Without ``s3`` it starts moto and a bucket of its own."""

    def __init__(
        self,
        java: Path,
        workdir: Path,
        *,
        s3: S3Settings | None = None,
        warehouse: str | None = None,
        jars: Path | None = None,
        heap: str = "768m",
        ready_timeout_s: float = 600.0,
        jar: Path | None = None,
    ) -> None:
        self.java, self.workdir = java, workdir
        self.jar = jar or jar_path(jars)
        self.log_path = workdir / "nessie.log"
        self.heap, self.ready_timeout_s = heap, ready_timeout_s
        self._s3, self._warehouse = s3, warehouse
        self._moto: Any = None
        self._proc: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.startup_s = 0.0  # how long Nessie took to be ready (docs/benchmarks.md)

    @property
    def iceberg_uri(self) -> str:
        return f"{self.url}/iceberg"

    @property
    def s3(self) -> S3Settings:
        assert self._s3 is not None, "start() first"
        return self._s3

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self) -> NessieServer:
        if not self.jar.is_file():
            raise NessieStartError(f"{self.jar} is missing: run `make setup`")
        self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            if self._s3 is None:
                self._s3 = self._start_moto()
            warehouse = self._warehouse or f"s3://{BUCKET}/nessie"
            props = nessie_properties(self._s3, warehouse)
            command = [str(self.java), f"-Xmx{self.heap}", *(f"-D{k}={v}" for k, v in props.items())]
            command += ["-jar", str(self.jar)]
            began = time.monotonic()
            with self.log_path.open("wb") as log:
                self._proc = subprocess.Popen(
                    command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.workdir
                )
            self._await_ready(began)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_moto(self) -> S3Settings:
        import logging

        import boto3
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's access log
        self._moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._moto.start()
        host, port = self._moto.get_host_and_port()
        s3 = S3Settings(f"http://{host}:{port}", "us-east-1", "lakecert", "lakecert")
        client = boto3.client(
            "s3",
            endpoint_url=s3.endpoint_url,
            region_name=s3.region,
            aws_access_key_id=s3.access_key_id,
            aws_secret_access_key=s3.secret_access_key,
        )
        client.create_bucket(Bucket=BUCKET)
        return s3

    def _await_ready(self, began: float) -> None:
        # A hang guard only: Nessie starts in seconds, a loaded machine may take minutes.
        deadline = began + self.ready_timeout_s
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                code = self._proc.returncode
                raise NessieStartError(f"Nessie exited with status {code} while starting; see {self.log_path}")
            if not self.url and (match := _LISTENING.search(self.log_path.read_text(errors="replace"))):
                self.url = match.group(1)
            if self.url and self._answers(f"{self.iceberg_uri}/v1/config"):
                self.startup_s = time.monotonic() - began
                return
            time.sleep(0.5)
        raise NessieStartError(f"Nessie was not ready within {self.ready_timeout_s:.0f}s; see {self.log_path}")

    @staticmethod
    def _answers(url: str) -> bool:
        try:
            with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 - our own loopback URL
                return int(response.status) == 200
        except (urllib.error.URLError, OSError):
            return False

    def stop(self) -> None:
        """Stop Nessie by its process id (SIGTERM, then SIGKILL after a grace period), then moto."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=60)
        moto, self._moto = self._moto, None
        if moto is not None:
            moto.stop()

    def __enter__(self) -> NessieServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
