"""Names of the entries of a table's ``_delta_log``.

PROTOCOL "Delta Log Entries" (published ``<v>.json``, staged ``_staged_commits/<v>.<uuid>.json``),
"Checkpoints" (classic ``<v>.checkpoint.parquet``, multi-part ``<v>.checkpoint.<o>.<p>.parquet``,
UUID-named v2 ``<v>.checkpoint.<uuid>.json|parquet``), "Log Compaction Files"
(``<x>.<y>.compacted.json``) and "Version Checksum File" (``<v>.crc``). Versions are zero-padded
to 20 digits, checkpoint part numbers to 10; any other spelling is not a log entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

LOG_DIR = "_delta_log"
STAGED_DIR = "_staged_commits"

Kind = Literal["delta", "staged", "checkpoint", "compaction", "checksum"]
CheckpointFlavour = Literal["classic", "multi-part", "v2"]

_V = r"([0-9]{20})"  # ASCII digits: \d also takes other scripts' digits, which int() reads as 0-9
_UUID = r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
_PUBLISHED = re.compile(rf"{_V}\.json")
_CLASSIC = re.compile(rf"{_V}\.checkpoint\.parquet")
_MULTI_PART = re.compile(rf"{_V}\.checkpoint\.([0-9]{{10}})\.([0-9]{{10}})\.parquet")
_V2 = re.compile(rf"{_V}\.checkpoint\.{_UUID}\.(?:json|parquet)", re.IGNORECASE)
_COMPACTION = re.compile(rf"{_V}\.{_V}\.compacted\.json")
_CHECKSUM = re.compile(rf"{_V}\.crc")
# A staged commit's UUID in either case (RFC 9562 reads hex digits so); ``.json`` exactly, as every other
# fixed character of the name: ``<v>.<uuid>.JSON`` is another object, no staged commit (RFC "Delta Log Entries").
_H = "[0-9a-fA-F]"
_STAGED = re.compile(rf"{_V}\.({_H}{{8}}-{_H}{{4}}-{_H}{{4}}-{_H}{{4}}-{_H}{{12}})\.json")


@dataclass(frozen=True)
class LogName:
    """One versioned entry of ``_delta_log``, read from its name alone.

    ``end_version`` for compactions; ``uuid`` for staged commits and v2 checkpoints; ``part`` and
    ``parts`` for multi-part checkpoints (1-based, PROTOCOL "Checkpoints")."""

    uri: str
    kind: Kind
    version: int
    end_version: int | None = None
    uuid: str | None = None
    flavour: CheckpointFlavour | None = None
    part: int | None = None
    parts: int | None = None


def parse(uri: str) -> LogName | None:
    """Classify a URI; ``None`` for anything that is not a versioned log entry.

    PROTOCOL "Delta Log Entries": an entry sits directly in ``_delta_log`` (staged commits directly
    in ``_delta_log/_staged_commits``); ``_last_checkpoint``, sidecars, temp files and unpadded
    names are not versioned entries."""
    parts = uri.rsplit("/", 3)
    if len(parts) < 3:
        return None
    name, parent = parts[-1], parts[-2]
    if parent == STAGED_DIR:
        m = _STAGED.fullmatch(name)
        if m and len(parts) == 4 and parts[-3] == LOG_DIR:
            return LogName(uri, "staged", int(m[1]), uuid=m[2])
        return None
    if parent != LOG_DIR:
        return None
    if m := _PUBLISHED.fullmatch(name):
        return LogName(uri, "delta", int(m[1]))
    if m := _CLASSIC.fullmatch(name):
        return LogName(uri, "checkpoint", int(m[1]), flavour="classic")
    if m := _MULTI_PART.fullmatch(name):
        part, total = int(m[2]), int(m[3])
        if not 1 <= part <= total:  # "part o of p": o counts from 1 to p
            return None
        return LogName(uri, "checkpoint", int(m[1]), flavour="multi-part", part=part, parts=total)
    if m := _V2.fullmatch(name):
        return LogName(uri, "checkpoint", int(m[1]), uuid=m[2], flavour="v2")
    if m := _COMPACTION.fullmatch(name):
        start, end = int(m[1]), int(m[2])
        return LogName(uri, "compaction", start, end_version=end) if start <= end else None
    if m := _CHECKSUM.fullmatch(name):
        return LogName(uri, "checksum", int(m[1]))
    return None


def log_dir(location: str) -> str:
    return f"{location.rstrip('/')}/{LOG_DIR}"


def staged_dir(location: str) -> str:
    return f"{log_dir(location)}/{STAGED_DIR}"


def pad(version: int) -> str:
    """PROTOCOL "Delta Log Entries": versions zero-padded to 20 digits."""
    if version < 0:
        raise ValueError(f"negative version {version}")
    return f"{version:020d}"


def published_uri(location: str, version: int) -> str:
    return f"{log_dir(location)}/{pad(version)}.json"


def compaction_uri(location: str, start: int, end: int) -> str:
    return f"{log_dir(location)}/{pad(start)}.{pad(end)}.compacted.json"


def classic_checkpoint_uri(location: str, version: int) -> str:
    return f"{log_dir(location)}/{pad(version)}.checkpoint.parquet"


def entries(uris: list[str]) -> list[LogName]:
    """The versioned log entries among ``uris`` (a listing), in the listing's order."""
    return [n for n in map(parse, uris) if n is not None]


def complete_checkpoints(names: Iterable[LogName]) -> set[int]:
    """The versions that have a whole checkpoint among ``names`` (one listing of ``_delta_log``),
    PROTOCOL "Checkpoints": a classic single file; or every part 1..p of a multi-part set whose files
    say "of p" (a set with a part missing, whose writer died between parts, is no checkpoint: reading
    it gives a table without the missing part's files); or a V2 checkpoint, counted whole by its name
    (its sidecars are not read here, so none is ever taken for incomplete). ``_last_checkpoint`` is
    only a hint, never a checkpoint: it is not a versioned entry and is not among ``names``."""
    whole: set[int] = set()
    sets: dict[tuple[int, int], set[int]] = {}
    for n in names:
        if n.kind != "checkpoint":
            continue
        if n.flavour == "multi-part" and n.part is not None and n.parts is not None:
            sets.setdefault((n.version, n.parts), set()).add(n.part)
        else:
            whole.add(n.version)
    whole |= {v for (v, total), got in sets.items() if got == set(range(1, total + 1))}
    return whole
