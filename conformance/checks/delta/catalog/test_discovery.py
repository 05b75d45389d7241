"""Discovery, creation and policy (RFC "Table Discovery", "Creating ...", "Maintenance ...")."""

from __future__ import annotations

import contextlib

import pytest

from conformance.checks.delta.builders import CatalogDriver, premise, version0
from conformance.checks.delta.catalog.drop_neighbours import neighbour_names, unregistered_near_names
from conformance.checks.delta.catalog.envelope import staging
from conformance.checks.delta.catalog.names_forms import create_named, resolved, spelled_names
from conformance.checks.delta.catalog.warehouses import AWKWARD, awkward_warehouse, catalog_over, close
from conformance.contract.delta import (
    CatalogError,
    MaintenancePolicy,
    NotSupported,
    StagingTable,
    TableInfo,
    TableNotFound,
)
from conformance.observe.recording import RecordingCatalog
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import PremiseBroken, not_applicable
from conformance.run_context import RunContext
from reference_impl.delta.log_paths import delta_uri, log_dir

KNOWN_OPS = {"checkpoint", "log_compaction", "checksum", "metadata_cleanup", "vacuum"}


@pytest.mark.req("CAT-RESOLVE-LOCATION")
def test_resolution_returns_the_table_location(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    staging = catalog.create_staging_table()
    driver.storage.put(delta_uri(staging.location, 0), version0(staging.table_id))
    catalog.register_table(table_name, staging.table_id)
    info = catalog.resolve(table_name)
    assert info.location.rstrip("/") == staging.location.rstrip("/"), (
        f"resolved {info.location}, the table lives at {staging.location}"
    )
    assert info.table_id == staging.table_id, (
        f"the name resolves to table id {info.table_id}, but it was registered for {staging.table_id}"
    )


@pytest.mark.req("CAT-RESOLVE-LOCATION")
def test_locations_under_an_awkward_warehouse_resolve_as_handed_out(
    lakecert: RunContext, transcript: Transcript, driver: CatalogDriver, table_name: str
) -> None:
    """RFC "Table Discovery": a name resolves to the location its table was created at, byte for byte,
    whatever characters the warehouse path holds. A catalog of the target is built over each awkward
    warehouse (warehouses.py: space, ``#``, non-ASCII, ``+``); in each, a table is created and
    registered, and the locations staging and registration handed out are compared with the resolved one."""
    skipped: list[str] = []
    drawn = 0
    call_s = lakecert.config.settings.deadlines.call_s
    for index, (what, _) in enumerate(AWKWARD):
        built = catalog_over(lakecert, index)
        if isinstance(built, str):
            skipped.append(f"over a warehouse with {what} the target built no catalog ({built})")
            continue
        try:
            other = RecordingCatalog(built, transcript, under_test=True, call_s=call_s)
            warehouse = awkward_warehouse(lakecert, index)
            with premise(f"creating a staging table in a catalog over {warehouse!r}"):
                st = other.create_staging_table()
            if not st.location.startswith(warehouse + "/"):
                # Its tables are not placed under the warehouse it is handed: the same for every warehouse.
                skipped.append(f"the catalog placed a table at {st.location}, not under the warehouse {warehouse!r}")
                break
            name = f"{table_name}_w{index}"
            with premise(f"creating the table {name!r} in a catalog over {warehouse!r}"):
                driver.storage.put(delta_uri(st.location, 0), version0(st.table_id), if_absent=True)
                registered = other.register_table(name, st.table_id)
            info = other.resolve(name)
            for said, location in (("registration", registered.location), ("resolution", info.location)):
                assert location.rstrip("/") == st.location.rstrip("/"), (
                    f"in a catalog over a warehouse with {what} ({warehouse!r}), staging handed out"
                    f" {st.location} and {said} of {name!r} answered {location}: a name must resolve to the"
                    " location the table was created at, unchanged (clients would read and write elsewhere)"
                )
            drawn += 1
        finally:
            close(built)
    if not drawn:
        not_applicable(
            "no catalog of the target could be judged over an awkward warehouse (verified: "
            + "; ".join(skipped)
            + "); a catalog with a warehouse of its own is judged on its plain one only"
        )


# Names a few characters from a registered one: a lookup by prefix, by the longest registered
# prefix or by a fuzzy match answers them with the neighbour's table. The seed varies the distance.
NEAR_SUFFIXES = ("x", "_1", "_orders")


def _near_names(name: str, seed: int) -> list[str]:
    """Unregistered names next to ``name``: a prefix of it, it plus a suffix, and it with its last
    character changed (``name`` ends in a hex digit, so ``g`` and ``z`` are never the same)."""
    cut = 1 + seed % 3
    return [name[:-cut], name + NEAR_SUFFIXES[seed % len(NEAR_SUFFIXES)], name[:-1] + ("g" if seed % 2 else "z")]


@pytest.mark.req("CAT-RESOLVE-LOCATION")
def test_unregistered_names_next_to_registered_ones_are_not_found(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str, seed: int
) -> None:
    """RFC "Table Discovery": resolution maps a name to its own table's location. A name no table was
    registered under has no location; the contract's answer is ``TableNotFound``. Two registered names,
    one extending the other, so that an unregistered name lies between them as well as beside them."""
    short = driver.new_table(table_name)
    longer = driver.new_table(f"{table_name}_orders")
    tables = {short.table_id: short, longer.table_id: longer}
    asked = _near_names(table_name, seed) + _near_names(longer.name, seed) + [f"{table_name}_order"]
    # And names a lookup that takes the asked name as a pattern matches to a registered one: the last
    # character as a LIKE, regex or glob wildcard, a trailing %, * or .* (a name may be refused for
    # them: any catalog error is an answer that names no table).
    asked += [f"{n[:-1]}{w}" for n in (short.name, longer.name) for w in ("_", "%", ".", "?", "*")]
    asked += [f"{short.name}{w}" for w in ("%", "*", ".*")]
    # And names a lookup that strips whitespace (strip(), Java's trim()) or matches with an anchor that
    # takes a final line end (Python's ``$``) answers with the table beside them: a line end, a tab or a
    # space after or before a registered name, and a line of text after it.
    asked += [f"{short.name}{w}" for w in ("\n", "\r\n", "\t", " ", "\x00", "\nx")]
    asked += [f"{w}{longer.name}" for w in ("\n", "\t", " ")]
    for name in sorted(set(asked) - {short.name, longer.name}):
        try:
            info = catalog.resolve(name)
        except CatalogError:
            continue
        whose = tables.get(info.table_id)
        pytest.fail(
            f"the name {name!r}, under which no table was registered, resolved to table {info.table_id} at"
            f" {info.location}{f' (the table named {whose.name!r})' if whose else ''}: a name must resolve to"
            " its own table or not at all (TableNotFound); a client would read and write another table"
        )
    for table in (short, longer):
        now = catalog.resolve(table.name)
        assert now.table_id == table.table_id, (
            f"after unregistered names beside it were asked, {table.name!r} resolves to table {now.table_id},"
            f" not to its own {table.table_id}"
        )


@pytest.mark.req("CAT-RESOLVE-MANAGED")
def test_resolution_says_catalog_managed(catalog: RecordingCatalog, driver: CatalogDriver, table_name: str) -> None:
    """RFC "Table Discovery": resolution says the table is catalog-managed, for as long as it is: on a
    fresh table, and after appends were published and the marks reported (the flag read from a
    published commit, or from whether unpublished commits remain, changes then), and after more appends."""
    table = driver.new_table(table_name)
    assert catalog.resolve(table_name).catalog_managed is True, "resolution does not flag a new table as managed"
    driver.commit_range(table, 1, 3)
    steps = ((2, "v1-v3 ratified, published and marked up to v2"), (3, "v1-v3 ratified, all published and marked"))
    for mark, state in steps:
        with premise(f"publishing up to v{mark} and recording the mark"):
            driver.publish(table, mark)
        managed = catalog.resolve(table_name).catalog_managed
        assert managed is True, (
            f"with {state}, resolution says catalog_managed={managed}: the table is still catalog-managed,"
            " and a client trusting the flag would commit to the filesystem"
        )
    driver.commit_range(table, 4, 4)
    managed = catalog.resolve(table_name).catalog_managed
    assert managed is True, f"after v4 was ratified over a published v3, resolution says catalog_managed={managed}"


class _Locations:
    """Every location the catalog handed out in the run (the suite's tables, then this check's staging
    tables), with how the creation that got it ended; judges each new staging table against them."""

    def __init__(self, driver: CatalogDriver, earlier: dict[str, str]) -> None:
        self.driver = driver
        self.handed = {loc: f"table {tid}, created earlier in the run" for loc, tid in earlier.items()}
        self.ids: set[str] = set(earlier.values())

    def stage(self, ends: str) -> StagingTable:
        """A new staging table, judged: a location and a table id never handed out, with no files."""
        st = self.driver.catalog.create_staging_table()
        loc = st.location.rstrip("/")
        assert loc not in self.handed, (
            f"a new staging table ({st.table_id}) was given the location {st.location}, already handed to"
            f" {self.handed[loc]}: each table creation should get a location of its own, whatever became of the"
            " creations before it"
        )
        files = [f.uri for f in self.driver.storage.list(loc + "/")]
        assert not files, (
            f"a new staging table ({st.table_id}) was given the location {st.location}, which already holds"
            f" {files[:3]}: a new creation's location should hold no other table's files"
        )
        assert st.table_id not in self.ids, f"the table id {st.table_id} was handed out twice"
        self.ids.add(st.table_id)
        self.handed[loc] = f"table {st.table_id}, {ends}"
        # The run's record too: a later check given this location again is told so (its premise), and the
        # restart check judges locations after the restart against it.
        self.driver.locations.setdefault(loc, st.table_id)
        return st


def _drop_for_reuse(catalog: RecordingCatalog, driver: CatalogDriver, name: str, table_id: str) -> bool:
    """Drop the table named ``name`` (table ``table_id``); False when the catalog offers no drop (a MAY:
    verified that the name still resolves to its table). Any other refusal is CAT-DROP's to judge."""
    try:
        catalog.drop_table(name)
    except NotSupported:
        now = resolved(driver, name)
        if now is None or now.table_id != table_id:
            raise PremiseBroken(f"a drop of {name!r} refused as unsupported, yet the name changed") from None
        return False
    except CatalogError as e:
        raise PremiseBroken(f"dropping {name!r}, a registered table (judged by CAT-DROP)") from e
    return True


def _name(driver: CatalogDriver, st: StagingTable, name: str) -> None:
    """Write version 0 of staging table ``st`` and register it as ``name``: a premise."""
    with premise(f"registering {name!r}"):
        driver.storage.put(delta_uri(st.location, 0), version0(st.table_id), if_absent=True)
        driver.catalog.register_table(name, st.table_id)


@pytest.mark.req("CAT-STAGING-UNIQUE")
def test_staging_locations_are_unique(
    catalog: RecordingCatalog,
    driver: CatalogDriver,
    transcript: Transcript,
    table_name: str,
    table_locations: dict[str, str],
    seed: int,
) -> None:
    """RFC "Creating and Dropping" phase 1: each creation gets a location of its own, over the whole
    run, however the creations before it ended: registered, refused at registration (the name taken,
    or version 0 missing), or abandoned after version 0 was written. A catalog that hands a location
    back to a pool, or reuses the folder of a creation it takes for dead, gives a later creation a
    location with another table's version 0 in it. Every creation is judged against every location
    handed out before it, the suite's tables of the run included.

    Then creations interleaved with drops, where the catalog offers them: the RFC's drop is a soft one
    (the name goes, the files stay), so a location numbered from the tables the catalog still holds (a
    count, or the highest live number, which a drop lowers) or handed back when its table is dropped
    goes to a later creation, onto a live table's, a dropped table's or a creation in flight's files.
    The oldest registered table is dropped first, then a new one under its name, the newest of all."""
    pool = _Locations(driver, dict(table_locations))
    kept = pool.stage("registered")
    driver.storage.put(delta_uri(kept.location, 0), version0(kept.table_id), if_absent=True)
    with premise(f"registering {table_name!r}"):
        driver.catalog.register_table(table_name, kept.table_id)
    ends = ("refused: its name was taken", "refused or taken: no version 0", "abandoned after version 0")
    for how in ends[seed % len(ends) :] + ends[: seed % len(ends)]:  # the seed varies the order
        st = pool.stage(how)
        if how != ends[1]:
            driver.storage.put(delta_uri(st.location, 0), version0(st.table_id), if_absent=True)
        if how != ends[2]:
            with contextlib.suppress(CatalogError):
                driver.catalog.register_table(table_name if how == ends[0] else f"{table_name}_no_v0", st.table_id)
    for _ in range(3):
        pool.stage("the last created")
    in_flight = pool.stage("in flight through the drops (version 0 written, not named)")
    driver.storage.put(delta_uri(in_flight.location, 0), version0(in_flight.table_id), if_absent=True)
    if not _drop_for_reuse(catalog, driver, table_name, kept.table_id):
        transcript.notes["drops"] = "not judged: the catalog offers no drop (verified: the name still resolves)"
        return
    _name(driver, pool.stage(f"registered after {table_name!r} was dropped"), f"{table_name}_after_drop")
    again = pool.stage(f"registered under the dropped name {table_name!r}, then dropped")
    _name(driver, again, table_name)
    if not _drop_for_reuse(catalog, driver, table_name, again.table_id):
        raise PremiseBroken(f"a second drop of {table_name!r} (its new table, the newest created) was unsupported")
    for _ in range(2):
        pool.stage("created after two drops")


@pytest.mark.req("CAT-MAINTENANCE-POLICY")
def test_policy_names_known_operations(catalog: RecordingCatalog, driver: CatalogDriver, table_name: str) -> None:
    table = driver.new_table(table_name)
    before = catalog.get_commits(table.table_id)
    try:
        policy = catalog.maintenance_policy(table.table_id)
    except NotSupported:
        # A MAY: a catalog (UC's API among them) may define no policies, and says so; asking
        # must have changed nothing.
        after = catalog.get_commits(table.table_id)
        assert (after.latest_version, after.commits) == (before.latest_version, before.commits), (
            "asking for a maintenance policy the catalog does not define changed the table's commits"
        )
        not_applicable("the catalog defines no maintenance policies (verified: asking changed nothing)")
    assert isinstance(policy, MaintenancePolicy), f"policy is a {type(policy).__name__}"
    unknown = set(policy.allowed) - KNOWN_OPS
    assert not unknown, f"policy names operations no client knows: {sorted(unknown)}"


def _drifted(driver: CatalogDriver, name: str, was: TableInfo) -> str | None:
    """What ``name`` resolves to now, in words, when that is no longer ``was``'s id and location; else None."""
    now = resolved(driver, name)
    if now is not None and (now.table_id, now.location.rstrip("/")) == (was.table_id, was.location.rstrip("/")):
        return None
    return "nothing" if now is None else f"table {now.table_id} at {now.location}"


def _others_intact(driver: CatalogDriver, tables: dict[str, TableInfo], after: str) -> None:
    """CAT-DROP: every table not dropped still resolves, by its name, to its own id and location."""
    for name, table in tables.items():
        where = _drifted(driver, name, table)
        if where is not None:
            pytest.fail(
                f"{after}, the name {name!r} (table {table.table_id} at {table.location}, not dropped) resolves"
                f" to {where}: a drop removes the named table's name only, and leaves other tables as they were"
            )


def _dropped(driver: CatalogDriver, name: str, table: TableInfo) -> None:
    """CAT-DROP: the dropped name resolves no more."""
    try:
        still = driver.catalog.resolve(name)
    except TableNotFound:
        return
    pytest.fail(
        f"the drop of {name!r} was acknowledged, yet the name still resolves (to table {still.table_id};"
        f" it was {table.table_id}): a drop must remove the name"
    )


def _log_of(driver: CatalogDriver, table: TableInfo) -> dict[str, bytes]:
    """Every file under the table's ``_delta_log/`` (staged commits included), with its bytes."""
    return {f.uri: driver.storage.get(f.uri) for f in driver.storage.list(log_dir(table.location) + "/")}


def _nothing_written(driver: CatalogDriver, table: TableInfo, before: dict[str, bytes], state: str) -> None:
    """CAT-DROP: the drop made no commit to the dropped table and wrote nothing into its log."""
    now = _log_of(driver, table)
    written = sorted(u for u in now if u not in before or now[u] != before[u])
    assert not written, (
        f"the drop of {table.name!r}, a table {state}, wrote into the dropped table's log: {written}; a drop"
        " removes the name and makes no commit to the table (RFC 'Creating and Dropping')"
    )


@pytest.mark.req("CAT-DROP")
def test_a_dropped_table_no_longer_resolves(catalog: RecordingCatalog, driver: CatalogDriver, table_name: str) -> None:
    """RFC "Creating and Dropping": a drop removes the named table's name and makes no commit to the
    table; every other table stays as it was. The tables live among neighbours whose names are near
    (drop_neighbours.py: case, Unicode form, prefix, length), dropped one at a time, the latest created
    first (a loose lookup that takes its first match takes an earlier neighbour); between the first drop
    and the others, names no table has, near the registered ones, are dropped too (a loose lookup takes
    a neighbour whatever the order). After each drop every other name resolves to its own table, and
    the dropped table's log holds what it held before: judged on a table with unpublished commits, one
    whose every commit is published and marked, and the neighbours, which hold their version 0 alone."""
    base = f"{table_name}_Drop"
    tables: dict[str, TableInfo] = {}
    for name in neighbour_names(base):
        table = create_named(driver, name)
        now = resolved(driver, name) if table is not None else None
        # A name the catalog refused, or accepted and does not resolve to its table (CAT-RESOLVE-LOCATION's
        # to judge, test_every_accepted_name_resolves_after_each_event), is no neighbour here.
        if table is not None and now is not None and now.table_id == table.table_id:
            tables[name] = table
    with premise(f"registering the plain name {base!r} (docs/certify.md: every catalog takes it)"):
        assert base in tables, f"the catalog refused the plain name {base!r}, or it resolves to another table"
    order = list(reversed(tables))
    first = tables.pop(order[0])
    driver.commit_range(first, 1, 2)
    # Another creation in flight through every drop: staged, version 0 written, not yet named.
    in_flight = staging(driver)
    before = _log_of(driver, first)
    try:
        catalog.drop_table(first.name)
    except NotSupported:
        assert catalog.resolve(first.name).table_id == first.table_id, (
            "drop refused as unsupported, yet the name changed"
        )
        not_applicable("the catalog does not offer dropping tables (verified: the name still resolves)")
    except CatalogError as e:
        pytest.fail(f"the drop of {first.name!r}, a table the catalog resolves, was refused ({type(e).__name__})")
    _dropped(driver, first.name, first)
    _others_intact(driver, tables, f"after {first.name!r} was dropped")
    _nothing_written(driver, first, before, "with ratified commits unpublished")
    # What a drop leaves in storage, whatever the table's state (session 19): a table whose every
    # commit is published and marked, and the neighbours below, which hold their version 0 alone.
    done = driver.new_table(f"{base}_pub")
    driver.commit_range(done, 1, 2)
    with premise(f"publishing {done.name} up to v2 and recording the mark"):
        driver.publish(done, 2)
    was = _log_of(driver, done)
    try:
        catalog.drop_table(done.name)
    except CatalogError as e:
        pytest.fail(f"the drop of {done.name!r}, a table the catalog resolves, was refused ({type(e).__name__})")
    _dropped(driver, done.name, done)
    _nothing_written(driver, done, was, "with every commit published and marked")
    _others_intact(driver, tables, f"after {done.name!r} was dropped")
    for name in unregistered_near_names(base):
        # A name the catalog resolves to a table is one of its names (its naming may fold case, as Unity
        # Catalog's does): not drawn. One that resolves to nothing designates no table, and drops none.
        if name in tables or name == first.name or resolved(driver, name) is not None:
            continue
        with contextlib.suppress(CatalogError):
            catalog.drop_table(name)
        _others_intact(driver, tables, f"after a drop of {name!r}, a name that resolved to no table")
    for name in order[1:]:
        table = tables.pop(name)
        was = _log_of(driver, table)
        try:
            catalog.drop_table(name)
        except CatalogError as e:
            pytest.fail(f"the drop of {name!r}, a table the catalog resolves, was refused ({type(e).__name__})")
        _dropped(driver, name, table)
        _others_intact(driver, tables, f"after {name!r} was dropped")
        _nothing_written(driver, table, was, "holding its version 0 alone")
    # A drop touches its own table only: the creation in flight throughout is named as if none happened.
    try:
        catalog.register_table(f"{base}_in_flight", in_flight.table_id)
    except CatalogError as e:
        pytest.fail(
            f"a table staged before the drops ({in_flight.table_id}) could not be registered after them"
            f" ({type(e).__name__}: {e}): a drop must leave every other table, and every creation in flight, as it was"
        )


def _judge_names(driver: CatalogDriver, tables: dict[str, TableInfo], when: str) -> None:
    """Every accepted name resolves, in the exact spelling it was registered, to its own table."""
    for name, table in tables.items():
        now = resolved(driver, name)
        assert now is not None and now.table_id == table.table_id, (
            f"{when}, the name {name!r} (registered for table {table.table_id}) resolved to"
            f" {'nothing' if now is None else f'table {now.table_id} at {now.location}'}: RFC 'Table Discovery',"
            " a name the catalog accepted must resolve, as it was spelled, to its own table's location"
        )


@pytest.mark.req("CAT-RESOLVE-LOCATION")
def test_every_accepted_name_resolves_after_each_event(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    """Names in several Unicode spellings (names_forms.py) and a plain one, each asked for before its
    table exists (an engine's "create if not exists"), then created, then resolved in the exact
    spelling it was registered; then dropped and given to a new table, and resolved again. A catalog
    may refuse a name outside its alphabet; every name it accepted is judged."""
    spellings = {table_name: "ASCII", **spelled_names(table_name)}
    for name in spellings:
        resolved(driver, name)  # before creation: not found (judged elsewhere); the answer must not stick
    tables = {name: t for name in spellings if (t := create_named(driver, name)) is not None}
    with premise(f"registering the plain name {table_name!r} (docs/certify.md: every catalog takes it)"):
        assert table_name in tables, f"the catalog refused the plain name {table_name!r}"
    _judge_names(driver, tables, "after the tables were created (each name was asked for before)")
    reused: dict[str, TableInfo] = {}
    for name in tables:
        try:
            catalog.drop_table(name)
        except NotSupported:
            return  # dropping is the catalog's to offer (test_a_dropped_table_no_longer_resolves judges it)
        with premise(f"registering a new table under the dropped name {name!r}"):
            reused[name] = driver.new_table(name)
    _judge_names(driver, reused, "after each name was dropped and given to a new table")


@pytest.mark.req("CAT-RESOLVE-LOCATION")
def test_a_registration_refused_or_of_a_taken_name_changes_no_name(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    """RFC "Table Discovery" and "Creating and Dropping" (phase 3): a name resolves to its own table.
    A name taken by a table is not given to another one by a second registration (a table replaced
    without a drop loses its commits to its readers); a registration the catalog refuses (here: a
    staged table whose version 0 was never written, which a catalog may refuse or take) leaves the
    name free, and a registration once version 0 exists then gives it to that table."""
    first = driver.new_table(table_name)
    driver.commit_range(first, 1, 1)
    with premise("reserving a second staging location"):
        second = catalog.create_staging_table()
        driver.storage.put(delta_uri(second.location, 0), version0(second.table_id), if_absent=True)
    with contextlib.suppress(CatalogError):
        catalog.register_table(table_name, second.table_id)
    now = resolved(driver, table_name)
    assert now is not None and now.table_id == first.table_id, (
        f"after a second table was registered under the taken name {table_name!r}, the name resolves to"
        f" {'nothing' if now is None else f'table {now.table_id} at {now.location}'}, no longer to its table"
        f" {first.table_id} (with commits up to v1): a registration must not take a name from a table"
    )
    # A staged table without its version 0, registered under a free name.
    free = f"{table_name}_pending"
    with premise("reserving a staging location"):
        pending = catalog.create_staging_table()
    try:
        catalog.register_table(free, pending.table_id)
    except CatalogError:
        left = resolved(driver, free)
        assert left is None, (
            f"a registration of {free!r} was refused, yet the name resolves to table {left.table_id} at"
            f" {left.location}: a refused call changes nothing"
        )
        with premise(f"registering {free!r} once its version 0 exists"):
            driver.storage.put(delta_uri(pending.location, 0), version0(pending.table_id), if_absent=True)
            catalog.register_table(free, pending.table_id)
        got = resolved(driver, free)
        assert got is not None and got.table_id == pending.table_id, (
            f"{free!r} registered once its version 0 existed resolves to"
            f" {'nothing' if got is None else f'table {got.table_id}'}, not to {pending.table_id}"
        )


def _register_again(driver: CatalogDriver, names: dict[str, TableInfo], what: str, name: str, table_id: str) -> None:
    """One registration of ``table_id`` under ``name`` (``what`` says which kind of id and name), judged by
    what it leaves: every name in ``names`` (each as it resolved before) resolves to the same table and
    location; a refused registration leaves a free ``name`` unresolved; an acknowledged one gives ``name``
    to ``table_id``'s table (which then joins ``names``). Neither a refusal nor an acknowledgement is
    charged by itself: the contract names staged tables only, and a catalog may take a retry (an id
    registered again under its own name) or a second name for a table."""
    try:
        driver.catalog.register_table(name, table_id)
        acknowledged = True
    except CatalogError:
        acknowledged = False
    answer = "acknowledged" if acknowledged else "refused"
    for known, was in names.items():
        where = _drifted(driver, known, was)
        if where is not None:
            pytest.fail(
                f"a registration of {what} ({table_id} as {name!r}) was {answer}; the name {known!r}, which"
                f" resolved to table {was.table_id} at {was.location} before it, now resolves to {where}: RFC"
                " 'Table Discovery', a name resolves to its own table's location until it is dropped, and"
                " registering an id names a staged table, it does not take a name from one"
            )
    if name in names:
        return
    now = resolved(driver, name)
    if acknowledged:
        assert now is not None and now.table_id == table_id, (
            f"a registration of {what} ({table_id} as {name!r}) was acknowledged, yet the name resolves to"
            f" {'nothing' if now is None else f'table {now.table_id}'}: an acknowledged name resolves to its table"
        )
        names[name] = now
        return
    assert now is None, (
        f"a registration of {what} ({table_id} as {name!r}) was refused, yet the name resolves to table"
        f" {now.table_id} at {now.location}: a refused call changes nothing"
    )


@pytest.mark.req("CAT-RESOLVE-LOCATION")
def test_registrations_of_ids_already_named_or_dropped_change_no_name(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    """RFC "Creating and Dropping" (phase 3 names a *staged* table) and "Table Discovery" (a name resolves
    to its table's location): registration is not a rename. An id already named is registered again under
    its own name (a retry whose answer was lost), under a free name, under another table's name; an id
    still staged under a taken name; where the catalog drops, a dropped table's id under a free name and
    under its old name once a new table holds it. After each attempt every name resolves as before it
    (``_register_again``). A catalog that renames by id (its update not limited to unnamed ids), or that
    releases the old name before it finds the id registered, leaves a table's readers without it."""
    first = driver.new_table(table_name)
    driver.commit_range(first, 1, 1)
    other_name = f"{table_name}_other"
    other = driver.new_table(other_name)
    with premise("resolving the tables just registered"):
        names = {n: catalog.resolve(n) for n in (table_name, other_name)}
    _register_again(driver, names, "an id already named, under its own name", table_name, first.table_id)
    _register_again(driver, names, "an id already named, under a free name", f"{table_name}_again", first.table_id)
    _register_again(driver, names, "an id already named, under another table's name", other_name, first.table_id)
    _register_again(driver, names, "an id already named, under another table's name", table_name, other.table_id)
    with premise("reserving a staging table and writing its version 0"):
        in_flight = catalog.create_staging_table()
        driver.storage.put(delta_uri(in_flight.location, 0), version0(in_flight.table_id), if_absent=True)
    _register_again(driver, names, "a staged id in flight, under a taken name", table_name, in_flight.table_id)
    gone_name = f"{table_name}_gone"
    gone = driver.new_table(gone_name)
    if not _drop_for_reuse(catalog, driver, gone_name, gone.table_id):
        return  # dropping is the catalog's to offer (a MAY)
    _register_again(driver, names, "a dropped table's id, under a free name", f"{table_name}_revived", gone.table_id)
    driver.new_table(gone_name)
    with premise(f"resolving {gone_name!r}, given to a new table after the drop"):
        names[gone_name] = catalog.resolve(gone_name)
    _register_again(driver, names, "a dropped table's id, under its old name now taken", gone_name, gone.table_id)
    # The creation in flight throughout, whose first attempt took a taken name, is named as if none happened.
    with premise(f"registering the creation in flight {in_flight.table_id} under a free name"):
        catalog.register_table(f"{table_name}_in_flight", in_flight.table_id)
