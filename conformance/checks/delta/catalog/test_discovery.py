"""Discovery, creation and policy (RFC "Table Discovery", "Creating ...", "Maintenance ...")."""

from __future__ import annotations

import contextlib

import pytest

from conformance.checks.delta.builders import CatalogDriver, premise, version0
from conformance.checks.delta.catalog.names_forms import create_named, resolved, spelled_names
from conformance.contract.delta import CatalogError, MaintenancePolicy, NotSupported, TableInfo, TableNotFound
from conformance.observe.recording import RecordingCatalog
from conformance.report.outcomes import not_applicable
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
    for name in sorted(set(asked) - {short.name, longer.name}):
        try:
            info = catalog.resolve(name)
        except TableNotFound:
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


@pytest.mark.req("CAT-STAGING-UNIQUE")
def test_staging_locations_are_unique(catalog: RecordingCatalog) -> None:
    staged = [catalog.create_staging_table() for _ in range(3)]
    assert len({s.location for s in staged}) == 3, f"staging locations repeat: {[s.location for s in staged]}"
    assert len({s.table_id for s in staged}) == 3, (
        f"three staging tables were handed out with repeated table ids: {[s.table_id for s in staged]}"
    )


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


@pytest.mark.req("CAT-DROP")
def test_a_dropped_table_no_longer_resolves(catalog: RecordingCatalog, driver: CatalogDriver, table_name: str) -> None:
    """RFC "Creating and Dropping": a drop removes the table's name from the catalog and makes no
    commit to the table; a neighbour created beside it stays as it was."""
    table = driver.new_table(table_name)
    kept = driver.new_table(f"{table_name}_kept")
    driver.commit_range(table, 1, 2)
    log = log_dir(table.location) + "/"
    before = {f.uri for f in driver.storage.list(log)}
    try:
        catalog.drop_table(table_name)
    except NotSupported:
        assert catalog.resolve(table_name).table_id == table.table_id, (
            "drop refused as unsupported, yet the name changed"
        )
        not_applicable("the catalog does not offer dropping tables (verified: the name still resolves)")
    try:
        still = catalog.resolve(table_name)
    except TableNotFound:
        pass
    else:
        pytest.fail(f"the dropped table's name still resolves (to {still.table_id}); a drop must remove the name")
    assert catalog.resolve(f"{table_name}_kept").table_id == kept.table_id, "the drop took another table's name"
    written = {f.uri for f in driver.storage.list(log)} - before
    assert not written, f"the drop wrote to the dropped table's log: {sorted(written)}"


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
