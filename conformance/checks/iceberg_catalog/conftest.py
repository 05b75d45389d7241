"""Fixtures of the catalog-side Iceberg checks: the REST catalog under test, served once per run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.checks.iceberg_catalog.driver import RestDriver
from conformance.contract.iceberg_catalog import RestCatalogEndpoint
from conformance.run_context import RunContext


@pytest.fixture(scope="session")
def rest_catalog(lakecert: RunContext) -> Iterator[RestCatalogEndpoint]:
    endpoint = lakecert.iceberg_catalog()
    yield endpoint
    endpoint.close()


@pytest.fixture
def rest(rest_catalog: RestCatalogEndpoint) -> RestDriver:
    return RestDriver(rest_catalog)
