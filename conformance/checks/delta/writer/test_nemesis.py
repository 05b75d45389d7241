"""The nemesis against a writer: lost answers, duplicate deliveries, a restarting catalog, crashes and
skewed clocks (docs/certify.md "The nemesis: restarts, lost answers, crashes, clocks").

The client under test is bound to a ``NemesisCatalog`` around the recording reference catalog, which
loses an answer, delivers a proposal twice, restarts the catalog or crashes the client at the call a
check arms it for. The RFC makes the catalog "the source of truth around which staged commits are
ratified" ("Terminology: Commits"): a writer that did not hear back must ask it. Its change must then
be in the table exactly once (MUST), and it should report the true outcome rather than raise (SHOULD).
A client that never calls the catalog object it was handed (an engine talking HTTP to a served
catalog) cannot be reached by the nemesis: those checks are NOT_APPLICABLE, never PASS."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace
from functools import partial

import pytest

from conformance.checks.delta.builders import premise, when
from conformance.checks.delta.evidence import (
    Attempt,
    attempt,
    log_files,
    misnamed_proposals,
    proposals,
    published_unlike_ratified,
    ratified_content,
    same_actions,
)
from conformance.checks.delta.writer.conftest import DAY_MS, Bind
from conformance.contract.delta import Catalog, NotSupported, Storage, TableInfo
from conformance.nemesis import CrashingStorage, NemesisCatalog, in_time_zone
from conformance.nemesis.clock import FAR_EAST, FAR_WEST
from conformance.nemesis.wrapper import Op
from conformance.observe.recording import RecordingCatalog, RecordingClient
from conformance.observe.transcript import Transcript
from conformance.oracle import commits as oracle_commits
from conformance.oracle.names import log_dir, parse
from conformance.oracle.replay import replay, table_commits
from conformance.report.outcomes import PremiseBroken, Violation, not_applicable
from conformance.run_context import RunContext
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.actions import commit_info, decode_commit
from reference_impl.delta.client import ReferenceClient, wall_clock_ms
from reference_impl.delta.data_files import read_data_file
from reference_impl.delta.log_paths import delta_uri

ONCE = "WRT-LOST-ANSWER-ONCE"
OUTCOME = "WRT-LOST-ANSWER-OUTCOME"
RESTART = "WRT-CATALOG-RESTART"
CRASH = "WRT-CRASH-RECOVERY"
A, B, C = {"id": 1, "value": "a"}, {"id": 2, "value": "b"}, {"id": 3, "value": "c"}
FAR_AHEAD_MS = 400 * DAY_MS  # a peer whose clock is more than a year ahead


def _start(client: RecordingClient, nemesis: NemesisCatalog, name: str, *rows: dict[str, object]) -> None:
    """The writer creates the table and appends ``rows`` (one commit each) through the nemesis, unarmed."""
    with premise("the writer under test creating a table and appending to it"):
        client.create_table(name)
        for row in rows:
            client.append(name, [row])
    if nemesis.calls == 0:
        not_applicable(
            "the client made no call through the Catalog object lakecert handed it (it reaches its catalog"
            " another way, e.g. over HTTP), so the nemesis cannot stand between them"
        )


def _no_lost_version(
    rule: str, admin: Catalog, storage: Storage, info: TableInfo, what: str, transcript: Transcript
) -> int:
    """Every version up to the latest is published, or held by the catalog with its content still there
    (inline, or a staged file that exists), and the staged file of every proposal of the writer's that
    the catalog ratified is kept until that version is published; returns the latest. Judged before
    any read of the table, which would fail on a lost version without saying why."""
    resp = admin.get_commits(info.table_id)
    stored = {c.version: c for c in resp.commits}
    # The writer's ratified staged proposals, as the catalog answered them (the transcript): the
    # reference catalog keeps a copy of a staged commit's bytes and serves it inline once the file is
    # gone, which hides the loss a catalog keeping only the location (as the RFC allows) would suffer.
    ratified = {
        e.args["version"]: e.args["staged_uri"]
        for e in proposals(transcript, info.table_id, ok=True)
        if e.args["staged_uri"] is not None
    }
    for version in range(1, resp.latest_version + 1):
        if storage.exists(delta_uri(info.location, version)):
            continue
        commit = stored.get(version)
        if commit is None:
            raise Violation(
                rule,
                f"{what}: v{version} is lost: the catalog no longer stores it (latest v{resp.latest_version})"
                " and _delta_log has no file for it",
            )
        if commit.staged_uri is not None and not storage.exists(commit.staged_uri):
            # "Terminology: Commits": the catalog keeps only a staged commit's location; the file is the
            # commit until it is published. A writer that tidies a staged file it took for a loser's
            # (on a conflict that answered its own duplicated proposal) deletes a ratified commit.
            raise Violation(
                rule,
                f"{what}: v{version} is lost: the catalog ratified it as the staged file {commit.staged_uri},"
                " which no longer exists, and _delta_log has no file for it: no reader can read the table and"
                " nobody can publish it (a ratified staged commit must stay until it is published)",
            )
        uri = ratified.get(version)
        if uri is not None and not storage.exists(uri):
            raise Violation(
                rule,
                f"{what}: v{version} is lost: the catalog ratified the writer's staged file {uri} as v{version},"
                f" and the writer deleted it before v{version} was published (_delta_log has no file for it): a"
                " catalog that keeps only a staged commit's location (RFC Terminology: Commits) can no longer"
                f" serve v{version} to any reader or publisher (lakecert's reference catalog keeps a copy, which"
                " hides the loss)",
            )
    return resp.latest_version


def _times(rows: list[dict[str, object]], row: dict[str, object]) -> int:
    return sum(1 for r in rows if r == row)


def _judge_change(
    rule: str,
    outcome: Attempt[int],
    reader: ReferenceClient,
    admin: Catalog,
    storage: Storage,
    name: str,
    what: str,
    transcript: Transcript,
) -> int:
    """The append of row ``B`` (on a table at v1) is one commit, and its row is in the table once if the
    append reported a version (and that version holds it), never twice; returns how many times it is there."""
    info = admin.resolve(name)
    latest = _no_lost_version(rule, admin, storage, info, what, transcript)
    if latest > 2:
        raise Violation(
            rule,
            f"{what}: the catalog now holds v2-v{latest} for one append of one row: the writer committed its"
            " change again instead of finding out from the catalog that v2 was its own",
        )
    rows = reader.read(name).rows
    seen = _times(rows, B)
    if seen > 1:
        raise Violation(rule, f"{what}: the appended row is in the table {seen} times; the change must land once")
    if outcome.error is None:
        version = outcome.value
        if seen == 0:
            raise Violation(rule, f"{what}: the append reported v{version}, yet its row is not in the table")
        assert isinstance(version, int), f"the append returned {version!r}, not the version it committed"
        holds = _times(reader.read(name, version=version).rows, B) == 1
        before = version > 0 and _times(reader.read(name, version=version - 1).rows, B) == 1
        if not holds or before:
            raise Violation(rule, f"{what}: the append reported v{version}, but its row is not added by v{version}")
    return seen


def _keeps_working(
    rule: str, client: RecordingClient, reader: ReferenceClient, admin: Catalog, name: str, what: str
) -> None:
    """The next append of the same writer lands at the catalog's next version, once."""
    latest = admin.get_commits(admin.resolve(name).table_id).latest_version
    after = attempt(lambda: client.append(name, [C]))
    if after.error is not None:
        raise Violation(rule, f"{what}: the writer's next append failed: {type(after.error).__name__}: {after.error}")
    if after.value != latest + 1 or _times(reader.read(name).rows, C) != 1:
        raise Violation(
            rule, f"{what}: the writer's next append reported v{after.value}; the catalog was at v{latest} before it"
        )


def _reported_where_added(outcome: Attempt[int] | Attempt[object], adding: list[int], what: str) -> None:
    """An append that returned reported the version that adds its row, and no other: a caller reading
    "its" version must read its own commit, not another writer's (a report against the catalog)."""
    if outcome.error is None and adding != [outcome.value]:
        raise Violation(ONCE, f"{what}: the append reported v{outcome.value}, but its row was added at {adding}")


def _report_outcome(outcome: Attempt[int], seen: int, what: str) -> None:
    """SHOULD: the writer found out that its change landed, instead of raising. Judged last, once the
    MUST held (``at_end``)."""
    if outcome.error is not None and seen == 1:
        raise Violation(
            OUTCOME,
            f"{what}: the append raised {type(outcome.error).__name__} although its commit was ratified; the"
            " writer should ask the catalog and return that version",
            at_end=True,
        )


@pytest.mark.req("WRT-LOST-ANSWER-ONCE", "WRT-LOST-ANSWER-OUTCOME")
def test_lost_answer_to_a_proposal_lands_once(
    bind: Bind,
    nemesis: NemesisCatalog,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    table_name: str,
    transcript: Transcript,
) -> None:
    client = bind(nemesis)
    _start(client, nemesis, table_name, A)
    nemesis.arm("commit", "lose")
    outcome = attempt(lambda: client.append(table_name, [B]))
    what = "the catalog ratified the append of v2 and its answer was lost (CatalogTimeout)"
    seen = _judge_change(ONCE, outcome, suite_client, ref_admin, suite_client.storage, table_name, what, transcript)
    _keeps_working(ONCE, client, suite_client, ref_admin, table_name, what)
    _report_outcome(outcome, seen, what)


RIVAL = {"id": 9, "value": "rival"}


def _rival_client(
    lakecert: RunContext, transcript: Transcript, storage: Storage, seed: int, shape: str
) -> ReferenceClient:
    """The suite's rival writer on the reference catalog, proposing ``shape`` commits: staged (a file's
    location) or inline (the content itself, RFC "Commit Protocol" option 2). A writer's "is the commit
    at v mine?" must tell its own from a rival's of either shape: an inline commit has no staged
    location, so comparing locations alone finds every inline commit equal to an inline proposal."""
    catalog = RecordingCatalog(lakecert.reference_catalog(), transcript, actor="suite")
    return ReferenceClient(catalog, storage, seed=seed + 2, inline=shape == "inline")


@pytest.mark.req("WRT-LOST-ANSWER-ONCE", "WRT-LOST-ANSWER-OUTCOME", "WRT-STAGED-NAME", "WRT-PUBLISH-IDENTICAL")
@pytest.mark.parametrize("rival_shape", ["staged", "inline"])
def test_lost_conflict_is_not_taken_for_success(
    lakecert: RunContext,
    bind: Bind,
    nemesis: NemesisCatalog,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    table_name: str,
    transcript: Transcript,
    seed: int,
    rival_shape: str,
) -> None:
    """A rival ratifies v2 just before the writer's proposal of v2 arrives; the catalog answers the
    writer with a conflict, and that answer is lost. The latest version is then v2 whoever won: only
    the commit at v2 (its staged file or content) tells the writer whether it is its own. The rival
    stages its commit, or sends it inline: a writer's test of "mine" must hold for both."""
    client = bind(nemesis)
    _start(client, nemesis, table_name, A)
    rival_client = _rival_client(lakecert, transcript, suite_client.storage, seed, rival_shape)
    rival = (
        lambda: rival_client.append(table_name, [RIVAL]),
        f"a rival's commit ({rival_shape}) was ratified as v2 first",
    )
    nemesis.arm("commit", "lose", before=rival)
    outcome = attempt(lambda: client.append(table_name, [B]))
    if nemesis.pending:
        raise PremiseBroken("the writer's append made no proposal through the catalog it was handed")
    shape = "an inline" if rival_shape == "inline" else "a staged"
    what = f"a rival took v2 with {shape} commit just before the writer proposed v2; its conflict answer was lost"
    info = ref_admin.resolve(table_name)
    # The retry after the lost answer is a new attempt: its staged file is named for the version it
    # proposes (v3), not the one the lost proposal was for (RFC "Delta Log Entries"); refused ones too.
    misnamed = misnamed_proposals(transcript, info.table_id, info.location)
    if misnamed:
        raise Violation("WRT-STAGED-NAME", f"{what}: {misnamed[0]} ({len(misnamed)} misnamed proposal(s))")
    # A writer that publishes its proposal before it knows the outcome ("idempotent, saves a round trip")
    # publishes the loser's actions at v2 here: the rival's v2 is unpublished, so nothing was in the way.
    # RFC "Publishing Commits": _delta_log/<v>.json is a copy of the commit ratified at v.
    ratified = ratified_content(transcript, suite_client.storage, info.table_id, ("catalog", "suite"))
    wrong = published_unlike_ratified(suite_client.storage, info.location, ratified)
    if wrong:
        raise Violation(
            "WRT-PUBLISH-IDENTICAL",
            f"{what}: _delta_log's v{wrong[0]} holds other actions than the commit the catalog ratified at"
            f" v{wrong[0]} (the rival's): a proposal whose answer was lost is published only once the catalog"
            " says it holds that version",
        )
    _no_lost_version(ONCE, ref_admin, suite_client.storage, info, what, transcript)
    rows = suite_client.read(table_name).rows
    seen = _times(rows, B)
    if _times(rows, RIVAL) != 1 or seen > 1:
        raise Violation(
            ONCE, f"{what}: the table reads {rows}; the rival's row must be in it once, the writer's at most once"
        )
    if outcome.error is None:
        version = outcome.value
        assert isinstance(version, int), f"the append returned {version!r}, not the version it committed"
        holds = _times(suite_client.read(table_name, version=version).rows, B) == 1
        before = version > 0 and _times(suite_client.read(table_name, version=version - 1).rows, B) == 1
        if not holds or before:
            raise Violation(
                ONCE,
                f"{what}: the append reported v{version}, but v{version} does not add its row (the table reads"
                f" {rows}): a version at or below the latest is the writer's only if the commit there is its own",
            )
    _keeps_working(ONCE, client, suite_client, ref_admin, table_name, what)
    _report_outcome(outcome, seen, what)


def _adding(admin: Catalog, storage: Storage, info: TableInfo, row: dict[str, object]) -> tuple[list[int], int]:
    """By lakecert's own decoder (``conformance/oracle``), over the catalog's commits and ``_delta_log``:
    the versions whose commit adds a data file holding ``row``, and how often the latest version holds it."""
    resp = admin.get_commits(info.table_id)
    ratified = {c.version: c.inline_content or storage.get(c.staged_uri or "") for c in resp.commits}
    published = {}
    for found in storage.list(f"{log_dir(info.location)}/"):
        name = parse(found.uri)
        if name is not None and name.kind == "delta":
            published[name.version] = storage.get(found.uri)
    with premise("decoding the table's commits (their format is judged by WRT-STAGED-FORMAT)"):
        commits = {
            v: oracle_commits.decode(c) for v, c in table_commits(published, ratified, resp.latest_version).items()
        }
    adding = [
        v
        for v, actions in sorted(commits.items())
        if any(row in read_data_file(storage, info.location, a["path"]) for a in oracle_commits.of_kind(actions, "add"))
    ]
    snap = replay(commits, resp.latest_version)
    held = sum(_times(read_data_file(storage, info.location, path), row) for path in snap.files)
    return adding, held


@pytest.mark.req("WRT-LOST-ANSWER-ONCE", "WRT-LOST-ANSWER-OUTCOME")
def test_lost_answer_then_published_by_another_lands_once(
    bind: Bind,
    nemesis: NemesisCatalog,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    suite_storage: Storage,
    table_name: str,
    transcript: Transcript,
) -> None:
    """The catalog ratifies the writer's v2 and the answer is lost; before the writer can ask, another
    client publishes the table and reports the mark, and the catalog drops v2 ("Terminology: Commits":
    published commits need not be stored). The listing no longer holds v2; the catalog's latest and
    _delta_log's v2 (the writer's own bytes) still say it landed. A writer that looks in the listing
    only takes it for lost and commits its change a second time."""
    client = bind(nemesis)
    _start(client, nemesis, table_name, A)
    published: list[bool] = []

    def publish() -> None:
        suite_client.publish(table_name)
        published.append(True)

    nemesis.arm("commit", "lose", after=(publish, "another client published v1-v2 and marked them; v2 was dropped"))
    outcome = attempt(lambda: client.append(table_name, [B]))
    if nemesis.pending or not published:
        raise PremiseBroken("the writer's proposal did not reach the catalog, or the suite's publication failed")
    what = "v2 was ratified and its answer lost; another client published v2 before the writer asked"
    info = ref_admin.resolve(table_name)
    _no_lost_version(ONCE, ref_admin, suite_storage, info, what, transcript)
    adding, held = _adding(ref_admin, suite_storage, info, B)
    if len(adding) > 1 or held > 1:
        raise Violation(
            ONCE,
            f"{what}: versions {adding} each add the appended row (the latest version holds it {held} time(s)):"
            " the writer committed its change again, though the catalog's latest version and _delta_log's v2,"
            " its own commit, said it had landed",
        )
    _reported_where_added(outcome, adding, what)
    _keeps_working(ONCE, client, suite_client, ref_admin, table_name, what)
    _report_outcome(outcome, held, what)


@pytest.mark.req("WRT-LOST-ANSWER-ONCE", "WRT-LOST-ANSWER-OUTCOME")
def test_lost_answer_then_a_rival_reports_its_own_version(
    bind: Bind,
    nemesis: NemesisCatalog,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    suite_storage: Storage,
    table_name: str,
    transcript: Transcript,
) -> None:
    """The catalog ratifies the writer's v2 and the answer is lost; before the writer asks, a rival
    commits v3. The writer's own commit is v2 whatever the table holds now: with one writer the latest
    version and the writer's version coincide, so only a commit between the loss and the question tells
    a writer that reports "the version after my write" from one that reports the version it committed
    (RFC "Commit Protocol"; "Terminology: Commits")."""
    client = bind(nemesis)
    _start(client, nemesis, table_name, A)
    rival = (lambda: suite_client.append(table_name, [RIVAL]), "a rival's commit was ratified as v3")
    nemesis.arm("commit", "lose", after=rival)
    outcome = attempt(lambda: client.append(table_name, [B]))
    if nemesis.pending:
        raise PremiseBroken("the writer's append made no proposal through the catalog it was handed")
    what = "v2 was ratified and its answer lost; a rival committed v3 before the writer asked"
    info = ref_admin.resolve(table_name)
    _no_lost_version(ONCE, ref_admin, suite_storage, info, what, transcript)
    adding, held = _adding(ref_admin, suite_storage, info, B)
    if len(adding) > 1 or held > 1:
        raise Violation(
            ONCE,
            f"{what}: versions {adding} each add the appended row (the latest version holds it {held} time(s)):"
            " the writer committed its change again",
        )
    _reported_where_added(outcome, adding, what)
    _keeps_working(ONCE, client, suite_client, ref_admin, table_name, what)
    _report_outcome(outcome, held, what)


@pytest.mark.req("WRT-LOST-ANSWER-ONCE", "WRT-LOST-ANSWER-OUTCOME")
def test_duplicate_delivery_lands_once(
    bind: Bind,
    nemesis: NemesisCatalog,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    table_name: str,
    transcript: Transcript,
) -> None:
    client = bind(nemesis)
    _start(client, nemesis, table_name, A)
    nemesis.arm("commit", "duplicate")
    outcome = attempt(lambda: client.append(table_name, [B]))
    what = "the proposal of v2 was delivered twice (a network retry) and the client got the second answer"
    seen = _judge_change(ONCE, outcome, suite_client, ref_admin, suite_client.storage, table_name, what, transcript)
    _keeps_working(ONCE, client, suite_client, ref_admin, table_name, what)
    _report_outcome(outcome, seen, what)


@pytest.mark.req("WRT-LOST-ANSWER-ONCE", "WRT-LOST-ANSWER-OUTCOME")
def test_duplicate_delivery_after_a_rival_lands_once(
    bind: Bind,
    nemesis: NemesisCatalog,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    suite_storage: Storage,
    table_name: str,
    transcript: Transcript,
) -> None:
    """The proposal of v2 is ratified, a rival then ratifies v3, and the network delivers the proposal of
    v2 again: the conflict the client hears names v3 as the latest. Whether v2 is the client's own is
    still only told by the commit at v2 ("Commit Protocol": the catalog is the source of truth); a client
    that reads "the table moved on" as "I lost" commits its change a second time."""
    client = bind(nemesis)
    _start(client, nemesis, table_name, A)
    rival = (lambda: suite_client.append(table_name, [RIVAL]), "a rival's commit was ratified as v3")
    nemesis.arm("commit", "duplicate", after=rival)
    outcome = attempt(lambda: client.append(table_name, [B]))
    if nemesis.pending:
        raise PremiseBroken("the writer's append made no proposal through the catalog it was handed")
    what = "v2 was ratified, a rival then took v3, and the proposal of v2 was delivered a second time"
    info = ref_admin.resolve(table_name)
    _no_lost_version(ONCE, ref_admin, suite_storage, info, what, transcript)
    adding, held = _adding(ref_admin, suite_storage, info, B)
    rivals = _adding(ref_admin, suite_storage, info, RIVAL)[1]
    if len(adding) > 1 or held > 1 or rivals != 1:
        raise Violation(
            ONCE,
            f"{what}: versions {adding} each add the appended row (the latest version holds it {held} time(s),"
            f" the rival's row {rivals} time(s)): the writer committed its change again instead of asking the"
            " catalog whose commit v2 is",
        )
    _reported_where_added(outcome, adding, what)
    _keeps_working(ONCE, client, suite_client, ref_admin, table_name, what)
    _report_outcome(outcome, held, what)


@pytest.mark.req("WRT-LOST-ANSWER-ONCE", "WRT-LOST-ANSWER-OUTCOME")
def test_lost_publication_mark_loses_nothing(
    bind: Bind,
    nemesis: NemesisCatalog,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
) -> None:
    client = bind(nemesis)
    _start(client, nemesis, table_name, A, B)
    nemesis.arm("mark_published", "lose")
    outcome = attempt(lambda: client.publish(table_name))
    what = "the catalog recorded the writer's publication mark and its answer was lost"
    info = ref_admin.resolve(table_name)
    _no_lost_version(ONCE, ref_admin, suite_storage, info, what, transcript)
    ratified = ratified_content(transcript, suite_storage, info.table_id)
    for version, content in sorted(ratified.items()):
        uri = delta_uri(info.location, version)
        if suite_storage.exists(uri) and not same_actions(suite_storage.get(uri), content):
            raise Violation(ONCE, f"{what}: _delta_log holds a v{version} that is not its ratified commit")
    rows = suite_client.read(table_name).rows
    if _times(rows, A) != 1 or _times(rows, B) != 1:
        raise Violation(ONCE, f"{what}: the table reads {rows}; both appended rows must be in it once")
    _keeps_working(ONCE, client, suite_client, ref_admin, table_name, what)
    if outcome.error is not None and nemesis.pending is False:
        marked = not ref_admin.get_commits(info.table_id, 1, 2).commits
        if marked:
            raise Violation(
                OUTCOME,
                f"{what}: publish raised {type(outcome.error).__name__} although the catalog recorded the mark;"
                " the writer should ask again (the mark never goes back) and finish",
                at_end=True,
            )


@pytest.mark.req("WRT-LOST-ANSWER-ONCE")
def test_lost_listing_answer_never_reads_a_stale_table(
    bind: Bind, nemesis: NemesisCatalog, ref_admin: ReferenceCatalog, suite_client: ReferenceClient, table_name: str
) -> None:
    client = bind(nemesis)
    _start(client, nemesis, table_name, A, B)  # v1 and v2, ratified and unpublished
    # The writer has read the table once, then another client commits v3: a writer that falls back on
    # the view of its last read when a listing is lost serves v2 as the latest.
    with premise("the writer under test reading v2, and another client committing v3"):
        client.read(table_name)
        suite_client.append(table_name, [C])
    nemesis.arm("get_commits", "lose")
    outcome = attempt(lambda: client.read(table_name))
    what = "the catalog's answer to the writer's listing was lost while the table was at v3, unpublished"
    if outcome.error is None:
        got = outcome.value
        assert got is not None, "the read returned nothing, not the table"
        if got.version != 3 or got.rows != [A, B, C]:
            raise Violation(
                ONCE,
                f"{what}: the read returned v{got.version} with {got.rows}; the catalog's latest is v3 with"
                " three rows (raising is allowed: the writer could not know)",
            )
    after = attempt(lambda: client.read(table_name))
    if after.error is not None or after.value is None or after.value.rows != [A, B, C]:
        shown = after.error or (after.value.rows if after.value else None)
        raise Violation(ONCE, f"{what}: the next read, answered, gave {shown!r}; it must read v3 with all three rows")


@pytest.mark.req("WRT-LOST-ANSWER-ONCE")
def test_lost_listing_answer_in_a_publish_never_reports_it_done(
    bind: Bind, nemesis: NemesisCatalog, ref_admin: ReferenceCatalog, storage: Storage, table_name: str
) -> None:
    """The answer to the listing a publish starts with is lost (a writer that publishes from what it
    remembers makes no such listing: then nothing is judged). The publish may raise (it could not know
    what to publish); if it returns, it did what it was asked: every ratified commit is in _delta_log,
    as ratified. Either way the next publish, answered, publishes them."""
    client = bind(nemesis)
    _start(client, nemesis, table_name, A, B)  # v1 and v2, ratified and unpublished
    location = ref_admin.resolve(table_name).location
    nemesis.arm("get_commits", "lose")
    outcome = attempt(lambda: client.publish(table_name))
    lost = not nemesis.pending
    nemesis.disarm()
    missing = [v for v in (1, 2) if not storage.exists(delta_uri(location, v))]
    what = "the answer to the catalog's listing was lost during the writer's publish of v1-v2"
    if lost and outcome.error is None and missing:
        raise Violation(
            ONCE,
            f"{what}: the publish returned as done, yet _delta_log lacks v{missing}; a publish that returns has"
            " published every ratified commit (after a lost answer it may raise instead: it could not know)",
        )
    again = attempt(lambda: client.publish(table_name))
    missing = [v for v in (1, 2) if not storage.exists(delta_uri(location, v))]
    if again.error is not None or missing:
        shown = type(again.error).__name__ if again.error is not None else f"_delta_log lacks v{missing}"
        raise Violation(ONCE, f"{what}: the next publish, answered, gave {shown}; it must publish v1 and v2")


# Runs of consecutive lost answers: where the run starts (the listing an append starts with, the
# proposal, the publication mark) and how long it is. One lost answer per operation is what the checks
# above lose; a flaky network or a restarting server loses several in a row, so the listing a writer
# recovers with (and its next proposal, or its retried mark) is lost too. A run of 2 from the proposal
# loses the recovery listing, a run of 3 the listing after it as well.
LOSS_RUN_STARTS: tuple[Op, ...] = ("get_commits", "commit", "mark_published")
LOSS_RUN_LENGTHS = (1, 2, 3)


@pytest.mark.req("WRT-LOST-ANSWER-ONCE")
def test_runs_of_lost_answers_around_a_proposal_land_once(
    bind: Bind,
    nemesis: NemesisCatalog,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    suite_storage: Storage,
    table_name: str,
    transcript: Transcript,
) -> None:
    """For every start and length of a run of lost answers (``LOSS_RUN_STARTS`` x ``LOSS_RUN_LENGTHS``),
    in turn on one table: the writer appends a row of its own (and, for a run that starts at the mark,
    publishes it) while the nemesis loses that many answers in a row, whatever calls they answer. An
    answer the writer never got is no answer: "not ratified" may only come from an answer that says so
    (RFC "Terminology: Commits": the catalog is the source of truth), so a writer that takes a lost
    recovery listing for "not mine" commits its change again. The writer may raise (it could not
    know); each row must then be in the table at most once, at the version the append reported if it
    returned, with no ratified version lost; and the writer keeps working at the end."""
    client = bind(nemesis)
    _start(client, nemesis, table_name, A)
    info = ref_admin.resolve(table_name)
    schedule: list[str] = []
    transcript.notes["schedule"] = schedule
    for i, (start, run) in enumerate(itertools.product(LOSS_RUN_STARTS, LOSS_RUN_LENGTHS)):
        row = {"id": 100 + i, "value": f"run{i}"}
        if start == "mark_published":
            # The append is answered; the publication that follows meets the run.
            with premise(f"the writer under test appending row {row['id']} before publishing it"):
                client.append(table_name, [row])
            nemesis.arm("mark_published", "lose", run=run)
            outcome: Attempt[object] = attempt(partial(client.publish, table_name))
        else:
            nemesis.arm(start, "lose", run=run)
            outcome = attempt(partial(client.append, table_name, [row]))
        lost = nemesis.lost
        nemesis.disarm()  # what the writer did not call is not lost later, when it is judged
        what = f"a run of {run} lost answer(s) from the writer's {start} on ({lost} lost before it stopped calling)"
        schedule.append(f"row {row['id']}: {what}; the step {'raised' if outcome.error else 'returned'}")
        _no_lost_version(ONCE, ref_admin, suite_storage, info, what, transcript)
        adding, held = _adding(ref_admin, suite_storage, info, row)
        if len(adding) > 1 or held > 1:
            raise Violation(
                ONCE,
                f"{what}: versions {adding} each add the writer's row (the latest version holds it {held} time(s)):"
                " the writer committed its change again; an answer it never got said nothing about its proposal",
            )
        if start != "mark_published":
            _reported_where_added(outcome, adding, what)
    _keeps_working(ONCE, client, suite_client, ref_admin, table_name, "after every run of lost answers")


def _private_catalog(
    lakecert: RunContext, name: str, kind: type[ReferenceCatalog] = ReferenceCatalog
) -> ReferenceCatalog:
    """A reference catalog of this check's own, on its own database: restarting it disturbs no other check."""
    folder = lakecert.env.workdir / "nemesis"
    folder.mkdir(exist_ok=True)
    return kind(folder / f"{name}.sqlite", lakecert.env.warehouse_uri, lakecert.env.storage, durable=False)


class _CappedCatalog(ReferenceCatalog):
    """The reference catalog holding at most two unpublished commits per table: a third proposal is
    refused with ``CommitRejected`` (a cap the RFC's "Commit Protocol" allows a catalog)."""

    LIMITS = replace(ReferenceCatalog.LIMITS, unpublished=2)


@pytest.mark.req("WRT-NO-FILESYSTEM-COMMIT")
def test_a_refused_proposal_is_never_committed_to_the_log(
    lakecert: RunContext, bind: Bind, storage: Storage, table_name: str
) -> None:
    # The writer may raise, or publish and propose again; it must never commit v3 itself by writing
    # _delta_log/3.json (a fall-back to a filesystem commit when the catalog says no).
    capped = _private_catalog(lakecert, table_name, _CappedCatalog)
    try:
        counted = NemesisCatalog(capped)  # unarmed: it only tells whether the client calls this catalog
        try:
            client = bind(counted)
        except NotSupported as e:  # before the client did anything: nothing to verify
            not_applicable(f"the client cannot be bound to a catalog of the check's own, capped: {e}")
        _start(client, counted, table_name, A, B)  # v1 and v2: the cap is reached
        outcome = attempt(lambda: client.append(table_name, [C]))
        info = capped.resolve(table_name)
        latest = capped.get_commits(info.table_id).latest_version
        published = sorted(f.version for f in log_files(storage, info.location) if f.kind == "delta")
        beyond = [v for v in published if v > latest]
        if beyond:
            raise Violation(
                "WRT-NO-FILESYSTEM-COMMIT",
                f"the catalog refused the proposal of v3 (at most 2 unpublished commits) and the append"
                f" {'raised' if outcome.error else f'reported v{outcome.value}'}, yet _delta_log holds"
                f" v{beyond} above the catalog's latest v{latest}: a writer commits through the catalog only,"
                " never by writing the log itself",
            )
    finally:
        capped.close()


@pytest.fixture
def restartable(lakecert: RunContext, transcript: Transcript, table_name: str) -> Iterator[list[ReferenceCatalog]]:
    """[the private catalog as it runs now]; the nemesis replaces it at a restart."""
    current = [_private_catalog(lakecert, table_name)]
    yield current
    current[0].close()


@pytest.mark.req("WRT-CATALOG-RESTART")
def test_writer_keeps_working_across_a_catalog_restart(
    lakecert: RunContext,
    bind: Bind,
    restartable: list[ReferenceCatalog],
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
) -> None:
    def restart() -> Catalog:
        restartable[0].close()
        restartable[0] = _private_catalog(lakecert, table_name)
        return RecordingCatalog(restartable[0], transcript)

    nemesis = NemesisCatalog(RecordingCatalog(restartable[0], transcript), restart=restart)
    transcript.notes["nemesis"] = nemesis.fired
    try:
        client = bind(nemesis)
    except NotSupported as e:  # before the client did anything: nothing to verify
        not_applicable(f"the client cannot be bound to a catalog of the check's own, which it restarts: {e}")
    _start(client, nemesis, table_name, A)
    nemesis.arm("commit", "restart")
    outcome = attempt(lambda: client.append(table_name, [B]))
    admin = restartable[0]
    reader = ReferenceClient(RecordingCatalog(admin, transcript, actor="suite"), suite_storage, seed=0)
    what = "the catalog ratified v2, then restarted before its answer reached the writer"
    _judge_change(RESTART, outcome, reader, admin, suite_storage, table_name, what, transcript)
    _keeps_working(RESTART, client, reader, admin, table_name, what)


def _crashed(outcome: Attempt[int]) -> None:
    """The nemesis crashed the client: the step raised (the crash, as the recorder passes it on)."""
    if outcome.error is None:
        raise PremiseBroken("the nemesis crashed the client, yet its append returned: the crash did not take")


def _taken_over(
    fresh: RecordingClient, table_name: str, what: str, was: tuple[int, list[dict[str, object]]], told: str
) -> None:
    """The writer that takes over after a crash reads the table as it ``was`` (version, rows), commits
    the next version and publishes."""
    seen = attempt(lambda: fresh.read(table_name))
    if seen.error is not None or seen.value is None or (seen.value.version, seen.value.rows) != was:
        shown = seen.error or (seen.value and (seen.value.version, seen.value.rows))
        raise Violation(CRASH, f"{what}: its read gave {shown!r}; {told}")
    written = attempt(lambda: fresh.append(table_name, [C]))
    if written.error is not None or written.value != was[0] + 1:
        raise Violation(CRASH, f"{what}: its append gave {written.error or written.value!r}, not v{was[0] + 1}")
    published = attempt(lambda: fresh.publish(table_name))
    if published.error is not None:
        raise Violation(CRASH, f"{what}: its publish raised {type(published.error).__name__}: {published.error}")


def _published_as_ratified(
    admin: ReferenceCatalog, storage: Storage, transcript: Transcript, table_name: str, upto: int, what: str
) -> None:
    """v1..``upto`` are in ``_delta_log`` as the catalog ratified them (``same_actions``)."""
    info = admin.resolve(table_name)
    ratified = ratified_content(transcript, storage, info.table_id)
    for version in range(1, upto + 1):
        uri = delta_uri(info.location, version)
        if not storage.exists(uri) or not same_actions(storage.get(uri), ratified.get(version)):
            raise Violation(CRASH, f"{what}: after its publish, _delta_log's v{version} is not the ratified v{version}")


@pytest.mark.req("WRT-CRASH-RECOVERY")
def test_crash_before_proposing_leaves_an_ignored_orphan(
    bind: Bind,
    nemesis: NemesisCatalog,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
) -> None:
    crashed = bind(nemesis)
    _start(crashed, nemesis, table_name, A)
    with premise("the writer under test publishing v1"):
        crashed.publish(table_name)
    nemesis.arm("commit", "crash_before")
    _crashed(attempt(lambda: crashed.append(table_name, [B])))
    if suite_storage.exists(delta_uri(ref_admin.resolve(table_name).location, 2)):
        # The crash left what only a ratified commit may leave: another rule's fault, not recovery's.
        raise PremiseBroken(
            "the writer under test wrote _delta_log's v2 before proposing it (WRT-NO-FILESYSTEM-COMMIT, judged"
            " by that rule's checks): a crash before proposing then leaves a published file no catalog ratified"
        )
    what = "a writer crashed after staging v2 and before proposing it; a new writer took over"
    _taken_over(bind(nemesis), table_name, what, (1, [A]), "the table is v1 with one row (no orphan)")
    _published_as_ratified(ref_admin, suite_storage, transcript, table_name, 2, what)
    rows = suite_client.read(table_name).rows
    if rows != [A, C]:
        raise Violation(CRASH, f"{what}: the table reads {rows}; the crashed append's row must not be in it")


@pytest.mark.req("WRT-CRASH-RECOVERY")
def test_crash_after_ratification_is_published_by_the_next_writer(
    bind: Bind,
    nemesis: NemesisCatalog,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
) -> None:
    crashed = bind(nemesis)
    _start(crashed, nemesis, table_name, A)
    with premise("the writer under test publishing v1"):
        crashed.publish(table_name)
    nemesis.arm("commit", "crash_after")
    _crashed(attempt(lambda: crashed.append(table_name, [B])))
    what = "a writer crashed after v2 was ratified and before it published; a new writer took over"
    _taken_over(bind(nemesis), table_name, what, (2, [A, B]), "the table is v2 with both rows")
    _no_lost_version(CRASH, ref_admin, suite_storage, ref_admin.resolve(table_name), what, transcript)
    _published_as_ratified(ref_admin, suite_storage, transcript, table_name, 3, what)
    rows = suite_client.read(table_name).rows
    if rows != [A, B, C]:
        raise Violation(CRASH, f"{what}: the table reads {rows}; every ratified row must be in it once")


def _ict(admin: Catalog, storage: Storage, info: TableInfo, version: int) -> int:
    (commit,) = [c for c in admin.get_commits(info.table_id, version, version).commits if c.version == version]
    content = commit.inline_content if commit.staged_uri is None else storage.get(commit.staged_uri)
    assert content is not None, f"v{version} has neither a staged file nor inline content"
    ict = (commit_info(decode_commit(content)) or {}).get("inCommitTimestamp")
    assert isinstance(ict, int) and not isinstance(ict, bool), f"v{version} has inCommitTimestamp={ict!r}"
    return ict


@pytest.mark.req("WRT-ICT-SKEW")
def test_in_commit_timestamps_pass_a_skewed_peer_in_any_time_zone(
    lakecert: RunContext,
    bind: Bind,
    nemesis: NemesisCatalog,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
    seed: int,
) -> None:
    client = bind(nemesis)
    _start(client, nemesis, table_name, A)  # v1, in the machine's zone
    # v2 by a peer on time; v3 by the writer in a zone ten hours west of UTC (POSIX TZ, no tz database).
    suite_client.append(table_name, [{"id": 20, "value": "peer"}])
    with in_time_zone(FAR_WEST), premise(f"the writer under test appending v3 under TZ={FAR_WEST}"):
        client.append(table_name, [B])
    # v4 by a peer whose clock is more than a year ahead; v5 by the writer nine hours east of UTC.
    ahead = ReferenceClient(
        RecordingCatalog(lakecert.reference_catalog(), transcript, actor="suite"),
        suite_storage,
        seed=seed + 1,
        clock=lambda: wall_clock_ms() + FAR_AHEAD_MS,
    )
    ahead.append(table_name, [{"id": 40, "value": "ahead"}])
    with in_time_zone(FAR_EAST), premise(f"the writer under test appending v5 under TZ={FAR_EAST}"):
        client.append(table_name, [C])
    info = ref_admin.resolve(table_name)
    steps = {
        3: f"the writer's v3, written under TZ={FAR_WEST} after a peer's v2",
        5: f"the writer's v5, written under TZ={FAR_EAST} after a peer stamped v4 {FAR_AHEAD_MS // DAY_MS} days ahead",
    }
    for version, step in steps.items():
        previous, ict = _ict(ref_admin, suite_storage, info, version - 1), _ict(ref_admin, suite_storage, info, version)
        assert ict > previous, (
            f"{step}: its inCommitTimestamp {when(ict)} is not after v{version - 1}'s {when(previous)}; each"
            " commit's must be later than the one before, whatever the writer's clock or time zone"
        )
    transcript.notes["time_zones"] = {"v3": FAR_WEST, "v5": FAR_EAST, "peer_ahead_ms": FAR_AHEAD_MS}


# Where a publication can be cut short: after copying some of the ratified commits (1 of 3, 2 of 3), after
# copying all of them and before the mark. ``None`` copies: the crash falls on the catalog call.
PUBLICATION_CRASHES = (
    (1, "after copying v1 of v1-v3"),
    (2, "after copying v1-v2 of v1-v3"),
    (None, "after copying v1-v3, before the mark"),
)
# Who publishes next: a new writer (a new process) at once, a new writer after an append of its own (so
# that it has something new to copy), or the crashed writer itself, restarted in place with its storage
# back (a client object that keeps state across a failed publish).
NEXT_PUBLISHERS = ("new", "new-appends-first", "same")


@pytest.mark.req("WRT-CRASH-RECOVERY")
def test_crash_anywhere_in_a_publication_is_finished_by_the_next_publisher(
    bind: Bind,
    ref_catalog: RecordingCatalog,
    ref_admin: ReferenceCatalog,
    storage: Storage,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
) -> None:
    """A publication is a sequence: copy v1, copy v2, ..., then tell the catalog (RFC "Publishing
    Commits"). A writer crashes at every point of it, each time on a table of its own: after some
    copies, after all of them, before the mark. The next publisher (``NEXT_PUBLISHERS``) then
    publishes; after it every ratified commit must be in ``_delta_log`` as ratified AND the catalog's
    mark must be where the published files are (the catalog holds none of them as unpublished). Files
    found already copied are no reason to skip the mark: the catalog never heard of them, and a
    catalog with a cap on unpublished commits then refuses every write."""
    schedule: list[str] = []
    transcript.notes["schedule"] = schedule
    judged = 0
    for point, ((copies, where), who) in enumerate(itertools.product(PUBLICATION_CRASHES, NEXT_PUBLISHERS)):
        name = f"{table_name}_{point}"
        # The crashed writer has a nemesis and a storage of its own: once crashed, it does nothing more.
        crashing = CrashingStorage(storage)
        nemesis = NemesisCatalog(ref_catalog)
        crashed = bind(nemesis, crashing)
        _start(crashed, nemesis, name, A, B, C)  # v1-v3, ratified and unpublished
        if copies is None:
            nemesis.arm("mark_published", "crash_before")
        else:
            crashing.crash_after_copies(copies)
        crash = attempt(partial(crashed.publish, name))
        schedule.append(f"table {name}: v1-v3 by the writer; it crashed {where}")
        if crash.error is None:
            # The crash point was never reached (a publisher that copies otherwise than one file per
            # commit, or that never marks): nothing at this point to judge.
            schedule.append(f"table {name}: the publish returned: the crash {where} did not take")
            continue
        judged += 1
        latest = 4 if who == "new-appends-first" else 3
        what = (
            f"a writer crashed {where} while publishing; then "
            + {
                "new": "a new writer published",
                "new-appends-first": "a new writer appended v4 and published",
                "same": "the same writer, restarted in place, published again",
            }[who]
        )
        schedule.append(f"table {name}: then {who} publishes")
        if who == "same":
            crashing.revive()
            nxt = crashed
        else:
            nxt = bind(ref_catalog)
        if who == "new-appends-first":
            with premise(f"the next writer under test appending to {name} after a crashed publication"):
                nxt.append(name, [{"id": 4, "value": "d"}])
        done = attempt(partial(nxt.publish, name))
        if done.error is not None:
            raise Violation(CRASH, f"{what}: its publish raised {type(done.error).__name__}: {done.error}")
        # Every ratified commit copied, as ratified ...
        _published_as_ratified(ref_admin, suite_storage, transcript, name, latest, what)
        # ... and the catalog told: a version it still holds as unpublished, with its file in _delta_log,
        # is a publication the catalog never heard of (the reference catalog drops what it is told of).
        unmarked = sorted(c.version for c in ref_admin.get_commits(ref_admin.resolve(name).table_id).commits)
        if unmarked:
            raise Violation(
                CRASH,
                f"{what}: _delta_log holds v1-v{latest}, yet the catalog still holds v{unmarked[0]}-v{unmarked[-1]}"
                " as unpublished: the next publication must leave the catalog's mark where the published files"
                " are, whoever copied them",
            )
    if judged == 0:
        raise PremiseBroken(f"no crash in a publication took (the writer's publish returned each time): {schedule}")
