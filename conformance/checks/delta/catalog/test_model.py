"""Random sequences of stage / propose / publish / list from several clients on two tables, against
the model (``conformance/model/catalog_managed``).

A hypothesis state machine; the run's seed fixes the sequences, so a failure
reruns with the same seed and hypothesis shrinks it to a short schedule.
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from conformance.checks.delta.builders import CatalogDriver, check_listing_complete, ict_of
from conformance.contract.delta import CatalogError, CommitConflict
from conformance.model.catalog_managed import CatalogTable, Commit
from conformance.observe.recording import RecordingCatalog
from conformance.report.outcomes import PremiseBroken, Violation
from conformance.run_context import RunContext
from conformance.schedules.generated import for_budget, run_machine

CLIENTS = 3
HISTORIES = (0, 9)  # versions ratified before the generated steps start
TABLES = 2  # interleaved: nothing done to one table may show in the other's listing


def machine(catalog: RecordingCatalog, driver: CatalogDriver, name: str) -> type[RuleBasedStateMachine]:
    counter = iter(range(10**9))

    class CatalogMachine(RuleBasedStateMachine):
        @initialize(history=st.sampled_from(HISTORIES))
        def create(self, history: int) -> None:
            self.tables = [driver.new_table(f"{name}_{next(counter)}") for _ in range(TABLES)]
            self.models = [CatalogTable() for _ in range(TABLES)]
            self.pending: dict[tuple[int, int], tuple[int, str]] = {}
            # The first table starts with a history, so that generated steps run past version 9.
            self.table, self.model = self.tables[0], self.models[0]
            for version, uri in driver.history(self.table, history, unpublished=min(history, 3)).items():
                self.model.propose(Commit(version, uri))
            if history > 3:
                self.model.mark_published(history - 3)
            self.bases = [max(0, history - 3)] + [0] * (TABLES - 1)
            self.base = self.bases[0]

        @rule(t=st.integers(0, TABLES - 1))
        def switch_table(self, t: int) -> None:
            """The following steps act on table ``t`` (pending proposals are per table)."""
            self.table, self.model, self.base = self.tables[t], self.models[t], self.bases[t]

        @rule(client=st.integers(0, CLIENTS - 1), ahead=st.integers(-1, 2))
        def stage(self, client: int, ahead: int) -> None:
            version = max(1, self.model.latest + 1 + ahead)
            self.pending[(self.tables.index(self.table), client)] = (version, driver.stage(self.table, version))

        @rule(client=st.integers(0, CLIENTS - 1))
        def propose(self, client: int) -> None:
            key = (self.tables.index(self.table), client)
            if key not in self.pending:
                return
            version, uri = self.pending.pop(key)
            expect = self.model.propose(Commit(version, uri))
            try:
                catalog.commit(self.table.table_id, version, staged_uri=uri, in_commit_timestamp=ict_of(version))
                got = "ratified"
            except CommitConflict:
                got = "conflict"
            except CatalogError:
                got = "refused"
            if expect == "ratified" and got != "ratified":
                self.model.forget(version)  # refusing a valid proposal is the catalog's right (policy)
            elif expect == "conflict" and got == "ratified":
                raise Violation("CAT-RATIFY-ONCE", f"v{version} was ratified a second time")
            elif expect == "refused" and got == "ratified":
                raise Violation("CAT-RATIFY-SEQUENTIAL", f"v{version} ratified over a gap")

        @rule(back=st.integers(0, 3))
        def publish(self, back: int) -> None:
            version = max(0, self.model.latest - back)
            try:
                driver.publish(self.table, version)
            except CatalogError:
                # Whether a catalog accepts a publication report (a no-op one included, e.g. for
                # version 0) is its own business (RFC "Publishing Commits"); a refused report only
                # means the model must not assume the catalog may now forget those commits.
                return
            self.model.mark_published(version)

        @rule(start=st.integers(0, 8), span=st.none() | st.integers(0, 4))
        def list_commits(self, start: int, span: int | None) -> None:
            start += self.base  # around the table's own versions, multi-digit ones included
            end = None if span is None else start + span
            try:
                resp = catalog.get_commits(self.table.table_id, start, end)
            except CatalogError as e:  # a listing refused: a listing rule, not every rule of the check
                raise Violation(
                    "CAT-LIST-LATEST", f"[{start}, {end}] refused ({type(e).__name__}): no latest version"
                ) from e
            listed = {c.version: c.staged_uri for c in resp.commits}
            if resp.latest_version != self.model.latest:
                raise Violation("CAT-LIST-LATEST", f"latest {resp.latest_version}, the model says {self.model.latest}")
            if end is None or end >= resp.latest_version:
                check_listing_complete(
                    catalog, self.table.table_id, set(listed), start, resp.latest_version, self.model.published
                )
            for v, commit in self.model.must_list(start, end).items():
                if listed.get(v) != commit.ref:
                    raise Violation("CAT-RETAIN-UNPUBLISHED", f"[{start}, {end}]: unpublished v{v} missing or changed")
            may = {v: c.ref for v, c in self.model.may_list(start, end).items()}
            extra = {v: u for v, u in listed.items() if may.get(v) != u}
            ratified = {v: c.ref for v, c in self.model.may_list(0, None).items()}
            if extra and all(ratified.get(v) == u for v, u in extra.items()):
                # Ratified commits outside the asked range: a range fault (CAT-LIST-RANGE), not this rule.
                raise PremiseBroken(f"[{start}, {end}]: listed ratified commits outside the range: {sorted(extra)}")
            if extra:
                raise Violation("CAT-LIST-RATIFIED-ONLY", f"[{start}, {end}]: listed what was never ratified: {extra}")

        @invariant()
        def latest_is_right(self) -> None:
            for table, model in zip(getattr(self, "tables", []), getattr(self, "models", []), strict=True):
                got = catalog.get_commits(table.table_id).latest_version
                if got != model.latest:
                    raise Violation("CAT-LIST-LATEST", f"{table.name}: latest {got}, the model says {model.latest}")

    return CatalogMachine


@pytest.mark.req(
    "CAT-RATIFY-ONCE", "CAT-RATIFY-SEQUENTIAL", "CAT-RETAIN-UNPUBLISHED", "CAT-LIST-LATEST", "CAT-LIST-RATIFIED-ONLY"
)
def test_random_schedules_match_the_model(
    lakecert: RunContext, catalog: RecordingCatalog, driver: CatalogDriver, table_name: str, seed: int
) -> None:
    run_machine(
        machine(catalog, driver, table_name),
        seed,
        for_budget(lakecert.config.settings.model, lakecert.config.settings.delta.budget),
    )
