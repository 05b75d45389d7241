"""What the tables of a catalog hold when it restarts: runs of ratified, unpublished commits of many
lengths, each judged whole right after the restart (RFC "Commit Protocol" and "Terminology: Commits":
a ratified commit is stored until it is published, and is kept in persistent storage, so a restart
loses none of them).

A catalog keeps its in-memory state right until a restart; what it writes down is seen only after one.
A store that keeps a bounded number of rows per table (a state document under a size limit, a batch
loaded at start-up, a page of a query) is cut at a round number of its own, so the history holds, on
tables of their own, runs of every length up to the cap on unpublished commits the catalog declares,
or, without one, runs past every round number a store might cut at (50, 64, 100, 128; 256 and 1024 in
the deep budget). Runs are proposed as the history proposes (staged, and inline every few proposals
where the catalog hosts inline commits), half of them above a published prefix. ``CatalogHistory.restart``
then judges every table's listing, in full and from its mark, against the model.
"""

from __future__ import annotations

from collections.abc import Callable

from conformance.checks.delta.builders import CatalogDriver
from conformance.checks.delta.catalog.history import CatalogHistory, Tracked
from conformance.report.outcomes import PremiseBroken

# Unpublished commits each run table holds at the restart, when no cap is declared: each length one past
# a number a store may cut at, and short runs too, per budget.
UNCAPPED_RUNS = {
    "quick": (1, 7, 51, 65, 129),
    "default": (1, 2, 7, 33, 51, 65, 101, 129),
    "deep": (1, 2, 7, 33, 51, 65, 101, 129, 257, 1025),
}
PUBLISHED_PREFIX = 3  # commits every other run table publishes before its run


def run_lengths(cap: int | None, budget: str) -> list[int]:
    """The runs held at the restart: under a declared cap, every length from one to the cap that a
    store of the cap's size could cut one short of (1, 2, half, the cap less one, the cap itself)."""
    if cap is None:
        return list(UNCAPPED_RUNS[budget])
    return sorted({n for n in (1, 2, cap // 2, cap - 1, cap) if n >= 1})


def grow_run(h: CatalogHistory, t: Tracked, index: int, length: int, capped: bool) -> bool:
    """Propose until ``t`` holds ``length`` unpublished commits. False when the catalog refused a proposal
    with no cap declared (a limit of its own: longer runs are not drawn; the listings judge that the
    refusal changed nothing); a refusal under a declared cap is judged by the history."""
    for _ in range(2 * length):  # an inline shape the catalog refuses costs a proposal, not a commit
        if t.model.latest - t.model.published >= length:
            return True
        try:
            h.propose(t, index % 3)
        except PremiseBroken:
            if capped:
                raise
            h.log.step(f"{t.info.name}: the catalog refused a run longer than {t.model.latest - t.model.published}")
            return False
    return t.model.latest - t.model.published >= length


def restart_holding_runs(h: CatalogHistory, restart: Callable[[], CatalogDriver], name: str, budget: str) -> str:
    """Hold runs of unpublished commits on tables of their own, judge each listing once, restart the
    catalog through ``h.restart`` (which judges every table after it), then leave the run tables out of
    the rest of the history. What was held, for the transcript."""
    first = len(h.tables)
    held: list[str] = []
    for i, length in enumerate(run_lengths(h.cap, budget)):
        t = h.create(f"{name}_run{length}")
        index = len(h.tables) - 1
        if i % 2 == 1:
            for _ in range(PUBLISHED_PREFIX):
                h.propose(t, 0)
            h.publish(t, index, t.model.latest)
        if not grow_run(h, t, index, length, h.cap is not None):
            break
        # Right before the restart, the run is listed whole: a fault seen here is not the restart's.
        h.judge_listing(index, None, None)
        held.append(f"{t.info.name}: v{t.model.published + 1}-v{t.model.latest} unpublished")
    h.restart(restart)
    del h.tables[first:]
    return "; ".join(held)
