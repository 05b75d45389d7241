"""Every registered faulty variant of the reference implementation, by name.

The fault modules register their variants with ``base.fault`` when imported; importing them here,
at the top, means the registry is complete as soon as it is imported. The Iceberg REST catalog
variants need pyiceberg (the ``iceberg`` extra) and are registered only where it is installed.
"""

from __future__ import annotations

import importlib
import importlib.util

from reference_impl.faults import catalog_faults, client_faults, delta_engine_faults, engine_faults
from reference_impl.faults.base import FAULTS, Fault, Side, fault

if importlib.util.find_spec("pyiceberg"):
    importlib.import_module("reference_impl.faults.iceberg_catalog_faults")  # registers its variants

__all__ = ["Fault", "Side", "all_faults", "fault"]
_MODULES = (catalog_faults, client_faults, engine_faults, delta_engine_faults)  # imported for their registrations


def all_faults() -> dict[str, Fault]:
    return dict(sorted(FAULTS.items()))
