"""The reference Iceberg REST catalog as the endpoint of a target with the ``iceberg-catalog`` side."""

from __future__ import annotations

from typing import Any

from conformance.contract.iceberg_catalog import RestCatalogEndpoint, endpoint_of
from conformance.contract.target import TargetEnv


def start_reference(env: TargetEnv, service_cls: type[Any] | None = None) -> RestCatalogEndpoint:
    """The reference Iceberg REST catalog (or a faulty ``service_cls``) on 127.0.0.1, files under the workdir."""
    from reference_impl.iceberg_rest import IcebergRestServer
    from reference_impl.iceberg_rest.catalog import RestCatalogService

    root = env.workdir / "iceberg-catalog"
    (root / "warehouse").mkdir(parents=True, exist_ok=True)
    server = IcebergRestServer(
        (root / "warehouse").as_uri(), root / "catalog.sqlite", service_cls=service_cls or RestCatalogService
    ).start()
    endpoint = endpoint_of(server.url)
    return RestCatalogEndpoint(endpoint.base, root / "warehouse", {}, server.stop)
