"""Long directed histories against the catalog under test, compared with the RFC model after every step.

Three tables whose names share a prefix, several clients per table (each stages its own files),
concurrent proposals for one version and for two versions, stale and gap proposals, inline commits
where the catalog hosts them, and publication that lags behind by a varying number of commits. The
seed shapes the interleaving; the boundaries a fault needs occur in every history whatever the seed:
a publication mark below v100 while v100 and later are ratified and unpublished, a listing of one
table right after another's, versions past 99 on one table (issue 28 items 1-2), a proposal carrying
the publication mark while two commits wait unpublished.

That proposal carries the table's true publication mark (UC's latest backfilled version): a
publication report, applied after the ratification as ``mark_published`` would be (docs/certify.md),
which drops nothing above the mark. A catalog that takes it for "everything below my proposal is
published" forgets the two commits between the mark and the proposal. With only two waiting, no
eviction of old unpublished commits can explain the loss, so it is charged to the mark.

After every step, the acted-on table is listed in full and one other way (from its mark, a bounded
range, or "anything new?" past the latest, by the seed), then another table in full, in turn; each
listing is judged against the model (``conformance/model/catalog_managed``). At most 10 commits of
a table are ever unpublished (docs/certify.md: Unity Catalog's limit), but for the runs held at the
restart on tables of their own (``restart_runs.py``: up to the declared cap, or past 128 without one).

After every step, one listing and one call are also drawn at an edge of their arguments (bounds at
0, at the mark and around the latest; a mark given again, going back or above the latest; proposals
of taken, next and gap versions, staged and inline, carrying marks), each edge at least once per
history: ``edges.py``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from conformance.checks.delta.builders import CatalogDriver
from conformance.checks.delta.catalog.edges import Edges
from conformance.checks.delta.catalog.history import (
    CARRY_AT,
    HOLD_FROM,
    HOLD_MARK,
    HOLD_TO,
    RESTART_AT,
    TABLES,
    CatalogHistory,
)
from conformance.checks.delta.catalog.restart_runs import restart_holding_runs
from conformance.contract.target import declared_limits, restart_hook
from conformance.nemesis import restart_target_catalog
from conformance.observe.recording import RecordingCatalog
from conformance.observe.transcript import Transcript
from conformance.run_context import RunContext
from conformance.schedules.generated import HISTORY_ROUNDS, HISTORY_VERSIONS, HistoryLog


def run_history(
    catalog: RecordingCatalog,
    driver: CatalogDriver,
    log: HistoryLog,
    name: str,
    seed: int,
    versions: int,
    restart: Callable[[], CatalogDriver] | None = None,
    cap: int | None = None,
    budget: str = "default",
) -> None:
    rng = random.Random(seed)
    h = CatalogHistory(catalog, driver, log, rng, cap)
    for i in range(TABLES):
        h.create(f"{name}_{i}")
    for t in h.tables:
        h.judge_policy(t)
    main = h.tables[0]
    held = carried = False
    step = 0
    # The edge dimension (edges.py): after every step one listing and one call at an edge of their
    # arguments, never changing the first table while the history holds it at a directed boundary.
    edges = Edges(random.Random(f"edges-{seed}"))

    def quiet() -> set[int]:
        held_at = HOLD_FROM - 4 <= main.model.latest <= HOLD_TO + 1 or (not carried and main.model.latest >= CARRY_AT)
        return {0} if held_at else set()

    def judge_all(index: int) -> None:
        h.judge_all(index)
        edges.after(h, index, quiet())

    while main.model.latest < versions:
        step += 1
        # Every seed, where the target can restart its catalog: one restart with unpublished and
        # inline commits stored, and a mark carried by a proposal (CARRY_AT) behind it.
        if restart is not None and main.model.latest >= RESTART_AT:
            # The second table wholly published: after the restart the catalog must still know that
            # nothing of it waits (a mark recomputed from what is stored would count it all as waiting).
            second = h.tables[1]
            if second.model.latest > second.model.published:
                h.publish(second, 1, second.model.latest)
            # Tables of their own hold runs of unpublished commits of many lengths as it restarts.
            log.transcript.notes["restart runs"] = restart_holding_runs(h, restart, name, budget)
            h.propose(second, 0)
            judge_all(1)
            restart = None
            continue
        index = 0 if rng.random() < 0.6 else rng.randint(1, TABLES - 1)
        t = h.tables[index]
        h.last_publish = None
        # Every seed: a proposal carrying the mark with exactly two commits unpublished (the docstring).
        if index == 0 and not carried and main.model.latest >= CARRY_AT:
            lag = main.model.latest - main.model.published
            if lag > 2:
                h.publish(main, 0, main.model.latest - 2)
            else:
                h.make_room(main, 0, 1)
                h.propose(main, rng.randint(0, 2), carry=lag == 2)
                carried = lag == 2
            judge_all(0)
            continue
        # The boundary every seed crosses: a two-digit mark with three-digit versions stored above it.
        if index == 0 and HOLD_FROM <= main.model.latest < HOLD_TO:
            if not held:
                h.publish(main, 0, HOLD_FROM)
                held = True
            else:
                h.propose(main, rng.randint(0, 2))
            judge_all(0)
            continue
        if index == 0 and main.model.latest == HOLD_TO and main.model.published < HOLD_MARK:
            h.publish(main, 0, HOLD_MARK)
            judge_all(0)
            continue
        action = rng.choices(["propose", "race", "race2", "stale", "gap", "publish"], weights=[10, 1, 1, 1, 1, 2], k=1)[
            0
        ]
        if action == "publish" and t.model.latest > t.model.published:
            h.publish(t, index, rng.randint(t.model.published + 1, t.model.latest))
        elif action == "race":
            h.make_room(t, index, 1)
            h.race_one_version(t, seed + step)
        elif action == "race2":
            h.make_room(t, index, 2)
            h.race_two_versions(t, seed + step)
        elif action == "stale":
            h.stale(t)
        elif action == "gap":
            h.gap(t)
        else:
            h.make_room(t, index, 1)
            h.propose(t, rng.randint(0, 2))
        judge_all(index)
    edges.finish(h, quiet())  # every edge at least once, then a broken SHOULD if no MUST broke
    if h.broken_should is not None:
        raise h.broken_should


@pytest.mark.req(
    "CAT-RATIFY-ONCE",
    "CAT-RATIFY-SEQUENTIAL",
    "CAT-RATIFY-RACE",
    "CAT-RETAIN-UNPUBLISHED",
    "CAT-FORGET-PUBLISHED-ONLY",
    "CAT-LIST-CONTIGUOUS",
    "CAT-LIST-RANGE",
    "CAT-LIST-LATEST",
    "CAT-LIST-RATIFIED-ONLY",
    "CAT-RATIFY-DURABLE",
    "CAT-STAGING-UNIQUE",
    "CAT-PUBLISH-REPORT-POSSIBLE",
    "CAT-LIMIT-DECLARED",
    "CAT-RESOLVE-MANAGED",
    "CAT-CONFLICT-LATEST",
)
def test_long_histories_of_several_tables_match_the_model(
    lakecert: RunContext,
    catalog: RecordingCatalog,
    driver: CatalogDriver,
    table_name: str,
    seed: int,
    transcript: Transcript,
) -> None:
    """Without a restart hook the history runs without its restart; CAT-RATIFY-DURABLE is then judged
    NOT_APPLICABLE by the nemesis checks (docs/certify.md "The nemesis"), not here."""

    def restart() -> CatalogDriver:
        restarted = RecordingCatalog(
            restart_target_catalog(lakecert),
            transcript,
            under_test=True,
            call_s=lakecert.config.settings.deadlines.call_s,
        )
        return CatalogDriver(restarted, driver.storage, published=driver.published, locations=driver.locations)

    can_restart = restart_hook(lakecert.target) is not None
    budget = lakecert.config.settings.delta.budget
    for round_no in range(HISTORY_ROUNDS[budget]):
        log = HistoryLog(transcript, seed + round_no, lakecert.config.seed)
        name, versions = f"{table_name[:40]}_{round_no}", HISTORY_VERSIONS[budget]
        cap = declared_limits(lakecert.target).unpublished
        run_history(
            catalog, driver, log, name, seed + round_no, versions, restart if can_restart else None, cap, budget
        )
