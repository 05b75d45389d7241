"""The nemesis against a catalog: restarts and proposals delivered twice (RFC "Commit Protocol": a
ratification is recorded "in persistent storage of some kind", and a version is ratified at most once).

lakecert is the client here: it loses the catalog's answers itself (it re-sends a proposal as a client
whose answer never came would) and delivers one proposal twice at once, as a network retry would."""

from __future__ import annotations

import contextlib
from functools import partial

import pytest

from conformance.checks.delta.builders import CatalogDriver, LogBuilder, ict_of, premise
from conformance.checks.delta.catalog.names_forms import HASH_TWINS, spelled_names
from conformance.checks.delta.catalog.staged_paths import propose_spelled
from conformance.contract.delta import (
    Catalog,
    CatalogError,
    DroppingCatalog,
    GetCommitsResponse,
    NotSupported,
    RatifiedCommit,
    Storage,
    TableInfo,
)
from conformance.nemesis import restart_target_catalog
from conformance.nemesis.restart import judge_fresh_locations
from conformance.observe.recording import RecordingCatalog
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import PremiseBroken, Violation, not_applicable
from conformance.run_context import RunContext
from conformance.schedules.race import race
from reference_impl.delta.log_paths import delta_uri


def _by_version(resp: GetCommitsResponse) -> dict[int, RatifiedCommit]:
    return {c.version: c for c in resp.commits}


def _held(commit: RatifiedCommit | None) -> str:
    if commit is None:
        return "nothing"
    if commit.staged_uri is not None:
        return f"staged file {commit.staged_uri} (ICT {commit.in_commit_timestamp})"
    return f"{len(commit.inline_content or b'')} inline bytes (ICT {commit.in_commit_timestamp})"


DURABLE = "CAT-RATIFY-DURABLE"
UNIQUE = "CAT-STAGING-UNIQUE"
LONG = 13  # a longer history: v1-v8 published on the way, v9-v13 ratified and unpublished
LONG_UNPUBLISHED = 5
# Name tails a restart must keep apart (RFC "Table Discovery": a name resolves to its table's location):
# two that differ only in case, and a non-ASCII one. A catalog that rebuilds its name index when it
# starts (case-folded, normalised, re-encoded) sends one of them to another table, or to none, only then.
CASE_PAIR = ("Case", "case")
NON_ASCII = "café"


def _served_before(catalog: Catalog, table: TableInfo) -> dict[int, RatifiedCommit]:
    """What the catalog serves of ``table`` just before the restart: each field is judged after it."""
    with premise(f"listing table {table.name}'s ratified commits before the restart"):
        return _by_version(catalog.get_commits(table.table_id))


def _survived(
    restarted: Catalog, storage: Storage, table: TableInfo, served: dict[int, RatifiedCommit], last: int, mark: int
) -> None:
    """Every ratified version of ``table`` (v1-v``last``) survived the restart: served as before it
    (``served``: its staged file or inline bytes, and its in-commit timestamp when it had one), or at or
    below the publication mark ``mark`` and published; the latest version is the same."""
    after = restarted.get_commits(table.table_id)
    if after.latest_version != last:
        raise Violation(
            DURABLE,
            f"before the restart v{last} was the latest ratified version of table {table.name} (published up to"
            f" v{mark}); after it the catalog says v{after.latest_version}: the latest version must survive",
        )
    listed = _by_version(after)
    for version in range(1, last + 1):
        commit, was = listed.get(version), served.get(version)
        if version <= mark and storage.exists(delta_uri(table.location, version)):
            continue  # published and marked: the catalog may have dropped it, or serve it as it likes
        if was is None:
            raise PremiseBroken(f"table {table.name}'s unpublished v{version} was not listed before the restart")
        state = "published" if version <= mark else "unpublished"
        if commit is None or (commit.staged_uri, commit.inline_content) != (was.staged_uri, was.inline_content):
            raise Violation(
                DURABLE,
                f"table {table.name}'s v{version} was ratified and {state} before the restart (mark v{mark}),"
                f" served as {_held(was)}; after it the catalog holds {_held(commit)}: a ratification must be"
                " recorded in persistent storage and served unchanged until published",
            )
        # The in-commit timestamp is part of what the catalog serves: a reader plans time travel over
        # unpublished commits from it. One served before must come back; None before is not judged.
        if was.in_commit_timestamp is not None and commit.in_commit_timestamp != was.in_commit_timestamp:
            raise Violation(
                DURABLE,
                f"table {table.name}'s {state} v{version} was served with in-commit timestamp"
                f" {was.in_commit_timestamp} before the restart and with {commit.in_commit_timestamp} after it:"
                " a ratified commit is served unchanged, every field of it, across restarts too",
            )


def _named(driver: CatalogDriver, name: str) -> bool:
    """Create a table named ``name``; False when the catalog refuses the name (its naming rules are its
    own: a case-insensitive catalog refuses the second of a pair as taken, another refuses non-ASCII)."""
    try:
        driver.new_table(name)
    except PremiseBroken as e:
        if isinstance(e.__cause__, CatalogError):
            return False
        raise
    return True


def _reused_name(driver: CatalogDriver, name: str) -> list[str]:
    """Create a table named ``name``, drop it and create another under the same name: ``[name]``, or
    ``[]`` when the catalog offers no drop (a MAY; test_discovery.py verifies what a refusal changed)."""
    driver.new_table(name)
    if not isinstance(driver.catalog, DroppingCatalog):
        return []
    try:
        driver.catalog.drop_table(name)
    except NotSupported:
        return []
    with premise(f"registering a new table under the dropped name {name!r}"):
        driver.new_table(name)
    return [name]


def _newest_dropped(driver: CatalogDriver, name: str) -> None:
    """Create a table named ``name`` and drop it where the catalog offers drops (a MAY; not judged here):
    the newest table of the run when the catalog restarts. Its location stays in the run's record
    (``driver.locations``), so the locations handed out after the restart are judged against it."""
    driver.new_table(name)
    if not isinstance(driver.catalog, DroppingCatalog):
        return
    with premise(f"dropping {name!r}, the newest table"), contextlib.suppress(NotSupported):
        driver.catalog.drop_table(name)


def _resolved(catalog: Catalog, name: str) -> TableInfo | None:
    try:
        return catalog.resolve(name)
    except CatalogError:
        return None


def _goes_on(restarted: Catalog, again: CatalogDriver, table: TableInfo, taken: int, kept: str | None) -> None:
    """After the restart a second proposal for the taken v``taken`` is refused, and v``taken + 1`` ratified."""
    try:
        restarted.commit(table.table_id, taken, staged_uri=again.stage(table, taken), in_commit_timestamp=ict_of(taken))
    except CatalogError:
        pass
    else:
        raise Violation(
            DURABLE,
            f"after the restart the catalog ratified a second proposal for table {table.name}'s v{taken},"
            " which it had ratified before",
        )
    try:
        restarted.commit(
            table.table_id, taken + 1, staged_uri=again.stage(table, taken + 1), in_commit_timestamp=ict_of(taken + 1)
        )
    except CatalogError as e:
        raise Violation(
            DURABLE,
            f"after the restart the proposal of v{taken + 1} (latest + 1) on table {table.name} was refused"
            f" ({type(e).__name__}): proposals must go on at the latest version the catalog ratified",
        ) from e
    final = _by_version(restarted.get_commits(table.table_id))
    if kept is not None and (final.get(taken) is None or final[taken].staged_uri != kept):
        raise Violation(
            DURABLE, f"the refused rival for v{taken} replaced it: v{taken} holds {_held(final.get(taken))}"
        )
    if taken + 1 not in final:
        raise Violation(DURABLE, f"v{taken + 1}, ratified after the restart at latest + 1, is not listed")


def _inline_v1(driver: CatalogDriver, name: str) -> tuple[TableInfo, bytes | None]:
    """A table whose v1 is an inline commit holding UTF-8 text, ratified and unpublished; its content,
    or None when the catalog hosts no inline commits (a MAY: verified that nothing changed)."""
    table = driver.new_table(name)
    content = LogBuilder(driver.storage, table.location).unicode_commit(1)
    try:
        driver.catalog.commit(table.table_id, 1, inline_content=content, in_commit_timestamp=ict_of(1))
    except NotSupported:
        latest = driver.catalog.get_commits(table.table_id).latest_version
        assert latest == 0, f"the catalog refused inline v1 (NotSupported), yet the table is now at v{latest}"
        return table, None
    return table, content


@pytest.mark.req("CAT-RATIFY-DURABLE", "CAT-STAGING-UNIQUE", "CAT-RESOLVE-LOCATION")
def test_ratified_commits_survive_a_restart(
    lakecert: RunContext,
    driver: CatalogDriver,
    transcript: Transcript,
    table_locations: dict[str, str],
    table_name: str,
) -> None:
    """One restart, judged on two tables: one whose every commit is published and marked (its latest
    version lives only in the catalog's own record) and a longer history with ratified, unpublished
    commits; on the names of every table created before it; then on the locations of staging tables
    created after it."""
    done = driver.new_table(f"{table_name}_published")
    driver.commit_range(done, 1, 3)
    with premise("publishing v1-v3 and recording the mark (the catalog may drop every commit it stores)"):
        driver.publish(done, 3)
    long = driver.new_table(table_name)
    staged = driver.history(long, LONG, unpublished=LONG_UNPUBLISHED)
    mark = LONG - LONG_UNPUBLISHED
    driver.listing(long)  # premise: the listing is complete before the restart
    # Names that differ only in case, and a non-ASCII one: each must still name its own table after the
    # restart. The first of the pair is in the alphabet every catalog takes (docs/certify.md); the
    # others may be refused, or the pair taken for one name (case-insensitive, as Unity Catalog is):
    # then the pair is one name to this catalog and not judged as two.
    upper, lower = f"{table_name}_{CASE_PAIR[0]}", f"{table_name}_{CASE_PAIR[1]}"
    driver.new_table(upper)
    names = [f"{table_name}_published", table_name, upper]
    names += [name for name in (lower, f"{table_name}_{NON_ASCII}") if _named(driver, name)]
    # Every Unicode spelling (names_forms.py) the catalog accepts, and a name dropped and given to a
    # new table: a drop kept only in memory, or an index rebuilt first-record-wins, sends the name back
    # to the dropped table after the restart.
    # (A spelling accepted that does not resolve even before the restart is test_discovery.py's to judge.)
    spelled = [name for name in spelled_names(f"{table_name}_r") if _named(driver, name)]
    names += [name for name in spelled if _resolved(driver.catalog, name) is not None]
    # Pairs of names with one 32-bit hash (names_forms.HASH_TWINS), each of its own table: an index by
    # hash rebuilt at start-up (first or last row wins) that never compares the name it finds sends one
    # of a pair to the other's table after the restart only.
    twins = [f"{table_name}_h{i}_{tail}" for i, pair in enumerate(HASH_TWINS) for tail in pair]
    names += [name for name in twins if _named(driver, name)]
    names += _reused_name(driver, f"{table_name}_reused")
    with premise("resolving every table's name before the restart"):
        resolved = {name: driver.catalog.resolve(name) for name in names}
    if lower in resolved and resolved[lower].table_id == resolved[upper].table_id:
        del resolved[lower]
    inline, inline_content = _inline_v1(driver, f"{table_name}_inline")
    # Staged names under upper- and mixed-case UUIDs, valid spellings (staged_paths.uuid_spellings): a
    # catalog whose persistent record keeps the UUID (a UUID column) or the name case-folded, and the
    # exact name only in memory, serves another file only after a restart.
    cased = driver.new_table(f"{table_name}_cased")
    cased_last = max(propose_spelled(driver, cased, 1)[0])
    served = {t.table_id: _served_before(driver.catalog, t) for t in (done, long, inline, cased)}
    # RFC "Creating and Dropping": a soft drop leaves the table's files. A catalog that numbers its
    # locations from the tables it holds when it starts gives the newest, dropped, table's location out again.
    _newest_dropped(driver, f"{table_name}_dropped_last")
    before = dict(table_locations)
    restarted = RecordingCatalog(
        restart_target_catalog(lakecert), transcript, under_test=True, call_s=lakecert.config.settings.deadlines.call_s
    )
    transcript.notes["nemesis"] = (
        f"the catalog was restarted through the target's hook with table {done.name} at v3, all published and"
        f" marked, and table {long.name} at v{LONG}, published up to v{mark}"
    )
    # What the catalog kept is judged raw: a commit missing here is what a restart lost.
    _survived(restarted, driver.storage, done, served[done.table_id], 3, 3)
    _survived(restarted, driver.storage, long, served[long.table_id], LONG, mark)
    if inline_content is not None:
        kept = _by_version(restarted.get_commits(inline.table_id)).get(1)
        if kept is None or kept.inline_content != inline_content:
            raise Violation(
                DURABLE,
                f"inline v1 of {inline.name} ({len(inline_content)} bytes, unpublished) is served after the"
                f" restart as {_held(kept)}: a ratified inline commit is kept unchanged until published, across"
                " restarts too",
            )
        _survived(restarted, driver.storage, inline, served[inline.table_id], 1, 0)
    _survived(restarted, driver.storage, cased, served[cased.table_id], cased_last, 0)
    # Every name still resolves to its own table: a name index rebuilt at start-up (case-folded,
    # normalised) sends one of two names to the other's table, where its readers and writers then go.
    for name, was in resolved.items():
        now = _resolved(restarted, name)
        if now is None or (now.table_id, now.location.rstrip("/")) != (was.table_id, was.location.rstrip("/")):
            where = "no table" if now is None else f"table {now.table_id} at {now.location}"
            raise Violation(
                "CAT-RESOLVE-LOCATION",
                f"before the restart the name {name!r} resolved to table {was.table_id} at {was.location}; after"
                f" it to {where} (names created before it: {sorted(resolved)}): a name must resolve to its own"
                " table's location, across restarts too",
            )
    again = CatalogDriver(restarted, driver.storage, published=driver.published, locations=table_locations)
    _goes_on(restarted, again, done, 3, None)
    _goes_on(restarted, again, long, LONG, staged[LONG])
    # Last, as a SHOULD: locations handed out after the restart are new (a name counter kept in memory
    # starts again and gives a new table the files of an old one).
    judge_fresh_locations(restarted, before)


def _listed_once(resp: GetCommitsResponse, uri: str, version: int) -> str | None:
    """Why the listing does not hold ``uri`` exactly once, at ``version``, with ``version`` the latest."""
    where = [c.version for c in resp.commits if c.staged_uri == uri]
    return _once(where, resp.latest_version, version, f"the proposal's staged file {uri}")


def _inline_listed_once(resp: GetCommitsResponse, content: bytes, version: int) -> str | None:
    """Why the listing does not hold the inline ``content`` exactly once, at ``version``, the latest."""
    where = [c.version for c in resp.commits if c.staged_uri is None and c.inline_content == content]
    return _once(where, resp.latest_version, version, f"the proposal's {len(content)} inline bytes")


def _once(where: list[int], latest: int, version: int, what: str) -> str | None:
    """Why a proposal listed at ``where`` with ``latest`` reported was ratified other than once at
    ``version``. Listed nowhere with the latest unchanged says nothing of a second ratification: the
    commit was not served at all, which the listing and retention checks judge (a broken premise)."""
    if len(where) > 1 or latest > version:
        return f"{what} is listed at {[f'v{v}' for v in where]}, the latest version is v{latest}, not v{version}"
    if where != [version] or latest != version:
        raise PremiseBroken(
            f"{what} is listed at {[f'v{v}' for v in where] or 'no version'} with v{latest} the latest: the"
            f" ratified v{version} is not served as ratified (judged by CAT-RETAIN-UNPUBLISHED and CAT-LIST-*)"
        )
    return None


def _resend_inline(catalog: RecordingCatalog, driver: CatalogDriver, name: str) -> str | None:
    """The inline case: v1 inline, then v2 inline ratified and sent again with the same bytes. Returns
    why the catalog then holds it other than once at v2, or None; NOT judged (None) when the catalog
    refuses inline commits with NotSupported, once verified that the refusal changed nothing."""
    table = driver.new_table(name)
    log = LogBuilder(driver.storage, table.location)
    try:
        with premise("ratifying inline v1"):
            catalog.commit(table.table_id, 1, inline_content=log.data_commit(1), in_commit_timestamp=ict_of(1))
    except PremiseBroken as refused:
        if not isinstance(refused.__cause__, NotSupported):
            raise
        resp = catalog.get_commits(table.table_id)
        assert resp.latest_version == 0 and resp.commits == [], (
            f"an inline proposal of v1 was refused as not supported, yet the table changed: latest"
            f" v{resp.latest_version}, {len(resp.commits)} commits listed"
        )
        return None
    sent = log.data_commit(2)
    with premise("ratifying inline v2 after inline v1"):
        catalog.commit(table.table_id, 2, inline_content=sent, in_commit_timestamp=ict_of(2))
    with contextlib.suppress(CatalogError):
        catalog.commit(table.table_id, 2, inline_content=sent, in_commit_timestamp=ict_of(2))
    wrong = _inline_listed_once(catalog.get_commits(table.table_id), sent, 2)
    return None if wrong is None else f"inline v2 was ratified, then the same proposal was sent again: {wrong}"


def _staged_file_kept(driver: CatalogDriver, uri: str, content: bytes, what: str) -> None:
    """The staged file of a ratified, unpublished commit is that commit until it is published (RFC
    "Terminology - Commits"): a catalog that cleans up after a conflict deletes a loser's file, and a
    re-sent proposal's loser file is the winner's own."""
    kept = driver.storage.exists(uri)
    if not kept or driver.storage.get(uri) != content:
        raise Violation(
            "CAT-RETAIN-UNPUBLISHED",
            f"{what}, the staged file of the ratified, unpublished v3 is {'changed' if kept else 'gone'}"
            f" ({uri}): the catalog must keep a ratified commit until it is published",
        )


@pytest.mark.req("CAT-RESEND-ONCE", "CAT-RETAIN-UNPUBLISHED")
def test_resent_proposal_is_not_ratified_again(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    """A proposal re-sent by a client whose answer was lost, staged and inline (a catalog that hosts no
    inline commits is judged on the staged case alone)."""
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 2)
    # A client whose answer to v3 was lost sends the same proposal again: same file, same version.
    sent = driver.commit_range(table, 3, 3)[3]
    content = driver.storage.get(sent)
    # A conflict, or another refusal: the sender then asks the catalog what happened, as it must.
    with contextlib.suppress(CatalogError):
        catalog.commit(table.table_id, 3, staged_uri=sent, in_commit_timestamp=ict_of(3))
    _staged_file_kept(driver, sent, content, "after the proposal of v3 was sent again")
    wrong = _listed_once(catalog.get_commits(table.table_id), sent, 3)
    if wrong is not None:
        raise Violation(
            "CAT-RESEND-ONCE", f"v3 was ratified, then the same proposal was sent again (its answer lost): {wrong}"
        )
    # The same with the content inline: no staged file names the proposal, only its bytes do.
    wrong = _resend_inline(catalog, driver, f"{table_name}_inline")
    if wrong is not None:
        raise Violation("CAT-RESEND-ONCE", wrong)


@pytest.mark.req("CAT-RESEND-ONCE", "CAT-RETAIN-UNPUBLISHED")
def test_duplicate_delivery_is_ratified_once(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str, seed: int, transcript: Transcript
) -> None:
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 2)
    with premise("staging the proposal of v3"):
        uri = driver.stage(table, 3)
        content = driver.storage.get(uri)
    propose = partial(catalog.commit, table.table_id, 3, staged_uri=uri, in_commit_timestamp=ict_of(3))
    outcomes = race([propose, propose], seed=seed, transcript=transcript)
    if not any(o.ok for o in outcomes):
        refused = sorted({type(o.error).__name__ for o in outcomes})
        raise PremiseBroken(f"neither delivery of the well-formed proposal of v3 was ratified ({', '.join(refused)})")
    _staged_file_kept(driver, uri, content, "after one proposal of v3 was delivered twice at once")
    wrong = _listed_once(catalog.get_commits(table.table_id), uri, 3)
    if wrong is not None:
        raise Violation("CAT-RESEND-ONCE", f"one proposal of v3 was delivered twice at once (a network retry): {wrong}")


KNOWN_OPS = frozenset({"checkpoint", "log_compaction", "checksum", "metadata_cleanup", "vacuum"})


@pytest.mark.req("CAT-MAINTENANCE-POLICY")
def test_policies_survive_a_restart(
    lakecert: RunContext, catalog: RecordingCatalog, driver: CatalogDriver, table_name: str, transcript: Transcript
) -> None:
    """A catalog's policies are state it keeps, as its commits are (session 19): the policy of each table
    is the same after a restart as before it, in known operations only. Nobody changes a policy here
    (the contract has no call to set one), so any difference is the restart's: policies stored under
    other keys and read back wrong, or rebuilt from a default at start-up."""
    tables = [driver.new_table(f"{table_name}_{i}") for i in range(2)]
    driver.commit_range(tables[1], 1, 1)
    try:
        before = {t.table_id: catalog.maintenance_policy(t.table_id).allowed for t in tables}
    except NotSupported:
        # A MAY: asking must have changed nothing (test_discovery.py's policy check verifies it too).
        assert catalog.get_commits(tables[1].table_id).latest_version == 1, "asking for a policy changed a table"
        not_applicable("the catalog defines no maintenance policies (it answered NotSupported)")
    restarted = RecordingCatalog(
        restart_target_catalog(lakecert), transcript, under_test=True, call_s=lakecert.config.settings.deadlines.call_s
    )
    for t in tables:
        try:
            after = restarted.maintenance_policy(t.table_id).allowed
        except CatalogError as e:
            raise AssertionError(
                f"{t.name}'s maintenance policy was {sorted(before[t.table_id])} before a restart; after it the"
                f" catalog refuses to give it ({type(e).__name__})"
            ) from e
        unknown = set(after) - KNOWN_OPS
        assert not unknown and set(after) == set(before[t.table_id]), (
            f"{t.name}'s maintenance policy allowed {sorted(before[t.table_id])} before a restart of the catalog"
            f" and {sorted(after)} after it{f' (no known operation: {sorted(unknown)})' if unknown else ''}; nobody"
            " set a policy: a catalog exposes each table's own policy, in known operations, across restarts too"
        )
