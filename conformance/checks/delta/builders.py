"""Scenario builders: the suite writes table states directly, as a trusted writer would.

Reader checks need states no correct writer leaves behind on purpose (a stale
published file beside the catalog's commit, files above the latest version,
rejected and partial staged files), so the suite writes them itself and seeds
the reference catalog with ``import_table``.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field

from conformance.contract.delta import Catalog, StagingTable, Storage, TableInfo
from reference_impl.delta import actions as A
from reference_impl.delta import log_paths as P
from reference_impl.delta.data_files import write_data_file

BASE_ICT = 1_600_000_000_000  # 2020-09-13: far from "now", so file times never agree by chance
ICT_STEP = 60_000


# Unity Catalog clients (Delta Kernel's among them) read a table's id from this table property.
UC_TABLE_ID = "io.unitycatalog.tableId"

_names = random.Random(0)


def reseed(seed: int) -> None:
    """Called before every check with the check's seed, so that the suite's own names and ids
    (staged files, txnIds, table folders) are the same in every run with the run's seed."""
    _names.seed(seed)


def new_uuid() -> str:
    return str(uuid.UUID(int=_names.getrandbits(128), version=4))


def ict_of(version: int) -> int:
    """The in-commit timestamp the builders give a version."""
    return BASE_ICT + version * ICT_STEP


def version0(table_id: str, properties: dict[str, str] | None = None) -> bytes:
    """The creating commit of a catalog-managed table (RFC "Catalog-managed Table Enablement"),
    with ``properties`` added to its configuration."""
    return A.encode_commit(
        [
            A.commit_info_action(ict_of(0), new_uuid(), "CREATE TABLE"),
            A.protocol_action(),
            A.metadata_action(table_id, ict_of(0), {**A.default_configuration(), **(properties or {})}),
        ]
    )


@dataclass
class LogBuilder:
    """Writes data files and commit files of one table."""

    storage: Storage
    location: str
    staged: dict[int, list[str]] = field(default_factory=dict)

    def data_commit(self, version: int, value: str | None = None, ict: int | None = None) -> bytes:
        """A commit adding one row ``{id: version, value}`` in its own data file."""
        add = write_data_file(
            self.storage,
            self.location,
            [{"id": version, "value": value or f"v{version}"}],
            modification_time=ict_of(version),
        )
        return A.encode_commit(
            [
                A.commit_info_action(ict if ict is not None else ict_of(version), new_uuid(), "WRITE"),
                add,
            ]
        )

    def publish(self, version: int, content: bytes) -> str:
        uri = P.delta_uri(self.location, version)
        self.storage.put(uri, content)
        return uri

    def stage(self, version: int, content: bytes) -> str:
        uri = P.staged_uri(self.location, version, new_uuid())
        self.storage.put(uri, content)
        self.staged.setdefault(version, []).append(uri)
        return uri


def expected_rows(versions: range | list[int], values: dict[int, str] | None = None) -> list[dict[str, object]]:
    """Rows a reader must return when the given data versions are in its snapshot."""
    values = values or {}
    return [{"id": v, "value": values.get(v, f"v{v}")} for v in versions if v > 0]


@dataclass
class CatalogDriver:
    """Drives a catalog the way a well-behaved client would: create, stage, propose."""

    catalog: Catalog
    storage: Storage

    def new_table(self, name: str) -> TableInfo:
        st: StagingTable = self.catalog.create_staging_table()
        self.storage.put(P.delta_uri(st.location, 0), version0(st.table_id), if_absent=True)
        return self.catalog.register_table(name, st.table_id)

    def stage(self, table: TableInfo, version: int) -> str:
        return LogBuilder(self.storage, table.location).stage(
            version, LogBuilder(self.storage, table.location).data_commit(version)
        )

    def propose(self, table: TableInfo, version: int) -> str:
        """Stage and propose ``version``; return the staged URI (raises what the catalog raises)."""
        uri = self.stage(table, version)
        self.catalog.commit(table.table_id, version, staged_uri=uri, in_commit_timestamp=ict_of(version))
        return uri

    def commit_range(self, table: TableInfo, first: int, last: int) -> dict[int, str]:
        return {v: self.propose(table, v) for v in range(first, last + 1)}

    def publish(self, table: TableInfo, upto: int) -> None:
        """Publish every listed commit up to ``upto`` (copy to ``_delta_log/<v>.json``), then tell the catalog."""
        for commit in self.catalog.get_commits(table.table_id, None, upto).commits:
            uri = P.delta_uri(table.location, commit.version)
            content = commit.inline_content if commit.staged_uri is None else self.storage.get(commit.staged_uri)
            if content is not None and not self.storage.exists(uri):
                self.storage.put(uri, content, if_absent=True)
        self.catalog.mark_published(table.table_id, upto)
