"""The Delta model (conformance/model/delta) as an engine implementing ``DeltaEngine``.

``begin`` plans the operation on the latest snapshot and writes its data files; the commit file is
not written until ``release``, which then checks every winning commit and rebases or aborts.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.contract.delta_engine import DeltaSetup
from conformance.contract.iceberg import CommitResult, Operation, TableRead
from conformance.model.delta import CORRECTED, DeltaModel, Preset, Transaction


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


class DeltaModelEngine:
    """The correct reference Delta engine by default (the ``CORRECTED`` preset); other presets give
    the faulty variants."""

    def __init__(self, preset: Preset = CORRECTED) -> None:
        self.preset = preset
        self._tables: dict[str, _Table] = {}

    def create_table(self, name: str, setup: DeltaSetup) -> TableRead:
        if name in self._tables:
            raise ValueError(f"table {name} exists")
        self._tables[name] = _Table(DeltaModel(setup, self.preset))
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
