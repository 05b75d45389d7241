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
a table are ever unpublished (docs/certify.md: Unity Catalog's limit).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import pytest

from conformance.checks.delta.builders import CatalogDriver, ict_of, premise
from conformance.checks.delta.catalog.inline_shapes import SHAPES
from conformance.contract.delta import CatalogError, CommitConflict, NotSupported, TableInfo
from conformance.contract.target import restart_hook
from conformance.model.catalog_managed import CatalogTable, Commit, ListingFault
from conformance.nemesis import restart_target_catalog
from conformance.nemesis.restart import judge_fresh_locations
from conformance.observe.recording import RecordingCatalog
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import PremiseBroken
from conformance.run_context import RunContext
from conformance.schedules.generated import HISTORY_ROUNDS, HISTORY_VERSIONS, HistoryLog
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


@dataclass
class Tracked:
    info: TableInfo
    model: CatalogTable


class CatalogHistory:
    """One history: the driver's hands, the model and the log of steps."""

    def __init__(self, catalog: RecordingCatalog, driver: CatalogDriver, log: HistoryLog, rng: random.Random) -> None:
        self.catalog, self.driver, self.log, self.rng = catalog, driver, log, rng
        self.tables: list[Tracked] = []
        self.inline = True  # until the catalog says it hosts no inline commits
        self.proposals = 0  # every INLINE_EVERY-th proposal is inline, in the next shape in turn
        self.shapes = list(SHAPES)
        self.last_publish: int | None = None  # index of the table the previous step published
        self.served: set[tuple[int, int]] = set()  # (table index, version) once listed as ratified
        self.durable = False  # judging the listings right after a restart
        self._turn = 0

    # ------------------------------------------------------------------ steps

    def create(self, name: str) -> Tracked:
        info = self.driver.new_table(name)
        self.tables.append(Tracked(info, CatalogTable()))
        self.log.step(f"create {name}: v0")
        return self.tables[-1]

    def _stage(self, t: Tracked, version: int) -> str:
        with premise(f"staging a commit for v{version} of {t.info.name}"):
            return self.driver.stage(t.info, version)

    def propose(self, t: Tracked, client: int, *, carry: bool = False) -> None:
        """Propose latest + 1, staged or inline; with the table's publication mark when ``carry``."""
        version = t.model.latest + 1
        mark = t.model.published if carry else None
        carrying = "" if mark is None else f" carrying mark v{mark}"
        self.proposals += 1
        if self.inline and self.proposals % INLINE_EVERY == 0:
            shape = self.shapes[(self.proposals // INLINE_EVERY) % len(self.shapes)]
            content = SHAPES[shape](version, ict_of(version))
            try:
                self.catalog.commit(
                    t.info.table_id,
                    version,
                    inline_content=content,
                    in_commit_timestamp=ict_of(version),
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
        # Refusing a valid proposal is the catalog's right (a policy), but the history needs headroom.
        raise PremiseBroken(f"the catalog refused a valid proposal of v{version} of {t.info.name}: {type(e).__name__}")

    def _expect(self, t: Tracked, commit: Commit, what: str, mark: int | None = None) -> None:
        """Propose ``commit`` (carrying the publication mark ``mark``) and compare the answer with the model's."""
        expect = t.model.judge(commit.version)
        try:
            self.catalog.commit(
                t.info.table_id,
                commit.version,
                staged_uri=commit.staged_uri,
                in_commit_timestamp=ict_of(commit.version),
                latest_published_version=mark,
            )
            got = "ratified"
        except CommitConflict:
            got = "conflict"
        except CatalogError as e:
            if expect == "ratified":
                self._refused_valid(t, commit.version, e)
            got = "refused"
        self.log.step(f"{what} -> {got}")
        if expect == "ratified" and got == "ratified":
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
        propose = partial(self.catalog.commit, t.info.table_id, version, in_commit_timestamp=ict_of(version))
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

    def _race_rule(self, t: Tracked, version: int, winners: list[int]) -> str:
        """Several winners of a race: a catalog that also ratifies a fourth proposal made after the
        race (nothing concurrent about it) ratifies a version twice whatever the timing
        (CAT-RATIFY-ONCE); otherwise only concurrency breaks it (CAT-RATIFY-RACE). Asked so that the
        rule charged does not depend on the threads' timing."""
        if len(winners) < 2:
            return "CAT-RATIFY-RACE"
        try:
            self.catalog.commit(
                t.info.table_id, version, staged_uri=self._stage(t, version), in_commit_timestamp=ict_of(version)
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
            partial(self.catalog.commit, t.info.table_id, v, staged_uri=u, in_commit_timestamp=ict_of(v))
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
        try:
            resp = self.catalog.get_commits(t.info.table_id, start, end)
        except CatalogError as e:
            raise self.log.violation(
                DURABLE if self.durable else "CAT-LIST-LATEST",
                f"listing [{start}, {end}] of {t.info.name} refused ({type(e).__name__})",
                "a listing with the latest version",
            ) from e
        # One commit per version; a second one at a version (whatever the order it comes in) is one the
        # table did not ratify there, judged as such before the rest.
        listed: dict[int, str | bytes | None] = {}
        twice: list[ListingFault] = []
        for c in resp.commits:
            ref = c.staged_uri if c.staged_uri is not None else c.inline_content
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
        self.served.update((index, v) for v in listed)

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


def run_history(
    catalog: RecordingCatalog,
    driver: CatalogDriver,
    log: HistoryLog,
    name: str,
    seed: int,
    versions: int,
    restart: Callable[[], CatalogDriver] | None = None,
) -> None:
    rng = random.Random(seed)
    h = CatalogHistory(catalog, driver, log, rng)
    for i in range(TABLES):
        h.create(f"{name}_{i}")
    for t in h.tables:
        h.judge_policy(t)
    main = h.tables[0]
    held = carried = False
    step = 0
    while main.model.latest < versions:
        step += 1
        # Every seed, where the target can restart its catalog: one restart with unpublished and
        # inline commits stored, and a mark carried by a proposal (CARRY_AT) behind it.
        if restart is not None and main.model.latest >= RESTART_AT:
            h.restart(restart)
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
            h.judge_all(0)
            continue
        # The boundary every seed crosses: a two-digit mark with three-digit versions stored above it.
        if index == 0 and HOLD_FROM <= main.model.latest < HOLD_TO:
            if not held:
                h.publish(main, 0, HOLD_FROM)
                held = True
            else:
                h.propose(main, rng.randint(0, 2))
            h.judge_all(0)
            continue
        if index == 0 and main.model.latest == HOLD_TO and main.model.published < HOLD_MARK:
            h.publish(main, 0, HOLD_MARK)
            h.judge_all(0)
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
        h.judge_all(index)


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
        run_history(catalog, driver, log, name, seed + round_no, versions, restart if can_restart else None)
