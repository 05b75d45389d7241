"""Loading a golden case (fixtures/golden/README.md): copy its table, rebuild its catalog state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.contract.delta import RatifiedCommit, Storage
from reference_impl.delta.log_paths import staged_dir


def seed_commits(state: dict[str, Any], location: str) -> list[RatifiedCommit]:
    """``catalog.json``'s ratified commits, for a copy of the table at ``location``."""
    return [
        RatifiedCommit(
            c["version"],
            staged_uri=f"{staged_dir(location)}/{c['staged']}" if "staged" in c else None,
            inline_content=c["inline"].encode() if "inline" in c else None,
            in_commit_timestamp=c["in_commit_timestamp"],
        )
        for c in state["commits"]
    ]


def catalog_state(case: Path, location: str) -> tuple[dict[str, Any], list[RatifiedCommit]]:
    """The case's ``catalog.json`` and its commits for a copy at ``location``."""
    state: dict[str, Any] = json.loads((case / "catalog.json").read_text())
    return state, seed_commits(state, location)


def copy_table(case: Path, storage: Storage, location: str) -> None:
    """Write every file of the case's ``table/`` under ``location``."""
    table = case / "table"
    for path in sorted(table.rglob("*")):
        if path.is_file():
            storage.put(f"{location}/{path.relative_to(table).as_posix()}", path.read_bytes())
