"""Registry of deliberately faulty variants of the reference implementation.

Each variant breaks exactly one behaviour; ``breaks`` names the requirement IDs
whose checks must catch it (asserted by the self-test).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Side = Literal["catalog", "client", "engine"]


@dataclass(frozen=True)
class Fault:
    name: str
    side: Side
    description: str
    breaks: tuple[str, ...]
    # For side="catalog": a subclass of ReferenceCatalog; "client": of ReferenceClient;
    # "engine": a callable taking the TargetEnv and returning an IcebergEngine.
    cls: Callable[..., object]


FAULTS: dict[str, Fault] = {}


def fault(name: str, side: Side, breaks: tuple[str, ...], description: str) -> Callable[[type], type]:
    """Class decorator registering a faulty variant."""

    def register(cls: type) -> type:
        if name in FAULTS:
            raise ValueError(f"duplicate fault {name}")
        FAULTS[name] = Fault(name, side, description, breaks, cls)
        return cls

    return register


def all_faults() -> dict[str, Fault]:
    # Importing the modules registers their variants.
    from reference_impl.faults import catalog_faults, client_faults  # noqa: F401

    if importlib.util.find_spec("reference_impl.faults.engine_faults"):  # the Iceberg engine variants
        importlib.import_module("reference_impl.faults.engine_faults")
    if importlib.util.find_spec("reference_impl.faults.delta_engine_faults"):  # the Delta engine variants
        importlib.import_module("reference_impl.faults.delta_engine_faults")

    return dict(sorted(FAULTS.items()))
