"""Fixtures of the catalog-side Iceberg checks: the REST catalog under test, served once per run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import pytest

from conformance.checks.iceberg_catalog.driver import RestDriver
from conformance.run_context import RunContext
from conformance.targets.iceberg_catalog_contract import IcebergCatalogTarget, RestCatalogEndpoint


@pytest.fixture(scope="session")
def rest_catalog(lakecert: RunContext) -> Iterator[RestCatalogEndpoint]:
    if not callable(getattr(lakecert.target, "make_iceberg_catalog", None)):
        raise RuntimeError(f"target {lakecert.target.name} has no make_iceberg_catalog(env)")
    endpoint = cast(IcebergCatalogTarget, lakecert.target).make_iceberg_catalog(lakecert.env)
    yield endpoint
    endpoint.close()


@pytest.fixture
def rest(rest_catalog: RestCatalogEndpoint) -> RestDriver:
    return RestDriver(rest_catalog)
