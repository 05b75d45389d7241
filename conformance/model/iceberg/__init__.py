"""The executable model of ``iceberg-concurrency-model.md``: roles Writer, Catalog and
ObjectStore; one table of three columns (the first is the id); INSERT, UPDATE and DELETE in
copy-on-write or merge-on-read mode, data file compaction; snapshot or serializable isolation;
validations switchable per operation kind through a ``Preset``.
"""

from conformance.model.iceberg.choices import Action, Bounds, actions, apply, operations, reduced_actions
from conformance.model.iceberg.describe import describe
from conformance.model.iceberg.model import IcebergModel
from conformance.model.iceberg.presets import CORRECTED, SPARK, Preset
from conformance.model.iceberg.recording import history_of
from conformance.model.iceberg.validation import ALL, NONE, Validations
from conformance.model.iceberg.world import World, initial_world
from conformance.model.iceberg.writer import Step, Writer

__all__ = [
    "ALL",
    "CORRECTED",
    "NONE",
    "SPARK",
    "Action",
    "Bounds",
    "IcebergModel",
    "Preset",
    "Step",
    "Validations",
    "World",
    "Writer",
    "actions",
    "apply",
    "describe",
    "history_of",
    "initial_world",
    "operations",
    "reduced_actions",
]
