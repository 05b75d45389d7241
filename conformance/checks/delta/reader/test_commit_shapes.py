"""A reader on ratified, unpublished commits written by another writer in every encoding shape the
commit format allows (RFC "Reader Requirements"; PROTOCOL "Delta Log Entries": newline-delimited JSON,
each action a single-line JSON document).

Newline-delimited JSON does not require a final newline, a single-line JSON document may hold
whitespace between its tokens, an object's fields may come in any order, and a string may hold raw
characters some line readers take for breaks (U+0085, U+2028, U+2029: only a newline ends a line): a
writer other than the reader's own may write any of these. Each shape is
a staged commit and, where the client's catalog API carries them, an inline one; the last line of an
unterminated commit is an ``add`` in one and a ``remove`` in another, and every version is read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from conformance.checks.delta.builders import LogBuilder, expected_rows, ict_of, premise, raw_utf8, version0
from conformance.checks.delta.evidence import attempt
from conformance.contract.delta import NotSupported, RatifiedCommit
from conformance.observe.recording import RecordingClient, TargetRaised
from conformance.report.outcomes import Violation
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta import actions as A


def _lines(actions: list[A.Action], separators: tuple[str, str] | None) -> list[bytes]:
    return [json.dumps(a, separators=separators).encode() for a in actions]


def _keys_reversed(actions: list[A.Action]) -> list[A.Action]:
    """Each action's fields in the reverse order: JSON objects are unordered (RFC 8259 section 4)."""
    return [{kind: dict(reversed(list(body.items()))) for kind, body in a.items()} for a in actions]


# Shape name -> how a commit's actions become its bytes.
SHAPES: dict[str, Callable[[list[A.Action]], bytes]] = {
    "final newline": lambda acts: b"".join(line + b"\n" for line in _lines(acts, (",", ":"))),
    "no final newline": lambda acts: b"\n".join(_lines(acts, (",", ":"))),
    "spaced JSON, final newline": lambda acts: b"".join(line + b"\n" for line in _lines(acts, None)),
    "spaced JSON, no final newline": lambda acts: b"\n".join(_lines(acts, None)),
    "fields in reverse order, no final newline": lambda acts: b"\n".join(_lines(_keys_reversed(acts), (",", ":"))),
    "raw UTF-8 with U+0085, U+2028 and U+2029 inside a string": raw_utf8,
}
PUBLISHED = 2  # v0-v2 published; every later version ratified and unpublished


@dataclass
class Written:
    live: dict[int, list[int]]  # version -> the ids of the rows live at it
    shapes: dict[int, str]  # ratified version -> how its commit is written


def _write(seeded: LogBuilder, table_name: str, ref_admin: ReferenceCatalog, inline: bool) -> Written:
    """v1-v2 published; then per shape a staged commit adding a row and one removing the row of the
    version before, then (``inline``) the same as inline commits."""
    seeded.publish(0, version0(seeded.location))
    live: dict[int, list[int]] = {0: []}
    shapes: dict[int, str] = {}
    adds: dict[int, bytes] = {}
    for v in range(1, PUBLISHED + 1):
        adds[v] = seeded.data_commit(v)
        seeded.publish(v, adds[v])
        live[v] = [*live[v - 1], v]
    ratified: list[RatifiedCommit] = []
    v = PUBLISHED
    for kind in ("staged", "inline") if inline else ("staged",):
        for shape, encode in SHAPES.items():
            for removing in (False, True):
                v += 1
                shapes[v] = f"a {kind} commit, {shape}, its last line {'a remove' if removing else 'an add'}"
                if removing:  # the row of the version before (its add is the last line there too)
                    actions = A.decode_commit(seeded.remove_commit(v, adds[v - 1]))
                    live[v] = [i for i in live[v - 1] if i != v - 1]
                else:
                    adds[v] = seeded.data_commit(v)
                    actions = A.decode_commit(adds[v])
                    live[v] = [*live[v - 1], v]
                content = encode(actions)
                ratified.append(
                    RatifiedCommit(v, staged_uri=seeded.stage(v, content), in_commit_timestamp=ict_of(v))
                    if kind == "staged"
                    else RatifiedCommit(v, inline_content=content, in_commit_timestamp=ict_of(v))
                )
    ref_admin.import_table(table_name, seeded.location, v, ratified, PUBLISHED)
    return Written(live, shapes)


@pytest.mark.req("RDR-UNPUBLISHED")
def test_ratified_commits_of_every_shape_are_read(
    client: RecordingClient,
    ref_admin: ReferenceCatalog,
    seeded: LogBuilder,
    table_name: str,
) -> None:
    with premise("the suite writing a table whose ratified commits take every encoding shape"):
        written = _write(seeded, table_name, ref_admin, inline=False)
    _read_all(client, table_name, written, "staged")
    # The same with inline commits above the staged ones, on a second table.
    other = LogBuilder(seeded.storage, f"{seeded.location}-inline")
    with premise("the suite writing a table whose ratified commits include inline ones of every shape"):
        written = _write(other, f"{table_name}_inline", ref_admin, inline=True)
    try:
        _read_all(client, f"{table_name}_inline", written, "staged and inline")
    except NotSupported:
        return  # the client's catalog API carries no inline commits: the staged shapes were judged above


def _read_all(client: RecordingClient, name: str, written: Written, kind: str) -> None:
    live = written.live
    for version, ids in sorted(live.items()):
        want = expected_rows(ids)
        got = attempt(lambda v=version: client.read(name, version=v))  # type: ignore[misc]
        shape = f" (v{version} is {written.shapes[version]})" if version in written.shapes else ""
        if got.error is not None:
            e = got.error
            cause = e.__cause__ if isinstance(e, TargetRaised) and e.__cause__ else e
            if isinstance(cause, NotSupported) or isinstance(e, NotSupported):
                raise NotSupported(str(cause))
            raise Violation(
                "RDR-UNPUBLISHED",
                f"a read of v{version} raised {type(cause).__name__}; v{PUBLISHED + 1}-v{max(live)} are ratified"
                f" {kind} commits of valid newline-delimited JSON in every shape{shape}",
            )
        result = got.value
        assert result is not None, f"the read of v{version} returned nothing, not the table"
        assert (result.version, result.rows) == (version, want), (
            f"a read of v{version} gave v{result.version} with rows {result.rows}; the ratified commits give {want}"
            f"{shape}. A commit is newline-delimited JSON: a last line without a final newline, whitespace"
            " inside a line or fields in another order still make an action the reader must apply"
        )
