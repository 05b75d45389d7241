"""Evidence about what a client did, read from the transcript and from storage.

Content and names are decoded with lakecert's own oracle (``conformance.oracle``), written from the
protocol, never with the reference implementation's decoder: a misreading the reference shares with
a client would otherwise pass unnoticed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from conformance.contract.delta import Storage
from conformance.observe.transcript import Event, Transcript
from conformance.oracle import commits as C
from conformance.oracle.clock import CallWindow
from conformance.oracle.commits import Action
from conformance.oracle.names import LogName, parse, published_uri, staged_dir

T = TypeVar("T")


@dataclass
class Attempt(Generic[T]):
    """The outcome of a target call that a check judges by its effects first."""

    value: T | None
    error: BaseException | None

    def unwrap(self) -> T | None:
        if self.error is not None:
            raise self.error
        return self.value


def attempt(fn: Callable[[], T]) -> Attempt[T]:
    try:
        return Attempt(fn(), None)
    except Exception as e:  # judged by the check, re-raised by unwrap()
        return Attempt(None, e)


def proposals(transcript: Transcript, table_id: str, ok: bool | None = None) -> list[Event]:
    """Commit proposals the client sent to the catalog, in order."""
    return [e for e in transcript.events(actor="catalog", op="commit", ok=ok) if e.args["table_id"] == table_id]


def misnamed_proposal(e: Event, location: str | None = None) -> str | None:
    """What is wrong with the staged name of one proposal (a catalog ``commit`` event, whatever the
    catalog answered), or None. RFC "Delta Log Entries": a staged commit sits directly in its table's
    ``_delta_log/_staged_commits/``, named ``<20-digit version>.<uuid>.json`` for the version it is
    proposed as. Judged on refused proposals too: a strict catalog refuses a misnamed one (the writer
    then fails for another reason), a lax one ratifies it, and either way the writer named it."""
    uri, version = e.args.get("staged_uri"), e.args.get("version")
    if uri is None:
        return None  # an inline proposal: no name to judge
    f = parse(uri)
    if f is None or f.kind != "staged":
        return f"{uri} was proposed for v{version}, and it is no staged commit name"
    if f.version != version:
        return f"{uri.rsplit('/', 1)[-1]} (named for v{f.version}) was proposed for v{version}"
    if location is not None and not uri.startswith(staged_dir(location) + "/"):
        return f"{uri} was proposed for v{version} outside the table's {staged_dir(location)}"
    return None


def misnamed_proposals(transcript: Transcript, table_id: str, location: str | None = None) -> list[str]:
    """``misnamed_proposal`` of every proposal of the client under test for ``table_id``: first
    attempts, retries after a conflict or a lost answer, and refused ones alike."""
    found = (misnamed_proposal(e, location) for e in proposals(transcript, table_id))
    return [m for m in found if m is not None]


def ratified_content(
    transcript: Transcript, storage: Storage, table_id: str, actors: tuple[str, ...] = ("catalog",)
) -> dict[int, bytes]:
    """Version -> the bytes of each commit the catalog ratified for ``actors``: the client's by default
    (its calls are recorded as the catalog's), ``("catalog", "suite")`` for the client's and the suite
    rivals' alike (read from the recorded proposals the catalog accepted, staged files read now)."""
    out: dict[int, bytes] = {}
    for e in transcript.events(op="commit", ok=True):
        if e.actor in actors and e.args["table_id"] == table_id:
            inline = e.args["inline_content"]
            out[e.args["version"]] = inline if inline is not None else storage.get(e.args["staged_uri"])
    return out


def published_unlike_ratified(storage: Storage, location: str, ratified: dict[int, bytes]) -> list[int]:
    """The versions whose ``_delta_log/<v>.json`` holds other actions than the commit ratified at v
    (``same_actions``): RFC "Publishing Commits" copies the ratified commit, so a published rejected
    proposal (a race's loser) is a wrong file, whoever wrote it. Versions not in ``ratified`` are not judged."""
    published = (f.version for f in log_files(storage, location) if f.kind == "delta")
    return [
        v
        for v in sorted(published)
        if v in ratified and not same_actions(storage.get(published_uri(location, v)), ratified[v])
    ]


def client_writes(transcript: Transcript, kind: str | None = None) -> list[tuple[Event, LogName]]:
    """The client's successful puts of ``_delta_log`` entries, in order, optionally of one kind."""
    out = []
    for e in transcript.events(actor="storage", op="put", ok=True):
        f = parse(e.args["uri"])
        if f is not None and (kind is None or f.kind == kind):
            out.append((e, f))
    return out


def client_deletes(transcript: Transcript) -> list[str]:
    return [e.args["uri"] for e in transcript.events(actor="storage", op="delete", ok=True)]


def log_files(storage: Storage, location: str) -> list[LogName]:
    return [f for f in (parse(i.uri) for i in storage.list(f"{location}/_delta_log/")) if f]


def table_commits(storage: Storage, location: str, ratified: dict[int, bytes]) -> dict[int, list[Action]]:
    """Every commit of the table: version 0 from its published file, the rest as ratified."""
    contents = {0: storage.get(published_uri(location, 0)), **ratified}
    commits = {}
    for version, content in sorted(contents.items()):
        try:
            commits[version] = C.decode(content)
        except C.CommitFormatError as e:
            raise AssertionError(f"v{version} is not valid Delta commit content: {e}") from e
    return commits


def call_windows(transcript: Transcript, table_id: str, location: str) -> dict[int, CallWindow]:
    """Version -> wall-clock bounds of the client's call that wrote it (``oracle.clock``).

    A commit is no later than its ratification (the catalog's ``commit`` event; version 0: the put of
    its published file) and no earlier than the end of the client's call before (calls are made one
    after another; events are recorded when a call ends). Commits the suite's own writers made are
    not in it: their proposals are recorded under another actor."""
    ends: dict[int, Event] = {e.args["version"]: e for e in proposals(transcript, table_id, ok=True)}
    v0 = published_uri(location, 0)
    for e in transcript.events(actor="storage", op="put", ok=True):
        if e.args["uri"] == v0:
            ends[0] = e
    everything = transcript.events()
    first = everything[0].at if everything else 0.0
    windows: dict[int, CallWindow] = {}
    for version, end in ends.items():
        before = [e.at for e in everything if e.actor == "client" and e.seq < end.seq]
        windows[version] = CallWindow(int(max(before, default=first) * 1000), int(end.at * 1000) + 1)
    return windows


UC_API = "/api/2.1/unity-catalog/"


def speaks_only_uc_api(transcript: Transcript) -> bool:
    """The client's catalog requests (its HTTP transcript) were all Unity Catalog's API, and none
    asked for lakecert's maintenance-policy extension (``/lakecert/v1/...``): a maintenance policy set
    in the catalog never reached it (UC's API carries none), so the policy rule is not judged on it."""
    paths = [ex.target for ex in transcript.http.exchanges()]
    return bool(paths) and all(p.startswith(UC_API) and "/lakecert/" not in p for p in paths)


def same_actions(published: bytes, ratified: bytes | None) -> bool:
    """A published file holds its ratified commit: the same bytes, or the same actions in order (read
    by lakecert's decoder). Other bytes for the same actions are a re-encoding, WRT-PUBLISH-BYTES's (a
    SHOULD: Delta Kernel's copy through its log store rewrites lines), never a lost or changed commit."""
    if ratified is None or published == ratified:
        return published == ratified
    try:
        return C.decode(published) == C.decode(ratified)
    except C.CommitFormatError:
        return False


@dataclass
class EarlyPublications:
    """A transcript listener: each ``_delta_log/<v>.json`` a client under test puts while
    ``<v-1>.json`` is absent from storage, as (uri, v), at the moment of the put. RFC "Publishing
    Commits" has v-1 published *before* v; the final log shows no such hole once v-1 arrives later
    (another writer's commit published after this one), only the order the files were created in does.
    A checker forgives a v-1 that was published and then removed (metadata cleanup) by its own
    watermark; v0 is the table's creation, which has no predecessor."""

    storage: Storage
    found: list[tuple[str, int]]

    def __call__(self, e: Event) -> None:
        if e.actor != "storage" or e.op != "put" or not e.ok:
            return
        uri: str = e.args["uri"]
        f = parse(uri)
        if f is None or f.kind != "delta" or f.version == 0:
            return
        location = uri.rsplit("/_delta_log/", 1)[0]
        if not self.storage.exists(published_uri(location, f.version - 1)):
            self.found.append((uri, f.version))
