"""Directed histories of the client under test, compared with the RFC model after every step.

Shared by ``writer/test_histories.py`` (maintenance under every policy, publication lag and order,
what ``_delta_log`` holds) and ``reader/test_histories.py`` (reads of readable versions and by
timestamp, staged files that were never ratified). Two tables, three clients under test each with
its own identity (``client_factory``), concurrent appends to one table and to two tables, deletes
that keep few rows alive (so that reads stay cheap on long histories), publication that lags,
checkpoints, log compaction and metadata cleanup under the policies the reference catalog is given
(``ref_admin``). One more client under test, when it can be bound so (``bind_shaped``), is bound
through lakecert's ``ShapedCatalog``: the answers it meets take every shape the RFC allows, and the
log names them.

A finding is charged to the rule it breaks when the check judges that rule; anything else it sees
(a writer fault in the reader check, a reader fault in the writer check) is a broken premise, left
to the checks of that rule.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial

from conformance.checks.delta.builders import premise
from conformance.checks.delta.evidence import EarlyPublications, misnamed_proposal, same_actions, speaks_only_uc_api
from conformance.checks.delta.writer.maintenance_content import compaction_fault, published_commits
from conformance.contract.delta import (
    Catalog,
    CatalogError,
    CommitConflict,
    MaintenancePolicy,
    NotSupported,
    Storage,
    TableInfo,
)
from conformance.model.catalog_managed import MAINTENANCE_OPS, LogEntry, TableModel, judge_log
from conformance.nemesis.shapes import ShapedCatalog
from conformance.observe.recording import RecordingCatalog, RecordingClient, TargetRaised
from conformance.observe.transcript import Event, Transcript
from conformance.oracle import checkpoint as oracle_checkpoint
from conformance.oracle import commits as oracle_commits
from conformance.oracle import names as oracle_names
from conformance.report.outcomes import PremiseBroken
from conformance.run_context import RunContext
from conformance.schedules.generated import HISTORY_ROUNDS, HistoryLog
from conformance.schedules.race import race
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta import actions as A
from reference_impl.delta.actions import InvalidCommitError
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.data_files import read_data_file, write_data_file
from reference_impl.delta.log_paths import parse_log_name, staged_dir

KEEP_ROWS = 6  # rows kept alive: older ones are deleted, so a read opens few data files
# The policy dimensions a client is driven through; checksum and vacuum stay allowed (the contract
# has no call for them).
POLICY_OPS = ("checkpoint", "log_compaction", "metadata_cleanup")
ALL_POLICIES = [
    frozenset(op for op, on in zip(POLICY_OPS, bits, strict=True) if on)
    for bits in itertools.product((True, False), repeat=len(POLICY_OPS))
]
# Appended values carry these texts in turn: raw UTF-8 of two, three and four bytes, and characters
# JSON escapes, right-to-left script, and " é" again decomposed (NFD: the same text, other code points).
# A data file's statistics (min/max) hold them inside the commit's JSON, so a writer that builds that
# JSON by hand or encodes it in anything but plain UTF-8 (a byte order mark, Latin-1, CESU-8), or a
# reader that decodes it as ASCII or normalises it, shows on every seed.
TEXTS = ("", " é", " 東京", " 𝄞", ' "q"', " back\\slash", " a/b", " שלום", " e\u0301")
GHOST_VALUE = "never-ratified"  # rows of staged files the suite leaves beside ratified ones
# Staged files of the suite sort before any a client names with a random UUID.
GHOST_UUIDS = ("00000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000001")
# An object store lists by key prefix, so a reader that looks a version's commit up by listing
# "_staged_commits/<v>." (not by the name the catalog gave) finds every unratified object whose key
# starts so. This suite's storage lists folders (a listing of "<v>." finds nothing), so the ghosts
# above never reach such a reader here; one stray object under "<v>./" does, on a folder listing and
# on a prefix listing alike (where "/" sorts before every UUID). Its key is no staged commit's name:
# a reader that takes the file the catalog named never opens it.
STRAY_NAME = "{version:020d}./" + GHOST_UUIDS[0] + ".json"
# How a delete's id set is drawn, in turn, so every history has each: the oldest alive ids (which span
# files and share the files of appends of several rows), the same with one id repeated, with an id the
# table never held, and both. A writer that plans a delete id by id removes a shared file once per id.
# "absent ids only" matches no row: a client may commit it (a version that changes no file, its
# commitInfo and txnId like any other's) or not commit at all.
DELETE_SHAPES = ("plain", "repeated id", "absent id", "repeated and absent ids", "absent ids only")
ABSENT_ID = 0  # ids start at 1: the table never holds id 0


def history_rounds(
    lakecert: RunContext,
    clients: Sequence[RecordingClient],
    ref_admin: ReferenceCatalog,
    storage: Storage,
    transcript: Transcript,
    seed: int,
    rules: frozenset[str],
    shaped: Shaped | None = None,
) -> Iterator[tuple[int, ClientHistory]]:
    """One history per round of the run's budget (``HISTORY_ROUNDS``), each with its own seed, log
    and random source (``ClientHistory.rng``), all over the same clients under test (and the one bound
    through ``shaped``, if any, as the last of them)."""
    suite = RecordingCatalog(ref_admin, transcript, actor="suite")
    everyone = [*clients, shaped.client] if shaped is not None else list(clients)
    for round_no in range(HISTORY_ROUNDS[lakecert.config.settings.delta.budget]):
        log = HistoryLog(transcript, seed + round_no, lakecert.config.seed)
        rng = random.Random(seed + round_no)
        h = ClientHistory(everyone, ref_admin, suite, storage, transcript, log, rng, rules, shaped)
        if shaped is None:
            h.say("no client bound through lakecert's shaped catalog: the history meets the reference's answers only")
        yield round_no, h


def catalog_managed_protocol(protocol: dict[str, object]) -> bool:
    """Whether a protocol action keeps the table catalog-managed: reader 3, writer 7, catalogManaged
    in both feature lists."""
    readers, writers = protocol.get("readerFeatures"), protocol.get("writerFeatures")
    return (
        protocol.get("minReaderVersion") == 3
        and protocol.get("minWriterVersion") == 7
        and isinstance(readers, list)
        and "catalogManaged" in readers
        and isinstance(writers, list)
        and "catalogManaged" in writers
    )


@dataclass
class Shaped:
    """A client under test bound through a ``ShapedCatalog`` (``bind_shaped``)."""

    catalog: ShapedCatalog
    client: RecordingClient
    reached: bool = True  # False once the client turned out not to call ``catalog``


def bind_shaped(
    lakecert: RunContext, ref_catalog: Catalog, storage: Storage, transcript: Transcript, nodeid: str
) -> Shaped | None:
    """A client under test bound through a ``ShapedCatalog`` around ``ref_catalog`` (as ``client_factory``
    binds one to ``ref_catalog`` itself), or None for a client the suite cannot bind so."""
    seed = lakecert.derived_seed(f"{nodeid}#shaped")
    # The shapes' own look at storage (does a kept commit's file exist) is not the client's: unrecorded.
    shaped = ShapedCatalog(ref_catalog, lakecert.env.storage, transcript, seed)
    env = replace(lakecert.env, storage=storage, seed=seed)
    try:
        built = lakecert.build_client(shaped, env)
    except NotSupported:
        return None
    return Shaped(shaped, RecordingClient(built, transcript, call_s=lakecert.config.settings.deadlines.call_s))


@dataclass
class Table:
    name: str
    info: TableInfo
    model: TableModel = field(default_factory=TableModel)
    staged: dict[int, str] = field(default_factory=dict)  # version -> ratified staged file name
    ratified: dict[int, bytes] = field(default_factory=dict)  # version -> the ratified commit's bytes, as learned
    next_id: int = 1
    # The ids of each append the history made of several rows (most writers put them in one data
    # file): deletes are drawn to share such a file, and racing deletes to touch the same one.
    groups: list[list[int]] = field(default_factory=list)
    deletes: int = 0  # deletes so far: each draws its id set's shape in turn (DELETE_SHAPES)


@dataclass
class StepEvents:
    """What the clients under test did to storage and the catalog during one step."""

    puts: list[Event] = field(default_factory=list)
    deletes: list[Event] = field(default_factory=list)
    commits: list[Event] = field(default_factory=list)


class ClientHistory:
    def __init__(
        self,
        clients: Sequence[RecordingClient],
        ref_admin: ReferenceCatalog,
        suite: RecordingCatalog,
        storage: Storage,
        transcript: Transcript,
        log: HistoryLog,
        rng: random.Random,
        rules: frozenset[str],
        shaped: Shaped | None = None,
    ) -> None:
        self.clients, self.ref_admin, self.suite, self.storage = clients, ref_admin, suite, storage
        self.log, self.rng, self.rules = log, rng, rules
        self.transcript = transcript
        self.tables: list[Table] = []
        self.events = StepEvents()
        transcript.listeners.append(self._listen)
        # Every publication of a client under test, as it happens (judged by ``judge_publication_order``).
        self.early = EarlyPublications(storage, [])
        transcript.listeners.append(self.early)
        self._boundary = itertools.count()
        self.shaped = shaped
        self._shapes_said = len(shaped.catalog.met) if shaped is not None else 0
        # The rivals of the shaped client's lost races: the suite's correct writers, staged and inline,
        # seeded apart from ``rng`` (which draws the history's steps).
        self._rivals = [
            ReferenceClient(suite, storage, inline=inline, seed=log.seed + inline) for inline in (False, True)
        ]
        self._rival_turn = itertools.count()
        # Every staged commit the clients under test put, by URI, with the digest of what it held: a
        # staged name serves one commit attempt (RFC "Delta Log Entries": a random UUID per commit), so a
        # later put of other content under a name already used is a reused name, whoever put it.
        self._staged_puts: dict[str, str] = {}
        self.overwritten: list[str] = []
        self.misnamed: list[str] = []  # what was wrong with each misnamed proposal (``_note_proposal``)
        # The catalog the clients under test are bound to, when the check gives it (``RecordingCatalog``):
        # its ``before_commit`` hook lets one client's proposal wait while another commits first.
        self.hooks: RecordingCatalog | None = None

    @property
    def shaped_index(self) -> int | None:
        """The index of the client bound through the shaped catalog, while it reaches it."""
        return len(self.clients) - 1 if self.shaped is not None and self.shaped.reached else None

    def _unsaid_shapes(self) -> str:
        if self.shaped is None or len(self.shaped.catalog.met) <= self._shapes_said:
            return ""
        met = self.shaped.catalog.met[self._shapes_said :]
        self._shapes_said = len(self.shaped.catalog.met)
        more = f"{len(met) - 4} more, then " if len(met) > 4 else ""
        return f" [client {len(self.clients) - 1} met: {more}{'; '.join(met[-4:])}]"

    def say(self, text: str) -> None:
        """A step of the log, with the answer shapes the shaped client met since the last one."""
        self.log.step(text + self._unsaid_shapes())

    def _listen(self, e: Event) -> None:
        if e.actor == "catalog" and e.op == "commit":  # a proposal of a client under test, whatever the answer
            self._note_proposal(e)
        if not e.ok:
            return
        if e.actor == "storage" and e.op == "put":
            self.events.puts.append(e)
            self._note_staged_put(e.args["uri"])
        elif e.actor == "storage" and e.op == "delete":
            self.events.deletes.append(e)
        elif e.actor in ("catalog", "suite") and e.op == "commit":  # the suite's: a rival of the shaped client
            self.events.commits.append(e)

    def _note_staged_put(self, uri: str) -> None:
        f = parse_log_name(uri)
        if f is None or f.kind != "staged":
            return
        try:
            digest = hashlib.sha256(self.storage.get(uri)).hexdigest()
        except OSError:
            return  # gone already (a cleanup racing the put): nothing to compare
        before = self._staged_puts.setdefault(uri, digest)
        if before != digest:
            self.overwritten.append(uri.rsplit("/", 1)[-1])

    def _note_proposal(self, e: Event) -> None:
        """Every proposal is judged by its name (``misnamed_proposal``): first attempts, retries after a
        conflict or a lost answer, refused ones (a strict catalog refuses a misnamed file)."""
        where = next((t.info.location for t in self.tables if t.info.table_id == e.args["table_id"]), None)
        wrong = misnamed_proposal(e, where)
        if wrong is not None:
            self.misnamed.append(wrong)

    def judge_staged_names(self, what: str) -> None:
        """Every staged file a client under test proposed was named for the version it proposed it as
        (``_note_proposal``), and none was put again with other content (``_note_staged_put``)."""
        if self.misnamed:
            raise self.charge(
                "WRT-STAGED-NAME",
                f"{what}: {self.misnamed[0]} ({len(self.misnamed)} misnamed proposal(s))",
                "every proposal's staged file in _delta_log/_staged_commits/, named <20-digit version>.<uuid>.json"
                ' for the version it proposes (RFC "Delta Log Entries"), on every attempt: after a lost race'
                " the retry's file is named for the new version",
            )
        if self.overwritten:
            raise self.charge(
                "WRT-STAGED-NAME",
                f"{what}: the staged file {self.overwritten[0]} was written again with other content"
                f" ({len(self.overwritten)} such overwrite(s)): two commit attempts shared one staged name",
                'a fresh random UUID in every staged name, one name per commit attempt (RFC "Terminology -'
                ' Commits", "Delta Log Entries"): otherwise one attempt\'s content replaces another\'s',
            )

    def _step(self) -> StepEvents:
        self.events = StepEvents()
        return self.events

    def judge_publication_order(self, what: str) -> None:
        """No client under test created ``<v>.json`` while v-1 was unpublished (``EarlyPublications``),
        in any step: a writer that publishes its own commit right after ratification, on top of another
        writer's unpublished commit (a rival's, a lost race's winner), leaves a hole that the next
        publisher fills, so the final log looks in order. A v-1 within the model's published watermark
        was published before (metadata cleanup may have removed it since)."""
        for uri, v in self.early.found:
            t = next((t for t in self.tables if uri.startswith(f"{t.info.location.rstrip('/')}/_delta_log/")), None)
            if t is None or v - 1 <= t.model.published:
                continue
            raise self.charge(
                "WRT-PUBLISH-ORDER",
                f"{what}: a client under test wrote _delta_log/{v:020d}.json of {t.name} while v{v - 1} was not"
                " published",
                f'v{v - 1} published before v{v} (RFC "Publishing Commits"), whoever committed v{v - 1}: a writer'
                " that publishes its own commit first publishes the unpublished commits below it",
            )
        self.early.found.clear()

    def charge(self, rule: str, observed: str, allowed: str) -> Exception:
        """A finding: the rule's violation when this check judges it, else a premise of this check."""
        observed += self._unsaid_shapes()
        if rule in self.rules:
            return self.log.violation(rule, observed, allowed)
        return PremiseBroken(f"{observed} ({rule}, judged by that rule's checks)")

    def client(self, c: int | None = None) -> tuple[int, RecordingClient]:
        """Client ``c``, or one drawn at random (the shaped one among them: a fair share of every step)."""
        if c is None:
            c = self.rng.randrange(len(self.clients))
        return c, self.clients[c]

    # ------------------------------------------------------------------ writes

    def create(self, name: str) -> Table:
        with premise(f"the client under test creating {name}"):
            self.clients[0].create_table(name)
            info = self.ref_admin.resolve(name)
        table = Table(name, info)
        self.tables.append(table)
        self.say(f"client 0: create {name}")
        return table

    def _learn_commits(self, t: Table, events: StepEvents) -> list[int]:
        """The versions the catalog ratified for ``t`` in this step, each with its in-commit timestamp
        and staged file as the model needs them."""
        self.judge_staged_names(f"{t.name}: the step that ratified its v{t.model.latest}")
        self.judge_publication_order(f"{t.name}: the step that ratified its v{t.model.latest}")
        versions = []
        for e in sorted(events.commits, key=lambda e: e.args["version"]):
            if e.args["table_id"] != t.info.table_id:
                continue
            v: int = e.args["version"]
            content = e.args["inline_content"]
            with premise(f"reading the ratified commit of v{v}"):
                if content is None:
                    content = self.storage.get(e.args["staged_uri"])
                    t.staged[v] = e.args["staged_uri"].rsplit("/", 1)[-1]
                t.ratified[v] = content
            try:
                actions = oracle_commits.decode(content)
            except oracle_commits.CommitFormatError as err:
                if e.actor == "catalog" and e.args["inline_content"] is None:  # a staged file of a client under test
                    raise self.charge(
                        "WRT-STAGED-FORMAT",
                        f"{t.name}: the ratified v{v}, staged as {t.staged[v]}, is no Delta commit file: {err}"
                        f" (it starts {content[:24]!r})",
                        "a staged commit in the published Delta file format: UTF-8 with no byte order mark, one JSON"
                        ' action per line (RFC "Terminology - Commits"; RFC 8259 8.1), whatever text its values hold',
                    ) from err
                actions = []  # inline: WRT-STAGED-FORMAT binds staged files (the reference decoder judges it below)
            with premise(f"reading the ratified commit of v{v}"):
                try:
                    ict = A.in_commit_timestamp(A.decode_commit(content))
                except InvalidCommitError as err:
                    raise PremiseBroken(f"v{v} is no valid commit (WRT-STAGED-FORMAT): {err}") from err
            repeated = oracle_commits.repeated_actions(actions)
            self._judge_commit_info(t, v, actions)
            for protocol in (a["protocol"] for a in actions if isinstance(a.get("protocol"), dict)):
                if not catalog_managed_protocol(protocol):
                    raise self.charge(
                        "WRT-PROTOCOL-VERSIONS",
                        f"{t.name}: the ratified v{v} states the protocol {protocol}",
                        "every protocol action of a catalog-managed table at reader version 3 and writer version 7,"
                        ' catalogManaged in both feature lists (RFC "Catalog-managed Table Enablement"): a later'
                        " protocol action replaces the table's protocol",
                    )
            if repeated:
                raise self.charge(
                    "WRT-FILE-ACTIONS-ONCE",
                    f"{t.name}: the ratified v{v} holds {', '.join(repeated[:3])}",
                    "at most one metaData, one add and one remove per path in a commit (PROTOCOL.md"
                    ' "Add File and Remove File"): a commit\'s actions are not applied in order',
                )
            if ict is not None:
                previous = t.model.icts.get(v - 1)
                if previous is not None and ict <= previous:
                    raise PremiseBroken(f"v{v}'s in-commit timestamp {ict} is not after v{v - 1}'s (WRT-ICT-MONOTONIC)")
                t.model.icts[v] = ict
            versions.append(v)
        return versions

    def _judge_commit_info(self, t: Table, v: int, actions: list[oracle_commits.Action]) -> None:
        """Every ratified commit of the history, whichever path built it (a first attempt, a rebase
        after a lost race, a delete that matched nothing), starts with a commitInfo holding a txnId."""
        if actions and "commitInfo" not in actions[0]:
            raise self.charge(
                "WRT-COMMITINFO-FIRST",
                f"{t.name}: the ratified v{v} starts with a {next(iter(actions[0]), '?')} action",
                "every commit starting with its commitInfo, a rebased one or one that changes no file too",
            )
        info = actions[0].get("commitInfo") if actions else None
        txn = info.get("txnId") if isinstance(info, dict) else None
        if isinstance(info, dict) and not (isinstance(txn, str) and txn):
            raise self.charge(
                "WRT-TXNID",
                f"{t.name}: the ratified v{v}'s commitInfo carries txnId {txn!r}",
                "a non-empty txnId string in every commitInfo, a rebased commit or one that changes no file too",
            )

    def _landed(self, t: Table, got: int, events: StepEvents, what: str) -> None:
        learned = self._learn_commits(t, events)
        if learned != [t.model.latest]:
            raise PremiseBroken(f"{what}: the catalog ratified {learned} for {t.name}; expected v{t.model.latest}")
        if got != t.model.latest:
            raise PremiseBroken(f"{what}: the client reported v{got}, the catalog ratified v{t.model.latest}")

    @contextmanager
    def explained_by_read(self, t: Table, c: int) -> Iterator[None]:
        """A write of client ``c`` that breaks the check's premise (it failed) is first explained by the
        client's own read of the latest, where the check judges reads: a client that cannot read its
        table right (an unpublished commit it misses) cannot write it either, and the read's rule is
        the one to charge."""
        try:
            yield
        except PremiseBroken:
            self.judge_staged_names(f"client {c} writing {t.name}")  # a misnamed proposal the catalog refused
            if "RDR-UNPUBLISHED" in self.rules:
                self.read(t, who=c)  # charges the read's rule if the read is wrong; else the premise stands
            raise

    def append(self, t: Table, who: int | None = None, n: int = 1) -> None:
        """``n`` rows in one append (most writers put them in one data file)."""
        c, client = self.client(who)
        rows = {t.next_id + k: f"c{c}{TEXTS[(t.next_id + k) % len(TEXTS)]}" for k in range(n)}
        t.next_id += n
        if n > 1:
            t.groups.append(sorted(rows))
        events = self._step()
        with self.explained_by_read(t, c), premise(f"client {c} appending to {t.name}"):
            got = client.append(t.name, [{"id": i, "value": v} for i, v in rows.items()])
        t.model.append(rows)
        self._landed(t, got, events, f"client {c}: append")
        self.judge_staged_names(f"client {c}: append to {t.name}")
        self.say(f"client {c}: append ids {sorted(rows)} to {t.name} -> v{got}")

    def delete_old(self, t: Table) -> None:
        alive = sorted(t.model.versions[-1])
        if len(alive) <= KEEP_ROWS:
            return
        gone = alive[: len(alive) - KEEP_ROWS]
        shape = DELETE_SHAPES[t.deletes % len(DELETE_SHAPES)]
        t.deletes += 1
        ids = [ABSENT_ID, -1] if shape == "absent ids only" else list(gone)
        if "repeated" in shape:
            ids.append(gone[-1])
        if "absent" in shape:
            ids.insert(len(ids) // 2, ABSENT_ID)
        self.delete_ids(t, ids, shape)

    def delete_ids(self, t: Table, ids: list[int], shape: str = "plain") -> None:
        """One client deletes ``ids`` (``shape`` says how they were drawn: ``DELETE_SHAPES``)."""
        c, client = self.client()
        events = self._step()
        with self.explained_by_read(t, c), premise(f"client {c} deleting from {t.name}"):
            got = client.delete(t.name, ids)
        if shape == "absent ids only" and got == t.model.latest and not events.commits:
            self.say(f"client {c}: delete ids {ids} ({shape}) from {t.name} -> no commit")
            return  # nothing to change, nothing committed: as right as a commit that changes nothing
        t.model.delete(set(ids))
        self._landed(t, got, events, f"client {c}: delete")
        self.judge_staged_names(f"client {c}: delete from {t.name}")
        self.say(f"client {c}: delete ids {ids} ({shape}) from {t.name} -> v{got}")

    def racing_writes(self, t: Table, kind: str) -> None:
        """Two clients under test (each with its own identity) write ``t`` at once, deterministically:
        client a's proposal waits (the catalog's ``before_commit`` hook) while client b writes the same
        table and lands first, so a proposes the version b took. ``kind`` "append": both append (a
        writer whose staged names are not fresh per attempt shares a's file with b); "delete": both
        delete ids of one data file of an append of several rows (a loser that re-proposes the
        actions of its old snapshot, without reading b's commit, undoes b's delete). a rebases and
        lands after b, or gives up (a MAY) having landed nothing; the rows the catalog's commits hold
        are then read by lakecert's reference reader and compared with the model."""
        hooks = self.hooks
        if hooks is None:
            return
        a, b = self.rng.sample(range(min(3, len(self.clients))), 2)
        ca, cb = self.clients[a], self.clients[b]
        mine: list[int] = []
        theirs: list[int] = []
        if kind == "delete":
            alive = t.model.versions[-1]
            shared = [g for g in t.groups if sum(i in alive for i in g) >= 2]
            if not shared:
                return
            group = [i for i in shared[-1] if i in alive]
            mine, theirs = [group[0]], [group[1]]
        rows_a = {t.next_id: f"c{a} racing"}
        rows_b = {t.next_id + 1: f"c{b} racing"}
        t.next_id += 2
        # The delete's rival is the suite's reference writer (the loser is judged); the append's is a
        # client under test, whose staged names meet client a's, unless the clients talk to their
        # catalog over UC's API: such clients may share one process (Delta Kernel's driver), which
        # cannot write for b while its own proposal for a waits, so the suite's writer goes first.
        by_suite = kind == "delete" or speaks_only_uc_api(self.transcript)
        who_b = "the suite" if by_suite else f"client {b}"
        fired: list[int] = []

        def first(table_id: str, version: int) -> None:
            if fired or table_id != t.info.table_id:
                return
            fired.append(version)
            with premise(f"{who_b} writing {t.name} while client {a}'s proposal waits"):
                if kind == "delete":
                    fired.append(self._rivals[0].delete(t.name, theirs))
                else:
                    rows = [{"id": i, "value": v} for i, v in rows_b.items()]
                    fired.append(self._rivals[0].append(t.name, rows) if by_suite else cb.append(t.name, rows))

        events = self._step()
        taken = t.model.latest + 1
        hooks.before_commit.append(first)
        gave_up = ""
        try:
            if kind == "delete":
                got: int | None = ca.delete(t.name, mine)
            else:
                got = ca.append(t.name, [{"id": i, "value": v} for i, v in rows_a.items()])
        except (TargetRaised, CatalogError, NotSupported, OSError) as e:  # a conflict given up: allowed
            got, gave_up = None, type(e.__cause__ if isinstance(e, TargetRaised) and e.__cause__ else e).__name__
        finally:
            hooks.before_commit.remove(first)
        what = f"client {a} {kind}s on {t.name} while {who_b}'s {kind} takes v{taken} first"
        self.say(f"{what} -> {f'gave up ({gave_up})' if got is None else f'v{got}'}")
        self.judge_staged_names(what)
        if len(fired) < 2:
            raise PremiseBroken(f"{what}: {who_b}'s write did not run before client {a}'s proposal")
        if kind == "delete":
            t.model.delete(set(theirs))
        else:
            t.model.append(rows_b)
        if got is not None:
            if kind == "delete":
                t.model.delete(set(mine))
            else:
                t.model.append(rows_a)
        # A published file that is not the commit ratified at its version first: a writer that
        # published before the catalog ratified (and lost the version) makes the rows wrong for that reason.
        self._judge_published_as_ratified(t, events, what)
        # The rows then: a loser that kept its old snapshot also keeps its old in-commit timestamp,
        # a broken premise of ``_learn_commits`` that would hide the rows it lost.
        with premise(f"lakecert's reference reader reading {t.name}"):
            held = self._rivals[0].read(t.name)
        want = t.model.rows()
        if held.rows != want:
            raise self.charge(
                "WRT-REBASE-UNPUBLISHED",
                f"{what}: after client {a} {'gave up' if got is None else f'rebased to v{got}'}, the catalog's"
                f" commits up to v{held.version} hold the rows {held.rows}",
                f"the rows {want}: a loser that rebases reads the winner's ratified commit and builds its"
                ' commit again on it (RFC "Commit Protocol"; "Delta Log Entries": the commit of v holds the'
                " actions to apply to the state at v-1), so both changes hold",
            )
        learned = self._learn_commits(t, events)
        if learned != list(range(taken, t.model.latest + 1)):
            raise PremiseBroken(f"{what}: the catalog ratified {learned}, expected v{taken}-v{t.model.latest}")

    def _judge_published_as_ratified(self, t: Table, events: StepEvents, what: str) -> None:
        """Each ``_delta_log/<v>.json`` of a version ratified in this step, where it exists, holds the
        ratified commit (WRT-NO-FILESYSTEM-COMMIT: no client writes it before the catalog ratified v)."""
        for e in events.commits:
            if e.args["table_id"] != t.info.table_id:
                continue
            v: int = e.args["version"]
            uri = f"{t.info.location.rstrip('/')}/_delta_log/{v:020d}.json"
            with premise(f"reading v{v} of {t.name} as ratified and as published"):
                staged = e.args["staged_uri"]
                ratified = e.args["inline_content"] if staged is None else self.storage.get(staged)
                published = self.storage.get(uri) if self.storage.exists(uri) else None
            if published is not None and published != ratified:
                raise self.charge(
                    "WRT-NO-FILESYSTEM-COMMIT",
                    f"{what}: _delta_log's v{v} is not the commit the catalog ratified at v{v}",
                    "_delta_log/<v>.json written only after the catalog ratified v, as the ratified commit",
                )

    def concurrent_appends(self, targets: list[Table], seed: int) -> None:
        """Two clients append at once (to one table or to two): both land, at distinct versions; a
        client that gives up after a conflict instead of rebasing (allowed) lands nothing."""
        events = self._step()
        calls: list[Callable[[], object]] = []
        for i, t in enumerate(targets):
            calls.append(
                partial(self.clients[i + 1].append, t.name, [{"id": t.next_id + i * 1_000_000, "value": f"c{i + 1}"}])
            )
        outcomes = race(calls, seed=seed, transcript=self.log.transcript)
        # Before anything else: a shared staged name is what makes the outcomes below go wrong.
        self.judge_staged_names(f"clients {list(range(1, len(targets) + 1))} appending at once")
        for o in outcomes:
            if not o.ok and not isinstance(o.error, CommitConflict):  # the recorder passes a conflict on as is
                raise PremiseBroken(f"a concurrent append failed: {type(o.error).__name__}: {o.error}")
        names = sorted({t.name for t in targets})
        for t in {t.name: t for t in targets}.values():
            mine = [(i, o) for i, (tt, o) in enumerate(zip(targets, outcomes, strict=True)) if tt is t and o.ok]
            for i, o in sorted(mine, key=lambda p: int(p[1].result)):  # type: ignore[call-overload]
                t.model.append({t.next_id + i * 1_000_000: f"c{i + 1}"})
                if int(o.result) != t.model.latest:  # type: ignore[call-overload]
                    raise PremiseBroken(f"a concurrent append reported v{o.result}, expected v{t.model.latest}")
            learned = self._learn_commits(t, events)
            if learned != list(range(t.model.latest - len(mine) + 1, t.model.latest + 1)):
                raise PremiseBroken(f"concurrent appends to {t.name}: the catalog ratified {learned}")
        for t in targets:
            t.next_id += 1
        self.say(
            f"clients {list(range(1, len(targets) + 1))} append at once to {names} -> "
            + ", ".join("ok" if o.ok else "gave up after a conflict" for o in outcomes)
        )

    # ------------------------------------------------------------------ the shaped client

    def shaped_append(self, t: Table) -> int | None:
        """The shaped client appends while a rival's commit (staged and inline in turn) takes the
        version first: it meets a conflict in one of the shapes the RFC allows (with or without the
        latest version) and then listings in any of theirs. It lands its change once, at the version
        it reports, or gives up (allowed: WRT-REBASE-UNPUBLISHED is a MAY) having landed nothing.
        Returns the shaped client's index (None when no client reaches the shaped catalog)."""
        c = self.shaped_index
        if c is None or self.shaped is None:
            return None
        client, shapes = self.clients[c], self.shaped.catalog
        # A client served over UC's API (``shapes.served``) cannot be given an inline commit: staged rivals only.
        inline = next(self._rival_turn) % 2 == 1 and not shapes.served
        kind = "inline" if inline else "staged"
        rival: dict[int, str] = {t.next_id: f"rival {kind}"}
        mine: dict[int, str] = {t.next_id + 1: f"c{c} after a rival"}
        t.next_id += 2
        taken = t.model.latest + 1
        rival_rows = [{"id": i, "value": v} for i, v in rival.items()]
        shapes.rival_first(
            partial(self._rivals[inline].append, t.name, rival_rows), f"a rival's {kind} commit took v{taken} first"
        )
        events = self._step()
        gave_up = ""
        try:
            got: int | None = client.append(t.name, [{"id": i, "value": v} for i, v in mine.items()])
        except (TargetRaised, CatalogError, NotSupported, OSError) as e:  # what the recorder passes on as is
            # Gave up after the lost race, whatever it raised: allowed (WRT-REBASE-UNPUBLISHED is a MAY),
            # as long as the catalog holds none of its change (judged below).
            got, gave_up = None, type(e.__cause__ if isinstance(e, TargetRaised) and e.__cause__ else e).__name__
        if shapes.pending:  # no proposal reached the shaped catalog: the client talks to its catalog another way
            shapes.disarm()
            self.shaped.reached = False
            if got is None:
                with self.explained_by_read(t, c):
                    raise PremiseBroken(f"client {c} gave up an append to {t.name} that met no rival")
            t.model.append(mine)
            self._landed(t, got, events, f"client {c}: append")
            self.say(f"client {c}: append to {t.name} made no call through the shaped catalog: no more shapes")
            return None
        owners = {e.args["version"]: e.actor for e in events.commits if e.args["table_id"] == t.info.table_id}
        landed = sorted(v for v, actor in owners.items() if actor == "catalog")
        what = f"client {c}: append id {min(mine)} to {t.name} after a rival's {kind} commit took v{taken}"
        self.say(f"{what} -> {f'gave up ({gave_up})' if got is None else f'v{got}'}")
        self.judge_staged_names(what)  # before the outcome: a refused misnamed retry also gives up
        if owners.get(taken) != "suite":
            raise PremiseBroken(f"the rival's commit was not ratified at v{taken}: the catalog holds {owners}")
        if landed != ([] if got is None else [got]):
            raise self.charge(
                "WRT-LOST-ANSWER-ONCE",
                f"{what}: the append {f'raised {gave_up}' if got is None else f'reported v{got}'}, and its change is"
                f" at {[f'v{v}' for v in landed] or 'no version'} (v{taken} holds the rival's commit)",
                "the change once, at the version the append reported, or nowhere if it gave up (RFC"
                ' "Commit Protocol": a conflict need not state the latest version, and the catalog, not the'
                " conflict, says whose commit a version holds)",
            )
        t.model.append(rival)
        if got is not None:
            t.model.append(mine)
        learned = self._learn_commits(t, events)
        if learned != list(range(taken, t.model.latest + 1)):
            raise PremiseBroken(f"{what}: the catalog ratified {learned}")
        return c

    def rival_between_reads(self, t: Table, c: int) -> None:
        """lakecert's own writer commits, inline where the shaped client's catalog API carries it (an
        inline commit writes no file), and client ``c`` reads the latest again: a reader that asks the
        catalog again only when its listing of the log changes misses the new version."""
        shapes = self.shaped.catalog if self.shaped is not None else None
        inline = shapes is not None and not shapes.served
        rows = {t.next_id: "rival between reads"}
        t.next_id += 1
        events = self._step()
        with premise(f"lakecert's writer appending to {t.name} between two reads"):
            got = self._rivals[inline].append(t.name, [{"id": i, "value": v} for i, v in rows.items()])
        t.model.append(rows)
        self._landed(t, got, events, "lakecert's writer: append between two reads")
        self.say(f"lakecert's writer: {'inline' if inline else 'staged'} append to {t.name} -> v{got}")
        self.read(t, who=c)

    # ------------------------------------------------------------------ publication

    def publish(self, t: Table, who: int | None = None) -> None:
        c, client = self.client(who)
        events = self._step()
        before = t.model.published
        with premise(f"client {c} publishing {t.name}"):
            client.publish(t.name)
        order = [f.version for f in (parse_log_name(e.args["uri"]) for e in events.puts) if f and f.kind == "delta"]
        expected = list(range(before + 1, t.model.latest + 1))
        self.say(f"client {c}: publish {t.name} ({t.model.latest - before} unpublished) -> order {order}")
        self.judge_publication_order(f"client {c}: publish {t.name}")
        # The order is judged where the rule is (a reader check reads the result, whatever the order).
        if "WRT-PUBLISH-ORDER" in self.rules and order and order != sorted(order):
            raise self.charge(
                "WRT-PUBLISH-ORDER",
                f"{t.name}: v{before + 1}-v{t.model.latest} published in the order {order}",
                "v-1 published before v, every time",
            )
        published = self._published_upto(t)
        if "WRT-PUBLISH-ORDER" in self.rules and order and published < max(order):
            raise self.charge(
                "WRT-PUBLISH-ORDER",
                f"{t.name}: published {order}, yet v{published + 1} is missing",
                f"in order: {expected}",
            )
        # The contract's publish publishes every ratified, unpublished commit of the table it names,
        # whatever other tables the client published before (a watermark is the table's, not the client's).
        if "WRT-PUBLISH-ORDER" in self.rules and published < t.model.latest:
            raise self.charge(
                "WRT-PUBLISH-ORDER",
                f"client {c}: publish {t.name} left v{published + 1}-v{t.model.latest} out of _delta_log"
                f" (it wrote {order or 'nothing'})",
                f"every ratified version published, in order: {expected}",
            )
        self._judge_published_copies(t, events, f"client {c}: publish {t.name}")
        t.model.publish(published)

    def _judge_published_copies(self, t: Table, events: StepEvents, what: str) -> None:
        """Each ``_delta_log/<v>.json`` the step wrote holds the commit ratified at v, whoever proposed it
        (RFC "Publishing Commits": publishing copies the ratified commit). The history's clients lose races
        to each other and to lakecert's writer and then publish: a publisher that copies what it staged or
        proposed for v, not what the catalog ratified, publishes its rejected attempt there."""
        if "WRT-PUBLISH-IDENTICAL" not in self.rules:
            return
        for e in events.puts:
            uri: str = e.args["uri"]
            f = parse_log_name(uri)
            if f is None or f.kind != "delta" or not uri.startswith(f"{t.info.location.rstrip('/')}/_delta_log/"):
                continue
            want = t.ratified.get(f.version)
            if want is None or not self.storage.exists(uri):
                continue
            with premise(f"reading the published v{f.version} of {t.name}"):
                got = self.storage.get(uri)
            if not same_actions(got, want):
                raise self.charge(
                    "WRT-PUBLISH-IDENTICAL",
                    f"{what}: the published v{f.version} ({len(got)} bytes) holds other actions than the commit the"
                    f" catalog ratified at v{f.version} ({len(want)} bytes)",
                    "each published file a copy of the ratified commit of its version, a rival's commit that won"
                    " a race included, never a rejected proposal",
                )

    def tables_in_turn(self) -> None:
        """One client serves every table in turn (append, publish; the next table; then the first
        again), so that what it keeps from one table's publication meets another's."""
        c, _ = self.client(self.rng.randrange(min(3, len(self.clients))))
        tour = [*self.tables, self.tables[0]] if len(self.tables) > 1 else self.tables
        for t in sorted(tour[:-1], key=lambda t: -t.model.latest) + tour[-1:]:
            self.append(t, who=c)
            self.publish(t, who=c)
            self.judge_log(t)

    def learn_published(self, t: Table, late: set[int] | frozenset[int] = frozenset()) -> None:
        published = self._published_upto(t, late)
        if published > t.model.published:
            t.model.publish(published)

    def _published_upto(self, t: Table, late: set[int] | frozenset[int] = frozenset()) -> int:
        delta = {e.version for e in self._log_entries(t) if e.kind == "delta"} - late
        v = t.model.published
        while v + 1 in delta and v + 1 <= t.model.latest:
            v += 1
        return v

    def _log_entries(self, t: Table) -> list[LogEntry]:
        entries = []
        for info in self.storage.list(f"{t.info.location}/_delta_log/"):
            f = parse_log_name(info.uri)
            if f is not None:
                entries.append(LogEntry(f.kind, f.version, f.end_version, info.uri.rsplit("/", 1)[-1]))
        return entries

    # ------------------------------------------------------------------ maintenance

    def set_policy(self, t: Table, allowed: frozenset[str]) -> None:
        policy = frozenset(allowed | (MAINTENANCE_OPS - set(POLICY_OPS)))
        self.ref_admin.set_maintenance_policy(t.info.table_id, MaintenancePolicy(allowed=policy))
        t.model.policy = policy
        self.say(f"catalog policy of {t.name}: allows {sorted(allowed) or 'none'} of {list(POLICY_OPS)}")

    def forbidden(self, t: Table, op: str) -> bool:
        """The table's policy forbids ``op`` and the policy can have reached the client: a client that
        speaks only UC's API never saw it (as in ``writer/test_maintenance.py``)."""
        return not t.model.allows(op) and not speaks_only_uc_api(self.transcript)

    def _written(self, events: StepEvents, kind: str) -> list[tuple[int, int | None]]:
        out = []
        for e in events.puts:
            f = parse_log_name(e.args["uri"])
            if f is not None and f.kind == kind:
                out.append((f.version, f.end_version))
        return out

    def _judge_maintenance_publication(self, t: Table, before: set[int], events: StepEvents, what: str) -> None:
        """A maintenance call may publish (a checkpoint of v needs ``<v>.json``), in order all the same
        (RFC "Publishing Commits"): each ``<v>.json`` it writes needs ``<v-1>.json`` there before it.
        Judged before the maintenance file's own rules, so that a call that publishes only the version it
        maintains, over a gap, is charged to the order it broke."""
        seen = before | set(range(t.model.published + 1))  # what cleanup removed below was published
        for e in events.puts:
            f = parse_log_name(e.args["uri"])
            if f is None or f.kind != "delta" or not e.args["uri"].startswith(f"{t.info.location}/_delta_log/"):
                continue
            if "WRT-PUBLISH-ORDER" in self.rules and f.version > 0 and f.version - 1 not in seen:
                raise self.charge(
                    "WRT-PUBLISH-ORDER",
                    f"{what}: wrote _delta_log/{f.version:020d}.json while v{f.version - 1} was not published",
                    f"v{f.version} published only after v{f.version - 1}",
                )
            seen.add(f.version)

    def _judge_maintained_protocols(self, t: Table, events: StepEvents, what: str) -> None:
        """Every protocol action in a checkpoint or log compaction file this step wrote keeps the table
        catalog-managed: a reader that starts from the checkpoint (after metadata cleanup it has nothing
        else) or reads the compaction in place of its commits takes that protocol as the table's
        (RFC "Catalog-managed Table Enablement"; PROTOCOL.md Checkpoints). A file that does not decode is
        the format's matter, judged elsewhere."""
        if "WRT-PROTOCOL-VERSIONS" not in self.rules:
            return
        for e in events.puts:
            uri: str = e.args["uri"]
            f = oracle_names.parse(uri)
            if f is None or f.kind not in ("checkpoint", "compaction") or not self.storage.exists(uri):
                continue
            with premise(f"reading {uri.rsplit('/', 1)[-1]} of {t.name}"):
                data = self.storage.get(uri)
            try:
                body = oracle_commits.decode(data) if uri.endswith(".json") else oracle_checkpoint.decode(data)
            except (oracle_commits.CommitFormatError, oracle_checkpoint.CheckpointFormatError):
                continue
            for protocol in (a["protocol"] for a in body if isinstance(a.get("protocol"), dict)):
                if not catalog_managed_protocol(protocol):
                    raise self.charge(
                        "WRT-PROTOCOL-VERSIONS",
                        f"{what}: {uri.rsplit('/', 1)[-1]} holds the protocol {protocol}",
                        "every protocol action of a catalog-managed table, a checkpoint's or a compaction's too, at"
                        " reader version 3 and writer version 7 with catalogManaged in both feature lists",
                    )

    def checkpoint(self, t: Table) -> None:
        c, client = self.client()
        before = {e.version for e in self._log_entries(t) if e.kind == "delta"}
        events = self._step()
        with premise(f"client {c} checkpointing {t.name}"):
            client.checkpoint(t.name)
        written = self._written(events, "checkpoint")
        self.say(f"client {c}: checkpoint {t.name} -> {[v for v, _ in written]}")
        self._judge_maintenance_publication(t, before, events, f"client {c}: checkpoint {t.name}")
        if written and self.forbidden(t, "checkpoint"):
            raise self.charge(
                "WRT-MAINTENANCE-POLICY",
                f"{t.name}: checkpoint of v{written[0][0]} written, the policy forbids checkpoints",
                "no checkpoint",
            )
        self._judge_maintained_protocols(t, events, f"client {c}: checkpoint {t.name}")
        # RFC "Maintenance Operations": a checkpoint of v needs _delta_log/<v>.json, whoever wrote it and
        # when (Kernel publishes as part of its checkpoint step), as long as it was there first: the
        # model learns what the log holds, less what this step published after its first checkpoint.
        first = min(
            (e.seq for e in events.puts if (f := parse_log_name(e.args["uri"])) and f.kind == "checkpoint"),
            default=None,
        )
        late = {
            f.version
            for e in events.puts
            if first is not None and e.seq > first and (f := parse_log_name(e.args["uri"])) and f.kind == "delta"
        }
        self.learn_published(t, late)
        for v, _ in written:
            if not 0 <= v <= t.model.published:  # the policy is judged above (WRT-MAINTENANCE-POLICY)
                raise self.charge(
                    "WRT-CHECKPOINT-PUBLISHED",
                    f"{t.name}: checkpoint of v{v} written while v{t.model.published} was the newest published",
                    f"a checkpoint of v{t.model.published} or older",
                )
            t.model.checkpoint(v)

    def compact(self, t: Table) -> None:
        c, client = self.client()
        end = t.model.latest
        start = max(1, end - 3)
        before = {e.version for e in self._log_entries(t) if e.kind == "delta"}
        events = self._step()
        try:
            client.compact_log(t.name, start, end)
        except NotSupported:
            pass  # an optional capability: what it wrote anyway is judged below
        except (TargetRaised, CatalogError) as e:
            raise PremiseBroken(f"client {c} compacting {t.name}: {type(e).__name__}: {e}") from e
        written = self._written(events, "compaction")
        self.say(f"client {c}: compact_log({start}, {end}) of {t.name} -> {written}")
        self._judge_maintenance_publication(t, before, events, f"client {c}: compact_log({start}, {end}) of {t.name}")
        self.learn_published(t)
        if written and self.forbidden(t, "log_compaction"):
            raise self.charge(
                "WRT-MAINTENANCE-POLICY",
                f"{t.name}: log compaction {written[0]} written, the policy forbids it",
                "none",
            )
        self._judge_maintained_protocols(t, events, f"client {c}: compact_log({start}, {end}) of {t.name}")
        for lo, hi in written:
            if not 0 <= lo <= (hi if hi is not None else lo) <= t.model.published:  # the policy: above
                raise self.charge(
                    "WRT-COMPACTION-PUBLISHED",
                    f"{t.name}: compaction of v{lo}-v{hi} with v{t.model.published} the newest published",
                    "published versions only",
                )
        # What it holds, judged by the suite's decoder against the published commits of its range (a
        # cleanup of an earlier step may have taken some: then there is nothing to replay it against).
        published = {e.version for e in self._log_entries(t) if e.kind == "delta"}
        for lo, hi in written:
            end = hi if hi is not None else lo
            if not set(range(lo, end + 1)) <= published:
                continue
            why = compaction_fault(
                self.storage, t.info.location, lo, end, published_commits(self.storage, t.info.location, lo, end)
            )
            if why is not None:
                raise self.charge("WRT-COMPACTION-CONTENT", f"{t.name}: {why}", "the reconciled actions of the range")

    def cleanup(self, t: Table, cutoff: int) -> None:
        c, client = self.client()
        events = self._step()
        try:
            client.cleanup(t.name, cutoff)
        except NotSupported:
            pass  # an optional capability: what it deleted anyway is judged below
        except (TargetRaised, CatalogError) as e:
            raise PremiseBroken(f"client {c} cleaning up {t.name}: {type(e).__name__}: {e}") from e
        mine = f"{t.info.location}/_delta_log/"
        deleted = [e.args["uri"] for e in events.deletes if e.args["uri"].startswith(mine)]
        self.say(f"client {c}: cleanup {t.name} cut-off v{cutoff} -> {len(deleted)} files deleted")
        if deleted and self.forbidden(t, "metadata_cleanup"):
            names = [u.rsplit("/", 1)[-1] for u in deleted[:3]]
            raise self.charge(
                "WRT-MAINTENANCE-POLICY",
                f"{t.name}: metadata cleanup deleted {len(deleted)} files ({names}...) though the policy forbids it",
                "no deletion",
            )
        if deleted and t.model.cutoff_checkpoint(cutoff) is None:
            raise self.charge(
                "WRT-CLEANUP-NEEDS-CHECKPOINT",
                f"{t.name}: cleanup deleted files without a checkpoint",
                "nothing deleted",
            )
        t.model.cleanup(cutoff)
        self.judge_log(t)

    def judge_log(self, t: Table) -> None:
        faults = judge_log(t.model, self._log_entries(t), t.staged)
        rules = {
            "above-latest": "WRT-NO-FILESYSTEM-COMMIT",
            "lost-published": "WRT-CLEANUP-KEEPS",
            "lost-staged": "WRT-CLEANUP-STAGED-ABOVE",
            "unpublished-maintenance": "WRT-CHECKPOINT-PUBLISHED",
        }
        if faults:
            raise self.charge(rules[faults[0].kind], f"{t.name}: {faults[0].detail}", "what the RFC keeps")

    # ------------------------------------------------------------------ staged files never ratified

    def leave_unratified(self, t: Table) -> None:
        """Beside the ratified staged file of the latest version, two staged files for the same version
        that sort before it: one abandoned (never proposed), one rejected (proposed by the suite and
        refused with a conflict); and a stray object whose key starts with the version (``STRAY_NAME``).
        Each adds a row no ratified commit has."""
        v = t.model.latest
        ratified = t.staged.get(v)
        if ratified is None or ratified <= f"{v:020d}.{GHOST_UUIDS[-1]}.json" or v <= t.model.published:
            return  # an inline commit, or published: no staged file of the catalog's to confuse
        for i, uid in enumerate(GHOST_UUIDS):
            with premise("writing a staged file that is never ratified"):
                add = write_data_file(
                    self.storage, t.info.location, [{"id": -(1000 * v + i), "value": GHOST_VALUE}], modification_time=0
                )
                info = A.commit_info_action(t.model.icts.get(v, 0), uid, "WRITE")
                uri = f"{staged_dir(t.info.location)}/{v:020d}.{uid}.json"
                self.storage.put(uri, A.encode_commit([info, add]))
            if i == 1:
                try:
                    self.suite.commit(t.info.table_id, v, staged_uri=uri, in_commit_timestamp=t.model.icts.get(v))
                except CommitConflict:
                    pass
                else:
                    raise PremiseBroken(f"the reference catalog ratified v{v} twice")
        stray = STRAY_NAME.format(version=v)
        with premise("writing a stray object whose key starts with a staged version"):
            add = write_data_file(
                self.storage, t.info.location, [{"id": -(1000 * v + 2), "value": GHOST_VALUE}], modification_time=0
            )
            info = A.commit_info_action(t.model.icts.get(v, 0), GHOST_UUIDS[0], "WRITE")
            self.storage.put(f"{staged_dir(t.info.location)}/{stray}", A.encode_commit([info, add]))
        self.say(
            f"suite: an abandoned and a rejected staged file for v{v} of {t.name}, sorting before {ratified},"
            f" and a stray object _staged_commits/{stray}"
        )

    # ------------------------------------------------------------------ reads

    def read(self, t: Table, *, version: int | None = None, at: int | None = None, who: int | None = None) -> None:
        """One read, judged against the model: by version, by timestamp (``at``: a version whose
        in-commit timestamp is the time asked), or the latest."""
        m = t.model
        c, client = self.client(who)
        ts = None if at is None else m.icts.get(at)
        if at is not None and ts is None:
            return
        expected = m.latest if version is None and ts is None else version if ts is None else m.version_at(ts)
        if expected is None:
            return
        how = (
            "latest" if version is None and ts is None else f"v{version}" if ts is None else f"timestamp {ts} (v{at}'s)"
        )
        try:
            got = client.read(t.name, version=version, timestamp_ms=ts)
        except (TargetRaised, CatalogError, NotSupported, OSError) as e:  # what the recorder passes on as is
            rule = self._read_rule(m, expected, ts)
            raised = type(e.__cause__ if isinstance(e, TargetRaised) and e.__cause__ else e).__name__
            raise self.charge(
                rule,
                f"client {c}: read of {t.name} at {how} raised {raised}",
                f"v{expected} with {len(m.rows(expected))} rows (readable v{m.oldest_readable}-v{m.latest},"
                f" published up to v{m.published})",
            ) from e
        want = m.rows(expected)
        ghosts = [r for r in got.rows if r.get("value") == GHOST_VALUE]
        if ghosts:
            raise self.charge(
                "RDR-IGNORE-UNRATIFIED",
                f"client {c}: read of {t.name} at {how} returned rows {ghosts} of a staged file"
                " the catalog never ratified",
                f"v{expected}'s rows from the catalog's ratified commit only",
            )
        if got.version != expected:
            rule = (
                "RDR-TIME-TRAVEL-ICT"
                if ts is not None
                else "RDR-UNPUBLISHED"
                if version is None
                else "RDR-LIST-FALLBACK"
            )
            raise self.charge(
                rule,
                f"client {c}: read of {t.name} at {how} resolved v{got.version}",
                f"v{expected} (in-commit timestamps: {self._icts_near(m, expected)})",
            )
        if got.rows != want:
            if self._explained_by_unratified(t, expected, got.rows):
                raise self.charge(
                    "RDR-IGNORE-UNRATIFIED",
                    f"client {c}: read of {t.name} at {how} returned {got.rows}: the rows of a staged file the"
                    " catalog did not ratify (a rejected proposal of a race, or an abandoned attempt) in place of"
                    " the ratified commit of its version",
                    f"v{expected}'s rows {want}, from the catalog's ratified commits",
                )
            missed = self._missed_versions(m, expected, got.rows)
            forgotten = self._forgotten_upto(t)
            if ts is None and missed and max(missed) <= forgotten:
                # Only commits the catalog no longer lists are missing: the reader did not take them from
                # the published log (RFC "Reading Catalog-managed Tables"), whatever the read asked for.
                raise self.charge(
                    "RDR-LIST-FALLBACK",
                    f"client {c}: read of {t.name} at {how} returned {got.rows}, without the rows of"
                    f" v{', v'.join(map(str, missed))}: published, and no longer listed by the catalog"
                    f" (it lists v{forgotten + 1} on)",
                    f"v{expected}'s rows {want}, the published commits read from _delta_log",
                )
            raise self.charge(
                self._read_rule(m, expected, None),
                f"client {c}: read of {t.name} at {how} returned {got.rows}",
                f"v{expected}'s rows {want}",
            )

    def _forgotten_upto(self, t: Table) -> int:
        """The newest version the catalog no longer lists (its publication mark, which may lag behind
        what the clients published)."""
        listed = self.ref_admin.get_commits(t.info.table_id)
        return min((c.version for c in listed.commits), default=listed.latest_version + 1) - 1

    @staticmethod
    def _missed_versions(m: TableModel, version: int, got: list[dict[str, object]]) -> list[int]:
        """The versions up to ``version`` whose added rows, still in the table at ``version``, a read
        left out: which commits a wrong read skipped."""
        alive = m.versions[version]
        missed = []
        for u in range(1, version + 1):
            added = {i: v for i, v in m.versions[u].items() if m.versions[u - 1].get(i) != v and alive.get(i) == v}
            if any({"id": i, "value": v} not in got for i, v in added.items()):
                missed.append(u)
        return missed

    def _unratified_files(self, t: Table, upto: int) -> list[tuple[int, str, list[dict[str, object]]]]:
        """(version, name, rows it adds) of each staged file of a version up to ``upto`` that the
        catalog did not ratify (a rejected race proposal, an abandoned attempt), published or not: a
        reader may take one for a version the catalog no longer lists."""
        found: list[tuple[int, str, list[dict[str, object]]]] = []
        for e in self._log_entries(t):
            if e.kind != "staged" or not 0 < e.version <= upto or t.staged.get(e.version) == e.name:
                continue
            rows: list[dict[str, object]] = []
            try:
                actions = A.decode_commit(self.storage.get(f"{staged_dir(t.info.location)}/{e.name}"))
                for action in actions:
                    if "add" in action:
                        rows.extend(read_data_file(self.storage, t.info.location, action["add"]["path"]))
            except (OSError, ValueError, InvalidCommitError):
                continue  # a partial or unreadable file adds nothing a reader could return
            found.append((e.version, e.name, rows))
        return found

    def _explained_by_unratified(self, t: Table, version: int, got: list[dict[str, object]]) -> bool:
        """Whether the rows read at ``version`` are the model's with ratified commits replaced by staged
        files the catalog did not ratify: one version's, or every version's first or last staged file
        by name (what a reader that picks staged files from the listing returns), of every version or
        of the published ones only (a reader that does so only where the catalog no longer lists the
        version). Only asked once a read differs."""
        m = t.model
        files = self._unratified_files(t, version)
        choices: list[dict[int, list[dict[str, object]]]] = [{u: rows} for u, _, rows in files]
        # The versions the catalog no longer lists: its publication mark, which may lag behind what
        # the clients published (the model's mark).
        forgotten = self._forgotten_upto(t)
        # Which file of a version sorts first or last depends on the writers' random UUIDs: every
        # combination is tried, so that the finding does not depend on the order the seed gave them.
        for pick, upto in itertools.product((min, max), (version, m.published, forgotten)):
            chosen: dict[int, list[dict[str, object]]] = {}
            for u in {u for u, _, _ in files if u <= upto}:
                names = {n: rows for v, n, rows in files if v == u}
                if (ratified := t.staged.get(u)) is not None:
                    names[ratified] = []
                first = pick(names)
                if first != ratified:
                    chosen[u] = names[first]
            choices.append(chosen)
        for chosen in choices:
            instead = m.rows(version)
            for u, file_rows in sorted(chosen.items()):
                added = [{"id": i, "value": v} for i, v in m.versions[u].items() if m.versions[u - 1].get(i) != v]
                # A row of the file whose id the history deleted after u is gone too (a rejected race
                # proposal names the same data file as its rebased, ratified retry).
                alive = set(m.versions[version])
                deleted = {i for w in range(u, version + 1) for i in m.versions[w]} - alive
                instead = [r for r in instead if r not in added] + [
                    r for r in file_rows if r not in instead and r["id"] not in deleted
                ]
            if chosen and sorted(instead, key=lambda r: int(str(r["id"]))) == got:
                return True
        return False

    @staticmethod
    def _read_rule(m: TableModel, version: int, ts: int | None) -> str:
        if ts is not None:
            return "RDR-TIME-TRAVEL-ICT"
        return "RDR-UNPUBLISHED" if version > m.published else "RDR-LIST-FALLBACK"

    @staticmethod
    def _icts_near(m: TableModel, v: int) -> str:
        return ", ".join(f"v{x}: {m.icts[x]}" for x in range(max(0, v - 1), min(m.latest, v + 1) + 1) if x in m.icts)

    def read_boundaries(self, t: Table) -> None:
        """After a step, one read: the latest, or one boundary version, by version and by timestamp in turn:
        the oldest readable, the newest checkpoint and the one after it, the newest published and
        the one after it, the latest (a read costs a client's whole log segment: one boundary a step
        keeps long histories inside the default budget; every version is read by ``read_all``)."""
        m = t.model
        turn = next(self._boundary)
        if turn % 2 == 0:
            self.read(t)
            return
        turn //= 2
        cp = max((c for c in m.checkpoints if c >= m.oldest_readable), default=m.oldest_readable)
        choices = [m.oldest_readable, cp, cp + 1, m.published, m.published + 1, m.latest]
        v = min(choices[(turn // 2) % len(choices)], m.latest)
        if turn % 2:
            self.read(t, at=v)
        else:
            self.read(t, version=v)

    def read_all(self, t: Table, stride: int = 1, version_stride: int = 1) -> None:
        """Every ``version_stride``-th readable version by version (every one but on the quick budget),
        and by its in-commit timestamp every ``stride``-th one, each also at each checkpoint and the
        version after it (a timestamp read walks the log back from the latest: every one of them on a
        long table is the deep budget's)."""
        readable = t.model.readable()
        marks = {c for c in t.model.checkpoints} | {c + 1 for c in t.model.checkpoints} | {readable[0], readable[-1]}
        for v in readable:
            if (v - readable[0]) % version_stride == 0 or v in marks:
                self.read(t, version=v)
            if (v - readable[0]) % stride == 0 or v in marks:
                self.read(t, at=v)
        self.say(f"read every readable version of {t.name} (v{readable[0]}-v{readable[-1]})")
