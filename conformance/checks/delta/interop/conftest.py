"""The interop pair: the target's client bound to the pair's catalog, and the suite's view of both.

The pair's catalog is the catalog side of ``catalog_target`` (e.g. any Unity Catalog API server)
or the target's own. A client in another process (a JVM) reaches it over HTTP, out of lakecert's
reach, so the checks judge the pair only from the catalog's own answers (asked by the suite,
actor ``suite``), from storage contents, and from what a second client of the pair reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from conformance.observe.recording import RecordingCatalog, RecordingClient, RecordingStorage
from conformance.observe.transcript import Transcript
from conformance.run_context import RunContext
from reference_impl.delta.client import ReferenceClient


@pytest.fixture
def pair_catalog(lakecert: RunContext, transcript: Transcript) -> RecordingCatalog:
    """The pair's catalog as the client is handed it (a client that speaks HTTP itself ignores it)."""
    return RecordingCatalog(
        lakecert.pair_catalog(), transcript, under_test=True, call_s=lakecert.config.settings.deadlines.call_s
    )


@pytest.fixture
def judge(lakecert: RunContext, transcript: Transcript) -> RecordingCatalog:
    """The suite's own questions to the pair's catalog: resolution, listings, latest version.

    ``under_test``: an answer the contract does not allow is the catalog's fault, a FAIL."""
    return RecordingCatalog(
        lakecert.pair_catalog(),
        transcript,
        actor="suite",
        under_test=True,
        call_s=lakecert.config.settings.deadlines.call_s,
    )


@pytest.fixture
def pair_client_factory(
    lakecert: RunContext,
    pair_catalog: RecordingCatalog,
    storage: RecordingStorage,
    transcript: Transcript,
    request: pytest.FixtureRequest,
) -> Callable[[], RecordingClient]:
    """Builds clients of the target bound to the pair's catalog (over UC's API when it has an endpoint)."""
    made = iter(range(1_000_000))
    endpoint = lakecert.pair_endpoint()

    def build() -> RecordingClient:
        seed = lakecert.derived_seed(f"{request.node.nodeid}#{next(made)}")
        env = replace(lakecert.env, storage=storage, seed=seed, catalog_endpoint=endpoint)
        return RecordingClient(
            lakecert.build_client(pair_catalog, env), transcript, call_s=lakecert.config.settings.deadlines.call_s
        )

    return build


@pytest.fixture
def rival(lakecert: RunContext, transcript: Transcript, seed: int) -> ReferenceClient:
    """A correct writer of the suite's on the pair's catalog: the concurrent writer of a race."""
    storage = RecordingStorage(lakecert.env.storage, transcript, actor="suite")
    catalog = RecordingCatalog(lakecert.pair_catalog(), transcript, actor="suite")
    return ReferenceClient(catalog, storage, seed=seed ^ 0x5A5A)


@pytest.fixture(autouse=True)
def _no_listener_left(transcript: Transcript) -> Iterator[None]:
    yield
    transcript.listeners.clear()
