"""Evidence about what a client did, read from the transcript and from storage."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from conformance.contract.delta import Storage
from conformance.observe.transcript import Event, Transcript
from reference_impl.delta.actions import Action, InvalidCommitError, decode_commit
from reference_impl.delta.log_paths import LogFile, delta_uri, parse_log_name

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


def client_writes(transcript: Transcript, kind: str | None = None) -> list[tuple[Event, LogFile]]:
    """The client's successful puts of ``_delta_log`` entries, in order, optionally of one kind."""
    out = []
    for e in transcript.events(actor="storage", op="put", ok=True):
        f = parse_log_name(e.args["uri"])
        if f is not None and (kind is None or f.kind == kind):
            out.append((e, f))
    return out


def client_deletes(transcript: Transcript) -> list[str]:
    return [e.args["uri"] for e in transcript.events(actor="storage", op="delete", ok=True)]


def log_files(storage: Storage, location: str) -> list[LogFile]:
    return [f for f in (parse_log_name(i.uri) for i in storage.list(f"{location}/_delta_log/")) if f]


def table_commits(storage: Storage, location: str, ratified: dict[int, bytes]) -> dict[int, list[Action]]:
    """Every commit of the table: version 0 from its published file, the rest as ratified."""
    contents = {0: storage.get(delta_uri(location, 0)), **ratified}
    commits = {}
    for version, content in sorted(contents.items()):
        try:
            commits[version] = decode_commit(content)
        except InvalidCommitError as e:
            raise AssertionError(f"v{version} is not valid Delta commit content: {e}") from e
    return commits
