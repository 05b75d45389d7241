"""Fixtures shared by the Delta checks: the suite's own (trusted) hands."""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import CatalogDriver, LogBuilder, new_uuid, reseed
from conformance.observe.recording import RecordingCatalog, RecordingStorage
from conformance.observe.transcript import Transcript
from conformance.oracle.txn_ids import TxnIdRegistry
from conformance.run_context import RunContext
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient


@pytest.fixture
def suite_storage(lakecert: RunContext, transcript: Transcript) -> RecordingStorage:
    """Storage as the suite uses it; recorded apart from the target's own calls."""
    return RecordingStorage(lakecert.env.storage, transcript, actor="suite")


@pytest.fixture
def driver(
    catalog: RecordingCatalog, suite_storage: RecordingStorage, table_locations: dict[str, str]
) -> CatalogDriver:
    """Drives the catalog under test as a well-behaved client."""
    return CatalogDriver(catalog, suite_storage, locations=table_locations)


@pytest.fixture(scope="session")
def table_locations() -> dict[str, str]:
    """Location -> table id of every table the suite's drivers created in this run (a premise:
    no two share one, ``CatalogDriver.new_table``)."""
    return {}


@pytest.fixture
def suite_client(
    lakecert: RunContext, transcript: Transcript, suite_storage: RecordingStorage, seed: int
) -> ReferenceClient:
    """A correct client on the reference catalog, for the suite's own writes (e.g. a rival commit)."""
    return ReferenceClient(
        RecordingCatalog(lakecert.reference_catalog(), transcript, actor="suite"), suite_storage, seed=seed
    )


@pytest.fixture
def ref_admin(lakecert: RunContext) -> ReferenceCatalog:
    """Admin access to the reference catalog: seed a table state, set a policy, look up a table."""
    return lakecert.reference_catalog()


@pytest.fixture
def seeded(lakecert: RunContext, suite_storage: RecordingStorage) -> LogBuilder:
    """A fresh, empty table location for a state the suite writes itself."""
    return LogBuilder(suite_storage, f"{lakecert.env.warehouse_uri}/seeded/{new_uuid()}")


@pytest.fixture(autouse=True)
def _deterministic_names(seed: int) -> None:
    reseed(seed)


@pytest.fixture(scope="session")
def txn_ids() -> TxnIdRegistry:
    """Every txnId seen in a commit the client under test wrote, in any table of the run (one
    registry per process: a shard has its own), for WRT-TXNID-UNIQUE across tables and clients."""
    return TxnIdRegistry()
