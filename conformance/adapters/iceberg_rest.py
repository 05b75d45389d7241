"""Any Iceberg REST catalog as a target of profile ``iceberg-catalog-commit``.

Options (``targets: {iceberg-rest: {options: {...}}}``): ``uri`` (the catalog's root, where
``/v1/config`` is), ``token`` (sent as a bearer token), ``warehouse_dir`` (a local directory holding
the catalog's files, if lakecert may look: a refused commit must leave no new file there). The checks
create namespaces named ``lakecert_<hex>`` and tables in them, and leave them behind.
"""

from __future__ import annotations

from pathlib import Path

from conformance.contract.delta import Catalog, DeltaClient, NotSupported
from conformance.contract.iceberg_catalog import RestCatalogEndpoint, call, endpoint_of
from conformance.contract.target import Kind, Side, TargetBase, TargetEnv


class IcebergRestTarget(TargetBase):
    name = "iceberg-rest"
    kind: Kind = "third-party"
    sides: frozenset[Side] = frozenset({"iceberg-catalog"})
    profiles: frozenset[str] | None = frozenset({"iceberg-catalog-commit"})

    def __init__(self, uri: str = "http://127.0.0.1:8181", token: str | None = None, warehouse_dir: str | None = None):
        self.uri = uri.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.warehouse_dir = Path(warehouse_dir) if warehouse_dir else None

    def version(self) -> str:
        config = call(f"{self.uri}/v1/config", "GET", headers=self.headers)
        return f"Iceberg REST catalog at {self.uri} (/v1/config: {config.status})"

    def make_iceberg_catalog(self, env: TargetEnv) -> RestCatalogEndpoint:
        endpoint = endpoint_of(self.uri, self.headers)
        return RestCatalogEndpoint(endpoint.base, self.warehouse_dir, self.headers)

    def make_catalog(self, env: TargetEnv) -> Catalog:
        raise NotSupported("an Iceberg REST catalog has no Delta catalog side")

    def make_client(self, catalog: Catalog, env: TargetEnv) -> DeltaClient:
        raise NotSupported("an Iceberg REST catalog has no Delta client side")

    def close(self) -> None:
        return None
