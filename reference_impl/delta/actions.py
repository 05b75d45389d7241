"""Delta actions as plain dicts, and the newline-delimited JSON commit format.

A commit is NDJSON: one single-key JSON object (the action) per line, each line ending
in "\\n" (RFC "Delta Log Entries"). Staged, published and inline commits share it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

Action = dict[str, Any]

CATALOG_MANAGED = "catalogManaged"
IN_COMMIT_TIMESTAMP = "inCommitTimestamp"
VACUUM_PROTOCOL_CHECK = "vacuumProtocolCheck"
ENABLE_ICT = "delta.enableInCommitTimestamps"

# RFC "Catalog-managed Table Enablement": reader 3 / writer 7, catalogManaged in both lists.
# delta-spark also requires vacuumProtocolCheck, and writers need inCommitTimestamp (RFC
# "Writer Requirements").
READER_FEATURES = (CATALOG_MANAGED, VACUUM_PROTOCOL_CHECK)
WRITER_FEATURES = (CATALOG_MANAGED, IN_COMMIT_TIMESTAMP, VACUUM_PROTOCOL_CHECK)

# The suite's fixed data schema: id long, value string.
SCHEMA_STRING = json.dumps(
    {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": True, "metadata": {}},
            {"name": "value", "type": "string", "nullable": True, "metadata": {}},
        ],
    },
    separators=(",", ":"),
)


class InvalidCommitError(ValueError):
    """Commit content that is not complete, valid NDJSON of actions (e.g. a partial file)."""


def protocol_action(
    min_reader_version: int = 3,
    min_writer_version: int = 7,
    reader_features: Sequence[str] = READER_FEATURES,
    writer_features: Sequence[str] = WRITER_FEATURES,
) -> Action:
    return {
        "protocol": {
            "minReaderVersion": min_reader_version,
            "minWriterVersion": min_writer_version,
            "readerFeatures": list(reader_features),
            "writerFeatures": list(writer_features),
        }
    }


def default_configuration() -> dict[str, str]:
    return {ENABLE_ICT: "true"}


def metadata_action(table_id: str, created_time: int, configuration: Mapping[str, str]) -> Action:
    return {
        "metaData": {
            "id": table_id,
            "format": {"provider": "parquet", "options": {}},
            "schemaString": SCHEMA_STRING,
            "partitionColumns": [],
            "configuration": dict(configuration),
            "createdTime": created_time,
        }
    }


def add_action(path: str, size: int, modification_time: int, stats: str, data_change: bool = True) -> Action:
    return {
        "add": {
            "path": path,
            "partitionValues": {},
            "size": size,
            "modificationTime": modification_time,
            "dataChange": data_change,
            "stats": stats,
        }
    }


def remove_action(add: Action, deletion_timestamp: int, data_change: bool = True) -> Action:
    """A remove of the file an ``add`` action added."""
    a = add["add"]
    return {
        "remove": {
            "path": a["path"],
            "deletionTimestamp": deletion_timestamp,
            "dataChange": data_change,
            "extendedFileMetadata": True,
            "partitionValues": a.get("partitionValues", {}),
            "size": a["size"],
        }
    }


def commit_info_action(in_commit_timestamp: int | None, txn_id: str | None, operation: str) -> Action:
    """``commitInfo``; a ``None`` field is left out (only faulty writers do that)."""
    info: dict[str, Any] = {}
    if in_commit_timestamp is not None:
        info["inCommitTimestamp"] = in_commit_timestamp
        info["timestamp"] = in_commit_timestamp
    info["operation"] = operation
    if txn_id is not None:
        info["txnId"] = txn_id  # RFC "Commit Provenance Information"
    info["engineInfo"] = "lakecert-reference"
    return {"commitInfo": info}


def kind(action: Mapping[str, Any]) -> str:
    """The action's type: its only key."""
    (key,) = action.keys()
    return str(key)


def encode_commit(actions: Sequence[Mapping[str, Any]]) -> bytes:
    return b"".join(json.dumps(a, separators=(",", ":")).encode() + b"\n" for a in actions)


def decode_commit(data: bytes) -> list[Action]:
    """Parse commit content strictly; ``InvalidCommitError`` on anything partial or malformed.

    Every line must be a JSON object with exactly one key; empty content, blank lines
    and a truncated last line are errors. A missing final newline is tolerated because
    some writers omit it; the JSON itself must still be complete.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidCommitError("commit is not UTF-8") from e
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines:
        raise InvalidCommitError("empty commit")
    actions: list[Action] = []
    for n, line in enumerate(lines, 1):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InvalidCommitError(f"line {n} is not complete JSON") from e
        if not isinstance(obj, dict) or len(obj) != 1 or not isinstance(next(iter(obj.values())), dict):
            raise InvalidCommitError(f"line {n} is not a single action object")
        actions.append(obj)
    return actions


def commit_info(actions: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The first ``commitInfo`` of a commit, if any."""
    for a in actions:
        if "commitInfo" in a:
            info: dict[str, Any] = a["commitInfo"]
            return info
    return None


def in_commit_timestamp(actions: Sequence[Mapping[str, Any]]) -> int | None:
    info = commit_info(actions)
    ict = info.get("inCommitTimestamp") if info else None
    return ict if isinstance(ict, int) and not isinstance(ict, bool) else None
