"""Random write / publish / checkpoint / cleanup / read sequences of several clients under test.

Every read must return the content the model holds for that version, whatever
mix of staged, published and checkpointed state the sequence left behind.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from conformance.contract.delta import NotSupported
from conformance.model.catalog_managed import TableModel
from conformance.observe.recording import RecordingClient
from conformance.report.outcomes import Violation
from conformance.run_context import RunContext
from conformance.schedules.generated import for_budget, run_machine

CLIENTS = 2


def machine(clients: list[RecordingClient], name: str) -> type[RuleBasedStateMachine]:
    counter = iter(range(10**9))

    class ClientMachine(RuleBasedStateMachine):
        @initialize()
        def create(self) -> None:
            self.name = f"{name}_{next(counter)}"
            clients[0].create_table(self.name)
            self.model = TableModel()
            self.next_id = 0

        @rule(c=st.integers(0, CLIENTS - 1), n=st.integers(1, 3))
        def append(self, c: int, n: int) -> None:
            rows = {self.next_id + i: f"c{c}" for i in range(n)}
            self.next_id += n
            clients[c].append(self.name, [{"id": i, "value": v} for i, v in rows.items()])
            self.model.append(rows)

        @precondition(lambda self: bool(self.model.versions[-1]))
        @rule(c=st.integers(0, CLIENTS - 1), data=st.data())
        def delete(self, c: int, data: st.DataObject) -> None:
            victim = data.draw(st.sampled_from(sorted(self.model.versions[-1])))
            clients[c].delete(self.name, [victim])
            self.model.delete({victim})

        @rule(c=st.integers(0, CLIENTS - 1))
        def publish(self, c: int) -> None:
            clients[c].publish(self.name)

        @rule(c=st.integers(0, CLIENTS - 1))
        def checkpoint(self, c: int) -> None:
            version = clients[c].checkpoint(self.name)
            if version is not None:
                self.model.checkpoints.add(version)

        @rule(c=st.integers(0, CLIENTS - 1), back=st.integers(0, 3))
        def cleanup(self, c: int, back: int) -> None:
            cutoff = max(0, self.model.latest - back)
            try:
                clients[c].cleanup(self.name, cutoff)
            except NotSupported:
                return  # an optional capability; files it deleted anyway would break the reads that follow
            self.model.cleanup(cutoff)

        @rule(c=st.integers(0, CLIENTS - 1))
        def read_latest(self, c: int) -> None:
            got = clients[c].read(self.name)
            if got.version != self.model.latest:
                raise Violation("RDR-UNPUBLISHED", f"read v{got.version}; v{self.model.latest} is ratified")
            if got.rows != self.model.rows():
                raise Violation("RDR-LIST-FALLBACK", f"v{got.version} rows {got.rows} != {self.model.rows()}")

        @rule(c=st.integers(0, CLIENTS - 1), data=st.data())
        def read_version(self, c: int, data: st.DataObject) -> None:
            version = data.draw(st.integers(self.model.oldest_readable, self.model.latest))
            got = clients[c].read(self.name, version=version)
            if got.rows != self.model.rows(version):
                raise Violation("RDR-LIST-FALLBACK", f"v{version} rows {got.rows} != {self.model.rows(version)}")

    return ClientMachine


@pytest.mark.req("RDR-UNPUBLISHED", "RDR-LIST-FALLBACK")
def test_random_sequences_read_what_was_written(
    lakecert: RunContext, client: RecordingClient, client_factory: Any, table_name: str, seed: int
) -> None:
    clients = [client] + [client_factory() for _ in range(CLIENTS - 1)]
    run_machine(
        machine(clients, table_name),
        seed,
        for_budget(lakecert.config.settings.model, lakecert.config.settings.delta.budget),
    )
