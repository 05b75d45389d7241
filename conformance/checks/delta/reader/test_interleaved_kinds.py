"""A reader on an unpublished tail whose commits are of every kind, interleaved (RFC "Reader
Requirements": the ratified commits, staged or inline, are read as the versions they are).

A snapshot is one replay in version order, whatever each commit's bytes are: a published log file, a
staged file the catalog names, or content the catalog holds inline. A reader that gathers them by kind
(what it holds first, what it must fetch after, or by storage key) replays them in another order, and
that order is seen only when a commit of one kind undoes what a commit of another kind did: a remove
of a file a commit of another kind added. Each seed draws a tail of mixed kinds and actions with, at
least once, every such pair of kinds, and reads every version: in one check on a table of published
and staged commits (every catalog API carries those), in another on one with inline commits among them
(NOT_APPLICABLE to a client that refuses inline commits, alone).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from conformance.checks.delta.builders import LogBuilder, expected_rows, ict_of, premise, version0
from conformance.checks.delta.reader.inline_commits import REASON
from conformance.contract.delta import NotSupported, RatifiedCommit
from conformance.observe.recording import RecordingClient
from conformance.report.outcomes import not_applicable
from reference_impl.catalog.catalog import ReferenceCatalog

# Per table: the kinds its unpublished commits take, and the pairs (kind of the commit that removes a
# file, kind of the commit that added it) that must each occur at least once. A table of staged commits
# only comes first: every client's catalog API carries those.
STAGED_ONLY = (("staged",), frozenset({("staged", "published")}))
MIXED = (
    ("staged", "inline"),
    frozenset({("inline", "published"), ("inline", "staged"), ("staged", "inline"), ("staged", "published")}),
)


@dataclass
class Tail:
    published: int  # v1..published are log files
    kinds: dict[int, str] = field(default_factory=dict)  # version -> published, staged or inline
    removes: dict[int, int] = field(default_factory=dict)  # version -> the version whose file it removes
    live: dict[int, list[int]] = field(default_factory=dict)  # version -> row ids live at it (row v: v's file)

    def pairs(self) -> set[tuple[str, str]]:
        return {(self.kinds[v], self.kinds[added]) for v, added in self.removes.items()}

    def describe(self) -> str:
        parts = []
        for v in sorted(v for v in self.kinds if v > self.published):
            act = f"removes v{self.removes[v]}'s file" if v in self.removes else "adds a file"
            parts.append(f"v{v} {self.kinds[v]} {act}")
        return "; ".join(parts)


def draw_tail(rng: random.Random, kinds: tuple[str, ...], pairs: frozenset[tuple[str, str]]) -> Tail:
    """A published head of 1-3 versions, then 8-12 unpublished ones of drawn kinds; each adds a file or
    removes a live one, preferring one a commit of another kind added. Redrawn until every pair of
    ``pairs`` occurs (a few draws at most)."""
    while True:
        tail = Tail(published=rng.randint(1, 3))
        live: list[int] = []
        tail.live[0] = []
        for v in range(1, tail.published + rng.randint(8, 12) + 1):
            kind = "published" if v <= tail.published else rng.choice(kinds)
            tail.kinds[v] = kind
            others = [u for u in live if tail.kinds[u] != kind]
            if kind != "published" and live and rng.random() < 0.45:
                gone = rng.choice(others or live)
                tail.removes[v] = gone
                live = [u for u in live if u != gone]
            else:
                live = [*live, v]
            tail.live[v] = live
        if tail.pairs() >= pairs:
            return tail


def _write(b: LogBuilder, tail: Tail, name: str, ref_admin: ReferenceCatalog) -> None:
    b.publish(0, version0(b.location))
    contents: dict[int, bytes] = {}
    ratified: list[RatifiedCommit] = []
    for v, kind in sorted(tail.kinds.items()):
        content = b.remove_commit(v, contents[tail.removes[v]]) if v in tail.removes else b.data_commit(v)
        contents[v] = content
        if kind == "published":
            b.publish(v, content)
        elif kind == "staged":
            ratified.append(RatifiedCommit(v, staged_uri=b.stage(v, content), in_commit_timestamp=ict_of(v)))
        else:
            ratified.append(RatifiedCommit(v, inline_content=content, in_commit_timestamp=ict_of(v)))
    ref_admin.import_table(name, b.location, max(tail.kinds), ratified, tail.published)


@pytest.mark.req("RDR-UNPUBLISHED")
def test_staged_commits_among_published_replay_in_version_order(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str, seed: int
) -> None:
    """Every catalog API carries staged commits: judged for every client."""
    tail = draw_tail(random.Random(seed), *STAGED_ONLY)
    with premise("the suite writing a table whose unpublished tail is staged commits"):
        _write(seeded, tail, table_name, ref_admin)
    _read_every_version(client, table_name, tail)


@pytest.mark.req("RDR-UNPUBLISHED")
def test_inline_and_staged_commits_replay_in_version_order(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str, seed: int
) -> None:
    """A client that refuses inline commits is NOT_APPLICABLE here only, its staged reads judged above."""
    tail = draw_tail(random.Random(seed), *MIXED)
    with premise("the suite writing a table whose unpublished tail mixes staged and inline commits"):
        _write(seeded, tail, table_name, ref_admin)
    try:
        _read_every_version(client, table_name, tail)
    except NotSupported:
        not_applicable(REASON)  # the table has inline commits (by construction)


def _read_every_version(client: RecordingClient, name: str, tail: Tail) -> None:
    latest = max(tail.kinds)
    for version in [*sorted(tail.live), None]:
        want = expected_rows(tail.live[latest if version is None else version])
        got = client.read(name, version=version)
        what = "the latest version" if version is None else f"v{version}"
        assert (got.rows, got.version) == (want, latest if version is None else version), (
            f"a read of {what} gave v{got.version} with rows {got.rows}; replaying the commits in version order"
            f" gives v{latest if version is None else version} with rows {want}. The table: v0-v{tail.published}"
            f" published, then {tail.describe()}"
        )
