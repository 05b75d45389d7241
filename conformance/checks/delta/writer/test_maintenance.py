"""Checkpoints, log compaction and the catalog's policy (RFC "Maintenance Operations ...")."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from functools import partial

import pytest

from conformance.checks.delta.builders import premise
from conformance.checks.delta.evidence import (
    attempt,
    client_deletes,
    client_writes,
    proposals,
    speaks_only_uc_api,
    table_commits,
)
from conformance.checks.delta.writer.conftest import Bind
from conformance.checks.delta.writer.maintenance_content import (
    checkpoint_fault,
    compaction_fault,
    current_commits,
    published_commits,
)
from conformance.contract.delta import MaintenancePolicy, NotSupported, Storage
from conformance.nemesis import NemesisCatalog
from conformance.observe.recording import RecordingClient
from conformance.observe.transcript import Transcript
from conformance.oracle.names import compaction_uri, parse, published_uri
from conformance.report.outcomes import Violation, not_applicable
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient


def _half_published(client: RecordingClient, name: str) -> None:
    """v1-v2 published, v3-v4 ratified but not published."""
    client.create_table(name)
    client.append(name, [{"id": 1, "value": "a"}])
    client.append(name, [{"id": 2, "value": "b"}])
    client.publish(name)
    client.append(name, [{"id": 3, "value": "c"}])
    client.append(name, [{"id": 4, "value": "d"}])


def _published_by(transcript: Transcript, location: str, version: int, seq: int) -> bool:
    target = published_uri(location, version)
    return version == 0 or any(
        e.args["uri"] == target and e.seq < seq
        for e in transcript.events(op="put", ok=True)
        if e.actor in ("storage", "suite")
    )


def _judge_publication_order(transcript: Transcript, location: str, call: str) -> None:
    """A maintenance call may publish (a checkpoint of v needs ``<v>.json``), but whatever it publishes
    keeps RFC "Publishing Commits": each ``<v>.json`` the client writes comes after ``<v-1>.json`` was
    written, by anyone. Judged before whether the maintenance file's versions were published, so that a
    call that publishes out of order is charged to the order rule, not to the maintenance one."""
    written: set[int] = set()
    for e in transcript.events(op="put", ok=True):
        f = parse(e.args["uri"])
        if f is None or f.kind != "delta" or not e.args["uri"].startswith(f"{location}/_delta_log/"):
            continue
        if e.actor == "storage" and f.version > 0 and f.version - 1 not in written:
            raise Violation(
                "WRT-PUBLISH-ORDER",
                f"{call}: the client wrote _delta_log/{f.version:020d}.json while _delta_log/"
                f"{f.version - 1:020d}.json had never been written (versions published so far: {sorted(written)});"
                f" the model allows v{f.version} only after v{f.version - 1}",
            )
        if e.actor in ("storage", "suite"):
            written.add(f.version)


@pytest.mark.req("WRT-CHECKPOINT-PUBLISHED", "WRT-PUBLISH-ORDER")
def test_checkpoints_only_published_versions(
    client: RecordingClient, ref_admin: ReferenceCatalog, transcript: Transcript, table_name: str
) -> None:
    """v3-v4 ratified, unpublished: a checkpoint is of v2 at most, unless the call publishes first, in
    order (a writer that publishes only the version it checkpoints leaves a gap below it)."""
    _half_published(client, table_name)
    client.checkpoint(table_name)
    location = ref_admin.resolve(table_name).location
    _judge_publication_order(transcript, location, "checkpoint with v3-v4 unpublished")
    written = client_writes(transcript, "checkpoint")
    if not written:
        not_applicable("the client wrote no checkpoint (verified: no checkpoint file was written)")
    for event, f in written:
        if not _published_by(transcript, location, f.version, event.seq):
            raise Violation(
                "WRT-CHECKPOINT-PUBLISHED",
                f"checkpoint of v{f.version} written while {published_uri(location, f.version)} did not exist",
            )


def _deleted_by(transcript: Transcript, call: Callable[[], object]) -> list[str]:
    """Run one maintenance call (whether it may fail is judged elsewhere); the files the client
    deleted meanwhile."""
    start = len(transcript.events())
    attempt(call)
    return [e.args["uri"] for e in transcript.events()[start:] if e.actor == "storage" and e.op == "delete" and e.ok]


def _read_ratified(transcript: Transcript, storage: Storage, table_id: str, known: dict[int, bytes]) -> None:
    """Add to ``known`` the bytes of the commits ratified since it was last filled. Read before each
    maintenance call: a checkpoint that also tidies the staged commits it covers removes what the
    content judgement needs; whether it was allowed to is WRT-MAINTENANCE-POLICY's matter (judged with
    every call's deletions by test_maintenance_obeys_every_policy_combination), not this rule's."""
    for e in proposals(transcript, table_id, ok=True):
        if e.args["version"] not in known:
            inline = e.args["inline_content"]
            known[e.args["version"]] = inline if inline is not None else storage.get(e.args["staged_uri"])


@pytest.mark.req("WRT-CHECKPOINT-PUBLISHED")
def test_checkpoint_holds_the_state_of_its_version(
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    transcript: Transcript,
    suite_storage: Storage,
    table_name: str,
) -> None:
    """A checkpoint is taken while ratified, unpublished commits sit above the newest published
    version, adding files and removing files added before them (published ones and unpublished
    ones). Its content must be the replay of commits 0..v of its own version v (PROTOCOL
    "Checkpoints"): one that holds the changes of later versions is, in substance, a checkpoint of
    unpublished versions under a published version's name (RFC "Maintenance Operations on
    Catalog-managed Tables"), and a reader that starts from it sees those changes at v."""
    with premise("the writer under test committing, publishing and leaving commits unpublished"):
        client.create_table(table_name)
        for i in (1, 2, 3):
            client.append(table_name, [{"id": i, "value": "x"}])
        client.publish(table_name)  # v0-v3 published
        client.delete(table_name, [1])  # v4: removes a published file
        client.append(table_name, [{"id": 5, "value": "x"}])  # v5
    known: dict[int, bytes] = {}
    _read_ratified(transcript, suite_storage, ref_admin.resolve(table_name).table_id, known)
    attempt(lambda: client.checkpoint(table_name))  # of v3 at most
    with premise("the writer under test publishing and committing again"):
        client.publish(table_name)  # v0-v5 published
        client.append(table_name, [{"id": 6, "value": "x"}])  # v6
        client.delete(table_name, [2, 5])  # v7: removes of files published before and after the last checkpoint
        client.append(table_name, [{"id": 8, "value": "x"}])  # v8
        client.delete(table_name, [6])  # v9: removes an unpublished file
    info = ref_admin.resolve(table_name)
    _read_ratified(transcript, suite_storage, info.table_id, known)
    attempt(lambda: client.checkpoint(table_name))  # of v5 at most
    commits = table_commits(suite_storage, info.location, known)
    written = client_writes(transcript, "checkpoint")
    if not written:
        not_applicable("the client wrote no checkpoint (verified: no checkpoint file was written)")
    # V2 checkpoints may keep their files in sidecars: not read here. A multi-part checkpoint is
    # judged only whole (each part names the number of parts).
    uris: dict[int, list[str]] = {}
    for _, f in written:
        if f.flavour != "v2" and f.uri not in uris.get(f.version, []):
            uris.setdefault(f.version, []).append(f.uri)
    parts = {f.version: f.parts or 1 for _, f in written if f.flavour != "v2"}
    whole = {v: u for v, u in uris.items() if len(u) >= parts[v]}
    if not whole:
        not_applicable("the client wrote only V2 or incomplete multi-part checkpoints, whose content is not read here")
    for version, files in sorted(whole.items()):
        if version not in commits:
            continue  # a checkpoint of a version never ratified: test_checkpoints_only_published_versions
        why = checkpoint_fault(suite_storage, files, version, commits)
        assert why is None, why


@pytest.mark.req("WRT-COMPACTION-PUBLISHED", "WRT-PUBLISH-ORDER")
def test_compacts_only_published_versions(
    client: RecordingClient, ref_admin: ReferenceCatalog, transcript: Transcript, table_name: str
) -> None:
    _half_published(client, table_name)
    # (2, 3): only the range's last version is unpublished (an exclusive end would miss it).
    for start, end in ((1, 4), (2, 3), (1, 2)):
        try:
            client.compact_log(table_name, start, end)
        except NotSupported:
            assert not client_writes(transcript, "compaction"), "compaction refused, yet a file was written"
            not_applicable("the client does not write log compaction files (verified)")
    location = ref_admin.resolve(table_name).location
    _judge_publication_order(transcript, location, "compact_log (1, 4), (2, 3), (1, 2) with v3-v4 unpublished")
    for event, f in client_writes(transcript, "compaction"):
        missing = [
            v
            for v in range(f.version, (f.end_version or f.version) + 1)
            if not _published_by(transcript, location, v, event.seq)
        ]
        if missing:
            raise Violation(
                "WRT-COMPACTION-PUBLISHED",
                f"compaction {f.version}-{f.end_version} covers unpublished versions {missing}",
            )


@pytest.mark.req("WRT-COMPACTION-CONTENT")
def test_compaction_holds_exactly_its_range(
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    suite_storage: Storage,
    table_name: str,
    seed: int,
) -> None:
    # v1-v4 published; v2 removes v1's file. A compaction of (1, 3) must hold v1's file as removed
    # and v3's as added, and stop at v3: v4's file in it, or either action missing, changes the
    # table for every reader that uses it.
    client.create_table(table_name)
    client.append(table_name, [{"id": 1, "value": "a"}])
    client.delete(table_name, [1])
    client.append(table_name, [{"id": 3, "value": "c"}])
    client.append(table_name, [{"id": 4, "value": "d"}])
    client.publish(table_name)
    # A checkpoint of v4 (declining is allowed): the range (5, ...) then starts just after it.
    attempt(lambda: client.checkpoint(table_name))
    # v5-v9 add a file each, v10 removes v9's and v11 removes v3's (added before the checkpoint and
    # before every range that follows): a compaction of (5, 11) replayed in the versions' text order
    # ("10", "11" before "5".."9") brings v9's file back as added. The suite writes these (cheaply);
    # the writer under test only has to read and reconcile them.
    with premise("the suite's writer appending v5-v9, deleting v9's row at v10, v3's at v11 and publishing"):
        for i in range(5, 10):
            suite_client.append(table_name, [{"id": i, "value": "x"}])
        suite_client.delete(table_name, [9])
        suite_client.delete(table_name, [3])
        suite_client.publish(table_name)
    location = ref_admin.resolve(table_name).location
    # Every kind of start, each range holding a remove of a file added before it (a writer that keeps
    # only the removes of files its range added, or none, shows on every one): from v1; in the middle,
    # at the delete of v1's file (2, 3); just after the checkpoint (5, 11); and at the end, removes only
    # (10, 11), one of v9's file (added inside an earlier range) and one of v3's; plus one drawn start.
    # And from v0, the commit that holds the table's protocol and metaData: a compaction keeps the
    # range's last ones (the ranges above hold none, and their compactions must hold none either).
    middle = random.Random(seed).randint(3, 9)
    ranges = ((0, 2), (1, 3), (2, 3), (5, 11), (10, 11), (middle, 11))
    for start, end in ranges:
        try:
            client.compact_log(table_name, start, end)
        except NotSupported:
            not_applicable("the client does not write log compaction files")
    written = [(start, end) for start, end in ranges if suite_storage.exists(compaction_uri(location, start, end))]
    if not written:
        not_applicable(f"the client wrote no compaction of any of {ranges} (declining is allowed)")
    commits = published_commits(suite_storage, location, 0, max(end for _, end in written))
    for start, end in written:
        why = compaction_fault(suite_storage, location, start, end, commits)
        assert why is None, why
    _compaction_over_lost_marks(client, ref_admin, suite_client, suite_storage, table_name)


def _compaction_over_lost_marks(
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    suite_client: ReferenceClient,
    suite_storage: Storage,
    table_name: str,
) -> None:
    """v12-v13 ratified and published without their marks (the catalog still returns them, RFC
    "Reading Catalog-managed Tables"), v12's published file not the ratified commit (a rejected
    attempt's file). For a version the catalog returns, its commit is authoritative: a compaction over
    v12 holds the catalog's v12, and one built from the published files holds the other file's."""
    with premise("the suite's writer appending v12-v13 and writing their files without marking them"):
        suite_client.append(table_name, [{"id": 12, "value": "x"}])
        suite_client.append(table_name, [{"id": 13, "value": "x"}])
        info = ref_admin.resolve(table_name)
        ratified = {c.version: c for c in ref_admin.get_commits(info.table_id).commits}
        for v in (12, 13):
            staged = ratified[v].staged_uri
            content = ratified[v].inline_content if staged is None else suite_storage.get(staged)
            assert content is not None, f"v{v} has neither a staged file nor inline content"
            if v == 12:  # the rejected attempt named its data file otherwise
                content = content.replace(b'"path":"', b'"path":"rejected-')
                assert b"rejected-" in content, "the suite's v12 holds no add"
            suite_storage.put(published_uri(info.location, v), content, if_absent=True)
    # v12 inside the range, at its start and at its end.
    ranges = ((11, 13), (12, 13), (11, 12))
    for start, end in ranges:
        attempt(partial(client.compact_log, table_name, start, end))
    commits = current_commits(ref_admin, suite_storage, info)
    for start, end in ranges:
        if suite_storage.exists(compaction_uri(info.location, start, end)):
            why = compaction_fault(suite_storage, info.location, start, end, commits)
            assert why is None, f"{why} (v12's published file is not the commit the catalog returns for v12)"


@pytest.mark.req("WRT-MAINTENANCE-POLICY")
def test_forbidden_maintenance_is_not_run(
    client: RecordingClient, ref_admin: ReferenceCatalog, transcript: Transcript, table_name: str
) -> None:
    client.create_table(table_name)
    for i in range(1, 4):
        client.append(table_name, [{"id": i, "value": "x"}])
    client.publish(table_name)
    table_id = ref_admin.resolve(table_name).table_id
    ref_admin.set_maintenance_policy(table_id, MaintenancePolicy(allowed=frozenset()))
    transcript.notes["schedule"] = [
        "catalog policy: no maintenance allowed",
        "client: checkpoint, compact_log(1,2), cleanup(3)",
    ]
    attempt(lambda: client.checkpoint(table_name))
    attempt(lambda: client.compact_log(table_name, 1, 2))
    attempt(lambda: client.cleanup(table_name, 3))
    maint = [f.uri for _, f in client_writes(transcript) if f.kind in ("checkpoint", "compaction")]
    deleted = client_deletes(transcript)
    if (maint or deleted) and speaks_only_uc_api(transcript):
        # The rule binds a writer to the catalog's policies; a policy its catalog API cannot carry
        # never reached it. Unity Catalog's API has none (its ManagedTablesSpec: no per-table policy
        # or API), and the policy set here is lakecert's extension, which this client never asked for.
        not_applicable(
            "the client reaches its catalog over Unity Catalog's API, which carries no maintenance policy "
            "(verified: every catalog request it made is UC's, none asked for lakecert's policy extension)"
        )
    assert not maint, f"maintenance files written against the catalog's policy: {maint}"
    assert not deleted, f"cleanup deleted files against the catalog's policy: {deleted}"


@pytest.mark.req("WRT-MAINTENANCE-POLICY")
def test_a_lost_policy_answer_allows_no_maintenance(
    bind: Bind, nemesis: NemesisCatalog, ref_admin: ReferenceCatalog, transcript: Transcript, table_name: str
) -> None:
    # A writer consults the policy before every maintenance job (RFC "Maintenance Operations"); when
    # the answer to that lookup is lost, it knows nothing, and running the job anyway runs what the
    # catalog may forbid. Every maintenance call meets a lost policy answer on a table whose policy
    # forbids everything: asking again, or not running, are both right; running is not.
    client = bind(nemesis)
    client.create_table(table_name)
    for i in range(1, 4):
        client.append(table_name, [{"id": i, "value": "x"}])
    client.publish(table_name)
    ref_admin.set_maintenance_policy(ref_admin.resolve(table_name).table_id, MaintenancePolicy(allowed=frozenset()))
    transcript.notes["schedule"] = [
        "catalog policy: no maintenance allowed",
        "client: checkpoint, compact_log(1,2), cleanup(3), the answer to each one's first policy lookup lost",
    ]
    calls: tuple[Callable[[], object], ...] = (
        partial(client.checkpoint, table_name),
        partial(client.compact_log, table_name, 1, 2),
        partial(client.cleanup, table_name, 3),
    )
    for call in calls:
        nemesis.arm("maintenance_policy", "lose")
        attempt(call)
        nemesis.disarm()  # a writer that did not ask loses nothing later
    maint = [f.uri for _, f in client_writes(transcript) if f.kind in ("checkpoint", "compaction")]
    deleted = client_deletes(transcript)
    if (maint or deleted) and speaks_only_uc_api(transcript):
        not_applicable(  # as for the other policy checks: UC's API carries no policy to lose an answer of
            "the client reaches its catalog over Unity Catalog's API, which carries no maintenance policy "
            "(verified: every catalog request it made is UC's, none asked for lakecert's policy extension)"
        )
    assert not maint, f"maintenance files written after a lost policy answer, under a policy forbidding them: {maint}"
    assert not deleted, f"files deleted after a lost policy answer, under a policy forbidding cleanup: {deleted}"


# The dimensions a policy can forbid that the contract can drive or observe: checkpoints, log
# compaction and metadata cleanup are called; version checksum files are seen when a client writes
# them (with a commit or a checkpoint). VACUUM has no call in the contract.
POLICY_DIMENSIONS = ("checkpoint", "log_compaction", "checksum", "metadata_cleanup")
_WRITTEN_KIND = {"checkpoint": "checkpoint", "compaction": "log_compaction", "checksum": "checksum"}


MAINTENANCE_CALLS = ("checkpoint", "compact_log", "cleanup")
BARE_LATEST = 11  # the commits of each round's table without a checkpoint: past one checkpoint interval


def _maintenance_calls(
    client: RecordingClient, transcript: Transcript, name: str, latest: int, order: list[str]
) -> dict[str, list[str]]:
    """Every maintenance call of the contract on table ``name`` at ``latest``, in ``order``: the files
    each deleted. Compaction covers the three commits below the latest, cleanup cuts off at the latest."""
    calls: dict[str, Callable[[], object]] = {
        "checkpoint": partial(client.checkpoint, name),
        "compact_log": partial(client.compact_log, name, max(1, latest - 3), latest - 1),
        "cleanup": partial(client.cleanup, name, latest),
    }
    return {f"{op} of {name}": _deleted_by(transcript, calls[op]) for op in order}


@pytest.mark.req("WRT-MAINTENANCE-POLICY")
def test_maintenance_obeys_every_policy_combination(
    client: RecordingClient, ref_admin: ReferenceCatalog, transcript: Transcript, table_name: str, seed: int
) -> None:
    """Every combination of the four policy dimensions on one table whose policy changes between
    rounds (a client that asked once and kept the answer is caught when the policy narrows), vacuum
    allowed every other round: each round appends, deletes the previous round's row, publishes,
    checkpoints, compacts and cleans up to its own commit, and nothing the round's policy forbids may
    be written or deleted (RFC "Maintenance Operations on Catalog-managed
    Tables": the policies cover checkpoints, log compaction, checksum files and metadata cleanup).

    The running table has a checkpoint from round 1 on, so every call there finds its prerequisites
    made, and it is published at odd versions only. Each round therefore also runs every maintenance
    call on a table of its own that has never been checkpointed (eleven commits, published at v10 and
    v11), in an order the seed draws per round: a call that makes what it needs first (a cleanup or a
    compaction that writes a checkpoint to work from) does so only there, and a writer that
    checkpoints on its own every ten commits does so there in every round. Whatever ANY call (a
    commit, a publication or a maintenance call) writes in ``_delta_log``, and whatever a maintenance
    call deletes there, is judged against the policy, not only what the call named after the
    forbidden operation does."""
    combos = [
        frozenset(op for op, on in zip(POLICY_DIMENSIONS, bits, strict=True) if on)
        for bits in itertools.product((True, False), repeat=len(POLICY_DIMENSIONS))
    ]
    # Everything allowed first (what a client that asks once and keeps the answer would keep), then
    # the other fifteen in the seed's order.
    rng = random.Random(seed)
    combos = [combos[0], *rng.sample(combos[1:], len(combos) - 1)]
    with premise("the writer under test creating the table and publishing v1"):
        client.create_table(table_name)
        client.append(table_name, [{"id": 0, "value": "x"}])
        client.publish(table_name)
    table_id = ref_admin.resolve(table_name).table_id
    found: list[str] = []
    schedule: list[str] = []
    transcript.notes["schedule"] = schedule
    for i, allowed in enumerate(combos, start=1):
        # VACUUM has no call, but a cleanup that deletes the data files of removed rows runs it: every
        # other round forbids it, and each round deletes the previous round's row (a data file to vacuum).
        vacuum = i % 2 == 0
        policy = allowed | ({"vacuum"} if vacuum else set())
        bare = f"{table_name}_bare{i}"  # this round's table without a checkpoint
        with premise(f"the writer under test creating a table in round {i}"):
            client.create_table(bare)
        ref_admin.set_maintenance_policy(table_id, MaintenancePolicy(allowed=policy))
        ref_admin.set_maintenance_policy(ref_admin.resolve(bare).table_id, MaintenancePolicy(allowed=policy))
        order = rng.sample(MAINTENANCE_CALLS, len(MAINTENANCE_CALLS))
        schedule.append(
            f"round {i}: the policy allows {sorted(policy) or 'nothing'}; calls on {bare} (never checkpointed)"
            f" in the order {order}"
        )
        start = len(transcript.events())
        with premise(f"the writer under test committing, deleting and publishing in round {i}"):
            client.append(table_name, [{"id": i, "value": "x"}])
            latest = client.delete(table_name, [i - 1])
            client.publish(table_name)
            # Past v10, Delta's default checkpoint interval (delta.checkpointInterval), published at v10
            # itself: a writer that checkpoints every ten commits on its own does it here, asked or not.
            for row in range(1, BARE_LATEST + 1):
                client.append(bare, [{"id": row, "value": "x"}])
                if row % 10 == 0 or row == BARE_LATEST:
                    client.publish(bare)
        # What each maintenance call deleted: under a policy that forbids metadata cleanup no call may
        # delete a log or staged file (a checkpoint or a compaction that tidies what it covers runs
        # metadata cleanup); the cleanup call may delete nothing at all.
        deleted_by = _maintenance_calls(client, transcript, table_name, latest, list(MAINTENANCE_CALLS))
        deleted_by |= _maintenance_calls(client, transcript, bare, BARE_LATEST, order)  # to its last commit
        step = transcript.events()[start:]
        # Every maintenance file written in the round, whichever call (or commit) wrote it, by its kind.
        written = [
            (_WRITTEN_KIND[f.kind], f.uri)
            for e in step
            if e.actor == "storage"
            and e.op == "put"
            and e.ok
            and (f := parse(e.args["uri"]))
            and f.kind in _WRITTEN_KIND
        ]
        found += [
            f"round {i}: {op} file {'/'.join(uri.rsplit('/', 3)[-3:])} written"
            for op, uri in written
            if op not in allowed
        ]
        # Deletes during the maintenance calls only: a client may remove its own staged files as it publishes.
        if "metadata_cleanup" not in allowed:
            found += [
                f"round {i}: {call} deleted {sorted(u.rsplit('/', 1)[-1] for u in uris)} while the policy forbade"
                " metadata cleanup (deleting a log or staged file is metadata cleanup, whichever call does it)"
                for call, uris in deleted_by.items()
                if uris and (call.startswith("cleanup") or any("/_delta_log/" in u for u in uris))
            ]
        data = [u for uris in deleted_by.values() for u in uris if "/_delta_log/" not in u]
        if data and not vacuum:
            found.append(
                f"round {i}: maintenance deleted {len(data)} data files (a vacuum) while the policy forbade vacuum"
            )
        if found:
            break
    if found and speaks_only_uc_api(transcript):
        # As in test_forbidden_maintenance_is_not_run: UC's API carries no policy, so none reached it.
        not_applicable(
            "the client reaches its catalog over Unity Catalog's API, which carries no maintenance policy "
            "(verified: every catalog request it made is UC's, none asked for lakecert's policy extension)"
        )
    assert not found, f"maintenance the catalog's policy forbade: {found} (policies in order: {schedule})"
