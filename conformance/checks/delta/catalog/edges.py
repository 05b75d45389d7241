"""The edges of every catalog call's arguments, drawn inside the long catalog history (issue 28).

Six blind rounds showed that what the histories miss sits at the edge of one call's arguments: a
listing bound of 0 or one past the latest, a publication mark given again or going back, a mark
carried by a proposal that is refused, a gap proposal in inline form. After every step of the
history one listing and one call are drawn from the tables below, their arguments taken from the
table's state at that moment: its latest version L, its publication mark P (the stored unpublished
run is P+1..L). The answer and the state afterwards are judged against the model
(``conformance/model/catalog_managed``). Each table is gone through in a seed-shuffled order, so
every edge is drawn at least once per history whatever the seed (``Edges.finish`` draws the rest).

What each edge may answer (RFC sections; docs/certify.md fills in the API):

- ``get_commits(start, end)``, start and end each from ``BOUNDS``: a range with start <= end (or an
  open bound) is judged as every listing of the history is ("Getting Ratified Commits from the
  Catalog": the latest version always, every stored unpublished commit of the range, nothing outside
  it). start > end is left open by the RFC: a clean refusal or a listing, but never a commit (a range
  that holds no version holds no commit) nor a wrong latest version.
- ``mark_published(v)``, v from ``MARKS``: P+1 and L are true publications (the files are copied to
  ``_delta_log`` first); the catalog may then drop commits up to v and nothing above. P (again) and
  P-1 (going back) may be refused or be no-ops, but change nothing a listing sees. L+1 reports a
  version not yet ratified: refused or ignored, it drops nothing (CAT-PUBLISH-REPORT-POSSIBLE, a
  SHOULD, charged at once: the history ends there).
- ``commit(v, latest_published_version=b)``, v from ``VERSIONS`` in staged and inline form, b from
  ``CARRIED``: the proposal is judged as if it carried no mark ("Commit Protocol": L+1 ratified, a
  taken version a conflict stating, if anything, the table's latest whatever its form, a gap
  refused); only a ratified one applies b, as ``mark_published`` would (docs/certify.md). A
  conflicting or refused proposal changes nothing: the latest version and the listing stay, a mark
  it carries is not applied, and its version stays free (the versions up to it are then ratified in
  order). Marks above P are true publications, except ``L`` on a proposal that must not be ratified:
  an untrue report, which only a catalog that applies it acts on. ``V-1`` (gaps only) is the version
  before the proposal's own: an untrue report of versions never ratified, which a catalog must not
  take as proof that they exist: the gap is refused all the same.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from conformance.checks.delta.builders import ict_ms_of, premise
from conformance.checks.delta.catalog.inline_shapes import unique
from conformance.contract.delta import CatalogError, CommitConflict, NotSupported
from conformance.model.catalog_managed import CatalogTable, Commit, ListingFault
from reference_impl.delta import log_paths as P

if TYPE_CHECKING:
    from conformance.checks.delta.catalog.history import CatalogHistory, Tracked

# Symbols of a version, relative to the table's mark P and latest L at the moment of the call.
BOUNDS = ("none", "0", "1", "P-1", "P", "P+1", "L-1", "L", "L+1", "L+2")
MARKS = ("P-1", "P", "P+1", "L", "L+1")
VERSIONS = ("L+1", "L", "P", "P+1", "1", "L+2", "L+3")
# "V-1": the version before the proposal's own ("everything before me is published"): on a gap, a mark
# above the latest that a catalog taking it for RFC option 3's PUT-if-absent ratifies over the gap.
CARRIED = ("none", "P-1", "P", "P+1..L", "L", "V-1")
REPORT = "CAT-PUBLISH-REPORT-POSSIBLE"
BackMark = Literal["mark", "carried"]  # a mark going back given to mark_published, or carried by a proposal
FILL_LIMIT = 128  # declared caps up to this are filled after a mark going back; larger ones cost too much


@dataclass(frozen=True)
class Edge:
    """One call and the edge of its arguments: ``first`` is the start of a listing, the version of a
    mark or of a proposal; ``second`` the end of a listing or the mark a proposal carries."""

    kind: Literal["list", "mark", "propose"]
    first: str
    second: str = "none"
    inline: bool = False

    def __str__(self) -> str:
        if self.kind == "list":
            return f"list [{self.first}, {self.second}]"
        if self.kind == "mark":
            return f"mark {self.first}"
        return f"propose {self.first} {'inline' if self.inline else 'staged'} carrying {self.second}"


LISTINGS = tuple(Edge("list", start, end) for start in BOUNDS for end in BOUNDS)
CALLS = tuple(Edge("mark", v) for v in MARKS) + tuple(
    Edge("propose", v, mark, inline)
    for v in VERSIONS
    for mark in CARRIED
    for inline in (False, True)
    if mark != "V-1" or v in ("L+2", "L+3")  # elsewhere "V-1" is another symbol's mark (see ``fits``)
)


def value(sym: str, m: CatalogTable) -> int | None:
    """The version a symbol stands for on this table now (``None``: no bound)."""
    if sym == "none":
        return None
    base = {"P": m.published, "L": m.latest}.get(sym[0])
    return int(sym) if base is None else base + int(sym[1:] or 0)


def version(sym: str, m: CatalogTable) -> int:
    """The version a mark or a proposal names (never "none")."""
    v = value(sym, m)
    if v is None:
        raise ValueError(f"{sym!r} names no version")
    return v


def fits(edge: Edge, m: CatalogTable) -> bool:
    """Whether the edge means something on a table in this state (no negative version, a mark above
    P only where something is unpublished, no proposal of version 0)."""
    if edge.kind == "list":
        return all((value(s, m) or 0) >= 0 for s in (edge.first, edge.second))
    v = version(edge.first, m)
    if edge.kind == "mark":
        return v >= 0 and (edge.first not in ("P+1", "L") or m.published < m.latest)
    if edge.second == "P+1..L" and m.published >= m.latest:
        return False
    if edge.second == "V-1" and edge.first not in ("L+2", "L+3"):
        return False  # elsewhere v-1 is what "L" (on L+1) or a mark at or below L already draws
    return v >= 1 and (edge.second != "P-1" or m.published >= 1)


class Cycle:
    """A table of edges gone through in a seed-shuffled order; an edge that fits no table now waits."""

    def __init__(self, edges: tuple[Edge, ...], rng: random.Random) -> None:
        self.edges, self.rng = edges, rng
        self.pending: list[Edge] = []
        self.drawn: set[Edge] = set()

    def draw(self, fit: Callable[[Edge], bool]) -> Edge | None:
        for attempt in range(2):
            if attempt or not self.pending:  # a new round, behind what still waits
                waiting = set(self.pending)
                self.pending += self.rng.sample(
                    [e for e in self.edges if e not in waiting], len(self.edges) - len(waiting)
                )
            for i, edge in enumerate(self.pending):
                if fit(edge):
                    self.drawn.add(edge)
                    return self.pending.pop(i)
        return None

    def missing(self) -> list[Edge]:
        return [e for e in self.edges if e not in self.drawn]


class Edges:
    """The edge dimension of one history: after each step, one listing and one call."""

    def __init__(self, rng: random.Random) -> None:
        self.listings = Cycle(LISTINGS, rng)
        self.calls = Cycle(CALLS, rng)
        self._turn = 0
        self.reports_above = 0  # marks of L+1 made: every other one on a table with nothing unpublished

    def after(self, h: CatalogHistory, index: int, quiet: set[int]) -> None:
        """One listing of the acted-on table and one call on it, or on another table while the
        history holds the acted-on one at a directed boundary (``quiet``)."""
        m = h.tables[index].model
        edge = self.listings.draw(lambda e: fits(e, m))
        if edge is not None:
            judge_list(h, index, edge)
        if index in quiet:
            others = [i for i in range(len(h.tables)) if i not in quiet]
            index = others[self._turn % len(others)]
            self._turn += 1
        m = h.tables[index].model
        edge = self.calls.draw(lambda e: fits(e, m))
        if edge is not None:
            self.call(h, index, edge)

    def call(self, h: CatalogHistory, index: int, edge: Edge) -> None:
        if edge.kind == "mark":
            judge_mark(h, index, edge, self)
        else:
            judge_proposal(h, index, edge)

    def finish(self, h: CatalogHistory, quiet: set[int]) -> None:
        """Draw every edge the history did not reach, each on a table it fits (making one fit by a
        proposal or a publication where none does); then charge a broken SHOULD, if any."""
        for cycle in (self.listings, self.calls):
            for edge in cycle.missing():
                for _ in range(4):
                    fitting = [i for i, t in enumerate(h.tables) if i not in quiet and fits(edge, t.model)]
                    if fitting:
                        cycle.drawn.add(edge)
                        if edge.kind == "list":
                            judge_list(h, fitting[0], edge)
                        else:
                            self.call(h, fitting[0], edge)
                        break
                    t = h.tables[-1]
                    if t.model.published == 0 and t.model.latest > 0:
                        h.publish(t, len(h.tables) - 1, 1)
                    else:
                        h.make_room(t, len(h.tables) - 1, 1)
                        h.propose(t, 0)
        h.log.step(f"edges: all {len(LISTINGS)} listings and {len(CALLS)} calls drawn")


# ---------------------------------------------------------------------- listings


def _listed(
    h: CatalogHistory, t: Tracked, start: int | None, end: int | None
) -> tuple[dict[int, str | bytes | None], int]:
    resp = h.catalog.get_commits(t.info.table_id, start, end)
    return {
        c.version: c.staged_uri if c.staged_uri is not None else c.inline_content for c in resp.commits
    }, resp.latest_version


def judge_list(h: CatalogHistory, index: int, edge: Edge) -> None:
    t = h.tables[index]
    m = t.model
    start, end = value(edge.first, m), value(edge.second, m)
    h.log.step(f"edge {edge}: list [{start}, {end}] of {t.info.name} (mark v{m.published}, latest v{m.latest})")
    if start is None or end is None or start <= end:
        h.judge_listing(index, start, end)
        return
    try:
        listed, latest = _listed(h, t, start, end)
    except CatalogError:
        return  # start > end: the RFC leaves the answer open, and a refusal lists nothing outside it
    # No version lies in [start, end]: any commit listed is outside the range (the model says which).
    faults = m.judge_listing(start, end, listed, latest)
    if faults:
        raise h.charge(index, faults[0], start, end)


# ---------------------------------------------------------------------- publication marks


def publish_files(h: CatalogHistory, t: Tracked, upto: int) -> None:
    """Copy the ratified commits up to ``upto`` to ``_delta_log`` without telling the catalog, so that
    a mark up to ``upto`` (given alone or carried by a proposal) reports a true publication."""
    storage = h.driver.storage
    with premise(f"copying the commits of {t.info.name} up to v{upto} to _delta_log"):
        for c in h.catalog.get_commits(t.info.table_id, None, upto).commits:
            uri = P.delta_uri(t.info.location, c.version)
            content = c.inline_content if c.staged_uri is None else storage.get(c.staged_uri)
            if c.version <= upto and content is not None and not storage.exists(uri):
                storage.put(uri, content, if_absent=True)


def _marked(h: CatalogHistory, t: Tracked, index: int, mark: int) -> None:
    """The catalog took a true mark: the model may now forget up to it; a commit dropped now is
    charged to the mark (``CatalogHistory.charge``)."""
    t.model.mark_published(mark)
    h.driver.published[t.info.table_id] = max(mark, h.driver.published.get(t.info.table_id, 0))
    h.last_publish = index


def judge_mark(h: CatalogHistory, index: int, edge: Edge, edges: Edges) -> None:
    t = h.tables[index]
    m = t.model
    if edge.first == "L+1":
        # Every other report above the latest is made once all is published: a catalog that checks a
        # mark only against its unpublished commits has nothing to check it against then.
        edges.reports_above += 1
        if edges.reports_above % 2 == 0 and m.published < m.latest:
            h.publish(t, index, m.latest)
    if edge.first == "P-1":
        leave_room_to_fill(h, index, "mark", 0)
    v = version(edge.first, m)
    true = edge.first in ("P+1", "L")
    if true:
        publish_files(h, t, v)
    try:
        h.catalog.mark_published(t.info.table_id, v)
        got = "accepted"
    except CatalogError as e:
        got = f"refused ({type(e).__name__})"  # any mark may be refused: the catalog then keeps its commits
    h.log.step(f"edge {edge}: mark v{v} of {t.info.name} published (mark v{m.published}, latest v{m.latest}) -> {got}")
    if true and got == "accepted":
        _marked(h, t, index, v)
    h.last_publish = index
    if edge.first == "P-1" and got == "accepted":
        fill_after_back_mark(h, index, "mark")
    if edge.first != "L+1":
        # Going back (P-1) or again (P): a no-op or a refusal, nothing above P dropped.
        h.judge_listing(index, None, None)
        return
    _judge_report_above_latest(h, index, v, got == "accepted", edges)


def _fill_cap(h: CatalogHistory, t: Tracked, kind: BackMark) -> int | None:
    """The declared cap a mark going back on this table is followed by a fill to, if any
    (``fill_after_back_mark``)."""
    if h.cap is None or h.cap > FILL_LIMIT or kind in t.filled_after_back or h.held_before_restart is not None:
        return None
    return h.cap


def leave_room_to_fill(h: CatalogHistory, index: int, kind: BackMark, coming: int) -> None:
    """Before a mark going back that a fill follows, with ``coming`` commits about to be ratified
    with it: publish (a true mark) until at least one proposal is left below the declared cap. A
    table already at its cap when the mark goes back gives the fill nothing to propose, and a
    catalog that moved its mark back went unseen (seen on CI: caught or not with the race's winner)."""
    t = h.tables[index]
    cap = _fill_cap(h, t, kind)
    over = 0 if cap is None else t.model.latest + coming - t.model.published - (cap - 1)
    if over > 0:
        h.publish(t, index, min(t.model.latest, t.model.published + over))


def fill_after_back_mark(h: CatalogHistory, index: int, kind: BackMark) -> None:
    """A mark going back changes nothing (RFC "Publishing Commits"), so the first time a table takes
    one of each kind (given to ``mark_published``, carried by a proposal) it is filled to the declared
    cap on unpublished commits, every proposal of which the catalog must ratify (CAT-LIMIT-DECLARED):
    a catalog that moved its mark back counts published commits as waiting and refuses below its cap.
    Before the restart only, where no refusal is the restart's."""
    t = h.tables[index]
    cap = _fill_cap(h, t, kind)
    if cap is None:
        return
    t.filled_after_back.add(kind)
    h.log.step(f"fill {t.info.name} to the declared cap of {cap} unpublished commits after a mark going back")
    while t.model.latest - t.model.published < cap:
        h.propose(t, 0)


def _judge_report_above_latest(h: CatalogHistory, index: int, v: int, accepted: bool, edges: Edges) -> None:
    """A report of v = L+1, not yet ratified, drops nothing: not P+1..L now, nor v once it is ratified.
    A catalog that takes it breaks a SHOULD: the history ends there with that finding."""
    t = h.tables[index]
    m = t.model
    missing = _missing(h, t, m)
    if missing is None and accepted:
        h.make_room(t, index, 1)  # moves P only: v is still latest + 1
        _ratify(h, index, v, "CAT-RATIFY-ONCE", f"the report of v{v} published before it was ratified")
        missing = _missing(h, t, m)
    if missing is None:
        return
    # Charged at once: after it the catalog holds a state no model step leads to, and a history that
    # went on charged what followed to rules that depended on the timing (seen over HTTP).
    raise h.log.violation(
        REPORT,
        f"after a report that v{v} of {t.info.name} was published while the latest was v{v - 1}, {missing.detail}",
        "a report of a version not yet ratified refused or ignored, never a commit dropped because of it",
    )


def _missing(h: CatalogHistory, t: Tracked, m: CatalogTable) -> ListingFault | None:
    """The first unpublished commit the full listing leaves out or changes (other faults: judged by
    the history's own listings)."""
    with premise(f"listing {t.info.name}"):
        listed, latest = _listed(h, t, None, None)
    return next((f for f in m.judge_listing(0, None, listed, latest) if f.kind == "missing"), None)


# ---------------------------------------------------------------------- proposals


def judge_proposal(h: CatalogHistory, index: int, edge: Edge) -> None:
    t = h.tables[index]
    m = t.model
    v = version(edge.first, m)
    expect = m.judge(v)
    if expect == "ratified":
        h.make_room(t, index, 1)  # moves P only, never L: v stays latest + 1
        if edge.second == "P-1":
            leave_room_to_fill(h, index, "carried", 1)
    if edge.inline and not h.inline:
        h.log.step(f"edge {edge}: skipped, the catalog hosts no inline commits")
        return
    mark, true = _carried(h, t, edge.second, expect, v)
    uri = None if edge.inline else h._stage(t, v)
    content = unique(v, ict_ms_of(v)) if edge.inline else None
    try:
        h.catalog.commit(
            t.info.table_id,
            v,
            staged_uri=uri,
            inline_content=content,
            in_commit_timestamp=ict_ms_of(v),
            latest_published_version=mark,
        )
        got = "ratified"
    except CommitConflict as conflict:
        got = "conflict"
        # The history's tables hold staged and inline commits side by side, and these proposals of taken
        # versions come in both forms: a conflict of either form states the table's latest, whatever
        # form that commit has (RFC "Commit Protocol"; a catalog that keeps the two forms apart and
        # answers from the proposal's own store states an older one). A SHOULD, held to the end.
        h.judge_conflict_latest(t, v, conflict)
    except NotSupported:
        got = "not supported"  # inline commits are a MAY; the listing below judges that nothing changed
        h.inline = h.inline and not edge.inline
    except CatalogError as e:
        got = f"refused ({type(e).__name__})"
        if expect == "ratified" and mark is None:
            h._refused_valid(t, v, e)
    what = f"{'inline' if edge.inline else 'staged'} proposal of v{v} of {t.info.name} carrying mark {mark}"
    h.log.step(f"edge {edge}: {what} (mark v{m.published}, latest v{m.latest}, {expect} expected) -> {got}")
    if got == "ratified":
        if expect != "ratified":
            raise h.log.violation(
                "CAT-RATIFY-ONCE" if expect == "conflict" else "CAT-RATIFY-SEQUENTIAL",
                f"the {what} was ratified",
                f"only a {'conflict' if expect == 'conflict' else 'refusal'}: the latest is v{m.latest}",
            )
        m.ratify(Commit(v, uri, content))
        if mark is not None:
            _marked(h, t, index, mark)  # applied as mark_published would be: P-1 and P change nothing
        h.judge_listing(index, None, None)
        if true and mark is not None:
            # A catalog may ignore marks in proposals (docs/certify.md "Limits"): told again, its own
            # mark is the model's, so a cap on unpublished commits counts what the model counts.
            h.publish(t, index, mark)
        if edge.second == "P-1":
            fill_after_back_mark(h, index, "carried")
        return
    if expect == "ratified" and got == "conflict":
        raise h.log.violation(
            "CAT-RATIFY-ONCE", f"the {what} got a conflict", f"ratification: v{v} is latest + 1 (v{m.latest})"
        )
    # Refused or a conflict: nothing changed. A true mark (its files copied) may be taken as a
    # publication all the same; an untrue one (L, nothing copied) must not be applied.
    rule = "CAT-RATIFY-ONCE" if expect == "conflict" else "CAT-RATIFY-SEQUENTIAL"
    dropped = "CAT-RETAIN-UNPUBLISHED" if expect == "conflict" else "CAT-RATIFY-SEQUENTIAL"
    _judge_unchanged(h, index, f"the {what} -> {got}", rule, dropped, mark if true else None)
    if true and mark is not None:
        h.publish(t, index, mark)  # the catalog is now told what the model may assume
    if expect != "conflict":
        _still_free(h, index, v, f"the refused {what}")


def _carried(h: CatalogHistory, t: Tracked, sym: str, expect: str, v: int) -> tuple[int | None, bool]:
    """The mark a proposal of ``v`` carries, and whether it is true (its files copied first)."""
    m = t.model
    if sym == "V-1":
        return v - 1, False  # on a gap (``fits``): above the latest, never a publication
    if sym == "P+1..L" or (sym == "L" and expect == "ratified" and m.latest > m.published):
        mark = m.latest if sym == "L" else h.rng.randint(m.published + 1, m.latest)
        publish_files(h, t, mark)
        return mark, True
    return value(sym, m), False


def _judge_unchanged(h: CatalogHistory, index: int, what: str, rule: str, dropped: str, true_mark: int | None) -> None:
    """After a refused or conflicting proposal the full listing is as before: same latest version,
    every unpublished commit (above a true mark it carried, which the catalog may have taken), the
    proposal's own commit nowhere."""
    t = h.tables[index]
    m = t.model
    view = m if true_mark is None else replace(m, published=max(m.published, true_mark))
    with premise(f"listing {t.info.name}"):
        listed, latest = _listed(h, t, None, None)
    faults = view.judge_listing(0, None, listed, latest)
    if not faults:
        return
    fault = faults[0]
    if fault.kind == "latest":
        raise h.log.violation(rule, f"after {what}, {fault.detail}", "a refused proposal to change nothing")
    if fault.kind == "missing":
        raise h.log.violation(
            dropped,
            f"after {what}, {fault.detail}",
            f"a refused proposal to change nothing: the mark it carries not applied (the mark is v{m.published})",
        )
    raise h.charge(index, fault, None, None)


def _still_free(h: CatalogHistory, index: int, version: int, what: str) -> None:
    """A refused proposal leaves its version free: latest + 1 up to it are ratified in order."""
    t = h.tables[index]
    h.make_room(t, index, version - t.model.latest)
    while t.model.latest < version:
        _ratify(h, index, t.model.latest + 1, "CAT-RATIFY-SEQUENTIAL", what)
    h.judge_listing(index, None, None)


def _ratify(h: CatalogHistory, index: int, v: int, rule: str, after: str) -> None:
    """Propose latest + 1 (no mark): it must be ratified; a conflict is charged to ``rule``."""
    t = h.tables[index]
    uri = h._stage(t, v)
    try:
        h.catalog.commit(t.info.table_id, v, staged_uri=uri, in_commit_timestamp=ict_ms_of(v))
    except CommitConflict:
        h.log.step(f"propose v{v} of {t.info.name} -> conflict")
        raise h.log.violation(
            rule, f"after {after}, v{v} (latest + 1) got a conflict", f"ratification: v{v} was never ratified"
        ) from None
    except CatalogError as e:
        h._refused_valid(t, v, e)
    h.log.step(f"propose v{v} of {t.info.name} -> ratified")
    t.model.ratify(Commit(v, uri))
