"""The envelope: every limit of the catalog, declared or discovered, exercised at it and one past it.

At a limit the call must succeed and round-trip exactly (the name resolves to its own table, the
inline content comes back byte for byte, every unpublished commit is listed); one past it, the
catalog must refuse cleanly (``CommitRejected`` or ``InvalidRequest``) and change nothing: no name cut
short until it meets another, no content cut, no older commit dropped to make room. How a limit is
found, and lakecert's ceilings, are in ``envelope.py`` and docs/certify.md "Limits".
"""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import CatalogDriver, ict_of, premise
from conformance.checks.delta.catalog.envelope import (
    CLEAN_REFUSALS,
    UNPUBLISHED_CEILING,
    Limit,
    accepted_letters,
    action_limit,
    crowded_neighbour,
    freed_by_marks,
    grown_state,
    inline_limit,
    listed_unchanged,
    name_key,
    name_limit,
    one_past_refused,
    own_table,
    padded_commit,
    propose,
    refusal_changed_nothing,
    refused_name_changed_nothing,
    served_inline,
    shown,
    size_forms,
    sized,
    sized_commit,
    sized_name,
    staging,
    wide_name,
    widths,
)
from conformance.checks.delta.catalog.names_forms import HASH_TWINS
from conformance.contract.delta import CatalogError, NotSupported, StagingTable
from conformance.contract.target import declared_limits
from conformance.observe.recording import RecordingCatalog
from conformance.observe.transcript import Transcript
from conformance.report.outcomes import PremiseBroken, Violation, not_applicable
from conformance.run_context import RunContext


@pytest.mark.req("CAT-RESOLVE-LOCATION", "CAT-LIMIT-CLEAN-REFUSAL", "CAT-LIMIT-DECLARED")
def test_table_names_at_and_one_past_the_length_limit(
    lakecert: RunContext, catalog: RecordingCatalog, driver: CatalogDriver, table_name: str, transcript: Transcript
) -> None:
    """RFC "Table Discovery": a name resolves to its table's location. Two names of the longest length
    that differ only in their last character name two tables; a name one longer is refused whole."""
    key = name_key(table_name)
    limit = name_limit(declared_limits(lakecert.target).name_length, driver, key)
    transcript.notes["limit"] = str(limit)
    first, second = sized_name(key, limit.at, "a"), sized_name(key, limit.at, "b")
    named: dict[str, StagingTable] = {}
    for name in (first, second):
        staged = staging(driver)
        try:
            catalog.register_table(name, staged.table_id)
        except CatalogError as e:
            why = f"{limit}; names {shown(first)} and {shown(second)} differ only in their last character"
            refused_name_changed_nothing(catalog, name, e, staged, why)
            if limit.declared:
                raise Violation(
                    "CAT-LIMIT-DECLARED",
                    f"{why}: {shown(name)} ({len(name)} characters, within the declared limit) was refused"
                    f" ({type(e).__name__}); a declared limit must be honoured up to itself",
                ) from e
            raise PremiseBroken(f"{why}: {shown(name)} was refused at a length the catalog accepted before") from e
        named[name] = staged
    for name, staged in named.items():
        own_table(catalog, name, staged)
    # The limit counts characters, whatever the script: a catalog that measures UTF-8 bytes or UTF-16
    # code units refuses a name at the limit once it holds a wide letter (envelope.WIDE_LETTERS), one
    # that counts letters on screen accepts one past it in combining sequences. Only letters the
    # catalog accepts in a short name are tried (its naming rules are its own; the limit is length).
    letters = accepted_letters(catalog, driver, key)
    transcript.notes["non-ascii names"] = (
        f"accepted in short names, tried at the limit and one past it: {', '.join(map(repr, letters))}"
        if letters
        else "every short name with a letter outside ASCII refused (cleanly): the limit not judged for them"
    )
    for letter in letters:
        name, staged = wide_name(key, limit.at, letter), staging(driver)
        try:
            catalog.register_table(name, staged.table_id)
        except CatalogError as e:
            why = f"{limit}; {shown(name)} is at it ({widths(name)}); the catalog accepts {letter!r} in short names"
            refused_name_changed_nothing(catalog, name, e, staged, why)
            if limit.declared:
                raise Violation(
                    "CAT-LIMIT-DECLARED",
                    f"{why}: it was refused ({type(e).__name__}); a declared name length counts characters,"
                    " and a name at it must be accepted whatever its script",
                ) from e
            # A discovered limit was found with ASCII names: one the catalog counts in bytes is its own.
            transcript.notes["non-ascii names"] += f"; {shown(name)} refused (the limit was discovered, not declared)"
            continue
        named[name] = staged
        own_table(catalog, name, staged)
    if limit.past is None:
        return
    # One past it in ASCII and in every wide letter accepted at it: a catalog that counts a combining
    # sequence as one letter (or anything shorter than characters) takes a name one past the limit.
    for longer in (sized_name(key, limit.past, "c"), *(wide_name(key, limit.past, letter) for letter in letters)):
        staged = staging(driver)
        try:
            catalog.register_table(longer, staged.table_id)
        except Exception as e:  # judged: a clean refusal that changed nothing
            refused_name_changed_nothing(catalog, longer, e, staged, f"{limit}; {shown(longer)} is one past it")
            continue
        own_table(catalog, longer, staged)
        if limit.declared:
            raise Violation(
                "CAT-LIMIT-DECLARED",
                f"{limit}, yet {shown(longer)} ({widths(longer)}) was accepted: the declared limit is not the"
                " catalog's (it counts characters, whatever the script, and must refuse one past it)",
            )
    for name, staged in named.items():  # the names at the limit are untouched by the longer one
        own_table(catalog, name, staged)


# Names of several scripts and shapes. A catalog may refuse any of them (its naming rules are its
# own), cleanly; a name it accepts must resolve to its own table, and two it accepts must not meet.
SINGLE_NAMES = ("café", "表格数据", "tbl🧊", "ünïcödé.dotted", "with space")
# Pairs a catalog may take for one name (case folded, Unicode normalised: it then refuses the second as
# taken) or for two (then each resolves to its own table), never both at once.
LOOKALIKES = (("Caps", "caps"), ("caf\u00e9_nfc", "cafe\u0301_nfc"))


@pytest.mark.req("CAT-RESOLVE-LOCATION", "CAT-LIMIT-CLEAN-REFUSAL")
def test_names_of_any_script_resolve_to_their_own_tables(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    key = name_key(table_name)
    named: dict[str, StagingTable] = {}
    for tail in SINGLE_NAMES:
        name, staged = f"{key}_{tail}", staging(driver)
        try:
            catalog.register_table(name, staged.table_id)
        except Exception as e:  # judged: a clean refusal that changed nothing
            refused_name_changed_nothing(catalog, name, e, staged, "a name the catalog does not accept")
        else:
            named[name] = staged
    # Pairs of names with one 32-bit hash (names_forms.HASH_TWINS) too: an index by hash that never
    # compares the name it finds sends one of them to the other's table.
    for one, other in LOOKALIKES + HASH_TWINS:
        first, second = f"{key}_{one}", f"{key}_{other}"
        staged = staging(driver)
        try:
            catalog.register_table(first, staged.table_id)
        except Exception as e:  # judged: a clean refusal that changed nothing
            refused_name_changed_nothing(catalog, first, e, staged, "a name the catalog does not accept")
            continue
        named[first] = staged
        again = staging(driver)
        try:
            catalog.register_table(second, again.table_id)
        except Exception as e:  # taken for the same name as the first: allowed, if it changed nothing
            if not isinstance(e, CLEAN_REFUSALS):
                raise Violation(
                    "CAT-LIMIT-CLEAN-REFUSAL",
                    f"registering {second!r} after {first!r} failed with {type(e).__name__}, not a refusal",
                ) from e
        else:
            named[second] = again
    # Judged after every name is in: a catalog that folds names when it resolves them, but not when it
    # registers them, sends one of a pair to the other's table.
    for name, staged in named.items():
        own_table(catalog, name, staged)


@pytest.mark.req("CAT-RETAIN-UNPUBLISHED", "CAT-LIMIT-CLEAN-REFUSAL", "CAT-LIMIT-DECLARED", "CAT-LIST-RATIFIED-ONLY")
def test_inline_commits_at_and_one_past_the_size_limit(
    lakecert: RunContext, catalog: RecordingCatalog, driver: CatalogDriver, table_name: str, transcript: Transcript
) -> None:
    """RFC "Commit Protocol" (option 2): the catalog stores an inline commit's content and serves it
    until published. The largest one it accepts comes back byte for byte; one byte more is refused.
    When the target declares a limit on actions per commit, a commit of that many actions comes back
    byte for byte too, and one with an action more is refused, never ratified with its tail cut off.
    Each is drawn in every valid encoding of its lines (``ENCODINGS``: the last one with or without a
    final newline), while another table holds unpublished commits near its own cap."""
    table = driver.new_table(table_name)
    try:
        catalog.commit(table.table_id, 1, inline_content=padded_commit(1024, 1), in_commit_timestamp=ict_of(1))
    except NotSupported:
        after = catalog.get_commits(table.table_id)
        assert (after.latest_version, after.commits) == (0, []), "inline commit refused, yet the table changed"
        not_applicable("the catalog does not host inline commits (verified: nothing changed)")
    declared = declared_limits(lakecert.target)
    # Another table near its own cap on unpublished commits first: a per-table limit ignores it.
    transcript.notes["neighbour"] = crowded_neighbour(driver, declared, f"{table_name}_near")
    # On a table of its own, so that the size limit's commits below start from a table of one commit.
    transcript.notes["actions"] = action_limit(catalog, driver, declared, f"{table_name}_actions")
    limit = inline_limit(declared.inline_bytes, driver, name_key(table_name))
    transcript.notes["limit"] = str(limit)
    # Every encoding of the commit's lines, at the limit and one past it (a catalog that stores or
    # measures a commit's lines rather than its bytes shows in one of them), and, at a declared limit,
    # every padding whose bytes differ from its characters (one that counts characters, or re-encodes
    # the text before measuring it, shows in one of those), as far as a declared cap on unpublished
    # commits lets v1 and one commit per form stand together.
    ats, pasts = size_forms(limit, declared.unpublished)
    with premise(f"building commits of {limit.at} bytes"):
        contents = [sized_commit(limit.at, 2 + i, encode, padding) for i, (_, encode, padding) in enumerate(ats)]
    past_version = 2 + len(ats)
    for version, (at, (shape, _, _)) in enumerate(zip(contents, ats, strict=True), start=2):
        try:
            catalog.commit(table.table_id, version, inline_content=at, in_commit_timestamp=ict_of(version))
        except CatalogError as e:
            if limit.declared:
                raise Violation(
                    "CAT-LIMIT-DECLARED",
                    f"{limit}, yet inline v{version} of exactly {limit.at} bytes ({len(at.decode())} characters),"
                    f" {shape}, was refused ({type(e).__name__})",
                ) from e
            # Refused below a limit discovered on a fresh table: what the table already holds may be what
            # the catalog counts (its own store's limit). Not judged as a limit, but a clean refusal must
            # still change nothing.
            if isinstance(e, CLEAN_REFUSALS):
                why = f"{limit}: inline v{version} of {limit.at} bytes"
                refusal_changed_nothing(catalog, table, version, e, why)
            raise PremiseBroken(
                f"{limit}, yet an inline commit of {limit.at} bytes, {shape}, was refused on another table"
            ) from e
        got = served_inline(catalog, table, version)
        if got != at:
            raise Violation(
                "CAT-RETAIN-UNPUBLISHED",
                f"{limit}: ratified inline v{version} of {len(at)} bytes, {shape}, is served as {sized(got)}, not"
                " byte for byte as ratified",
            )
    if limit.past is None:
        return
    for shape, encode, padding in pasts:
        with premise(f"building a commit of {limit.past} bytes"):
            past = sized_commit(limit.past, past_version, encode, padding)
        chars = len(past.decode())
        what = f"{limit}: inline v{past_version} of {len(past)} bytes ({chars} characters), {shape}, one past it,"
        if not one_past_refused(catalog, table, past_version, past, what, limit.declared):
            return  # accepted past a discovered limit: the catalog's own business, and v{past_version} taken


@pytest.mark.req("CAT-LIST-RATIFIED-ONLY", "CAT-LIMIT-CLEAN-REFUSAL")
def test_refusals_as_the_unpublished_state_grows_change_nothing(
    lakecert: RunContext, catalog: RecordingCatalog, driver: CatalogDriver, table_name: str, transcript: Transcript
) -> None:
    """RFC "Terminology - Commits": a proposal is ratified or rejected, and a rejected one is never listed.
    A catalog may hold only so much of a table's unpublished state (docs/certify.md "Limits": a limit it
    need not declare, on one commit or on all it holds); when it refuses, the refusal changes nothing.
    One table is grown by large inline commits, none published, to megabytes, and every refusal on the
    way is judged by a listing at once: the refused version is not listed, the latest stays below it."""
    table = driver.new_table(table_name)
    try:
        transcript.notes["grown"] = grown_state(catalog, table, declared_limits(lakecert.target))
    except NotSupported:
        after = catalog.get_commits(table.table_id)
        assert (after.latest_version, after.commits) == (0, []), "inline commit refused, yet the table changed"
        not_applicable("the catalog does not host inline commits (verified: nothing changed)")


@pytest.mark.req("CAT-RETAIN-UNPUBLISHED", "CAT-LIST-CONTIGUOUS", "CAT-LIMIT-CLEAN-REFUSAL", "CAT-LIMIT-DECLARED")
def test_unpublished_commits_up_to_the_cap_and_one_past(
    lakecert: RunContext, catalog: RecordingCatalog, driver: CatalogDriver, table_name: str, transcript: Transcript
) -> None:
    """RFC "Commit Protocol": the catalog stores every ratified commit until it is published. At its
    cap on unpublished commits every one of them is listed (past a listing page, too); the next
    proposal is refused, and no older commit is dropped to make room for it."""
    declared = declared_limits(lakecert.target)
    ceiling = UNPUBLISHED_CEILING[lakecert.config.settings.delta.budget]
    goal = declared.unpublished if declared.unpublished is not None else ceiling
    pages = f"; listing pages of {declared.page_size}" if declared.page_size is not None else ""
    # Another table near its own cap first: the cap is per table, whatever other tables hold.
    transcript.notes["neighbour"] = crowded_neighbour(driver, declared, f"{table_name}_near")
    table = driver.new_table(table_name)
    staged: dict[int, str] = {}
    refusal: BaseException | None = None
    for version in range(1, goal + 1):
        uri, refusal = propose(driver, table, version)
        if refusal is not None:
            break
        staged[version] = uri
    cap = len(staged)
    says = declared.unpublished is not None
    limit = Limit("unpublished commits", goal if says or refusal is None else cap, says, says or refusal is not None)
    transcript.notes["limit"] = str(limit) + pages
    if cap == 0 and says and isinstance(refusal, CLEAN_REFUSALS):
        raise Violation(
            "CAT-LIMIT-DECLARED",
            f"{limit}: v1 of a new table, which holds no unpublished commit, was refused"
            f" ({type(refusal).__name__}): a declared per-table cap must be honoured up to itself",
        ) from refusal
    if cap == 0:
        raise PremiseBroken(f"the catalog refused v1 of a new table ({type(refusal).__name__})")
    why = f"{limit}{pages}; v1-v{cap} ratified, none published"
    listed_unchanged(catalog, table, staged, why)
    if refusal is not None and limit.declared:
        raise Violation(
            "CAT-LIMIT-DECLARED",
            f"{why}: v{cap + 1} was refused ({type(refusal).__name__}) with only {cap} unpublished commits,"
            f" below the declared cap of {declared.unpublished}",
        )
    if refusal is None and limit.past is not None:
        uri, refusal = propose(driver, table, cap + 1)
        if refusal is None:
            listed_unchanged(catalog, table, {**staged, cap + 1: uri}, f"{why}; v{cap + 1} accepted past the cap")
            raise Violation(
                "CAT-LIMIT-DECLARED",
                f"{why}: v{cap + 1} was ratified past the declared cap: the declared limit is not the catalog's",
            )
    if refusal is None:
        return  # no cap found up to lakecert's ceiling, and every commit listed
    if not isinstance(refusal, CLEAN_REFUSALS):
        raise Violation(
            "CAT-LIMIT-CLEAN-REFUSAL",
            f"{why}: proposing v{cap + 1} failed with {type(refusal).__name__}, not a refusal",
        ) from refusal
    after = catalog.get_commits(table.table_id)
    if after.latest_version != cap or any(c.version == cap + 1 for c in after.commits):
        raise Violation(
            "CAT-LIMIT-CLEAN-REFUSAL",
            f"{why}: v{cap + 1} was refused ({type(refusal).__name__}), yet the latest version is now"
            f" {after.latest_version}: a refused proposal must change nothing",
        )
    listed_unchanged(catalog, table, staged, f"{why}; v{cap + 1} refused")
    # The same cap when publication is reported only in the proposals (as UC's clients report it).
    transcript.notes["marks in proposals"] = freed_by_marks(driver, driver.new_table(f"{table_name}_marks"), limit)
