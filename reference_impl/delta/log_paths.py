"""Names of the entries of a table's ``_delta_log`` (PROTOCOL.md "Delta Log Entries" and the RFC).

Locations are absolute URIs (``file:///...``, ``s3://bucket/key``); paths are joined with "/".
Versions are always zero-padded to 20 digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

LOG_DIR = "_delta_log"
STAGED_DIR = "_staged_commits"
LAST_CHECKPOINT = "_last_checkpoint"

LogKind = Literal["delta", "staged", "checkpoint", "compaction", "checksum"]

_V = r"([0-9]{20})"  # ASCII digits: \d also takes other scripts' digits, which int() reads as 0-9
_UUID = r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
_IN_LOG: list[tuple[LogKind, re.Pattern[str]]] = [
    ("delta", re.compile(rf"{_V}\.json")),
    ("checkpoint", re.compile(rf"{_V}\.checkpoint\.parquet")),
    ("compaction", re.compile(rf"{_V}\.{_V}\.compacted\.json")),
    ("checksum", re.compile(rf"{_V}\.crc")),
]
_STAGED = re.compile(rf"{_V}\.{_UUID}\.json")


@dataclass(frozen=True)
class LogFile:
    """One versioned log entry. ``end_version`` only for compactions, ``uuid`` only for staged commits."""

    uri: str
    kind: LogKind
    version: int
    end_version: int | None = None
    uuid: str | None = None


def _pad(version: int) -> str:
    if version < 0:
        raise ValueError(f"negative version {version}")
    return f"{version:020d}"


def log_dir(location: str) -> str:
    return f"{location.rstrip('/')}/{LOG_DIR}"


def staged_dir(location: str) -> str:
    return f"{log_dir(location)}/{STAGED_DIR}"


def delta_name(version: int) -> str:
    return f"{_pad(version)}.json"


def staged_name(version: int, uuid: str) -> str:
    return f"{_pad(version)}.{uuid}.json"


def delta_uri(location: str, version: int) -> str:
    return f"{log_dir(location)}/{delta_name(version)}"


def staged_uri(location: str, version: int, uuid: str) -> str:
    return f"{staged_dir(location)}/{staged_name(version, uuid)}"


def checkpoint_uri(location: str, version: int) -> str:
    return f"{log_dir(location)}/{_pad(version)}.checkpoint.parquet"


def multipart_checkpoint_uri(location: str, version: int, part: int, parts: int) -> str:
    """Part ``part`` (1-based) of a multi-part checkpoint of ``parts`` files (PROTOCOL "Checkpoints")."""
    return f"{log_dir(location)}/{_pad(version)}.checkpoint.{part:010d}.{parts:010d}.parquet"


def compaction_uri(location: str, start: int, end: int) -> str:
    return f"{log_dir(location)}/{_pad(start)}.{_pad(end)}.compacted.json"


def checksum_uri(location: str, version: int) -> str:
    return f"{log_dir(location)}/{_pad(version)}.crc"


def last_checkpoint_uri(location: str) -> str:
    return f"{log_dir(location)}/{LAST_CHECKPOINT}"


def parse_log_name(uri: str) -> LogFile | None:
    """Classify a URI inside ``_delta_log``; ``None`` for anything else.

    ``_last_checkpoint``, temp files, malformed names (e.g. unpadded versions) and
    files outside ``_delta_log`` or ``_delta_log/_staged_commits`` all give ``None``.
    """
    parts = uri.rsplit("/", 3)
    if len(parts) < 3:
        return None
    name, parent = parts[-1], parts[-2]
    if parent == LOG_DIR:
        for kind, pattern in _IN_LOG:
            m = pattern.fullmatch(name)
            if m:
                end = int(m.group(2)) if kind == "compaction" else None
                return LogFile(uri, kind, int(m.group(1)), end_version=end)
        return None
    if parent == STAGED_DIR and len(parts) == 4 and parts[-3] == LOG_DIR:
        m = _STAGED.fullmatch(name)
        if m:
            return LogFile(uri, "staged", int(m.group(1)), uuid=m.group(2))
    return None
