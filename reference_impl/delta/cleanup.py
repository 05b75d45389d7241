"""Metadata cleanup planning (RFC "Metadata Cleanup", as changed for catalog-managed tables).

Pure functions from a listing of ``_delta_log`` to the URIs to delete, so the rules are
unit-testable without storage.
"""

from __future__ import annotations

from collections.abc import Iterable

from reference_impl.delta.log_paths import LogFile, parse_log_name


def log_files(uris: Iterable[str]) -> list[LogFile]:
    return [f for f in (parse_log_name(u) for u in uris) if f is not None]


def cut_off_checkpoint(files: Iterable[LogFile], cutoff_version: int) -> int | None:
    """Step 2: the newest checkpoint not newer than the cut-off commit, or None."""
    versions = [f.version for f in files if f.kind == "checkpoint" and f.version <= cutoff_version]
    return max(versions, default=None)


def deletable(f: LogFile, checkpoint_version: int) -> bool:
    """Step 3, given the cut-off checkpoint's version ``cp``."""
    cp = checkpoint_version
    if f.kind in ("delta", "checkpoint", "checksum"):
        return f.version < cp  # keeps the checkpoint and every published commit from cp on
    if f.kind == "compaction":
        return f.version <= cp  # startVersion <= cp
    if f.kind == "staged":
        return f.version <= cp  # RFC addition: staged commits at or below cp
    return False


def files_to_delete(files: Iterable[LogFile], checkpoint_version: int) -> list[str]:
    return sorted(f.uri for f in files if deletable(f, checkpoint_version))


def plan_cleanup(uris: Iterable[str], cutoff_version: int) -> list[str]:
    """URIs to delete; nothing when there is no checkpoint at or before the cut-off (step 2)."""
    files = log_files(uris)
    cp = cut_off_checkpoint(files, cutoff_version)
    return [] if cp is None else files_to_delete(files, cp)
