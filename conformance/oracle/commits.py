"""Commit content: newline-delimited JSON, one action per line, and what one commit may hold.

PROTOCOL "Delta Log Entries": "every action is stored as a single-line JSON document"; "Actions":
each action is an object keyed by its type (``commitInfo``, ``protocol``, ``metaData``, ``add``,
``remove``, ...). Staged, published and inline commits share the format (RFC "Terminology: Commits").
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

Action = dict[str, Any]

_LONG = range(-(2**63), 2**63)  # PROTOCOL "Primitive Types": long is a signed 64-bit integer


class CommitFormatError(ValueError):
    """Content that is not a commit: partial, not UTF-8, not one JSON action object per line."""


def _no_duplicate_names(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # RFC 8259 section 4: with repeated names "the behavior of software that receives such an
    # object is unpredictable"; two readers may take different values, so the commit has no meaning.
    names = Counter(name for name, _ in pairs)
    repeated = sorted(name for name, n in names.items() if n > 1)
    if repeated:
        raise CommitFormatError(f"an object repeats the name {repeated[0]!r}")
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise CommitFormatError(f"{name} is not JSON (RFC 8259 has no NaN or Infinity)")


def decode(data: bytes) -> list[Action]:
    """The actions of one commit, in order; ``CommitFormatError`` for anything else.

    PROTOCOL "Delta Log Entries": newline-delimited JSON, each action a single-line document. So
    every line is one complete JSON object with exactly one name (the action's type) whose value
    is an object. Empty content, blank lines, a truncated line and an action spread over several
    lines are errors. The last line's newline may be missing: lines are newline-*delimited*."""
    try:
        text = data.decode("utf-8")  # RFC 8259 section 8.1: JSON exchanged between systems is UTF-8
    except UnicodeDecodeError as e:
        raise CommitFormatError("the commit is not UTF-8") from e
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines:
        raise CommitFormatError("the commit is empty")
    actions: list[Action] = []
    for n, line in enumerate(lines, 1):
        try:
            obj = json.loads(line, object_pairs_hook=_no_duplicate_names, parse_constant=_no_constant)
        except json.JSONDecodeError as e:
            raise CommitFormatError(f"line {n} is not one complete JSON document") from e
        except CommitFormatError as e:
            raise CommitFormatError(f"line {n}: {e}") from e
        if not isinstance(obj, dict) or len(obj) != 1 or not isinstance(next(iter(obj.values())), dict):
            raise CommitFormatError(f"line {n} is not one action (an object with one name whose value is an object)")
        actions.append(obj)
    return actions


def kind(action: Mapping[str, Any]) -> str:
    """The action's type: its only name (PROTOCOL "Actions")."""
    (name,) = action.keys()
    return str(name)


def commit_info(actions: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The commit's ``commitInfo`` (PROTOCOL "Commit Provenance Information"); where it stands is
    judged apart (``first_kind``), so a misplaced one is charged once, to the rule on its place."""
    for a in actions:
        info = a.get("commitInfo")
        if isinstance(info, dict):
            return info
    return None


def first_kind(actions: Sequence[Mapping[str, Any]]) -> str | None:
    """PROTOCOL "In-Commit Timestamps", writer requirement 2: ``commitInfo`` must come first."""
    return kind(actions[0]) if actions else None


def is_long(value: object) -> bool:
    """PROTOCOL "Primitive Types": a JSON integer within signed 64 bits (``true`` is no number)."""
    return isinstance(value, int) and not isinstance(value, bool) and value in _LONG


def in_commit_timestamp(actions: Sequence[Mapping[str, Any]]) -> int | None:
    """PROTOCOL "In-Commit Timestamps", writer requirement 3: ``commitInfo.inCommitTimestamp``,
    a long of milliseconds since the Unix epoch; ``None`` when missing or not a long."""
    ict = (commit_info(actions) or {}).get("inCommitTimestamp")
    return ict if is_long(ict) else None


def txn_id(actions: Sequence[Mapping[str, Any]]) -> str | None:
    """RFC "Commit Provenance Information": ``commitInfo.txnId``, a unique transaction identifier
    string; ``None`` when missing, empty or not a string."""
    txn = (commit_info(actions) or {}).get("txnId")
    return txn if isinstance(txn, str) and txn else None


def of_kind(actions: Sequence[Mapping[str, Any]], name: str) -> list[dict[str, Any]]:
    """The bodies of the actions of one type, in order."""
    return [a[name] for a in actions if isinstance(a.get(name), dict)]


def repeated_actions(actions: Sequence[Mapping[str, Any]]) -> list[str]:
    """What one commit holds more than once though the protocol allows it once, in plain words.

    PROTOCOL "Change Metadata": "at most one metadata action in a given version"; "Add File and
    Remove File": "at most one file action of the same type for any path" (actions of one commit
    are not applied in order, so two adds of one path leave the file's state undefined)."""
    found: list[str] = []
    if len(of_kind(actions, "metaData")) > 1:
        found.append(f"{len(of_kind(actions, 'metaData'))} metaData actions")
    for name in ("add", "remove"):
        paths = Counter(str(body.get("path")) for body in of_kind(actions, name))
        found += [f"{n} {name} actions for {path}" for path, n in sorted(paths.items()) if n > 1]
    return found
