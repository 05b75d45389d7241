"""The writer under test through a long directed history: maintenance under every policy, publication
lag past 16 commits, and what ``_delta_log`` holds after every step (``checks/delta/client_histories``).

Every history, whatever the seed, runs checkpoint, log compaction and metadata cleanup under each of
the eight combinations of the three policies (in an order the seed picks), publishes after more
than 16 commits waited, crosses v99 -> v100 on one table, and has two clients append at once. At
v22, v47, v72 and v97 of the first table a fourth client, bound through lakecert's nemesis, appends
and meets a lost answer, a lost conflict, a second delivery after a rival's commit and a publication
by another client before it asks (``writer/history_nemesis.py``): its change must land once.
A fifth client, bound through lakecert's ``ShapedCatalog`` (``conformance/nemesis/shapes.py``), takes
a fair share of every step and meets the catalog's answers in every shape the RFC allows (conflicts
with and without the latest version, listings ascending, newest first or shuffled, with published
commits still served or not); every 10 versions of the first table it loses a race to a rival's
staged or inline commit, then publishes: its change lands once, at the version it reports, and it
publishes in order.
Whether the policies are obeyed is judged by ``writer/test_maintenance.py``, where a client whose
catalog API cannot carry a policy goes NOT_APPLICABLE; here a forbidden operation run is a broken
premise (the model no longer describes the table).
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from conformance.checks.delta.client_histories import (
    ALL_POLICIES,
    POLICY_OPS,
    ClientHistory,
    Table,
    bind_shaped,
    history_rounds,
)
from conformance.checks.delta.writer.conftest import Bind
from conformance.checks.delta.writer.history_nemesis import HistoryNemesis
from conformance.contract.delta import NotSupported, Storage
from conformance.nemesis import NemesisCatalog
from conformance.observe.recording import RecordingCatalog, RecordingClient
from conformance.observe.transcript import Transcript
from conformance.run_context import RunContext
from conformance.schedules.generated import CLIENT_HISTORY_VERSIONS
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient

RULES = frozenset(
    {
        "WRT-PUBLISH-ORDER",
        "WRT-CHECKPOINT-PUBLISHED",
        "WRT-COMPACTION-PUBLISHED",
        "WRT-COMPACTION-CONTENT",
        "WRT-CLEANUP-NEEDS-CHECKPOINT",
        "WRT-CLEANUP-KEEPS",
        "WRT-CLEANUP-STAGED-ABOVE",
        "WRT-NO-FILESYSTEM-COMMIT",
        "WRT-LOST-ANSWER-ONCE",
        "WRT-FILE-ACTIONS-ONCE",
        "WRT-STAGED-NAME",
        "WRT-STAGED-FORMAT",
        "WRT-REBASE-UNPUBLISHED",
        "WRT-PROTOCOL-VERSIONS",
        "WRT-COMMITINFO-FIRST",
        "WRT-TXNID",
        "WRT-PUBLISH-IDENTICAL",
    }
)
LAG_AT, LAG = 60, 20  # from v60 of the first table nothing is published until 20 commits wait
MAINTENANCE_EVERY = 70  # a round of every policy combination at v70, v140, ... of the first table
RACE_EVERY = 12  # from v12 of the first table, every 12 versions: two writers race (deletes, then appends, in turn)
TOUR_EVERY = 30  # from v30 of the first table, every 30 versions: one client serves every table in turn
SHAPED_EVERY = 10  # from v10 of the first table, every 10 versions: the shaped client loses a race, then publishes


def maintenance_round(h: ClientHistory, t: Table, rng: random.Random) -> None:
    """Each of the eight policy combinations, in the seed's order: a new published commit, then
    checkpoint, log compaction and cleanup up to the latest; the policy is reset to allow all.
    The new commit's row is deleted at once: the compaction's range (the last four versions) then
    holds a file added and removed inside it, which a reconciled compaction holds only as removed."""
    for allowed in rng.sample(ALL_POLICIES, len(ALL_POLICIES)):
        h.set_policy(t, allowed)
        h.append(t)
        h.delete_ids(t, [t.next_id - 1])
        h.publish(t)
        h.checkpoint(t)
        h.compact(t)
        h.cleanup(t, t.model.latest)
        h.judge_log(t)
    h.set_policy(t, frozenset(POLICY_OPS))


def run_history(
    h: ClientHistory, name: str, rng: random.Random, versions: int, seed: int, faults: HistoryNemesis | None
) -> None:
    main, other = h.create(f"{name}_0"), h.create(f"{name}_1")
    next_round, lagged, next_shaped = MAINTENANCE_EVERY, False, SHAPED_EVERY
    next_race, next_tour, races = RACE_EVERY, TOUR_EVERY, 0
    step = 0
    while main.model.latest < versions:
        step += 1
        if faults is not None and faults.due(main):
            faults.append(h, main)
            h.judge_log(main)
            continue
        if main.model.latest >= next_round:
            maintenance_round(h, main, rng)
            next_round += MAINTENANCE_EVERY
            continue
        if main.model.latest >= next_race:
            next_race += RACE_EVERY
            kind = ("delete", "append")[races % 2]
            races += 1
            if kind == "delete":
                h.append(main, n=2)  # two ids in one append: the racing deletes touch one data file
            h.racing_writes(main, kind)
            h.judge_log(main)
            continue
        if main.model.latest >= next_tour and not (main.model.latest >= LAG_AT and not lagged):
            next_tour += TOUR_EVERY
            h.tables_in_turn()
            continue
        if main.model.latest >= next_shaped:
            next_shaped += SHAPED_EVERY
            c = h.shaped_append(main)
            if c is not None and not (main.model.latest >= LAG_AT and not lagged):
                h.publish(main, who=c)  # at least the rival's commit and its own wait
            h.judge_log(main)
            continue
        t = main if rng.random() < 0.7 else other
        lagging = t is main and main.model.latest >= LAG_AT and not lagged
        if lagging and main.model.latest - main.model.published >= LAG:
            h.publish(main)  # more than 16 waited: the batch a publisher may split
            lagged = True
            continue
        action = rng.choices(["append", "together", "publish", "checkpoint"], weights=[8, 1, 2, 1], k=1)[0]
        if action == "publish" and not lagging:
            h.publish(t)
        elif action == "checkpoint" and not lagging:
            h.checkpoint(t)
        elif action == "together":
            h.concurrent_appends([t, t] if rng.random() < 0.5 else [main, other], seed + step)
        else:
            h.append(t, n=rng.choice((1, 1, 2, 3)))  # appends of several rows: deletes share their files
            h.delete_old(t)
        h.judge_log(t)
    h.publish(main)


@pytest.mark.req(  # the same as RULES, spelled out: marks are read without importing the module
    "WRT-CHECKPOINT-PUBLISHED",
    "WRT-CLEANUP-KEEPS",
    "WRT-CLEANUP-NEEDS-CHECKPOINT",
    "WRT-CLEANUP-STAGED-ABOVE",
    "WRT-COMPACTION-PUBLISHED",
    "WRT-COMPACTION-CONTENT",
    "WRT-NO-FILESYSTEM-COMMIT",
    "WRT-PUBLISH-ORDER",
    "WRT-LOST-ANSWER-ONCE",
    "WRT-FILE-ACTIONS-ONCE",
    "WRT-STAGED-NAME",
    "WRT-STAGED-FORMAT",
    "WRT-REBASE-UNPUBLISHED",
    "WRT-PROTOCOL-VERSIONS",
    "WRT-COMMITINFO-FIRST",
    "WRT-TXNID",
    "WRT-PUBLISH-IDENTICAL",
)
def test_long_histories_of_maintenance_and_publication_match_the_model(
    lakecert: RunContext,
    client: RecordingClient,
    client_factory: Callable[[], RecordingClient],
    bind: Bind,
    nemesis: NemesisCatalog,
    ref_admin: ReferenceCatalog,
    ref_catalog: RecordingCatalog,
    storage: Storage,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
    seed: int,
    request: pytest.FixtureRequest,
) -> None:
    budget = lakecert.config.settings.delta.budget
    clients = [client, client_factory(), client_factory()]
    # The nemesis steps' rival draws names from a seed of its own: with the run's seed (``suite_client``'s),
    # it would draw the names the history's own rivals (``ClientHistory._rivals``) draw, its put would be
    # refused (FileExistsError) and the "lost conflict" step would meet no rival at all.
    rival = ReferenceClient(
        RecordingCatalog(ref_admin, transcript, actor="suite"),
        suite_storage,
        seed=lakecert.derived_seed(f"{request.node.nodeid}#nemesis-rival"),
    )
    try:
        faults: HistoryNemesis | None = HistoryNemesis(nemesis, bind(nemesis), rival)
    except NotSupported:
        faults = None  # a client that cannot be bound to the nemesis: the history runs without faults
    # A further client under test meets the answer shapes the RFC allows (conformance/nemesis/shapes.py).
    # The history's log calls it client 3, as the nemesis steps call theirs: its lines name the shapes met.
    shaped = bind_shaped(lakecert, ref_catalog, storage, transcript, request.node.nodeid)
    for round_no, h in history_rounds(lakecert, clients, ref_admin, suite_storage, transcript, seed, RULES, shaped):
        h.hooks = ref_catalog  # the clients under test are bound to it: one's proposal can wait for another's write
        name, versions = f"{table_name[:40]}_{round_no}", CLIENT_HISTORY_VERSIONS[budget]
        run_history(h, name, h.rng, versions, seed + round_no, faults)
        if faults is not None:
            faults.met = 0
