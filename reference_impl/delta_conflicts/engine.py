"""The Delta model (conformance/model/delta) as an engine implementing ``DeltaEngine``.

``begin`` plans the operation on the latest snapshot and writes its data files; the commit file is
not written until ``release``, which then checks every winning commit and rebases or aborts.
Catalog-managed tables commit through the reference catalog, in process (``catalog.py``); their
ratified commits are published when the schedule says (``publish``).
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.contract.delta_engine import DeltaSetup, NotSupported
from conformance.contract.iceberg import CommitResult, Operation, TableRead
from conformance.model.delta import CORRECTED, DeltaModel, Preset, Transaction
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta_conflicts.catalog import CatalogArbiter, open_catalog


@dataclass
class _Table:
    model: DeltaModel
    started: int = 0  # operations begun: names their transactions and files


class ModelHeldCommit:
    """A planned transaction waiting before its commit file."""

    def __init__(self, model: DeltaModel, txn: Transaction) -> None:
        self._model = model
        self._txn = txn
        self._result: CommitResult | None = None

    @property
    def start_version(self) -> int:
        return self._txn.start_version

    def release(self) -> CommitResult:
        if self._result is None:
            self._result = self._model.commit(self._txn)
        return self._result

    def publish(self) -> list[int]:
        """Publish this commit's version and every ratified one before it (catalog-managed)."""
        version = self._result.version if self._result is not None else None
        return [] if version is None else self._model.publish(version)


class DeltaModelEngine:
    """The correct reference Delta engine by default (the ``CORRECTED`` preset); other presets give
    the faulty variants, and ``catalog`` a faulty reference catalog for catalog-managed tables."""

    def __init__(self, preset: Preset = CORRECTED, catalog: type[ReferenceCatalog] = ReferenceCatalog) -> None:
        self.preset = preset
        self._catalog_cls = catalog
        self._catalog: ReferenceCatalog | None = None
        self._tables: dict[str, _Table] = {}

    def create_table(self, name: str, setup: DeltaSetup) -> TableRead:
        if name in self._tables:
            raise ValueError(f"table {name} exists")
        if setup.catalog_managed and not self.preset.catalog_managed:
            raise NotSupported(f"{self.preset.name} writes path-based tables only, not catalog-managed ones")
        arbiter = None
        if setup.catalog_managed:
            if self._catalog is None:
                self._catalog = open_catalog(self._catalog_cls)
            arbiter = CatalogArbiter(self._catalog, f"t{len(self._tables)}")
        self._tables[name] = _Table(DeltaModel(setup, self.preset, catalog=arbiter))
        return self.read(name)

    def begin(self, table: str, writer: int, op: Operation) -> ModelHeldCommit:
        t = self._tables[table]
        txn = t.model.begin(f"w{writer}t{t.started}", op)
        t.started += 1
        return ModelHeldCommit(t.model, txn)

    def read(self, table: str, version: int | None = None) -> TableRead:
        return self._tables[table].model.read(version)

    def close(self) -> None:
        self._tables.clear()
        if self._catalog is not None:
            self._catalog.close()
            self._catalog = None
