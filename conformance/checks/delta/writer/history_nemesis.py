"""The nemesis inside the writer's long history (issue 28, item 3 inside item 2).

The directed nemesis checks (``writer/test_nemesis.py``) each lose one answer on a table at v1. Here a
fourth client under test, bound through lakecert's ``NemesisCatalog``, appends at fixed versions of
the history's first table, whatever state the history has reached there (commits waiting to be
published, right after a round of maintenance, after concurrent appends), and each of its appends
meets one fault, in turn:

- ``lost``: the catalog ratifies the proposal and its answer is lost;
- ``lost conflict``: a rival's commit takes the version first, and the conflict answer is lost;
- ``second delivery``: the proposal is ratified, a rival commits the next version, and the network
  delivers the proposal again (the conflict names a latest version above it);
- ``published meanwhile``: the answer is lost and another client publishes the table before the
  writer asks, so the catalog no longer lists the commit.

Judged by lakecert's own decoder (``conformance/oracle``) over the catalog's commits and
``_delta_log``: the append lands at most once (once if it reported a version, at that version), the
rival's commit once, and no other commit appears (WRT-LOST-ANSWER-ONCE, RFC "Terminology: Commits":
the catalog is the source of truth for what was ratified). The model then takes the versions the
catalog holds, in order, and the history goes on. A client that cannot be bound to the nemesis (it
reaches its catalog another way) makes the history run without these steps; the directed checks
then say NOT_APPLICABLE.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from conformance.checks.delta.builders import premise
from conformance.checks.delta.client_histories import ClientHistory, Table
from conformance.checks.delta.evidence import attempt
from conformance.nemesis import NemesisCatalog
from conformance.observe.recording import RecordingClient
from conformance.oracle import commits as oracle_commits
from conformance.report.outcomes import PremiseBroken
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.data_files import read_data_file
from reference_impl.delta.log_paths import delta_uri

ONCE = "WRT-LOST-ANSWER-ONCE"
FAULTS = ("lost", "lost conflict", "second delivery", "published meanwhile")
FIRST_AT, EVERY = 22, 25  # the first table's versions at which the next fault is met: 22, 47, 72, 97, ...

Row = dict[str, object]


@dataclass
class HistoryNemesis:
    nemesis: NemesisCatalog
    client: RecordingClient  # the client under test bound through ``nemesis``
    rival: ReferenceClient  # the suite's correct client on the same catalog
    met: int = 0  # faults met so far
    reached: bool = True  # False once the client turned out not to call ``nemesis``

    def due(self, t: Table) -> bool:
        return self.reached and t.model.latest >= FIRST_AT + EVERY * self.met

    def append(self, h: ClientHistory, t: Table) -> None:
        fault = FAULTS[self.met % len(FAULTS)]
        self.met += 1
        calls = self.nemesis.calls
        mine: Row = {"id": t.next_id, "value": f"nemesis {fault}"}
        rival: Row = {"id": t.next_id + 1, "value": "rival"}
        t.next_id += 2
        ran: list[str] = []

        def rival_commits() -> None:
            self.rival.append(t.name, [rival])
            ran.append("rival")

        def publish() -> None:
            self.rival.publish(t.name)
            ran.append("publish")

        step: tuple[Callable[[], object], str]
        if fault == "lost":
            self.nemesis.arm("commit", "lose")
        elif fault == "lost conflict":
            self.nemesis.arm("commit", "lose", before=(rival_commits, "a rival's commit took the version first"))
        elif fault == "second delivery":
            step = (rival_commits, "a rival committed the next version between the two deliveries")
            self.nemesis.arm("commit", "duplicate", after=step)
        else:
            step = (publish, "another client published the table before the writer asked")
            self.nemesis.arm("commit", "lose", after=step)
        before = t.model.latest
        events = h._step()  # this step's puts alone, judged as published copies below
        outcome = attempt(lambda: self.client.append(t.name, [mine]))
        if self.nemesis.calls == calls:
            self.reached = False  # the client reaches its catalog another way: no more faults
            h.log.step(f"client 3 (through the nemesis): append to {t.name} made no call through it")
            if outcome.error is not None:
                raise PremiseBroken(f"the writer's append failed: {type(outcome.error).__name__}: {outcome.error}")
            self._learn(h, t, before, mine, None)
            return
        if self.nemesis.pending:
            raise PremiseBroken("the writer's append made no proposal through the catalog it was handed")
        said = f"v{outcome.value}" if outcome.error is None else type(outcome.error).__name__
        what = f"client 3: append id {mine['id']} to {t.name} at v{before + 1}, {fault} ({', '.join(ran) or 'alone'})"
        h.log.step(f"{what} -> {said}")
        h.judge_staged_names(what)  # the retry after a lost answer is named for its own version too
        # Whatever the fault, every _delta_log/<v>.json the writer wrote holds the commit ratified at v: a
        # writer that publishes its proposal before it knows the outcome publishes a loser's actions when the
        # lost answer was a conflict ("lost conflict": the rival's commit holds v, unpublished). Judged before
        # the versions are learnt: the catalog may have dropped v since, and the wrong file then stands for it.
        for e in events.commits:
            if e.args["table_id"] == t.info.table_id:
                staged = e.args["staged_uri"]
                with premise(f"reading the ratified commit of v{e.args['version']} of {t.name}"):
                    t.ratified[e.args["version"]] = (
                        e.args["inline_content"] if staged is None else h.storage.get(staged)
                    )
        h._judge_published_copies(t, events, what)
        h.judge_publication_order(what)
        self._learn(h, t, before, mine, rival if "rival" in ran else None, outcome.value, what)
        if "publish" in ran:
            h.learn_published(t)

    def _learn(
        self,
        h: ClientHistory,
        t: Table,
        before: int,
        mine: Row,
        rival: Row | None,
        reported: int | None = None,
        what: str = "",
    ) -> None:
        """Judge the versions the catalog holds above ``before`` and let the model take them."""
        commits = _commits(h, t, before)
        added = {v: rows for v, (rows, _) in commits.items()}
        at = [v for v, rows in added.items() if mine in rows]
        if len(at) > 1 or (reported is not None and at != [reported]):
            raise h.charge(
                ONCE,
                f"{what}: the catalog holds v{before + 1}-v{max(added)}; the appended row is added at"
                f" {[f'v{v}' for v in at] or 'no version'}, the append reported {reported}",
                "the change once, at the version the append reported (the writer asks the catalog whose"
                " commit a version holds before it commits again)",
            )
        rivals = [v for v, rows in added.items() if rival is not None and rival in rows]
        if rival is not None and len(rivals) != 1:
            raise h.charge(ONCE, f"{what}: the rival's row is added at {rivals}", "the rival's commit once")
        stray = [v for v, rows in added.items() if v not in at and v not in rivals]
        if stray:
            raise h.charge(
                ONCE,
                f"{what}: v{stray[0]} adds {added[stray[0]]}, neither the append's row nor the rival's",
                "no commit but the append's and the rival's",
            )
        for v, (rows, ict) in sorted(commits.items()):
            previous = t.model.icts.get(v - 1)
            if ict is None or (previous is not None and ict <= previous):
                raise PremiseBroken(f"v{v}'s in-commit timestamp {ict} is not after v{v - 1}'s (WRT-ICT-MONOTONIC)")
            t.model.append({int(str(r["id"])): str(r["value"]) for r in rows}, ict)


def _commits(h: ClientHistory, t: Table, before: int) -> dict[int, tuple[list[Row], int | None]]:
    """Version -> the rows its commit adds and its in-commit timestamp, for every version the catalog
    ratified above ``before``: the catalog's commit where it still stores one, else the published file
    (one listing, one decode per version, by lakecert's own decoder)."""
    resp = h.ref_admin.get_commits(t.info.table_id)
    stored = {c.version: c for c in resp.commits}
    out: dict[int, tuple[list[Row], int | None]] = {}
    with premise(f"reading v{before + 1}-v{resp.latest_version} of {t.name} (their format: WRT-STAGED-FORMAT)"):
        for v in range(before + 1, resp.latest_version + 1):
            c = stored.get(v)
            if c is not None and c.inline_content is not None:
                content = c.inline_content
            elif c is not None and c.staged_uri is not None:
                t.staged[v] = c.staged_uri.rsplit("/", 1)[-1]
                content = h.storage.get(c.staged_uri)
            else:
                content = h.storage.get(delta_uri(t.info.location, v))
            actions = oracle_commits.decode(content)
            if oracle_commits.of_kind(actions, "remove"):
                raise PremiseBroken(f"v{v} of {t.name} removes files; only appends ran in this step")
            rows = [
                r
                for a in oracle_commits.of_kind(actions, "add")
                for r in read_data_file(h.storage, t.info.location, a["path"])
            ]
            out[v] = (rows, oracle_commits.in_commit_timestamp(actions))
    return out
