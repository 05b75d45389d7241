"""Path-based access (``conformance/contract/path_access.py``), as the reference client does it.

Given only a table's location, the client reads the table's protocol from the published log
(``_delta_log/<v>.json`` and checkpoints: all there is without a catalog) and refuses a table
whose protocol carries ``catalogManaged``:

- reading: Delta readers must not read a table with a reader feature they cannot honour, and a
  catalog-managed table can only be read through its catalog (RFC "Catalog-managed tables",
  "Reader Requirements for Catalog-managed tables");
- writing: writers must not perform filesystem-based commits against it (RFC "Writer
  Requirements for Catalog-managed tables").

Any other (ordinary) table is read and appended to the filesystem way: published files only,
commits written put-if-absent to ``_delta_log/<v>.json``. That part exists so that the faulty
variants ``path-reader`` and ``path-writer`` only switch off one refusal hook each.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from conformance.contract.delta import Storage
from reference_impl.delta import actions as act
from reference_impl.delta.checkpoint import read_checkpoint
from reference_impl.delta.data_files import Row, write_data_file
from reference_impl.delta.log_paths import delta_uri, log_dir
from reference_impl.delta.snapshot import Snapshot, listed_log_files, read_rows, replay


class CatalogManagedPathAccessError(Exception):
    """Path-based access to a catalog-managed table: it must go through its managing catalog."""


class NotADeltaTableError(Exception):
    """No published protocol or metadata at the location."""


def is_catalog_managed(protocol: dict[str, Any]) -> bool:
    """RFC "Catalog-managed Table Enablement": the feature in readerFeatures or writerFeatures.

    Either list is enough to refuse: a table that lists it anywhere is not an ordinary table.
    """
    features = [*(protocol.get("readerFeatures") or []), *(protocol.get("writerFeatures") or [])]
    return act.CATALOG_MANAGED in features


def published_snapshot(storage: Storage, location: str) -> Snapshot:
    """The table as the published log alone shows it: newest checkpoint, then contiguous commits."""
    entries = listed_log_files(storage.list(log_dir(location) + "/"))
    deltas = {lf.version: lf.uri for lf, _ in entries if lf.kind == "delta"}
    checkpoints = sorted(lf.version for lf, _ in entries if lf.kind == "checkpoint")
    base: list[act.Action] = []
    first = 0
    for cp in reversed(checkpoints):
        try:
            base, first = read_checkpoint(storage, location, cp), cp + 1
            break
        except (OSError, ValueError, pa.ArrowException):
            continue  # unusable checkpoint: try an older one
    version = first - 1
    while version + 1 in deltas:
        version += 1
    commits = [(v, act.decode_commit(storage.get(deltas[v]))) for v in range(first, version + 1)]
    protocol, metadata, files, infos = replay(base, commits)
    if version < 0 or protocol is None or metadata is None:
        raise NotADeltaTableError(f"no published Delta table at {location}")
    return Snapshot(location, version, protocol, metadata, files, infos, first - 1 if first else None)


class PathAccess:
    """Mixed into ``ReferenceClient``: ``read_path`` / ``append_path`` of the path contract."""

    storage: Storage

    # ------------------------------------------------------------ hooks (one per faulty variant)

    def _refuse_path_read(self, snapshot: Snapshot) -> Exception | None:
        """Delta's reader-feature rule and the RFC: never read a catalog-managed table by path."""
        if is_catalog_managed(snapshot.protocol):
            return CatalogManagedPathAccessError(
                f"{snapshot.location} is a catalog-managed table (catalogManaged in its protocol at "
                f"published version {snapshot.version}): read it through its managing catalog"
            )
        return None

    def _refuse_path_write(self, snapshot: Snapshot) -> Exception | None:
        """RFC "Writer Requirements": no filesystem-based commit to a catalog-managed table."""
        if is_catalog_managed(snapshot.protocol):
            return CatalogManagedPathAccessError(
                f"{snapshot.location} is a catalog-managed table (catalogManaged in its protocol at "
                f"published version {snapshot.version}): commit through its managing catalog"
            )
        return None

    # ------------------------------------------------------------ PathClient

    def read_path(self, location: str) -> list[Row]:
        snapshot = published_snapshot(self.storage, location)
        refusal = self._refuse_path_read(snapshot)
        if refusal is not None:
            raise refusal
        return read_rows(self.storage, snapshot)

    def append_path(self, location: str, rows: Sequence[Row]) -> None:
        snapshot = published_snapshot(self.storage, location)
        refusal = self._refuse_path_write(snapshot)
        if refusal is not None:
            raise refusal
        now = time.time_ns() // 1_000_000
        ict = max(now, (snapshot.in_commit_timestamp or 0) + 1)
        add = write_data_file(self.storage, location, rows, modification_time=now)
        content = act.encode_commit([act.commit_info_action(ict, str(uuid.uuid4()), "WRITE"), add])
        # A filesystem commit: put-if-absent of the next published version.
        self.storage.put(delta_uri(location, snapshot.version + 1), content, if_absent=True)
