"""Malformed proposals: what a catalog must refuse (RFC "Commit Protocol", "Delta Log Entries").

The other catalog checks send well-formed proposals only. A catalog is the only party that can
stop a proposal which names a version its staged file does not carry, points outside the table's
``_delta_log/_staged_commits/``, leaves a gap straight after creation, or takes a version that was
published and forgotten: readers and cleanup trust what it ratified. Each refusal must also
change nothing (the next well-formed proposal is still the next version).
"""

from __future__ import annotations

import contextlib

import pytest

from conformance.checks.delta.builders import CatalogDriver, LogBuilder, ict_of, new_uuid, premise
from conformance.checks.delta.catalog.staged_paths import dot_segment_misses, folder_misses, name_misses
from conformance.contract.delta import CatalogError, CommitConflict, TableInfo
from conformance.contract.target import restart_hook
from conformance.nemesis import restart_target_catalog
from conformance.observe.recording import RecordingCatalog
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import Violation, not_applicable
from conformance.run_context import RunContext
from reference_impl.delta import log_paths as P


def _refused(catalog: RecordingCatalog, table: TableInfo, version: int, staged_uri: str) -> CatalogError | None:
    """The catalog's answer to a proposal: the error it raised, or None when it ratified it."""
    try:
        catalog.commit(table.table_id, version, staged_uri=staged_uri, in_commit_timestamp=ict_of(version))
    except CatalogError as e:
        return e
    return None


def _name(uri: str) -> str:
    """The staged file as a catalog's proposal names it: the part under ``_delta_log/``."""
    return uri.rsplit("/_delta_log/", 1)[-1]


def _latest(catalog: RecordingCatalog, table: TableInfo) -> int:
    return catalog.get_commits(table.table_id).latest_version


def _unchanged(
    catalog: RecordingCatalog, driver: CatalogDriver, table: TableInfo, reported: int, next_version: int, what: str
) -> None:
    """After a refusal: the catalog reports the latest version it reported before the proposal
    (whether that is right is CAT-LIST-LATEST's business), and the next version is still free: a
    well-formed proposal of it is ratified. A catalog that reserves a version before it has judged the
    whole proposal, and keeps the reservation when it refuses, answers it with a conflict. (Whether
    the one after it would then be ratified over a gap is not asked here: a catalog that accepts gaps
    is CAT-RATIFY-SEQUENTIAL's business, judged by its own checks, not by the rule of the refusal.)"""
    after = _latest(catalog, table)
    assert after == reported, f"{what}: the latest version went from {reported} to {after}"
    error = _refused(catalog, table, next_version, driver.stage(table, next_version))
    assert not isinstance(error, CommitConflict), (
        f"{what}: after the refusal, a well-formed proposal of v{next_version} got a conflict although"
        f" v{next_version} was never ratified (the latest is v{reported}): a refused proposal must change nothing"
    )
    if error is not None:
        # Refusing it for a reason of the catalog's own (a cap on unpublished commits) is allowed.
        with premise(f"ratifying the well-formed v{next_version} after the refusal"):
            raise error


@pytest.mark.req("CAT-RATIFY-SEQUENTIAL")
def test_first_commit_over_a_gap_is_refused(catalog: RecordingCatalog, driver: CatalogDriver, table_name: str) -> None:
    # Right after creation: a "first commit" path that skips the gap test (seen in a real catalog).
    table = driver.new_table(table_name)
    reported = _latest(catalog, table)
    for version in (3, 2):
        staged = driver.stage(table, version)
        assert _refused(catalog, table, version, staged) is not None, (
            f"v{version} was accepted on a table at v0 (v1-v{version - 1} were never proposed): {_name(staged)}"
        )
        listed = [c.version for c in catalog.get_commits(table.table_id).commits]
        assert version not in listed, f"v{version} is listed on a table at v0 after its refusal: {listed}"
    _unchanged(catalog, driver, table, reported, 1, "v3 and v2 over a gap")


@pytest.mark.req("CAT-RATIFY-ONCE")
def test_published_and_forgotten_version_is_not_ratified_again(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    # A catalog may drop published commits; the versions stay taken (the RFC's "at most once").
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 9)
    with premise("recording publication up to v9, then v11"):
        driver.publish(table, 9)  # no more than 10 unpublished at once (Unity Catalog refuses more)
        driver.commit_range(table, 10, 11)
        driver.publish(table, 11)
        after = catalog.get_commits(table.table_id).latest_version
        assert after == 11, f"after publication the latest version is {after}, not 11 (CAT-LIST-LATEST judges it)"
    with premise("deleting the published file of v2"):
        # As metadata cleanup may after a checkpoint: the version stays taken whether or not its
        # published file is still there (a server that recognizes replays by comparing with that
        # file must not take a missing one for a match).
        driver.storage.delete(P.delta_uri(table.location, 2))
    for version in (10, 1, 2):
        rival = driver.stage(table, version)
        error = _refused(catalog, table, version, rival)
        assert error is not None, f"published and forgotten v{version} was ratified a second time"
        assert isinstance(error, CommitConflict), f"re-proposed v{version}: {type(error).__name__}, not a conflict"
        resp = catalog.get_commits(table.table_id)
        # A catalog may keep published commits and list them (or not); never the rival's file.
        served = [c.staged_uri for c in resp.commits if c.version == version]
        assert rival not in served, f"v{version} is listed with the rival's file {_name(rival)} after the conflict"
        assert resp.latest_version == 11, f"re-proposing v{version} moved the latest version to {resp.latest_version}"


@pytest.mark.req("CAT-STAGED-VERSION")
def test_staged_file_of_another_version_is_refused(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 9)
    reported = _latest(catalog, table)
    log = LogBuilder(driver.storage, table.location)
    # Real staged files whose names say another version (each a commit attempt for that version, RFC
    # note), proposed as v10: the versions next to it, an old attempt, and versions whose digits begin
    # or end with 10 (a catalog comparing the name's version as text, or one off).
    for named in (12, 11, 9, 1, 100, 110, 1_000_010):
        uri = log.stage(named, log.data_commit(10))
        _refused(catalog, table, 10, uri)  # judged by its effect: how it refuses is the catalog's business
        listed = driver.listing(table)
        assert 10 not in listed, f"{_name(uri)}, a commit attempt for v{named}, was ratified as v10"
    _unchanged(catalog, driver, table, reported, 10, "a staged file of another version")


def _ratified_file_elsewhere(
    catalog: RecordingCatalog, table: TableInfo, files: dict[int, str], latest: int, when: str
) -> None:
    """Each ratified staged file proposed again for a version other than its own: the next free one,
    a far one, the one before its own and the latest (taken). RFC "Delta Log Entries" (note on staged
    versions): a staged file is a commit attempt for the version its name carries and may be ratified
    as that version only. A second delivery at its own version may be acknowledged (docs/certify.md);
    at any other version an acknowledgement tells the writer its commit holds a version that holds
    nothing of it (or another writer's commit): it must be refused (a conflict, for a taken version)
    and change nothing."""
    for own, uri in sorted(files.items()):
        for proposed in sorted({latest + 1, latest + 2, latest + 7, own + 1, own - 1, latest} - {own, 0}):
            what = f"{_name(uri)}, ratified as v{own}, proposed again as v{proposed} {when}"
            error = _refused(catalog, table, proposed, uri)
            resp = catalog.get_commits(table.table_id)
            if error is None:
                raise Violation(
                    "CAT-STAGED-VERSION",
                    f"{what} was acknowledged (latest v{resp.latest_version}): only a second delivery at its own"
                    " version may be; at any other version it must be refused",
                )
            served = {c.version: c.staged_uri for c in resp.commits}
            moved = resp.latest_version != latest
            if moved or (proposed > latest and proposed in served) or (proposed in served and served[proposed] == uri):
                raise Violation(
                    "CAT-STAGED-VERSION",
                    f"{what} was refused ({type(error).__name__}), yet the latest is v{resp.latest_version} and the"
                    f" listing holds {sorted(served)}: a refused proposal changes nothing",
                )


@pytest.mark.req("CAT-STAGED-VERSION")
def test_ratified_staged_file_is_refused_at_another_version(
    lakecert: RunContext, catalog: RecordingCatalog, driver: CatalogDriver, table_name: str, transcript: Transcript
) -> None:
    # A writer that reuses its staged file after a conflict, or a late retry after the table moved on,
    # proposes a file the catalog already ratified: a catalog that recognises "already ratified" by the
    # file alone, without its version, acknowledges it at any version. Judged while the file is stored
    # unpublished, once it is published (a catalog may drop it then), and after a restart.
    table = driver.new_table(table_name)
    files = driver.commit_range(table, 1, 6)
    _ratified_file_elsewhere(catalog, table, {v: files[v] for v in (1, 5, 6)}, 6, "while unpublished")
    with premise("publishing v1-v5 and recording publication up to v5"):
        driver.publish(table, 5)
    _ratified_file_elsewhere(catalog, table, {v: files[v] for v in (1, 5, 6)}, 6, "after v1-v5 were published")
    if restart_hook(lakecert.target) is not None:
        restarted = RecordingCatalog(
            restart_target_catalog(lakecert),
            transcript,
            under_test=True,
            call_s=lakecert.config.settings.deadlines.call_s,
        )
        _ratified_file_elsewhere(restarted, table, {v: files[v] for v in (5, 6)}, 6, "after a restart")
        catalog = restarted
        driver = CatalogDriver(restarted, driver.storage, published=driver.published, locations=driver.locations)
    _unchanged(catalog, driver, table, 6, 7, "a ratified staged file proposed again at another version")


@pytest.mark.req("CAT-STAGED-IN-TABLE")
def test_staged_file_outside_the_staging_folder_is_refused(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    table = driver.new_table(table_name)
    other = driver.new_table(f"{table_name}_other")
    driver.commit_range(table, 1, 2)
    reported = _latest(catalog, table)
    content = LogBuilder(driver.storage, table.location).data_commit(3)
    name = f"{3:020d}.{new_uuid()}.json"
    escaped = f"{table.location}/outside/{name}"
    candidates = {
        # ``..`` leaves _staged_commits/ (the file exists where the path resolves to)
        f"{P.staged_dir(table.location)}/../../outside/{name}": escaped,
        # well named, but directly in _delta_log/ (where only published commits live)
        f"{table.location}/_delta_log/{name}": f"{table.location}/_delta_log/{name}",
        # another table's staging folder
        f"{P.staged_dir(other.location)}/{name}": f"{P.staged_dir(other.location)}/{name}",
        # a folder below _staged_commits/: where no reader or cleanup looks for staged commits
        f"{P.staged_dir(table.location)}/retry/{name}": f"{P.staged_dir(table.location)}/retry/{name}",
    }
    for proposed, stored in candidates.items():
        with premise(f"writing {stored}"):
            driver.storage.put(stored, content)
        _refused(catalog, table, 3, proposed)
        listed = driver.listing(table)
        where = proposed.removeprefix(table.location + "/")
        assert 3 not in listed, f"{where} (not in the table's _delta_log/_staged_commits/) was ratified as v3"
    # The whole family of near misses, every component perturbed (staged_paths.py): another scheme,
    # bucket or host with the same path, a folder in another case, a segment added, left out or run
    # together, an encoded ``/``. Each names another object; each is written first where it can be.
    for miss in folder_misses(table.location, name):
        if miss.writable:
            with premise(f"writing {miss.uri}"):
                driver.storage.put(miss.uri, content)
        _refused(catalog, table, 3, miss.uri)
        listed = driver.listing(table)
        assert 3 not in listed, (
            f"{miss.uri} ({miss.what}: not the table's own {P.staged_dir(table.location)}/) was ratified as v3;"
            " RFC 'Terminology - Commits': a staged commit lies in its table's _delta_log/_staged_commits/,"
            " and a proposal of any other URI must be refused"
        )
    _unchanged(catalog, driver, table, reported, 3, "a staged path outside _staged_commits/")
    # Detours of dot segments back into the folder (staged_paths.dot_segment_misses), from v4 on: RFC 3986
    # lets the catalog read each as the folder's own URI, so it may refuse it or ratify that URI; ratified
    # and listed as sent, the commit is, on an object store, a key outside the folder.
    version = 4
    for i in range(len(dot_segment_misses(table.location, other.location, ""))):
        name = f"{version:020d}.{new_uuid()}.json"  # the version moves on when a detour is ratified
        miss = dot_segment_misses(table.location, other.location, name)[i]
        uri, canonical = miss.uri, f"{P.staged_dir(table.location)}/{name}"
        with contextlib.suppress(Exception):  # a store that refuses the key: proposed unwritten
            driver.storage.put(uri, LogBuilder(driver.storage, table.location).data_commit(version))
        ratified = _refused(catalog, table, version, uri) is None
        served = driver.listing(table).get(version)
        assert served == canonical if ratified else served is None, (
            f"{_name(uri)} ({miss.what}) was {'ratified' if ratified else 'refused'} and v{version} is listed as"
            f" {served}: RFC 'Terminology - Commits' puts a staged commit directly in its table's"
            " _delta_log/_staged_commits/; a detour of dot segments may be read as that folder's own URI,"
            " never kept as sent (on an object store, a key outside the folder)"
        )
        version += 1 if ratified else 0


@pytest.mark.req("CAT-STAGED-NAME")
def test_staged_file_without_its_uuid_is_refused(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 2)
    reported = _latest(catalog, table)
    content = LogBuilder(driver.storage, table.location).data_commit(3)
    # In the right folder and named for the right version, but not "<v>.<uuid>.json" with the version
    # zero-padded to 20 digits (RFC "Delta Log Entries"): every attempt at v3 would write the first
    # name, the second is no random UUID, and the last two name v3 in digits no reader parses as a
    # staged commit of v3.
    uuid = new_uuid()
    for name in (f"{3:020d}.json", f"{3:020d}.attempt-1.json", f"3.{uuid}.json", f"{3:021d}.{uuid}.json"):
        uri = f"{P.staged_dir(table.location)}/{name}"
        with premise(f"writing {uri}"):
            driver.storage.put(uri, content)
        _refused(catalog, table, 3, uri)
        listed = driver.listing(table)
        assert 3 not in listed, f"{_name(uri)} (a staged name without its UUID) was ratified as v3"
    # Names that begin or end as a staged name does and are not one (staged_paths.py): a name checked
    # from its start only, or up to its UUID only, takes them for a commit of v3; so does one checked
    # after strip(), or with an anchor that matches before a line end (whitespace and control
    # characters around the name, written into it as a line-reading writer would).
    for miss in name_misses(table.location, 3, new_uuid()):
        uri = miss.uri
        # A storage that cannot hold this name (moto's S3 refuses a key with a line end, where a
        # well-formed name was written above) gets it proposed unwritten: a refusal is still the only
        # right answer, and a catalog that checks the name loosely still ratifies it.
        if miss.writable:
            with contextlib.suppress(Exception):
                driver.storage.put(uri, content)
        _refused(catalog, table, 3, uri)
        listed = driver.listing(table)
        assert 3 not in listed, (
            f"{_name(uri)!r} ({miss.what}) was ratified as v3; RFC 'Terminology - Commits': a staged commit is"
            " named exactly <20-digit version>.<uuid>.json, and any other name must be refused"
        )
    _unchanged(catalog, driver, table, reported, 3, "a staged name without its UUID")


@pytest.mark.req("CAT-RATIFY-SEQUENTIAL", "CAT-LIST-RATIFIED-ONLY")
def test_refused_proposal_of_a_missing_staged_file_leaves_its_version_free(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    # Whether a staged file that does not exist is refused is the catalog's to decide (docs/certify.md:
    # it may ratify without storage access). Refused, it is refused whole (RFC "Commit Protocol": a
    # refused proposal changes nothing): a catalog that reserves the version before it looks for the
    # file, and keeps the reservation, ratifies the next version over a gap.
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 9)
    reported = _latest(catalog, table)
    log = LogBuilder(driver.storage, table.location)
    never = P.staged_uri(table.location, 10, new_uuid())  # well named, never written
    with premise("staging a commit for v10, then deleting it (an attempt tidied away)"):
        tidied = log.stage(10, log.data_commit(10))
        driver.storage.delete(tidied)
    for uri in (never, tidied):
        if _refused(catalog, table, 10, uri) is None:
            with premise(f"the catalog lists {_name(uri)} as v10 after ratifying it"):
                listed = driver.listing(table)
                assert listed.get(10) == uri, f"v10 was ratified, yet the listing has {listed.get(10)}"
            not_applicable(
                f"the catalog ratifies a staged file that does not exist ({_name(uri)}), as docs/certify.md allows"
                " (verified: it lists it as v10): no refusal to judge"
            )
    # A refusal the catalog stored all the same is served to readers as a commit it never ratified.
    served = driver.listing(table).get(10)
    if served is not None and served in (never, tidied):
        raise Violation(
            "CAT-LIST-RATIFIED-ONLY",
            f"the catalog refused {_name(served)} as v10, yet lists it as v10: a refused proposal is not ratified",
        )
    _unchanged(catalog, driver, table, reported, 10, "a proposal of a staged file that does not exist")
