"""The managing catalog, as the RFC constrains it (one ``CatalogTable`` per table).

It predicts the outcome of each proposal and what a listing must and may contain. It is
deliberately permissive where the RFC is: a catalog may drop commits at or below the publication
mark, so those are neither required nor forbidden in a listing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Expect = Literal["ratified", "conflict", "refused"]

# RFC "Maintenance Operations on Catalog-managed Tables": what a policy may allow or forbid.
MAINTENANCE_OPS = frozenset({"checkpoint", "log_compaction", "checksum", "metadata_cleanup", "vacuum"})


@dataclass(frozen=True)
class Commit:
    """A ratified commit as the catalog must serve it: a staged file's location or inline bytes."""

    version: int
    staged_uri: str | None = None
    inline_content: bytes | None = None

    @property
    def ref(self) -> str | bytes | None:
        return self.staged_uri if self.staged_uri is not None else self.inline_content


@dataclass(frozen=True)
class ListingFault:
    """What a listing got wrong. ``kind``: "latest" (wrong latest version), "missing" (an unpublished
    commit left out or changed), "outside" (a ratified commit outside the asked range), "unratified"
    (a commit the table never ratified, e.g. another table's or a rejected proposal), "repeated" (one
    commit listed twice: the run of versions is no longer one commit per version)."""

    kind: Literal["latest", "missing", "outside", "unratified", "repeated"]
    detail: str


@dataclass
class CatalogTable:
    latest: int = 0  # version 0 is written at creation and counts as published
    published: int = 0  # the publication mark the catalog was told of
    ratified: dict[int, Commit] = field(default_factory=dict)
    policy: frozenset[str] = MAINTENANCE_OPS

    # ---------------------------------------------------------------- RFC "Commit Protocol"

    def judge(self, version: int) -> Expect:
        """What a proposal of ``version`` must get: "must not ratify v until it has ratified v - 1,
        and it must ratify version v at most once"."""
        if version <= self.latest:
            return "conflict"
        if version > self.latest + 1:
            return "refused"
        return "ratified"

    def propose(self, commit: Commit) -> Expect:
        expect = self.judge(commit.version)
        if expect == "ratified":
            self.ratify(commit)
        return expect

    def ratify(self, commit: Commit) -> None:
        """Record a ratification (staged location or inline content, RFC options 1 and 2)."""
        assert self.judge(commit.version) == "ratified", f"v{commit.version} after v{self.latest}"
        self.latest = commit.version
        self.ratified[commit.version] = commit

    def forget(self, version: int) -> None:
        """Undo a predicted ratification the catalog refused (a policy may refuse a valid proposal)."""
        self.ratified.pop(version, None)
        self.latest = version - 1

    # ---------------------------------------------------------------- RFC "Publishing Commits"

    def mark_published(self, version: int) -> None:
        """Commits at or below the mark "do not need to be stored by the catalog" (Terminology:
        Commits, published commit); the mark never goes back."""
        self.published = max(self.published, min(version, self.latest))

    # ------------------------------------------------ RFC "Getting Ratified Commits from the Catalog"

    def _hi(self, end: int | None) -> int:
        return self.latest if end is None else min(end, self.latest)

    def must_list(self, start: int, end: int | None) -> dict[int, Commit]:
        """Commits a listing of [start, end] must contain: the unpublished ones in range ("The
        catalog must store both flavors of ratified commits ... until they are published")."""
        return {v: c for v, c in self.ratified.items() if self.published < v and start <= v <= self._hi(end)}

    def may_list(self, start: int, end: int | None) -> dict[int, Commit]:
        return {v: c for v, c in self.ratified.items() if start <= v <= self._hi(end)}

    def judge_listing(
        self, start: int, end: int | None, listed: dict[int, str | bytes | None], latest: int
    ) -> list[ListingFault]:
        """Every way a listing of [start, end] (version -> staged URI or inline bytes) and the latest
        version it reported differ from what the RFC allows, most telling first."""
        faults: list[ListingFault] = []
        if latest != self.latest:
            faults.append(ListingFault("latest", f"reported latest v{latest}, the model's is v{self.latest}"))
        for v, c in sorted(self.must_list(start, end).items()):
            if listed.get(v) != c.ref:
                got = "left out" if v not in listed else f"served as {_short(listed[v])}"
                faults.append(ListingFault("missing", f"unpublished v{v} ({_short(c.ref)}) {got}"))
        may = self.may_list(start, end)
        for v, ref in sorted(listed.items()):
            if v in may and may[v].ref == ref:
                continue
            mine = self.ratified.get(v)
            if mine is not None and mine.ref == ref:
                faults.append(ListingFault("outside", f"v{v} listed outside [{start}, {end}]"))
            else:
                faults.append(
                    ListingFault("unratified", f"v{v} listed as {_short(ref)}: never ratified for this table")
                )
        return faults

    # --------------------------------------- RFC "Maintenance Operations on Catalog-managed Tables"

    def allows(self, op: str) -> bool:
        return op in self.policy


def _short(ref: str | bytes | None) -> str:
    if isinstance(ref, bytes):
        return f"inline {len(ref)} bytes"
    return "nothing" if ref is None else ref.rsplit("/", 1)[-1]


@dataclass
class CatalogModel:
    """Several tables of one catalog: nothing one table does changes another."""

    tables: dict[str, CatalogTable] = field(default_factory=dict)

    def create(self, table_id: str) -> CatalogTable:
        """RFC "Creating and Dropping Catalog-managed Tables": registered at version 0."""
        assert table_id not in self.tables, f"table {table_id} created twice"
        self.tables[table_id] = CatalogTable()
        return self.tables[table_id]

    def __getitem__(self, table_id: str) -> CatalogTable:
        return self.tables[table_id]
