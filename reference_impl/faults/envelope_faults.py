"""Faulty variants found only at the edges of a limit: names, inline size, unpublished cap, pages,
actions per commit (issue 28 item 4).

Each is the reference catalog with one limit handled wrong: cut or dropped instead of refused, a
refusal that still changes the catalog, a listing that stops at its first page, a limit declared
that the catalog does not keep. The checks are conformance/checks/delta/catalog/test_envelope.py.
"""

from __future__ import annotations

import dataclasses
import unicodedata

from conformance.contract.delta import CatalogLimits, InvalidRequest, RatifiedCommit, TableInfo, TableNotFound
from reference_impl.catalog.catalog import NAME_LENGTH, ReferenceCatalog
from reference_impl.catalog.store import TABLE_COLUMNS, TableRow, Tx
from reference_impl.faults.base import fault

NAME_COLUMN = 100  # a VARCHAR(100) column that cuts what does not fit (MySQL outside strict mode)
INLINE_COLUMN = 64 * 1024  # a 64 KiB BLOB column that cuts what does not fit
DROPPING_CAP = 8
MARKED_CAP = 12
ENFORCED_CAP, OVERSTATED_CAP = 16, 32
PAGE = 8


@fault(
    "truncate-long-names",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description=f"Stores and looks up table names cut to {NAME_COLUMN} characters: two long names meet in one table.",
)
class TruncateLongNames(ReferenceCatalog):
    LIMITS = dataclasses.replace(ReferenceCatalog.LIMITS, name_length=None)  # it believes it has none

    def register_table(self, name: str, table_id: str) -> TableInfo:
        return super().register_table(name[:NAME_COLUMN] if isinstance(name, str) else name, table_id)

    def resolve(self, name: str) -> TableInfo:
        return super().resolve(name[:NAME_COLUMN] if isinstance(name, str) else name)


def _folded(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


@fault(
    "fold-names-on-resolve",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="Registers names as given but resolves them case-folded and NFC-normalised: 'Caps' and 'caps' meet.",
)
class FoldNamesOnResolve(ReferenceCatalog):
    def resolve(self, name: str) -> TableInfo:
        if not isinstance(name, str):
            return super().resolve(name)
        with self._store.read() as tx:
            rows = tx.conn.execute(f"SELECT {TABLE_COLUMNS} FROM tables WHERE name IS NOT NULL ORDER BY name")
            found = [TableRow(*r) for r in rows.fetchall() if _folded(r[1]) == _folded(name)]
        if not found:
            raise TableNotFound(name)
        return self._table_info(found[0])  # the first in the column's order, whichever was asked for


@fault(
    "name-refusal-registers",
    "catalog",
    breaks=("CAT-LIMIT-CLEAN-REFUSAL",),
    description=f"Refuses names past {NAME_LENGTH} characters only after registering them: the refused name resolves.",
)
class NameRefusalRegisters(ReferenceCatalog):
    def _check_name_length(self, name: str) -> None:
        return None  # checked after the registration below

    def register_table(self, name: str, table_id: str) -> TableInfo:
        info = super().register_table(name, table_id)
        if len(name) > NAME_LENGTH:
            raise InvalidRequest(f"table names have at most {NAME_LENGTH} characters")
        return info


@fault(
    "truncate-inline",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description=f"Accepts inline commits of any size and stores them cut to {INLINE_COLUMN // 1024} KiB.",
)
class TruncateInline(ReferenceCatalog):
    LIMITS = dataclasses.replace(ReferenceCatalog.LIMITS, inline_bytes=None)

    def _write_commit(self, tx: Tx, table_id: str, commit: RatifiedCommit) -> None:
        content = commit.inline_content
        if content is not None:
            commit = dataclasses.replace(commit, inline_content=content[:INLINE_COLUMN])
        super()._write_commit(tx, table_id, commit)


@fault(
    "drop-oldest-unpublished",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description=f"Past {DROPPING_CAP} unpublished commits it drops the oldest to make room instead of refusing.",
)
class DropOldestUnpublished(ReferenceCatalog):
    LIMITS = dataclasses.replace(ReferenceCatalog.LIMITS, unpublished=DROPPING_CAP)

    def _check_unpublished(self, row: TableRow, version: int) -> None:
        return None  # never refuses: makes room in _write_commit

    def _write_commit(self, tx: Tx, table_id: str, commit: RatifiedCommit) -> None:
        super()._write_commit(tx, table_id, commit)
        tx.delete_commits(table_id, up_to=commit.version - DROPPING_CAP)


@fault(
    "overstate-unpublished-cap",
    "catalog",
    breaks=("CAT-LIMIT-DECLARED",),
    description=f"Declares a cap of {OVERSTATED_CAP} unpublished commits but refuses past {ENFORCED_CAP}.",
)
class OverstateUnpublishedCap(ReferenceCatalog):
    LIMITS = dataclasses.replace(ReferenceCatalog.LIMITS, unpublished=ENFORCED_CAP)

    @classmethod
    def declared_limits(cls) -> CatalogLimits:
        return dataclasses.replace(cls.LIMITS, unpublished=OVERSTATED_CAP)


@fault(
    "first-page-only",
    "catalog",
    breaks=("CAT-LIST-CONTIGUOUS",),
    description=f"Declares listing pages of {PAGE} commits and lists only the first page of a longer listing.",
)
class FirstPageOnly(ReferenceCatalog):
    LIMITS = dataclasses.replace(ReferenceCatalog.LIMITS, page_size=PAGE)

    def _select_listing(self, commits: list[RatifiedCommit], start: int, end: int) -> list[RatifiedCommit]:
        return super()._select_listing(commits, start, end)[:PAGE]


@fault(
    "proposal-mark-keeps-cap-full",
    "catalog",
    breaks=("CAT-LIMIT-DECLARED",),
    description=f"Caps unpublished commits at {MARKED_CAP}; a proposal's publication mark drops rows, frees no room.",
)
class ProposalMarkKeepsCapFull(ReferenceCatalog):
    """The cap counts from the mark ``mark_published`` records; a proposal's mark only deletes rows."""

    LIMITS = dataclasses.replace(ReferenceCatalog.LIMITS, unpublished=MARKED_CAP)

    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        super()._ratify(table_id, proposal, None, content)
        if published is not None:
            with self._store.write() as tx:
                self._drop_on_publish(tx, table_id, published)


@fault(
    "unpublished-cap-of-ten",
    "catalog",
    breaks=(),
    description="Declares and keeps Unity Catalog's cap of 10 unpublished commits, freed by any publication report.",
)
class UnpublishedCapOfTen(ReferenceCatalog):
    LIMITS = dataclasses.replace(ReferenceCatalog.LIMITS, unpublished=10)
