"""A table written by the client under test, with the evidence of how it was written."""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import count
from typing import Protocol

import pytest

from conformance.checks.delta.builders import non_ascii_value, premise
from conformance.checks.delta.evidence import ratified_content, table_commits
from conformance.contract.delta import Catalog, Storage, TableInfo
from conformance.nemesis import NemesisCatalog
from conformance.observe.recording import RecordingCatalog, RecordingClient
from conformance.observe.transcript import Transcript
from conformance.oracle.commits import Action
from conformance.run_context import RunContext
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient, wall_clock_ms

APPENDS = 12
DAY_MS = 86_400_000


def ahead_client(lakecert: RunContext, transcript: Transcript, storage: Storage, seed: int) -> ReferenceClient:
    """A correct writer (the suite's) whose clock runs a day ahead of the client under test.

    The contract gives lakecert no hold on the target's clock (``make_client`` takes a catalog
    and an environment), so clock skew between two writers is made on the suite's side: the
    reference client takes a ``clock``. A writer under test must stamp its next commit after
    this one's in-commit timestamp whatever its own clock says (PROTOCOL.md In-Commit Timestamps)."""
    catalog = RecordingCatalog(lakecert.reference_catalog(), transcript, actor="suite")
    return ReferenceClient(catalog, storage, seed=seed + 1, clock=lambda: wall_clock_ms() + DAY_MS)


@dataclass
class WrittenTable:
    info: TableInfo
    ratified: dict[int, bytes]  # version -> exact ratified bytes (versions >= 1)
    storage: Storage

    @property
    def commits(self) -> dict[int, list[Action]]:
        """Version -> actions, version 0 included; content that does not parse fails the check."""
        return table_commits(self.storage, self.info.location, self.ratified)


@pytest.fixture
def written(
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
) -> WrittenTable:
    """create, twelve appends, a delete: versions 0-13 through the catalog, nothing published.

    Past version 9 on purpose: names padded wrongly, or versions sorted as text (10 before 9),
    only show with multi-digit versions (issue 18). The delete takes a row from each of five files:
    a commit of many actions (a writer may stream those in another order than small ones). The values
    are not ASCII (``NON_ASCII_VALUES``): a writer's string statistics bring them into its commits,
    whose encoding ASCII data never tests."""
    # The checks judge the commits; that the writer can write them at all is their premise.
    with premise(f"the writer under test writing a table (create, {APPENDS} appends, a delete)"):
        client.create_table(table_name)
        for i in range(APPENDS):
            rows = [{"id": 10 * i + k, "value": non_ascii_value(2 * i + k - 1)} for k in (1, 2)]
            client.append(table_name, rows)
        client.delete(table_name, [1, 11, 21, 31, 41])
    info = ref_admin.resolve(table_name)
    ratified = ratified_content(transcript, suite_storage, info.table_id)
    return WrittenTable(info, ratified, suite_storage)


class Bind(Protocol):
    """Builds a client under test bound to ``catalog`` (and to ``through``, the run's recording storage
    unless given: the nemesis's ``CrashingStorage`` crashes a client between two of its writes)."""

    def __call__(self, catalog: Catalog, through: Storage | None = None) -> RecordingClient: ...


@pytest.fixture
def bind(lakecert: RunContext, storage: Storage, transcript: Transcript, request: pytest.FixtureRequest) -> Bind:
    """Builds clients under test bound to the given catalog (as ``client_factory`` binds them to the
    recording reference), each with a seed of its own."""
    made = count()

    def build(catalog: Catalog, through: Storage | None = None) -> RecordingClient:
        seed = lakecert.derived_seed(f"{request.node.nodeid}#nemesis{next(made)}")
        env = replace(lakecert.env, storage=through or storage, seed=seed)
        return RecordingClient(
            lakecert.build_client(catalog, env), transcript, call_s=lakecert.config.settings.deadlines.call_s
        )

    return build


@pytest.fixture
def nemesis(ref_catalog: RecordingCatalog, transcript: Transcript) -> NemesisCatalog:
    wrapped = NemesisCatalog(ref_catalog)
    transcript.notes["nemesis"] = wrapped.fired  # what it did, for the reproducer
    return wrapped
