"""Every registered faulty variant of the reference implementation, by name.

The fault modules register their variants with ``base.fault`` when imported. The Delta and Iceberg
engine, catalog and client modules are imported here, at the top. The Iceberg REST catalog variants
need pyiceberg (the ``iceberg`` extra), and importing it and the REST service's web stack cost about
a fifth of a Delta-only run (docs/benchmarks.md): they are registered on the first call that needs
every variant, and only where pyiceberg is installed.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util

from reference_impl.faults import (
    catalog_faults,
    client_faults,
    delta_engine_faults,
    edge_faults,
    engine_faults,
    envelope17_faults,
    envelope_faults,
    history_faults,
    lead17_faults,
    maint17_faults,
    names17_faults,
    nemesis_faults,
    oracle_faults,
    s18_catalog_faults,
    s18_names_faults,
    s18_reader_faults,
    s18_writer_faults,
    s19_catalog_faults,
    s19_reader_faults,
    s19_writer_faults,
    s19b_writer_faults,
    s20_names_faults,
    s20_reader_faults,
    s20_state_faults,
    s20_writer_faults,
    s21_location_faults,
    s21_names_faults,
    s21_propose_faults,
    s21_publish_faults,
    s21_reader_faults,
    s21_register_faults,
    s21_retain_faults,
    s21_writer16_faults,
    s21_writer_faults,
    s22_catalog_faults,
    s22_maint_faults,
    s22_names_faults,
    s22_reader_faults,
    s22_writer_faults,
    shape_faults,
    writers17_faults,
)
from reference_impl.faults.base import FAULTS, Fault, Side, fault

__all__ = ["Fault", "Side", "all_faults", "fault", "find_fault"]
_MODULES = (
    catalog_faults,
    client_faults,
    engine_faults,
    delta_engine_faults,
    history_faults,
    lead17_faults,
    maint17_faults,
    names17_faults,
    edge_faults,
    nemesis_faults,
    envelope_faults,
    envelope17_faults,
    oracle_faults,
    shape_faults,
    s18_catalog_faults,
    s18_names_faults,
    s18_writer_faults,
    s18_reader_faults,
    s19_catalog_faults,
    s19_writer_faults,
    s19b_writer_faults,
    s19_reader_faults,
    s20_names_faults,
    s20_state_faults,
    s20_writer_faults,
    s20_reader_faults,
    s21_names_faults,
    s21_retain_faults,
    s21_location_faults,
    s21_writer_faults,
    s21_propose_faults,
    s21_register_faults,
    s21_writer16_faults,
    s21_publish_faults,
    s21_reader_faults,
    s22_names_faults,
    s22_catalog_faults,
    s22_writer_faults,
    s22_maint_faults,
    s22_reader_faults,
    writers17_faults,
)  # imported for their registrations


@functools.cache
def _register_iceberg_catalog_faults() -> None:
    if importlib.util.find_spec("pyiceberg"):
        importlib.import_module("reference_impl.faults.iceberg_catalog_faults")  # registers its variants


def all_faults() -> dict[str, Fault]:
    _register_iceberg_catalog_faults()
    return dict(sorted(FAULTS.items()))


def find_fault(name: str) -> Fault | None:
    """The variant of that name; the Iceberg REST catalog variants are imported only if it is none of the others."""
    return FAULTS.get(name) or all_faults().get(name)
