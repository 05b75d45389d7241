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
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformance.checks.delta.builders import CatalogDriver, LogBuilder, ict_of, new_uuid, premise, version0
from conformance.contract.delta import (
    Catalog,
    CatalogError,
    CatalogLimits,
    CommitRejected,
    InvalidRequest,
    NotSupported,
    StagingTable,
    TableInfo,
    TableNotFound,
)
from conformance.report.outcomes import PremiseBroken, Violation
from reference_impl.delta import actions as A
from reference_impl.delta import log_paths as P
from reference_impl.delta.data_files import data_file_uri, encode_rows

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


# Letters outside ASCII, one of every width a name's length can be counted in: two and three bytes in
# UTF-8 (one UTF-16 code unit each), four bytes in UTF-8 and two UTF-16 units (letters outside the Basic
# Multilingual Plane: a mathematical Fraktur letter and a CJK Extension B ideograph), and a letter with a
# combining mark (two characters, one letter on screen; ``q`` has no precomposed form, so Unicode
# normalisation leaves it two). A name's declared length counts characters (code points), whatever the
# script (docs/certify.md "Limits"): a catalog counting bytes, UTF-16 units or letters on screen
# refuses one of these at the limit or accepts one past it. Each is tried in a short name first: a
# catalog's naming rules are its own, and only a letter it accepts there can be judged at the limit.
WIDE_LETTERS = ("\u00e9", "\u8868", "\U0001d518", "\U00020000", "q\u0301")  # é, 表, 𝔘, 𠀀, q́


def wide_name(key: str, length: int, letter: str) -> str:
    """A name of exactly ``length`` characters: ``key``, then ``letter`` as often as fits, so that its
    UTF-8 (or UTF-16) encoding is far longer than ``length`` bytes (units), or, of a combining
    sequence, it shows fewer letters than it has characters."""
    return (key + "_" + letter * length)[:length]


def widths(name: str) -> str:
    """How long ``name`` is in every unit a catalog may count it in, for a message."""
    return (
        f"{len(name)} characters, {len(name.encode())} bytes in UTF-8,"
        f" {len(name.encode('utf-16-le')) // 2} UTF-16 code units"
    )


def accepted_letters(catalog: Catalog, driver: CatalogDriver, key: str) -> list[str]:
    """The letters of ``WIDE_LETTERS`` the catalog accepts in a short name, each then resolving to its
    own table; a letter it refuses must be refused cleanly, changing nothing."""
    accepted = []
    for i, letter in enumerate(WIDE_LETTERS):
        name, staged = f"{key}w{i}_{letter}", staging(driver)
        try:
            catalog.register_table(name, staged.table_id)
        except Exception as e:  # judged: a clean refusal that changed nothing
            refused_name_changed_nothing(catalog, name, e, staged, "a short name with a letter outside ASCII")
            continue
        own_table(catalog, name, staged)
        accepted.append(letter)
    return accepted


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
    # Nor the other argument: the staging table offered can still be named, under a plain short name.
    plain = f"after_refusal_{hashlib.sha1(staged.table_id.encode()).hexdigest()[:12]}"
    try:
        catalog.register_table(plain, staged.table_id)
    except CatalogError as e:
        raise Violation(
            "CAT-LIMIT-CLEAN-REFUSAL",
            f"{why}: after registering {shown(name)} was refused ({type(error).__name__}), the staging table it was"
            f" offered for could not be registered as {plain!r} ({type(e).__name__}): the refusal used it up",
        ) from e


# ---------------------------------------------------------------- inline commits


@dataclass(frozen=True)
class Padding:
    """The text a size probe is padded with, and how it is written into the commit's JSON: ``letters``
    repeated (lakecert's seed text when empty), raw UTF-8 or as JSON escapes (``escaped``)."""

    what: str
    letters: str
    escaped: bool

    def width(self, text: str) -> int:
        """The bytes ``text`` takes inside a JSON string of the commit."""
        return len(json.dumps(text, ensure_ascii=self.escaped).encode()) - 2


# Every padding a byte limit is probed with: ASCII, where bytes and characters agree, then letters of two,
# three and four bytes in UTF-8, then JSON escapes (six or two bytes each for one character once parsed).
# A catalog that measures an inline commit in characters (of its text, or of its parsed JSON) accepts one
# past its limit in bytes; one that measures it re-encoded refuses one at it.
ASCII = Padding("ASCII padding", "", escaped=True)
PADDINGS: tuple[Padding, ...] = (
    ASCII,
    Padding("padding of 2-byte UTF-8 letters (\u00e9)", "\u00e9", escaped=False),
    Padding("padding of 3-byte UTF-8 letters (\u8868)", "\u8868", escaped=False),
    Padding("padding of 4-byte UTF-8 characters (\U0001f600)", "\U0001f600", escaped=False),
    Padding('padding of JSON escapes (\\u00e9, \\", \\\\)', '\u00e9"\\', escaped=True),
)


def _encoded(info: dict[str, Any], escaped: bool) -> bytes:
    """One ``commitInfo`` line, its JSON written as lakecert's writer writes it (non-ASCII escaped) or raw."""
    return (
        A.encode_commit([info])
        if escaped
        else json.dumps(info, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
    )


def padded_commit(size: int, version: int, padding: Padding = ASCII) -> bytes:
    """A Delta commit (one ``commitInfo`` line) of exactly ``size`` bytes, padded with ``padding`` (as many
    of its letters as fit, the rest in text drawn from the check's seed, so that a cut or a re-encoding
    shows)."""
    info = A.commit_info_action(ict_of(version), new_uuid(), "WRITE")
    info["commitInfo"]["lakecertPadding"] = ""
    bare = len(_encoded(info, padding.escaped))
    if size < bare:
        raise ValueError(f"lakecert cannot write a Delta commit of {size} bytes (the smallest is {bare})")
    room = size - bare
    letters = ""
    if padding.letters:
        letters = padding.letters * (room // padding.width(padding.letters))
        for letter in padding.letters:  # the rest of one round of letters, as far as it fits
            if padding.width(letters + letter) > room:
                break
            letters += letter
    seed = new_uuid().replace("-", "")
    rest = room - padding.width(letters)
    info["commitInfo"]["lakecertPadding"] = letters + (seed * (rest // len(seed) + 1))[:rest]
    content = _encoded(info, padding.escaped)
    assert len(content) == size, f"lakecert's padded commit is {len(content)} bytes, not {size}"
    return content


def sized_commit(size: int, version: int, encode: Callable[[bytes], bytes], padding: Padding = ASCII) -> bytes:
    """A ``padded_commit`` that is exactly ``size`` bytes once ``encode`` (one of ``ENCODINGS``) is applied."""
    short = size - len(encode(padded_commit(size, version, padding)))
    content = encode(padded_commit(size + short, version, padding))
    assert len(content) == size, f"lakecert's encoded commit is {len(content)} bytes, not {size}"
    return content


# ---------------------------------------------------------------- actions per commit


@dataclass(frozen=True)
class ManyActions:
    """Two realistic commits of many small actions, proposed as versions ``version`` and ``version + 1``:
    ``at`` is a ``commitInfo`` and ``count - 1`` adds of one-row data files; ``past`` is a ``commitInfo``,
    the removes of all those files and one add of a new file (a compaction): ``count + 1`` actions."""

    at: bytes
    past: bytes
    paths: tuple[str, ...]  # the data files both commits name, to write before proposing them
    data: bytes  # the content of every data file (one row)


def many_actions(count: int, version: int, past_version: int | None = None) -> ManyActions:
    """``ManyActions`` for a limit of ``count`` actions per commit (``past`` proposed as ``past_version``,
    by default ``version + 1``). The adds carry no statistics (optional in Delta) so that each action
    stays near 170 bytes: the commit is long in actions, not in bytes, and a size limit is not mistaken
    for the action limit."""
    past_at = version + 1 if past_version is None else past_version
    data = encode_rows([{"id": version, "value": f"v{version}"}])
    paths = tuple(f"part-{new_uuid()}.parquet" for _ in range(count))
    adds = [A.add_action(path, len(data), ict_of(version), "") for path in paths]
    for add in adds:
        del add["add"]["stats"]
    first, last = adds[:-1], adds[-1]
    at = A.encode_commit([A.commit_info_action(ict_of(version), new_uuid(), "WRITE"), *first])
    removes = [A.remove_action(add, ict_of(past_at)) for add in first]
    info = A.commit_info_action(ict_of(past_at), new_uuid(), "OPTIMIZE")
    past = A.encode_commit([info, *removes, last])
    return ManyActions(at, past, paths, data)


def unterminated(content: bytes) -> bytes:
    """The same commit without its final newline: Delta's commit files are one JSON action a line, and
    the last line need not end in one (PROTOCOL.md "Delta Log Entries"; lakecert's reader tolerates
    it too), so a catalog that counts actions by newline characters counts this one an action short."""
    return content[:-1] if content.endswith(b"\n") else content


# Every valid way lakecert writes a commit's lines, each drawn at and one past the action limit on
# every run: a count that depends on the encoding shows in one of them.
ENCODINGS: tuple[tuple[str, Callable[[bytes], bytes]], ...] = (
    ("each action ending in a newline", lambda content: content),
    ("the last action without a final newline", unterminated),
)


Form = tuple[str, Callable[[bytes], bytes], Padding]  # what it is, its lines' encoding, its padding


def size_forms(limit: Limit, cap: int | None) -> tuple[list[Form], list[Form]]:
    """The forms of commit drawn at a size limit and one past it (from v2 on, after v1). A declared limit
    is in bytes (docs/certify.md "Limits"), so it is drawn in every padding of ``PADDINGS``, each with
    the line encodings of ``ENCODINGS`` in turn: at it as far as a declared ``cap`` on unpublished commits
    leaves room for them and for the proposal one past (refused, so every form is drawn there). A limit
    lakecert discovered was found with ASCII, the unit in which it is known: its line encodings only."""
    if not limit.declared:
        forms: list[Form] = [(shape, encode, ASCII) for shape, encode in encodings_within(cap, first_version=2)]
        return forms, forms
    forms = []
    for i, padding in enumerate(PADDINGS):
        shape, encode = ENCODINGS[i % len(ENCODINGS)]
        forms.append((f"{padding.what}, {shape}", encode, padding))
    room = len(forms) if cap is None else max(1, cap - 2)
    return forms[:room], forms


def write_files(driver: CatalogDriver, table: TableInfo, commits: ManyActions) -> None:
    """The data files the commits name, so that every add is of a real file."""
    for path in commits.paths:
        driver.storage.put(data_file_uri(table.location, path), commits.data, if_absent=True)


def served_inline(catalog: Catalog, table: TableInfo, version: int) -> bytes | None:
    """The content the catalog serves for an inline commit of ``table``; ``None`` when it serves none."""
    return {c.version: c.inline_content for c in catalog.get_commits(table.table_id, 1).commits}.get(version)


def sized(content: bytes | None) -> str:
    """What was served, for a message: its bytes and its lines (one action a line)."""
    return "nothing" if content is None else f"{len(content)} bytes in {len(content.splitlines())} lines"


def size_refused(driver: CatalogDriver, key: str, size: int) -> bool:
    """Whether the catalog refuses an inline commit of ``size`` bytes of a single action, as version 1
    of a fresh table: then a refusal of a commit that size is about its bytes, not its actions."""
    table = driver.new_table(f"{key}_size")
    content = padded_commit(size, 1)
    return not probe(
        lambda: driver.catalog.commit(table.table_id, 1, inline_content=content, in_commit_timestamp=ict_of(1))
    )


def encodings_within(cap: int | None, first_version: int) -> tuple[tuple[str, Callable[[bytes], bytes]], ...]:
    """The ``ENCODINGS`` a table can hold one commit of each, from ``first_version`` on, with every
    commit unpublished, under a declared ``cap`` (all of them when none is declared; the first alone
    when the cap leaves no room for more)."""
    room = len(ENCODINGS) if cap is None else cap - (first_version - 1)
    return ENCODINGS[: max(1, min(len(ENCODINGS), room))]


def action_limit(catalog: Catalog, driver: CatalogDriver, declared: CatalogLimits, name: str) -> str:
    """The declared limit on actions per commit, exercised inline on a fresh table named ``name`` (the
    catalog hosts inline commits): a commit of exactly that many actions in every encoding of
    ``ENCODINGS`` (v2, v3) must be ratified and served byte for byte; one action more, in every
    encoding, refused cleanly with nothing changed. What was done, for the transcript;
    a ``Violation`` or ``PremiseBroken`` when it went wrong. Nothing is tried when no limit is declared:
    lakecert discovers none (a commit of more actions than any catalog takes would be a large one)."""
    if declared.commit_actions is None:
        return "no limit on actions per commit declared: none exercised"
    limit = Limit("actions per commit", declared.commit_actions, declared=True, found=True)
    # One pair per encoding: each commit at the limit is ratified (v2, v3, ...), and every commit one
    # past it is proposed as the version after them all, each refused.
    shapes = encodings_within(declared.unpublished, first_version=2)
    pairs = [many_actions(limit.at, 2 + i, 2 + len(shapes)) for i in range(len(shapes))]
    past_version = 2 + len(shapes)
    # The commits must fit the inline size limit, or a refusal would be about bytes, not actions.
    room = declared.inline_bytes if declared.inline_bytes is not None else INLINE_CEILING
    if len(pairs[0].past) > room:
        return (
            f"{limit}: not exercised, a commit of {limit.past} actions takes {len(pairs[0].past)} bytes, more"
            f" than the {'declared inline limit' if declared.inline_bytes is not None else 'ceiling lakecert tries'}"
            f" of {room} bytes"
        )
    table = driver.new_table(name)
    with premise(f"writing the {sum(len(c.paths) for c in pairs)} data files the commits add"):
        for commits in pairs:
            write_files(driver, table, commits)
    with premise("proposing v1, a small inline commit"):
        catalog.commit(table.table_id, 1, inline_content=padded_commit(1024, 1), in_commit_timestamp=ict_of(1))
    ratified: dict[int, bytes] = {}
    for version, (commits, (shape, encode)) in enumerate(zip(pairs, shapes, strict=True), start=2):
        content = encode(commits.at)
        why = f"{limit}; inline v{version} of {limit.at} actions, {shape} ({len(content)} bytes)"
        try:
            catalog.commit(table.table_id, version, inline_content=content, in_commit_timestamp=ict_of(version))
        except CatalogError as e:
            # Without a declared size limit the commit's bytes may be what the catalog refuses.
            if declared.inline_bytes is None and size_refused(driver, name, len(content)):
                raise PremiseBroken(f"{why} was refused, as is any inline commit of that size") from e
            raise Violation(
                "CAT-LIMIT-DECLARED",
                f"{why} was refused ({type(e).__name__}); a declared limit must be honoured up to itself,"
                " however the commit's lines end",
            ) from e
        got = served_inline(catalog, table, version)
        if got != content:
            raise Violation(
                "CAT-RETAIN-UNPUBLISHED",
                f"{why} was ratified and is served as {sized(got)}, not byte for byte as ratified",
            )
        ratified[version] = content
    for shape, encode in shapes:
        content = encode(pairs[0].past)
        past = f"{limit}; inline v{past_version} of {limit.past} actions, {shape} ({len(content)} bytes), one past it,"
        one_past_refused(catalog, table, past_version, content, past, declared=True)
        for version, content in ratified.items():
            got = served_inline(catalog, table, version)
            if got != content:
                raise Violation(
                    "CAT-RETAIN-UNPUBLISHED",
                    f"{past} was refused, and ratified v{version} is now served as {sized(got)}, not as ratified",
                )
    drawn = " and ".join(shape for shape, _ in shapes)
    return f"{limit}: {limit.at} actions ratified and served byte for byte, {limit.past} refused cleanly ({drawn})"


def one_past_refused(
    catalog: Catalog, table: TableInfo, version: int, content: bytes, what: str, declared: bool
) -> bool:
    """Propose inline ``content`` as ``version``, one past a limit (``what`` says which, for messages). True
    when it is refused cleanly and nothing changed; False when it is accepted whole past a limit lakecert
    discovered (the catalog's own business); a ``Violation`` for any other failure, a refusal that changed
    the table, content ratified cut, or content accepted whole past a declared limit."""
    try:
        catalog.commit(table.table_id, version, inline_content=content, in_commit_timestamp=ict_of(version))
    except Exception as e:  # judged: a clean refusal that changed nothing
        if not isinstance(e, CLEAN_REFUSALS):
            raise Violation("CAT-LIMIT-CLEAN-REFUSAL", f"{what} failed with {type(e).__name__}, not a refusal") from e
        after = catalog.get_commits(table.table_id, 1)
        if after.latest_version != version - 1 or any(c.version == version for c in after.commits):
            raise Violation(
                "CAT-LIMIT-CLEAN-REFUSAL",
                f"{what} was refused ({type(e).__name__}), yet the latest version is now {after.latest_version}:"
                " a refused proposal must change nothing",
            ) from e
        return True
    got = served_inline(catalog, table, version)
    if got != content:
        raise Violation(
            "CAT-RETAIN-UNPUBLISHED", f"{what} was accepted and is served as {sized(got)}: cut instead of refused"
        )
    if declared:
        raise Violation("CAT-LIMIT-DECLARED", f"{what} was accepted whole: the declared limit is not the catalog's")
    return False


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


NEIGHBOUR_COMMITS = 3  # unpublished commits a neighbour holds when no cap is declared


def crowded_neighbour(driver: CatalogDriver, declared: CatalogLimits, name: str) -> str:
    """Another table, named ``name``, left holding one unpublished commit fewer than the declared cap
    (``NEIGHBOUR_COMMITS`` when none is declared), so that each per-table limit is then exercised
    while another table is near its own: a limit declared per table must not count other tables'
    state. A clean refusal of the neighbour below the declared cap (its own table holds fewer) is a
    declared limit not honoured up to itself. What was done, for the transcript."""
    cap = declared.unpublished
    count = cap - 1 if cap is not None else NEIGHBOUR_COMMITS
    table = driver.new_table(name)
    for version in range(1, count + 1):
        _, refusal = propose(driver, table, version)
        if refusal is None:
            continue
        if cap is None:
            return f"neighbour {name}: v{version} refused ({type(refusal).__name__}); no cap declared, not judged"
        if isinstance(refusal, CLEAN_REFUSALS):
            raise Violation(
                "CAT-LIMIT-DECLARED",
                f"the target declares a cap of {cap} unpublished commits per table; a table holding {version - 1}"
                f" had v{version} refused ({type(refusal).__name__}): a declared per-table limit must be"
                " honoured up to itself on each table, whatever the other tables of the catalog hold",
            ) from refusal
        raise refusal
    return f"neighbour {name}: {count} unpublished commits held while the limits are exercised"


def freed_by_marks(driver: CatalogDriver, table: TableInfo, limit: Limit) -> str:
    """The cap on unpublished commits when publication is reported only in the proposals, as the
    mark each carries (``latest_published_version``, UC's latest backfilled version), never with
    ``mark_published``. Before proposing v the writer publishes (copies) every version up to
    ``b = v - cap + 1`` and reports ``b`` with v: even a catalog that applies a mark only after
    ratifying its proposal (docs/certify.md) then holds exactly ``cap`` unpublished commits once v is
    ratified, never more, so no proposal may be refused; ``3 * cap + 1`` proposals pass the cap three
    times over. What was done, for the transcript; see ``refused_within_cap`` for a refusal."""
    cap = limit.at
    if cap < 2:
        return f"{limit}: not exercised (a proposal cannot report its predecessor published within a cap of {cap})"
    log = LogBuilder(driver.storage, table.location)
    staged: dict[int, str] = {}
    reported, last = 0, 3 * cap + 1
    for version in range(1, last + 1):
        mark = version - cap + 1 if version >= cap else None
        if mark is not None:
            with premise(f"publishing v{mark} of {table.table_id} to _delta_log"):
                log.publish(mark, driver.storage.get(staged[mark]))  # v1 to v(mark - 1) are published already
        uri = staged[version] = cheap_stage(driver, table, version)
        try:
            driver.catalog.commit(
                table.table_id,
                version,
                staged_uri=uri,
                in_commit_timestamp=ict_of(version),
                latest_published_version=mark,
            )
        except Exception as e:  # judged: only a catalog that took the marks before is bound by them
            return refused_within_cap(driver, table, limit, version, reported, e)
        reported = mark or 0
    return f"{limit}: v1-v{last} ratified, each reporting publication up to {cap - 1} versions below it"


def refused_within_cap(
    driver: CatalogDriver, table: TableInfo, limit: Limit, version: int, reported: int, error: BaseException
) -> str:
    """``version`` was refused though, with publication up to ``reported`` reported in the proposal of
    the version before, only ``cap`` commits would be unpublished. A catalog that does not take marks in
    proposals (it refused the first one carrying a mark, or still lists commits a mark reported
    published: it counts them as unpublished) is not judged: a note for the transcript. One that took
    them (it dropped every commit up to the mark) broke its declared cap (a ``Violation``), or the one
    lakecert discovered (``PremiseBroken``)."""
    listed = driver.catalog.get_commits(table.table_id).commits
    kept = sorted(c.version for c in listed if c.version <= reported)
    refused = f"v{version} was refused ({type(error).__name__})"
    if reported < 1 or kept:
        seen = "no ratified proposal carried one" if reported < 1 else f"v{kept[0]} listed, v{reported} reported"
        return f"{limit}: {refused}; the catalog does not take marks in proposals ({seen}): not judged"
    why = (
        f"{limit}; publication reported only in the proposals, v1-v{version - 1} ratified, every version up to"
        f" v{reported} published and reported with v{version - 1} (the catalog dropped those commits)"
    )
    if limit.declared:
        raise Violation(
            "CAT-LIMIT-DECLARED",
            f"{why}: {refused}, with {version - reported} unpublished once ratified, the declared cap: a"
            " publication reported in a proposal frees room as one recorded with mark_published does",
        ) from error
    raise PremiseBroken(f"{why}: {refused}, with no more unpublished than the cap discovered before") from error


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


# ---------------------------------------------------------------- refusals as a table's state grows


def refusal_changed_nothing(catalog: Catalog, table: TableInfo, version: int, error: BaseException, what: str) -> None:
    """A proposal of ``version``, the table's latest + 1, was refused (``what`` says which, for messages):
    it must be a clean refusal after which the table is as before. RFC "Terminology - Commits": a
    proposed commit is ratified or rejected, and a rejected one is never listed as ratified; so the
    refused version is not listed, and the latest stays below it (docs/certify.md "Limits": a refused
    call changes nothing). Whatever limit of the catalog refused it (a size, a count, its own store)."""
    if not isinstance(error, CLEAN_REFUSALS):
        raise Violation(
            "CAT-LIMIT-CLEAN-REFUSAL", f"{what} failed with {type(error).__name__}, not a refusal"
        ) from error
    after = catalog.get_commits(table.table_id, 1)
    listed = sorted(c.version for c in after.commits if c.version >= version)
    if listed:
        raise Violation(
            "CAT-LIST-RATIFIED-ONLY",
            f"{what} was refused ({type(error).__name__}), yet the listing holds v{listed[0]} (latest"
            f" v{after.latest_version}): a rejected proposal is never listed as ratified",
        ) from error
    if after.latest_version != version - 1:
        raise Violation(
            "CAT-LIMIT-CLEAN-REFUSAL",
            f"{what} was refused ({type(error).__name__}), yet the latest version is now v{after.latest_version},"
            f" not v{version - 1}: a refused proposal must change nothing",
        ) from error


# The unpublished state one table is grown to, in inline commits of at most BULK_COMMIT bytes each:
# well past the record sizes of common stores (a few hundred KiB, once base64-encoded), so that a
# catalog that keeps a table's state as one record meets its store's limit here.
BULK_COMMIT = 128 * 1024
STATE_BUDGET = 2 * 1024 * 1024


def grown_state(catalog: Catalog, table: TableInfo, declared: CatalogLimits) -> str:
    """Grow ``table`` (holding nothing yet) by large inline commits, none published, up to
    ``STATE_BUDGET`` bytes, within the declared inline limit and cap on unpublished commits. The
    catalog may refuse any of them (a limit of its own, declared or not, on a commit or on the table's
    whole state): each refusal is judged at once (``refusal_changed_nothing``), and the same version is
    proposed again at half the size, down to ``FIRST_INLINE`` bytes. What was done, for the transcript;
    ``NotSupported`` propagates (the catalog hosts no inline commits)."""
    size = BULK_COMMIT if declared.inline_bytes is None else min(BULK_COMMIT, declared.inline_bytes)
    cap = declared.unpublished
    total, version, refused = 0, 1, []
    while total < STATE_BUDGET and size >= FIRST_INLINE and (cap is None or version <= cap):
        content = padded_commit(size, version)
        try:
            catalog.commit(table.table_id, version, inline_content=content, in_commit_timestamp=ict_of(version))
        except NotSupported:
            raise
        except Exception as e:  # judged: a clean refusal that changed nothing
            what = f"inline v{version} of {size} bytes, with {total} bytes in v1-v{version - 1} unpublished,"
            refusal_changed_nothing(catalog, table, version, e, what)
            refused.append(f"v{version} of {size} bytes")
            size //= 2
            continue
        total += size
        version += 1
    held = f"v1-v{version - 1}, {total} bytes of inline commits unpublished"
    return f"{held}; refused, changing nothing: {', '.join(refused) if refused else 'none'}"
