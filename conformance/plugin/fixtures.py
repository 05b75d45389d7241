"""What checks receive: the run, the target's parts wrapped by recorders, per-check seeds and names."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from conformance.observe.http_transcript import capture
from conformance.observe.recording import RecordingCatalog, RecordingClient, RecordingStorage
from conformance.observe.transcript import Transcript
from conformance.run_context import RunContext


@pytest.fixture(scope="session")
def lakecert(request: pytest.FixtureRequest) -> RunContext:
    """The run: configuration, target, profiles and shared environment."""
    return RunContext.of(request.config)


@pytest.fixture
def transcript() -> Iterator[Transcript]:
    """The check's record; while it runs, HTTP exchanges with network targets go into ``.http``."""
    record = Transcript()
    with capture(record.http):
        yield record


@pytest.fixture
def seed(lakecert: RunContext, request: pytest.FixtureRequest, transcript: Transcript) -> int:
    """A per-check seed derived from the run's seed, recorded for the reproducer."""
    value = lakecert.derived_seed(request.node.nodeid)
    transcript.notes["seed"] = value
    return value


@pytest.fixture
def storage(lakecert: RunContext, transcript: Transcript) -> RecordingStorage:
    """The run's object store, recording what the client under test does to it."""
    return RecordingStorage(lakecert.env.storage, transcript)


@pytest.fixture
def catalog(lakecert: RunContext, transcript: Transcript) -> RecordingCatalog:
    """The catalog under test (catalog profile)."""
    return RecordingCatalog(
        lakecert.target_catalog(), transcript, under_test=True, call_s=lakecert.config.settings.deadlines.call_s
    )


@pytest.fixture
def ref_catalog(lakecert: RunContext, transcript: Transcript) -> RecordingCatalog:
    """The reference catalog that clients under test are bound to; it records their calls."""
    return RecordingCatalog(lakecert.reference_catalog(), transcript)


@pytest.fixture
def client_factory(
    lakecert: RunContext,
    ref_catalog: RecordingCatalog,
    storage: RecordingStorage,
    transcript: Transcript,
    request: pytest.FixtureRequest,
) -> Callable[[], RecordingClient]:
    """Builds clients under test, bound to the recording reference catalog and storage.

    Each client gets a seed of its own (derived from the check's), so names and UUIDs it draws are
    the same in every run with the run's seed."""
    made = iter(range(1_000_000))

    def build() -> RecordingClient:
        env = replace(lakecert.env, storage=storage, seed=lakecert.derived_seed(f"{request.node.nodeid}#{next(made)}"))
        return RecordingClient(
            lakecert.build_client(ref_catalog, env), transcript, call_s=lakecert.config.settings.deadlines.call_s
        )

    return build


@pytest.fixture
def client(client_factory: Callable[[], RecordingClient]) -> RecordingClient:
    """A fresh client under test."""
    return client_factory()


@pytest.fixture
def table_name(request: pytest.FixtureRequest) -> str:
    """A table name unique to this check within the run, the same in every run."""
    base = re.sub(r"[^A-Za-z0-9]+", "_", request.node.name)[:40].strip("_")
    return f"{base}_{hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:8]}"
