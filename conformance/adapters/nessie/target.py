"""Built-in target ``nessie``: Project Nessie 0.99's Iceberg REST catalog, judged on profile
``iceberg-catalog-commit``. lakecert starts Nessie itself (``server.py``) once per run and stops it
at the end; ``spark-iceberg`` can commit through it too (option ``catalog: nessie``).

Options (``targets: {nessie: {options: {...}}}``): ``version`` (the Nessie release, default the
set-up's 0.99.0; another is fetched from Maven on first use), ``java`` (a ``java`` binary or a JDK home of
Java 21+; default: ``JAVA_HOME``, then the JDKs installed, then ``PATH``), ``jars`` (where the runner
jar is; default ``LAKECERT_JARS`` or the checkout's ``.cache/jars``), ``heap`` (``-Xmx``, default
768m) and ``ready_timeout_s`` (a hang guard on start-up, default 600).
"""

from __future__ import annotations

import os
from pathlib import Path

from conformance.adapters.nessie.java import JavaNotFound, find_java
from conformance.adapters.nessie.server import VERSION, NessieServer, jar_path, observed_version, runner_jar
from conformance.contract.delta import Catalog, DeltaClient, NotSupported
from conformance.contract.iceberg_catalog import RestCatalogEndpoint, endpoint_of
from conformance.contract.target import Kind, S3Settings, Side, TargetBase, TargetEnv, TargetUnavailable


def jars_option(jars: str | None) -> Path | None:
    found = jars or os.environ.get("LAKECERT_JARS")
    return Path(found) if found else None


def start_nessie(env: TargetEnv, options: NessieOptions) -> NessieServer:
    """A Nessie for the run: its warehouse in the run's S3 store when there is one, else on moto."""
    on_s3 = env.s3 is not None and env.warehouse_uri.startswith("s3://")
    s3: S3Settings | None = env.s3 if on_s3 else None
    warehouse = f"{env.warehouse_uri.rstrip('/')}/nessie" if on_s3 else None
    return NessieServer(
        find_java(options.java),
        env.workdir / "nessie",
        s3=s3,
        warehouse=warehouse,
        jar=options.jar,
        heap=options.heap,
        ready_timeout_s=options.ready_timeout_s,
    ).start()


class NessieOptions:
    def __init__(
        self,
        java: str | None = None,
        jars: str | None = None,
        heap: str = "768m",
        ready_timeout_s: float = 600.0,
        version: str = VERSION,
    ) -> None:
        self.java, self.jars = java, jars_option(jars)
        self.heap, self.ready_timeout_s = heap, float(ready_timeout_s)
        # A folder given as the option is taken as it is (its jar missing: refused by the preflight);
        # otherwise the set-up's jar, or the release fetched now (exit 2 if it cannot be).
        self.jar = jar_path(Path(jars), str(version)) if jars else runner_jar(str(version), self.jars)

    def preflight(self) -> None:
        """The jar and a Java 21+ must be there before any check: else the run is an error (exit 2)."""
        if not self.jar.is_file():
            raise TargetUnavailable(f"{self.jar} is missing: run `make setup`")
        try:
            find_java(self.java)
        except JavaNotFound as e:
            raise TargetUnavailable(str(e)) from e


class NessieTarget(TargetBase):
    name = "nessie"
    kind: Kind = "third-party"
    sides: frozenset[Side] = frozenset({"iceberg-catalog"})
    profiles: frozenset[str] | None = frozenset({"iceberg-catalog-commit"})

    def __init__(
        self,
        java: str | None = None,
        jars: str | None = None,
        heap: str = "768m",
        ready_timeout_s: float = 600.0,
        version: str = VERSION,
    ) -> None:
        self.options = NessieOptions(java, jars, heap, ready_timeout_s, version)
        self.server: NessieServer | None = None

    def observed_versions(self) -> dict[str, str]:
        return {"nessie": observed_version(self.options.jar)}

    def version(self) -> str:
        return f"Project Nessie {observed_version(self.options.jar)} (Iceberg REST, in-memory version store)"

    def preflight(self) -> None:
        self.options.preflight()

    def make_iceberg_catalog(self, env: TargetEnv) -> RestCatalogEndpoint:
        # Once per run; a start-up failure names Nessie's log and ends every check in ERROR.
        self.server = start_nessie(env, self.options)
        return endpoint_of(self.server.iceberg_uri)

    def make_catalog(self, env: TargetEnv) -> Catalog:
        raise NotSupported("Nessie has no Delta catalog side here")

    def make_client(self, catalog: Catalog, env: TargetEnv) -> DeltaClient:
        raise NotSupported("Nessie has no Delta client side")

    def close(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.stop()
