"""The long catalog history's hands and judge: ``CatalogHistory`` drives the catalog under test step by
step and compares every answer and listing with the RFC model. What the history does, and why, is told
in ``test_histories.py``, which runs it; ``edges.py`` draws the argument edges it meets."""

from __future__ import annotations

import random
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import partial

from conformance.checks.delta.builders import CatalogDriver, ict_ms_of, premise
from conformance.checks.delta.catalog.inline_shapes import SHAPES
from conformance.contract.delta import CatalogError, CommitConflict, NotSupported, RatifiedCommit, TableInfo
from conformance.model.catalog_managed import CatalogTable, Commit, ListingFault
from conformance.nemesis.clock import FAR_EAST, FAR_WEST, in_time_zone
from conformance.nemesis.restart import judge_fresh_locations
from conformance.observe.recording import RecordingCatalog
from conformance.oracle.clock import span
from conformance.report.outcomes import PremiseBroken
from conformance.schedules.generated import HistoryLog
from conformance.schedules.race import race

TABLES = 3
MAX_UNPUBLISHED = 10
# The directed boundary on the first table: published up to HOLD_FROM, then nothing published until
# HOLD_TO is ratified, then a mark at HOLD_MARK (two digits) while HOLD_MARK + 1 .. HOLD_TO are stored.
HOLD_FROM, HOLD_MARK, HOLD_TO = 95, 99, 104
# Every INLINE_EVERY-th proposal is inline (where the catalog hosts inline commits): about 30 per
# history, each shape of inline_shapes.py several times.
INLINE_EVERY = 7
# The version of the first table at which the catalog restarts, where the target has a restart hook.
RESTART_AT = 70
DURABLE = "CAT-RATIFY-DURABLE"
# From this version of the first table, the next proposal made with exactly two commits unpublished
# carries the publication mark (the module's docstring).
CARRY_AT = 40
# A zone with daylight saving, three hours west of UTC in winter and two in summer (a POSIX rule: no tz
# database needed), whose summer time begins at v2's in-commit timestamp of the histories (ict_ms_of:
# 2020-09-13 12:28:40 UTC, the second Sunday of September) and ends an hour later, at v62's: wall
# times skip the hour before v2 and repeat the hour from v2 to v62 (summer time) in v62 to v122
# (winter time). Versions 1-3, 61-63 and 121-123 sit just around the changes. A catalog that keeps an
# in-commit timestamp as a local wall time without its fold, or converts it with the zone's winter
# offset, serves some of them an hour off; only a zone with daylight saving, and timestamps where it
# changes, show it (real zones change twice a year, never at the histories' timestamps).
DST_AT_V2_TO_V62 = "LKS3LKD2,M9.2.0/9:28:40,M9.2.0/11:28:40"
# The catalog's host may sit in any time zone: proposals and listings are made in turn in the run's
# own zone, nine hours east and ten hours west of UTC, and in the zone with daylight saving above (for
# a catalog in this process), so one that keeps an in-commit timestamp through a local date-time
# serves it changed (``judge_listing``).
ZONES = (None, FAR_EAST, FAR_WEST, DST_AT_V2_TO_V62)


def in_zone(turn: int) -> AbstractContextManager[None]:
    zone = ZONES[turn % len(ZONES)]
    return nullcontext() if zone is None else in_time_zone(zone)


@dataclass
class Tracked:
    info: TableInfo
    model: CatalogTable
    filled_after_back: set[str] = field(default_factory=set)  # kinds of marks going back after which it was filled


class CatalogHistory:
    """One history: the driver's hands, the model and the log of steps."""

    def __init__(
        self,
        catalog: RecordingCatalog,
        driver: CatalogDriver,
        log: HistoryLog,
        rng: random.Random,
        cap: int | None = None,
    ) -> None:
        self.catalog, self.driver, self.log, self.rng = catalog, driver, log, rng
        self.cap = cap  # the cap on unpublished commits per table the target declares, if any
        self.held_before_restart: int | None = None  # most unpublished commits a table held before a restart
        # A SHOULD broken, charged once the history ends (``at_end``: its MUSTs were judged and held).
        self.broken_should: Exception | None = None
        self._held = 0  # most unpublished commits any table held when a proposal was ratified
        self.tables: list[Tracked] = []
        self.inline = True  # until the catalog says it hosts no inline commits
        self.proposals = 0  # every INLINE_EVERY-th proposal is inline, in the next shape in turn
        self.shapes = list(SHAPES)
        self.last_publish: int | None = None  # index of the table the previous step published
        self.served: set[tuple[int, int]] = set()  # (table index, version) once listed as ratified
        self.durable = False  # judging the listings right after a restart
        self._turn = 0
        self._listings = 0  # listings made, for their time zone in turn

    # ------------------------------------------------------------------ steps

    def create(self, name: str) -> Tracked:
        info = self.driver.new_table(name)
        self.tables.append(Tracked(info, CatalogTable()))
        self.log.step(f"create {name}: v0")
        return self.tables[-1]

    def _stage(self, t: Tracked, version: int) -> str:
        with premise(f"staging a commit for v{version} of {t.info.name}"):
            return self.driver.stage(t.info, version, ict_ms_of(version))  # the ICT every proposal here carries

    def propose(self, t: Tracked, client: int, *, carry: bool = False) -> None:
        """Propose latest + 1, staged or inline; with the table's publication mark when ``carry``."""
        version = t.model.latest + 1
        mark = t.model.published if carry else None
        carrying = "" if mark is None else f" carrying mark v{mark}"
        self.proposals += 1
        if self.inline and self.proposals % INLINE_EVERY == 0:
            shape = self.shapes[(self.proposals // INLINE_EVERY) % len(self.shapes)]
            content = SHAPES[shape](version, ict_ms_of(version))
            try:
                with in_zone(self.proposals):
                    self.catalog.commit(
                        t.info.table_id,
                        version,
                        inline_content=content,
                        in_commit_timestamp=ict_ms_of(version),
                        latest_published_version=mark,
                    )
            except NotSupported:
                self.inline = False  # a MAY (CAT-INLINE-COMMITS): the listings judge that nothing changed
                self.log.step(f"client {client}: inline v{version} of {t.info.name} -> not supported")
                return
            except CatalogError as e:
                if shape != "many":
                    self._refused_valid(t, version, e)
                # A limit on size or actions the catalog may have and not declare (docs/certify.md
                # "Limits"): the envelope judges it; the listings judge that the refusal changed nothing.
                self.shapes.remove(shape)
                self.log.step(f"client {client}: inline v{version} of {t.info.name} ({shape}) -> refused")
                return
            t.model.ratify(Commit(version, inline_content=content))
            self._reported(t, mark)
            self.log.step(f"client {client}: inline v{version} of {t.info.name} ({shape}){carrying} -> ratified")
            return
        uri = self._stage(t, version)
        self._expect(t, Commit(version, uri), f"client {client}: propose v{version} of {t.info.name}{carrying}", mark)

    def _reported(self, t: Tracked, mark: int | None) -> None:
        """A mark carried by a ratified proposal is a publication report (RFC "Publishing Commits"): the
        model takes it as ``mark_published``, and a commit dropped now is charged to the mark."""
        if mark is not None:
            t.model.mark_published(mark)
            self.last_publish = self.tables.index(t)

    def _refused_valid(self, t: Tracked, version: int, e: CatalogError) -> None:
        # Refusing a valid proposal is the catalog's right (a policy), but the history needs headroom;
        # below a cap the target declared, the refusal says the declared cap is not the real one, and
        # after a restart, with no more waiting than the catalog took before it, that the restart
        # changed what the catalog accepts ("proposals go on at latest + 1").
        waiting = t.model.latest - t.model.published
        if self.held_before_restart is not None and waiting <= self.held_before_restart:
            raise self.log.violation(
                DURABLE,
                f"after a restart of the catalog, a valid proposal of v{version} of {t.info.name} was refused"
                f" ({type(e).__name__}) with {waiting} commit(s) unpublished; before the restart proposals were"
                f" ratified with up to {self.held_before_restart} unpublished",
                "proposals going on at latest + 1 after a restart, as before it",
            ) from e
        if self.cap is not None and waiting < self.cap:
            raise self.log.violation(
                "CAT-LIMIT-DECLARED",
                f"a valid proposal of v{version} of {t.info.name} was refused ({type(e).__name__}) while the table"
                f" held {waiting} ratified, unpublished commit(s), below the declared cap of {self.cap}",
                "a proposal at or below the declared cap on unpublished commits ratified",
            ) from e
        raise PremiseBroken(f"the catalog refused a valid proposal of v{version} of {t.info.name}: {type(e).__name__}")

    def _expect(self, t: Tracked, commit: Commit, what: str, mark: int | None = None) -> None:
        """Propose ``commit`` (carrying the publication mark ``mark``) and compare the answer with the model's."""
        expect = t.model.judge(commit.version)
        try:
            with in_zone(self.proposals):
                self.catalog.commit(
                    t.info.table_id,
                    commit.version,
                    staged_uri=commit.staged_uri,
                    in_commit_timestamp=ict_ms_of(commit.version),
                    latest_published_version=mark,
                )
            got = "ratified"
        except CommitConflict as conflict:
            got = "conflict"
            self.judge_conflict_latest(t, commit.version, conflict)
        except CatalogError as e:
            if expect == "ratified":
                self._refused_valid(t, commit.version, e)
            got = "refused"
        self.log.step(f"{what} -> {got}")
        if expect == "ratified" and got == "ratified":
            self._held = max(self._held, t.model.latest - t.model.published)
            t.model.ratify(commit)
            self._reported(t, mark)
        elif expect == "ratified":
            raise self.log.violation(
                "CAT-RATIFY-ONCE",
                f"v{commit.version} of {t.info.name} got a conflict",
                "ratification: it is latest + 1",
            )
        elif expect == "conflict" and got == "ratified":
            raise self.log.violation(
                "CAT-RATIFY-ONCE",
                f"v{commit.version} of {t.info.name} was ratified a second time",
                f"only a conflict: v{commit.version} was ratified already (latest v{t.model.latest})",
            )
        elif expect == "refused" and got == "ratified":
            raise self.log.violation(
                "CAT-RATIFY-SEQUENTIAL",
                f"v{commit.version} of {t.info.name} was ratified over a gap",
                f"only a refusal: the latest is v{t.model.latest}",
            )

    def judge_conflict_latest(self, t: Tracked, version: int, conflict: CommitConflict) -> None:
        """A conflict that states a latest version states the table's own (CAT-CONFLICT-LATEST, a
        SHOULD: held until the history ends). With several tables written in turn, a catalog that
        answers with another table's latest, or the catalog's, is seen."""
        stated = conflict.latest_version
        if stated is None or stated == t.model.latest or self.broken_should is not None:
            return
        self.broken_should = self.log.violation(
            "CAT-CONFLICT-LATEST",
            f"the conflict on v{version} of {t.info.name} stated the latest version v{stated}; the table's latest"
            f" is v{t.model.latest}",
            "a conflict stating the table's own latest ratified version, or none",
            at_end=True,
        )

    def stale(self, t: Tracked) -> None:
        """A proposal for a version ratified before (published and maybe forgotten, or still stored)."""
        if t.model.latest < 1:
            return
        version = self.rng.randint(max(1, t.model.latest - 12), t.model.latest)
        self._expect(t, Commit(version, self._stage(t, version)), f"stale proposal of v{version} of {t.info.name}")

    def gap(self, t: Tracked) -> None:
        version = t.model.latest + 2
        self._expect(t, Commit(version, self._stage(t, version)), f"gap proposal of v{version} of {t.info.name}")

    def race_one_version(self, t: Tracked, seed: int) -> None:
        """Three clients propose the same version at once: exactly one wins, the others conflict."""
        version = t.model.latest + 1
        staged = [self._stage(t, version) for _ in range(3)]
        propose = partial(self.catalog.commit, t.info.table_id, version, in_commit_timestamp=ict_ms_of(version))
        outcomes = race([partial(propose, staged_uri=uri) for uri in staged], seed=seed, transcript=self.log.transcript)
        winners = [i for i, o in enumerate(outcomes) if o.ok]
        errors = [type(o.error).__name__ for o in outcomes if not o.ok]
        self.log.step(f"race of 3 clients for v{version} of {t.info.name} -> winners {winners}, others {errors}")
        if not winners and not any(isinstance(o.error, CommitConflict) for o in outcomes):
            raise PremiseBroken(f"no proposal of the race for v{version} was ratified ({', '.join(errors)})")
        if len(winners) != 1 or not all(isinstance(o.error, CommitConflict) for o in outcomes if not o.ok):
            raise self.log.violation(
                self._race_rule(t, version, winners),
                f"{len(winners)} of 3 concurrent proposals for v{version} of {t.info.name} won,"
                f" the others got {errors}",
                "exactly one winner and a conflict for each other proposer",
            )
        t.model.ratify(Commit(version, staged[winners[0]]))
        for o in outcomes:
            # Lost to a rival: the latest it states is the winner's. Whether a catalog that reads the
            # latest before its locked check is seen depends on the threads' timing, so no registered
            # fault relies on it; a finding is true whenever it is made.
            if isinstance(o.error, CommitConflict):
                self.judge_conflict_latest(t, version, o.error)

    def _race_rule(self, t: Tracked, version: int, winners: list[int]) -> str:
        """Several winners of a race: a catalog that also ratifies a fourth proposal made after the
        race (nothing concurrent about it) ratifies a version twice whatever the timing
        (CAT-RATIFY-ONCE); otherwise only concurrency breaks it (CAT-RATIFY-RACE). Asked so that the
        rule charged does not depend on the threads' timing."""
        if len(winners) < 2:
            return "CAT-RATIFY-RACE"
        try:
            self.catalog.commit(
                t.info.table_id, version, staged_uri=self._stage(t, version), in_commit_timestamp=ict_ms_of(version)
            )
        except CatalogError:
            return "CAT-RATIFY-RACE"
        return "CAT-RATIFY-ONCE"

    def race_two_versions(self, t: Tracked, seed: int) -> None:
        """latest + 1 and latest + 2 proposed at once: the first must win; the second is ratified only
        if the first was ratified before it was judged, else refused."""
        first, second = t.model.latest + 1, t.model.latest + 2
        uris = [self._stage(t, first), self._stage(t, second)]
        calls = [
            partial(self.catalog.commit, t.info.table_id, v, staged_uri=u, in_commit_timestamp=ict_ms_of(v))
            for v, u in zip((first, second), uris, strict=True)
        ]
        one, two = race(calls, seed=seed, transcript=self.log.transcript)
        said = ["ratified" if o.ok else type(o.error).__name__ for o in (one, two)]
        self.log.step(f"race for v{first} and v{second} of {t.info.name} -> v{first} {said[0]}, v{second} {said[1]}")
        if not one.ok:
            if not isinstance(one.error, CommitConflict) and isinstance(one.error, CatalogError):
                self._refused_valid(t, first, one.error)
            raise self.log.violation(
                "CAT-RATIFY-SEQUENTIAL" if two.ok else "CAT-RATIFY-ONCE",
                f"v{first} of {t.info.name} was not ratified ({type(one.error).__name__})"
                + (f" while v{second} was" if two.ok else ""),
                f"v{first} ratified: it is latest + 1 and no other proposal asked for it",
            )
        t.model.ratify(Commit(first, uris[0]))
        if two.ok:
            t.model.ratify(Commit(second, uris[1]))
        else:
            # Proposed again, so the history goes on from one state whichever way the threads ran: what
            # a seed draws next must not hang on the race (a catch that did was seen to flake on CI).
            self._expect(t, Commit(second, self._stage(t, second)), f"v{second} of {t.info.name} after the race")

    def publish(self, t: Tracked, index: int, upto: int) -> None:
        with premise(f"publishing {t.info.name} up to v{upto} (copy, then mark)"):
            self.driver.publish(t.info, upto)
        t.model.mark_published(upto)
        self.last_publish = index
        self.log.step(f"publish {t.info.name} up to v{upto} (latest v{t.model.latest})")

    def make_room(self, t: Tracked, index: int, room: int) -> None:
        """Keep at most MAX_UNPUBLISHED commits unpublished once ``room`` more are ratified."""
        if t.model.latest + room - t.model.published > MAX_UNPUBLISHED:
            self.publish(t, index, t.model.latest + room - MAX_UNPUBLISHED + self.rng.randint(0, 2))

    def restart(self, restart: Callable[[], CatalogDriver]) -> None:
        """The nemesis inside the history: the catalog restarts through the target's hook, and every
        table is then listed in full and from its mark. Each listing was right just before, so any
        difference is what the restart lost or changed (CAT-RATIFY-DURABLE). The history goes on
        against the restarted catalog."""
        dated = [self._timestamps(t) for t in self.tables]  # what each commit was served with
        with premise("restarting the catalog through the target's restart hook"):
            self.driver = restart()
        self.catalog = self.driver.catalog  # type: ignore[assignment]  # restart() gives a recording catalog
        self.log.step("restart the catalog (the target's restart hook)")
        self.durable = True
        self.held_before_restart = self._held
        self.judge_names_after_restart()
        try:
            for index, t in enumerate(self.tables):
                self.judge_listing(index, None, None)
                self.judge_listing(index, t.model.published + 1, None)
        finally:
            self.durable = False
        for t, before in zip(self.tables, dated, strict=True):
            # A commit no longer listed was judged above (a published one may go, an unpublished one not).
            now = self._timestamps(t)
            changed = {v: (ict, now[v]) for v, ict in before.items() if v in now and now[v] != ict}
            if changed:
                v, (ict, after) = min(changed.items())
                raise self.log.violation(
                    DURABLE,
                    f"right after a restart of the catalog, v{v} of {t.info.name} is served with in-commit timestamp"
                    f" {after}; before the restart it was served with {ict} ({len(changed)} commit(s) changed)",
                    "every stored commit served unchanged across a restart, its in-commit timestamp included",
                )
        # Before any other check of the run creates a table: locations handed out from now on are new.
        judge_fresh_locations(self.catalog, self.driver.locations)

    def judge_names_after_restart(self) -> None:
        """Each table's name resolves after the restart as before it: to its own location (MUST) and,
        where the catalog said so before, as catalog-managed (CAT-RESOLVE-MANAGED, a SHOULD: held
        until the history ends, so that the MUST rules are judged on the rest of it)."""
        for t in self.tables:
            with premise(f"resolving {t.info.name} after the restart"):
                now = self.catalog.resolve(t.info.name)
            if (now.table_id, now.location) != (t.info.table_id, t.info.location):
                raise self.log.violation(
                    DURABLE,
                    f"after a restart of the catalog, {t.info.name} resolves to table {now.table_id} at {now.location};"
                    f" before it, to table {t.info.table_id} at {t.info.location}",
                    "every name resolving to its own table and location across a restart",
                )
            if t.info.catalog_managed and not now.catalog_managed and self.broken_should is None:
                self.broken_should = self.log.violation(
                    "CAT-RESOLVE-MANAGED",
                    f"after a restart of the catalog, {t.info.name} resolves as not catalog-managed; before it, as"
                    " catalog-managed",
                    "name resolution saying the table is catalog-managed across a restart, as before it",
                    at_end=True,
                )

    def _timestamps(self, t: Tracked) -> dict[int, int | None]:
        """Version -> the in-commit timestamp the catalog serves with each commit it stores."""
        with premise(f"listing {t.info.name}"):
            return {c.version: c.in_commit_timestamp for c in self.catalog.get_commits(t.info.table_id).commits}

    # ------------------------------------------------------------------ judging

    def judge_all(self, acted: int) -> None:
        """After every step: the acted-on table in full and one other way (from its mark, a bounded
        range, or past the latest), then another table in full."""
        t = self.tables[acted]
        m = t.model
        lo = max(0, m.latest - 6)
        ranges: list[tuple[int | None, int | None]] = [
            (None, None),
            (m.published + 1, None),
            (lo, lo + self.rng.randint(0, 4)),
            (m.latest + 1, None),
        ]
        # The full listing every step; one of the other three, by the seed (each is asked hundreds of times).
        for start, end in (ranges[0], self.rng.choice(ranges[1:])):
            self.judge_listing(acted, start, end)
        # Then one other table, in turn: a listing of one table right after another's.
        others = [i for i in range(len(self.tables)) if i != acted]
        self.judge_listing(others[self._turn % len(others)], None, None)
        self._turn += 1

    def judge_listing(self, index: int, start: int | None, end: int | None) -> None:
        t = self.tables[index]
        self._listings += 1
        try:
            with in_zone(self._listings):
                resp = self.catalog.get_commits(t.info.table_id, start, end)
        except CatalogError as e:
            raise self.log.violation(
                DURABLE if self.durable else "CAT-LIST-LATEST",
                f"listing [{start}, {end}] of {t.info.name} refused ({type(e).__name__})",
                "a listing with the latest version",
            ) from e
        # One commit per version. The same commit twice (a page boundary served on both pages) breaks
        # the contiguous run; a second, different commit at a version (whatever the order it comes in)
        # is one the table did not ratify there. Both are judged before the rest.
        listed: dict[int, str | bytes | None] = {}
        twice: list[ListingFault] = []
        for c in resp.commits:
            ref = c.staged_uri if c.staged_uri is not None else c.inline_content
            if c.version in listed and listed[c.version] == ref:
                twice.append(ListingFault("repeated", f"v{c.version} listed twice, the same commit both times"))
                continue
            if c.version in listed:
                ratified = t.model.ratified.get(c.version)
                this_one_ratified = ratified is not None and ratified.ref == ref
                other = listed[c.version] if this_one_ratified else ref
                twice.append(ListingFault("unratified", f"v{c.version} listed twice, once as {other!r:.120}"))
                if not this_one_ratified:
                    continue
            listed[c.version] = ref
        faults = twice or t.model.judge_listing(0 if start is None else start, end, listed, resp.latest_version)
        if faults:
            raise self.charge(index, faults[0], start, end)
        self.judge_timestamps(t, resp.commits, start, end)
        self.served.update((index, v) for v in listed)

    def judge_timestamps(self, t: Tracked, commits: list[RatifiedCommit], start: int | None, end: int | None) -> None:
        """A catalog may serve no in-commit timestamp with a commit (docs/certify.md), but one it serves
        is part of the ratified commit it stores unchanged: every proposal of the history sent
        ``ict_ms_of(version)``, and readers resolve time travel on unpublished commits by it (RFC
        "Publishing Commits", note on timestamps). Unity Catalog serves back the one proposed."""
        for c in commits:
            sent = ict_ms_of(c.version)
            if c.in_commit_timestamp is None or c.in_commit_timestamp == sent:
                continue
            gap = span(c.in_commit_timestamp - sent)
            raise self.log.violation(
                DURABLE if self.durable else "CAT-RETAIN-UNPUBLISHED",
                f"listing [{start}, {end}] of {t.info.name} serves v{c.version} with in-commit timestamp"
                f" {c.in_commit_timestamp}, {gap} {'after' if c.in_commit_timestamp > sent else 'before'} the"
                f" {sent} it was proposed with",
                "the commit served as it was ratified: its in-commit timestamp, where served, the one proposed",
            )

    def charge(self, index: int, fault: ListingFault, start: int | None, end: int | None) -> Exception:
        t = self.tables[index]
        where = f"listing [{start}, {end}] of {t.info.name}"
        if self.durable:
            return self.log.violation(
                DURABLE,
                f"right after a restart of the catalog, {where}: {fault.detail}",
                "every listing as it was just before the restart (each was judged right then)",
            )
        if fault.kind == "latest":
            return self.log.violation("CAT-LIST-LATEST", f"{where}: {fault.detail}", f"latest v{t.model.latest}")
        if fault.kind == "outside":
            return self.log.violation("CAT-LIST-RANGE", f"{where}: {fault.detail}", "only versions in the range")
        if fault.kind == "repeated":
            return self.log.violation(
                "CAT-LIST-CONTIGUOUS", f"{where}: {fault.detail}", "each version of the run listed once"
            )
        if fault.kind == "unratified":
            return self.log.violation(
                "CAT-LIST-RATIFIED-ONLY",
                f"{where}: {fault.detail}",
                "only this table's ratified commits (never another table's, nor a rejected proposal)",
            )
        version = int(fault.detail.split()[1].lstrip("v"))
        with premise(f"listing v{version} of {t.info.name} alone"):
            alone = self.catalog.get_commits(t.info.table_id, version, version + 1)
        mine = t.model.ratified[version].ref
        if any(c.version == version and (c.staged_uri or c.inline_content) == mine for c in alone.commits):
            return self.log.violation(
                "CAT-LIST-CONTIGUOUS",
                f"{where}: {fault.detail}, yet a listing of [{version}, {version + 1}] serves it",
                "every stored commit of the range",
            )
        # The mark is blamed when it is what changed: the commit was served as ratified before it (or
        # is now left out right after it); a commit never served as ratified was not retained.
        by_mark = self.last_publish == index and ("left out" in fault.detail or (index, version) in self.served)
        return self.log.violation(
            "CAT-FORGET-PUBLISHED-ONLY" if by_mark else "CAT-RETAIN-UNPUBLISHED",
            f"{where}: {fault.detail}" + (" right after a publication mark below it" if by_mark else ""),
            f"every commit above the mark v{t.model.published} stored and served unchanged",
        )

    def judge_policy(self, t: Tracked) -> None:
        """A catalog with maintenance policies names only known operations (CAT-MAINTENANCE-POLICY, a
        MAY: only judged where it answers), and the same for every table it was not told otherwise of."""
        try:
            policy = self.catalog.maintenance_policy(t.info.table_id)
        except NotSupported:
            return
        unknown = set(policy.allowed) - set(t.model.policy)
        if unknown:
            raise self.log.violation(
                "CAT-MAINTENANCE-POLICY", f"{t.info.name}'s policy names {sorted(unknown)}", "known operations only"
            )
