"""A catalog's envelope: its limits, declared or discovered, and the names and commits at them.

A limit is either declared by the target (``catalog_limits()``, or the target option ``limits``,
conformance/registry.py) or discovered: lakecert grows a name or an inline commit until the catalog
refuses it (doubling, then bisection: about twenty probes, each on a fresh table so that no probe
depends on another), up to a ceiling of its own. The checks (``test_envelope.py``) then exercise
the limit itself, which must succeed and round-trip exactly, and one past it, which must be refused
cleanly and change nothing (docs/certify.md "Limits: declared or discovered").
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from conformance.checks.delta.builders import CatalogDriver, LogBuilder, ict_of, new_uuid, premise, version0
from conformance.contract.delta import (
    Catalog,
    CommitRejected,
    InvalidRequest,
    NotSupported,
    StagingTable,
    TableInfo,
    TableNotFound,
)
from conformance.report.outcomes import Violation
from reference_impl.delta import actions as A
from reference_impl.delta import log_paths as P

# lakecert's own ceilings: a limit not found below them is not looked for further.
NAME_CEILING = 1024  # characters of a table name
INLINE_CEILING = 4 * 1024 * 1024  # bytes of one inline commit
UNPUBLISHED_CEILING = {"quick": 64, "default": 64, "deep": 1000}  # ratified, unpublished commits of one table
FIRST_NAME = 16  # the first name length tried (a catalog refusing it has no useful names)
FIRST_INLINE = 1024  # the first inline size tried

# What a refusal one past a limit may be (RFC "Terminology: Commits": a proposal is ratified or
# rejected; the contract's two refusals). Anything else is no clean refusal.
CLEAN_REFUSALS = (CommitRejected, InvalidRequest)


@dataclass(frozen=True)
class Limit:
    """A limit as lakecert will exercise it: ``at`` must be accepted, ``at + 1`` refused (when
    ``found``: declared, or a refusal seen while discovering it)."""

    what: str  # "table names (characters)", ...
    at: int
    declared: bool
    found: bool

    @property
    def past(self) -> int | None:
        return self.at + 1 if self.found else None

    def __str__(self) -> str:
        if self.declared:
            return f"{self.what}: {self.at}, as the target declares"
        if self.found:
            return f"{self.what}: {self.at}, discovered ({self.at} accepted, {self.at + 1} refused)"
        return f"{self.what}: no limit found up to lakecert's ceiling of {self.at}"


def discover(accepts: Callable[[int], bool], first: int, ceiling: int) -> tuple[int, bool]:
    """The largest size ``accepts`` takes, by doubling from ``first`` and then bisecting between the
    last size accepted and the first refused; ``(ceiling, False)`` when nothing up to the ceiling is
    refused. Assumes that what is refused at a size is refused at every larger one."""
    accepted, size = 0, min(first, ceiling)
    while accepts(size):
        accepted = size
        if size >= ceiling:
            return ceiling, False
        size = min(size * 2, ceiling)
    refused = size
    while refused - accepted > 1:
        middle = (accepted + refused) // 2
        if accepts(middle):
            accepted = middle
        else:
            refused = middle
    return accepted, True


def probe(call: Callable[[], object]) -> bool:
    """Whether the catalog accepted one discovery probe. Any refusal counts here, whatever its class:
    discovery only looks for where refusals start; the checks judge the refusal one past the limit.
    ``NotSupported`` is no refusal of a size and propagates."""
    try:
        call()
    except NotSupported:
        raise
    except Exception:  # judged one past the limit, not here
        return False
    return True


# ---------------------------------------------------------------- names


def name_key(table_name: str) -> str:
    """A short prefix unique to the check (from its table name), so that the names of one check never
    meet those of another, at any length."""
    return "e" + hashlib.sha1(table_name.encode()).hexdigest()[:9]


def sized_name(key: str, length: int, last: str) -> str:
    """A name of exactly ``length`` characters: ``key``, filler, and ``last`` as its final character,
    so that two names with other ``last`` share every character but the final one."""
    return (key + "_" + "n" * length)[: length - 1] + last


def staging(driver: CatalogDriver) -> StagingTable:
    """A staged table with its version 0 written, ready to be named (a premise: the check judges the
    name, not the staging)."""
    with premise("creating a staging table and writing its version 0"):
        staged = driver.catalog.create_staging_table()
        driver.storage.put(P.delta_uri(staged.location, 0), version0(staged.table_id), if_absent=True)
    return staged


def resolves_to(catalog: Catalog, name: str) -> TableInfo | None:
    """What ``name`` resolves to; ``None`` when the catalog says it names no table."""
    try:
        return catalog.resolve(name)
    except (TableNotFound, InvalidRequest):
        return None


def shown(name: str) -> str:
    """A name for a message: short ones whole, long ones by length and ends."""
    return repr(name) if len(name) <= 40 else f"{name[:12]!r}...{name[-6:]!r} ({len(name)} characters)"


def own_table(catalog: Catalog, name: str, staged: StagingTable, rule: str = "CAT-RESOLVE-LOCATION") -> None:
    """``name`` resolves to the table it was given to, at that table's location."""
    info = resolves_to(catalog, name)
    if info is None:
        raise Violation(
            rule, f"the name {shown(name)} was registered for table {staged.table_id}, yet resolves to none"
        )
    if info.table_id != staged.table_id or info.location.rstrip("/") != staged.location.rstrip("/"):
        raise Violation(
            rule,
            f"the name {shown(name)} was registered for table {staged.table_id} at {staged.location}, yet it"
            f" resolves to table {info.table_id} at {info.location}: two names met in one table",
        )


def refused_name_changed_nothing(
    catalog: Catalog, name: str, error: BaseException, staged: StagingTable, why: str
) -> None:
    """A refused name: a clean refusal, and the name resolves to no table (not the staged one it was
    offered for, not another table whose name it resembles)."""
    if not isinstance(error, CLEAN_REFUSALS):
        raise Violation(
            "CAT-LIMIT-CLEAN-REFUSAL",
            f"{why}: registering {shown(name)} failed with {type(error).__name__}, not a refusal"
            " (CommitRejected or InvalidRequest)",
        ) from error
    info = resolves_to(catalog, name)
    if info is not None and info.table_id == staged.table_id:
        raise Violation(
            "CAT-LIMIT-CLEAN-REFUSAL",
            f"{why}: registering {shown(name)} was refused ({type(error).__name__}), yet the name now resolves"
            f" to the table it was offered for ({staged.table_id}): the refusal changed the catalog",
        )
    if info is not None:
        raise Violation(
            "CAT-RESOLVE-LOCATION",
            f"{why}: {shown(name)} was refused ({type(error).__name__}), yet it resolves to table {info.table_id}"
            f" (named {shown(info.name)}): a name no table was given resolves to another table",
        )


# ---------------------------------------------------------------- inline commits


def padded_commit(size: int, version: int) -> bytes:
    """A Delta commit (one ``commitInfo`` line) of exactly ``size`` bytes, padded with text drawn from
    the check's seed so that a cut or a re-encoding shows."""
    info = A.commit_info_action(ict_of(version), new_uuid(), "WRITE")
    info["commitInfo"]["lakecertPadding"] = ""
    bare = len(A.encode_commit([info]))
    if size < bare:
        raise ValueError(f"lakecert cannot write a Delta commit of {size} bytes (the smallest is {bare})")
    seed = new_uuid().replace("-", "")
    info["commitInfo"]["lakecertPadding"] = (seed * (size // len(seed) + 1))[: size - bare]
    content = A.encode_commit([info])
    assert len(content) == size, f"lakecert's padded commit is {len(content)} bytes, not {size}"
    return content


# ---------------------------------------------------------------- unpublished commits


def cheap_stage(driver: CatalogDriver, table: TableInfo, version: int) -> str:
    """A staged commit with no data file (one ``commitInfo``): a thousand of them cost little."""
    content = A.encode_commit([A.commit_info_action(ict_of(version), new_uuid(), "WRITE")])
    return LogBuilder(driver.storage, table.location).stage(version, content)


def listed_unchanged(catalog: Catalog, table: TableInfo, staged: dict[int, str], why: str) -> None:
    """Every commit in ``staged`` (ratified, unpublished) is listed, as its staged file. One missing
    from the full listing that the catalog serves when asked for alone was left out by the listing
    (a page not followed, a cut: CAT-LIST-CONTIGUOUS); one it no longer serves at all was dropped
    (CAT-RETAIN-UNPUBLISHED)."""
    listed = {c.version: c.staged_uri for c in catalog.get_commits(table.table_id).commits}
    for version, uri in sorted(staged.items()):
        if listed.get(version) == uri:
            continue
        alone = {c.version: c.staged_uri for c in catalog.get_commits(table.table_id, version, version).commits}
        if alone.get(version) == uri:
            shown_versions = sorted(listed)
            raise Violation(
                "CAT-LIST-CONTIGUOUS",
                f"{why}: the listing of the table's {len(staged)} unpublished commits leaves out v{version}"
                f" (it lists {_span(shown_versions)}), which the catalog serves when asked for it alone:"
                " a listing must hold every stored commit up to the latest, however many pages it takes",
            )
        raise Violation(
            "CAT-RETAIN-UNPUBLISHED",
            f"{why}: ratified, unpublished v{version} is {'gone' if version not in alone else 'changed'}"
            f" (the listing has {_span(sorted(listed))}); a catalog keeps every unpublished commit until it is"
            " published, and refuses a proposal past its cap instead of making room",
        )


def _span(versions: list[int]) -> str:
    if not versions:
        return "nothing"
    contiguous = versions == list(range(versions[0], versions[-1] + 1))
    return f"v{versions[0]}-v{versions[-1]}" if contiguous else ", ".join(f"v{v}" for v in versions)


def propose(driver: CatalogDriver, table: TableInfo, version: int) -> tuple[str, BaseException | None]:
    """Stage ``version`` cheaply and propose it; the staged URI and the catalog's refusal, if any."""
    uri = cheap_stage(driver, table, version)
    try:
        driver.catalog.commit(table.table_id, version, staged_uri=uri, in_commit_timestamp=ict_of(version))
    except Exception as e:  # judged by the check: a refusal, clean or not
        return uri, e
    return uri, None


# ---------------------------------------------------------------- the limits themselves


def name_limit(declared: int | None, driver: CatalogDriver, key: str) -> Limit:
    """The longest table name: as declared, else discovered by naming fresh tables (each probe's name
    starts with its own counter, so that a catalog that cuts names cannot make two probes meet)."""
    what = "table names (characters)"
    if declared is not None:
        return Limit(what, declared, declared=True, found=True)
    count = iter(range(10**6))

    def accepts(length: int) -> bool:
        staged = staging(driver)
        name = sized_name(f"{key}p{next(count)}", length, "z")
        return probe(lambda: driver.catalog.register_table(name, staged.table_id))

    at, found = discover(accepts, FIRST_NAME, NAME_CEILING)
    return Limit(what, at, declared=False, found=found)


def inline_limit(declared: int | None, driver: CatalogDriver, key: str) -> Limit:
    """The largest inline commit: as declared, else discovered by proposing one as version 1 of a fresh
    table per probe (so that no cap on unpublished commits is mistaken for a size limit)."""
    what = "inline commits (bytes)"
    if declared is not None:
        return Limit(what, declared, declared=True, found=True)
    count = iter(range(10**6))

    def accepts(size: int) -> bool:
        table = driver.new_table(f"{key}_i{next(count)}")
        content = padded_commit(size, 1)
        return probe(
            lambda: driver.catalog.commit(table.table_id, 1, inline_content=content, in_commit_timestamp=ict_of(1))
        )

    at, found = discover(accepts, FIRST_INLINE, INLINE_CEILING)
    return Limit(what, at, declared=False, found=found)
