"""Built-in target ``uc``: any catalog speaking Unity Catalog's API, judged on the catalog profile."""

from __future__ import annotations

import uuid
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
    inline commits).
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
