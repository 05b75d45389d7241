"""Built-in target ``uc``: any catalog speaking Unity Catalog's API, judged on the catalog profile."""

from __future__ import annotations

import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from conformance.adapters.uc.catalog import UCCatalog
from conformance.adapters.uc.delta_v1 import UCDeltaV1Catalog
from conformance.adapters.uc.wire import UCClient, UCHttpError, raise_for
from conformance.contract.delta import (
    Catalog,
    DeltaClient,
    StagingTable,
)
from conformance.contract.target import Kind, Side, TargetBase, TargetEnv, TargetUnavailable, UCEndpoint

# Option ``api``: UC's API the catalog is driven through -> the adapter class that maps it.
APIS: dict[str, type[UCCatalog]] = {"preview": UCCatalog, "v1": UCDeltaV1Catalog}


class UCTarget(TargetBase):
    """A Unity Catalog compatible server (``lakecert serve``, UC OSS, ...) as a catalog target.

    Options (``targets: {uc: {options: {...}}}``): ``url`` (server root), ``token`` (bearer),
    ``catalog`` and ``schema`` (where test tables are created; they must exist), ``inline_commits``
    and ``maintenance_policies`` (true/false; default: what the server advertises),
    ``staging_tables`` (a list of ``{table_id, location}`` created beforehand, for catalogs that
    cannot create staging tables through the API), ``timeout_s``, ``run_scoped_names`` (default
    true: table names get a suffix unique to the run, so that two runs with one seed against one
    server do not collide), ``api`` (which of UC's commit APIs the catalog is driven through:
    ``preview``, the default, for ``/delta/preview/commits`` (``catalog.UCCatalog``); ``v1`` for the
    Delta REST API ``/delta/v1`` of UC OSS 0.6.0 (``delta_v1.UCDeltaV1Catalog``), which has no
    inline commits), ``restart_command`` (a shell command that stops the server and starts it again
    at the same URL on the same state; given, the nemesis's restart checks run: lakecert runs it and
    waits up to ``restart_timeout_s`` for the server to answer again; docs/certify.md "The nemesis").
    """

    name = "uc"
    kind: Kind = "third-party"
    sides: frozenset[Side] = frozenset({"catalog"})

    def __init__(
        self,
        url: str = "http://127.0.0.1:8080",
        token: str | None = None,
        catalog: str = "unity",
        schema: str = "default",
        inline_commits: bool | None = None,
        maintenance_policies: bool | None = None,
        staging_tables: list[dict[str, str]] | None = None,
        timeout_s: float = 30.0,
        run_scoped_names: bool = True,
        api: str = "preview",
        restart_command: str | None = None,
        restart_timeout_s: float = 120.0,
    ) -> None:
        if not isinstance(api, str) or api not in APIS:
            raise ValueError(f"api must be one of {', '.join(APIS)} (UC's commit API to drive), not {api!r}")
        self._api = api
        self.url = url
        self._token = token
        self._client = UCClient(url, token, timeout_s)
        self._catalog, self._schema = catalog, schema
        self._inline, self._policies = inline_commits, maintenance_policies
        self._staging = None
        if staging_tables is not None:
            if not all(isinstance(s, dict) and {"table_id", "location"} <= set(s) for s in staging_tables):
                raise ValueError("staging_tables: a list of {table_id, location}")
            self._staging = [StagingTable(str(s["table_id"]), str(s["location"])) for s in staging_tables]
        self._capabilities: dict[str, Any] | None = None
        self._suffix = f"_r{uuid.uuid4().hex[:8]}" if run_scoped_names else ""
        self._restart_command, self._restart_timeout_s = restart_command, restart_timeout_s
        # The optional member lakecert's restart checks look for (``contract.target.restart_hook``):
        # only a configured command gives one, else they are NOT_APPLICABLE.
        self.restart_catalog: Callable[[Catalog, TargetEnv], Catalog] | None = (
            self._restart if restart_command else None
        )

    def _restart(self, catalog: Catalog, env: TargetEnv) -> Catalog:
        """Run ``restart_command``, then wait until the server answers again; the catalog object goes on
        (it is a URL). Its output goes to a file, not a pipe: a server the command starts in the
        background keeps its inherited descriptors open, and a pipe would wait for it to exit."""
        assert self._restart_command is not None
        with tempfile.TemporaryFile() as output:
            done = subprocess.run(
                self._restart_command,
                shell=True,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                timeout=self._restart_timeout_s,
                check=False,
            )
            output.seek(0)
            said = output.read()[-2000:].decode(errors="replace")
        if done.returncode != 0:
            raise RuntimeError(f"restart_command exited with {done.returncode}: {said.strip()}")
        deadline = time.monotonic() + self._restart_timeout_s
        while True:
            try:
                self._client.request("GET", "/catalogs?max_results=1")
                return catalog
            except UCHttpError:  # an answer all the same
                return catalog
            except OSError as e:
                if time.monotonic() > deadline:
                    raise TargetUnavailable(
                        f"{self.url} did not answer within {self._restart_timeout_s} s of restart_command:"
                        f" {type(e).__name__}: {e}"
                    ) from None
                time.sleep(0.1)

    def capabilities(self) -> dict[str, Any]:
        """lakecert's extensions the server advertises; ``{}`` for a plain UC server."""
        if self._capabilities is None:
            try:
                data = self._client.request("GET", "/lakecert/v1/capabilities")
            except UCHttpError as e:
                if e.status not in (404, 405):
                    raise_for(e)
                data = {}
            self._capabilities = data if isinstance(data, dict) else {}
        return self._capabilities

    def preflight(self) -> None:
        """One listing call: the server must answer (any status: 401 says it is there), and a 2xx
        must be a JSON object, as UC's ListCatalogsResponse is."""
        try:
            listed = self._client.request("GET", "/catalogs?max_results=1")
        except UCHttpError:
            return
        except OSError as e:
            raise TargetUnavailable(f"cannot reach {self.url}: {type(e).__name__}: {e}") from None
        if not isinstance(listed, dict):  # the one answer whose body the preflight reads
            shown = repr(listed)[:100]
            raise TargetUnavailable(f"{self.url} does not speak Unity Catalog's API: GET /catalogs answered {shown}")

    def uc_endpoint(self) -> UCEndpoint:
        """Interop: clients in other processes (Delta Kernel) reach this catalog here, with the
        same catalog, schema and run-scoped table names as the adapter."""
        return UCEndpoint(self.url, self._token, self._catalog, self._schema, self._suffix)

    def version(self) -> str:
        try:
            server = self.capabilities().get("server")
        except Exception:  # the version line must not break a run; the checks will say what is wrong
            server = None
        return f"{server or 'Unity Catalog API'} at {self.url}"

    def make_catalog(self, env: TargetEnv) -> Catalog:
        caps = self.capabilities()
        inline = bool(caps.get("inline_commits")) if self._inline is None else self._inline
        policies = bool(caps.get("maintenance_policy")) if self._policies is None else self._policies
        return APIS[self._api](
            self._client,
            env.storage,
            catalog=self._catalog,
            schema=self._schema,
            inline_commits=inline,
            maintenance_policies=policies,
            staging_tables=self._staging,
            name_suffix=self._suffix,
        )

    def make_client(self, catalog: Catalog, env: TargetEnv) -> DeltaClient:
        raise NotImplementedError("the uc target is a catalog; its client side is not offered")

    def close(self) -> None:
        self._client.close()
