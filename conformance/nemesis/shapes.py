"""A catalog that answers a client under test in every shape the RFC allows, not only the reference's.

The reference catalog always answers the same way: a conflict states the latest version, a published
commit leaves its listings at once, its listings are ascending. Real catalogs answer otherwise, within
the RFC: Unity Catalog lists newest first and keeps backfilled commits for a while, and a conflict
need not state the latest version. A client that assumes the reference's shape is wrong against them.

``ShapedCatalog`` wraps the catalog a client would get and, per answer, draws a shape from a seeded
bag that holds every shape once (``ShapeBag``): each shape is met at least once per round of the bag,
in an order the seed picks. The shapes, each allowed by the RFC and by lakecert's own catalog rules:

- a ``CommitConflict`` with the latest version, or without it ("Commit Protocol": catalogs are only
  *encouraged* to state it);
- a listing in ascending, descending (Unity Catalog's) or shuffled order (no binding section orders a
  listing: CAT-LIST-ASCENDING is retired);
- a listing that drops published commits, or still serves the newest one, a few, or all of those it
  ratified while their staged file (or inline content) and their ``_delta_log/<v>.json`` exist,
  byte-identical, contiguous with the stored ones, inside the asked range, with the true latest
  version ("Terminology: Commits": a published commit *need not* be stored, and "the catalog is
  allowed to return information about published commits");
- a range (``start``/``end``) asked is passed on as asked, and its shape recorded;
- commits listed with or without their in-commit timestamps (docs/certify.md: a catalog may store
  or ignore the one proposed; the commit's own ``commitInfo`` holds it). Over UC's API, whose
  commits always carry a timestamp, they keep them.

Besides, ``rival_first`` runs a rival's commit (staged or inline: option 1 or 2 of "Commit Protocol")
when the client's next proposal arrives, so that the client meets a lost race.

Every answer's shape goes into ``met`` (the transcript's note ``shapes``), so that a finding's
explanation names it. Every shape is one Unity Catalog's API can carry, so an adapter that serves the
catalog to a client in another process (Delta Kernel, ``delta_kernel/target.py``) serves this object
itself (``over_http``, which sets ``served``): the client meets the shapes on the wire. A client that
never calls this object leaves ``calls`` at 0: its history then runs without shapes."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Generic, TypeVar

from conformance.contract.delta import (
    Catalog,
    CommitConflict,
    GetCommitsResponse,
    RatifiedCommit,
    Storage,
    TableInfo,
)
from conformance.nemesis.between import Between
from conformance.observe.transcript import Event, Transcript

S = TypeVar("S")
CONFLICTS = ("with the latest version", "without the latest version")
ORDERS = ("ascending", "descending", "shuffled")
KEEPS = ("none", "newest", "some", "all")  # published commits still served
TIMESTAMPS = ("with in-commit timestamps", "without in-commit timestamps")
SOME = 3  # "some": this many published commits at most
NOTED = 400  # the last shapes met, kept in the transcript's notes


class ShapeBag(Generic[S]):
    """Every shape once per round, each round in a new order drawn from ``rng``."""

    def __init__(self, shapes: Sequence[S], rng: random.Random) -> None:
        self._shapes, self._rng = list(shapes), rng
        self._left: list[S] = []

    def draw(self) -> S:
        if not self._left:
            self._left = self._rng.sample(self._shapes, len(self._shapes))
        return self._left.pop()


class ShapedCatalog(Between):
    """``contract.Catalog`` around ``inner`` (the recording catalog a client would otherwise get).

    ``transcript`` tells it every commit any client or the suite had ratified (what it may keep
    serving once published); ``storage`` says whether a kept commit's files still exist."""

    def __init__(self, inner: Catalog, storage: Storage, transcript: Transcript, seed: int) -> None:
        super().__init__(inner)
        self._storage = storage
        self._rng = random.Random(seed)
        self._conflicts = ShapeBag(CONFLICTS, self._rng)
        self._listings = ShapeBag(list(itertools.product(ORDERS, KEEPS)), self._rng)
        self._timestamps = ShapeBag(TIMESTAMPS, self._rng)
        self._ratified: dict[str, dict[int, RatifiedCommit]] = {}  # table id -> version -> commit
        self._locations: dict[str, str] = {}  # table id -> location
        self._before: tuple[Callable[[], object], str] | None = None
        self.met: list[str] = []  # each shaped answer, in words
        self._transcript = transcript
        self.served = False  # set once an adapter serves this object over HTTP (``over_http``)
        transcript.listeners.append(self._learn)

    @property
    def over_http(self) -> Catalog:
        """Served as it is: a conflict without the latest version, a listing in any order or with
        published commits kept are all answers UC's API carries. A rival's inline commit is not
        (``served`` tells the history to give such a client staged rivals only)."""
        self.served = True
        return self

    def __getattr__(self, name: str) -> object:
        # What the server asks of the reference catalog besides the contract (its proposal checks,
        # declared limits) passes through unshaped.
        return getattr(self._inner, name)

    def rival_first(self, step: Callable[[], object], what: str) -> None:
        """Run ``step`` (a rival's commit) when the client's next proposal arrives, before it."""
        self._before = (step, what)

    @property
    def pending(self) -> bool:
        """Whether the rival's step has not run yet (the client made no proposal through this object)."""
        return self._before is not None

    def disarm(self) -> None:
        self._before = None

    def _learn(self, e: Event) -> None:
        """Every ratified commit and resolved location any actor's recorded call showed."""
        if not e.ok:
            return
        if e.op == "commit":
            commit = RatifiedCommit(
                e.args["version"],
                e.args.get("staged_uri"),
                e.args.get("inline_content"),
                e.args.get("in_commit_timestamp"),
            )
            self._ratified.setdefault(e.args["table_id"], {})[commit.version] = commit
        elif e.op in ("resolve", "register_table") and isinstance(e.result, TableInfo):
            self._locations[e.result.table_id] = e.result.location

    def _note(self, text: str) -> None:
        self.met.append(text)
        self._transcript.notes["shapes"] = self.met[-NOTED:]  # for the reproducer, as the schedule's steps

    # ------------------------------------------------------------------ Catalog

    def commit(
        self,
        table_id: str,
        version: int,
        *,
        staged_uri: str | None = None,
        inline_content: bytes | None = None,
        in_commit_timestamp: int | None = None,
        latest_published_version: int | None = None,
        **extra: Any,
    ) -> None:
        """``extra``: the server's keywords beyond the contract (``staged_content``), passed on."""
        self.calls += 1
        before, self._before = self._before, None
        if before is not None:
            step, what = before
            step()
            self._note(what)
        try:
            self._inner.commit(
                table_id,
                version,
                staged_uri=staged_uri,
                inline_content=inline_content,
                in_commit_timestamp=in_commit_timestamp,
                latest_published_version=latest_published_version,
                **extra,
            )
        except CommitConflict as conflict:
            shape = self._conflicts.draw()
            self._note(f"conflict on v{version} {shape}")
            if shape == CONFLICTS[1]:
                raise CommitConflict(str(conflict), latest_version=None) from conflict
            raise

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        self.calls += 1
        resp = self._inner.get_commits(table_id, start_version, end_version)
        order, keep = self._listings.draw()
        kept = self._kept(table_id, resp, start_version, end_version, keep)
        commits = kept + list(resp.commits)
        if order == "ascending":
            commits.sort(key=lambda c: c.version)
        elif order == "descending":
            commits.sort(key=lambda c: c.version, reverse=True)
        else:
            self._rng.shuffle(commits)
        dated = self.served or self._timestamps.draw() == TIMESTAMPS[0]
        if not dated:
            commits = [replace(c, in_commit_timestamp=None) for c in commits]
        asked = "from the first" if start_version is None else f"from v{start_version}"
        asked += " to the latest" if end_version is None else f" to v{end_version}"
        self._note(
            f"listing {asked}: {order}, latest v{resp.latest_version}, {len(resp.commits)} stored"
            + (f", and published {_span(kept)} still served" if kept else "")
            + ("" if dated else ", without in-commit timestamps")
        )
        return GetCommitsResponse(commits, resp.latest_version)

    def _kept(
        self, table_id: str, resp: GetCommitsResponse, start: int | None, end: int | None, keep: str
    ) -> list[RatifiedCommit]:
        """Published commits served besides the stored ones, ascending: a run right below the oldest
        stored one (or the end of the range), inside the range, each as it was ratified, whose staged
        file and published file both still exist."""
        location = self._locations.get(table_id)
        known = self._ratified.get(table_id, {})
        if keep == "none" or location is None:
            return []
        if resp.commits:
            top = min(c.version for c in resp.commits) - 1
        else:
            top = resp.latest_version if end is None else min(end, resp.latest_version)
        depth = {"newest": 1, "some": SOME}.get(keep, top + 1)
        kept: list[RatifiedCommit] = []
        v = top
        while v >= max(1, start or 0) and len(kept) < depth:
            commit = known.get(v)
            if commit is None or not self._storage.exists(f"{location.rstrip('/')}/_delta_log/{v:020d}.json"):
                break
            if commit.staged_uri is not None and not self._storage.exists(commit.staged_uri):
                break
            kept.append(commit)
            v -= 1
        return kept[::-1]

    def mark_published(self, table_id: str, version: int) -> None:
        self.calls += 1
        self._inner.mark_published(table_id, version)


def _span(commits: list[RatifiedCommit]) -> str:
    first, last = commits[0].version, commits[-1].version
    return f"v{first}" if first == last else f"v{first}-v{last}"
