"""The executable Delta conflict model (profile ``delta-row-conflicts``): the protocol's actions
(add and remove with deletion vectors, metaData, protocol, txn, commitInfo), a log replayed into
snapshots, INSERT, UPDATE, DELETE, MERGE, OPTIMIZE and a table property change, and the conflict
checks of Serializable and WriteSerializable switchable through a ``Preset``."""

from conformance.model.delta.conflicts import Conflict, check
from conformance.model.delta.model import DeltaModel
from conformance.model.delta.presets import CORRECTED, DELTA_KERNEL_BEFORE_7163, DELTA_RS_1_6, DELTA_SPARK, Preset
from conformance.model.delta.transaction import Transaction, plan

__all__ = [
    "CORRECTED",
    "DELTA_KERNEL_BEFORE_7163",
    "DELTA_RS_1_6",
    "DELTA_SPARK",
    "Conflict",
    "DeltaModel",
    "Preset",
    "Transaction",
    "check",
    "plan",
]
