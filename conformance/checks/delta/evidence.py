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
from conformance.oracle.names import LogName, parse, published_uri

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


def ratified_content(transcript: Transcript, storage: Storage, table_id: str) -> dict[int, bytes]:
    """Version -> exact bytes of each commit the catalog ratified for the client."""
    out: dict[int, bytes] = {}
    for e in proposals(transcript, table_id, ok=True):
        inline = e.args["inline_content"]
        out[e.args["version"]] = inline if inline is not None else storage.get(e.args["staged_uri"])
    return out


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
