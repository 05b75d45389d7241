"""What a faulty variant is, and the decorator that registers one (``registry.all_faults`` lists them).

Each variant breaks exactly one behaviour; ``breaks`` names the requirement IDs
whose checks must catch it (asserted by the self-test). A variant with ``breaks=()`` is a
conformant variant: a behaviour real systems show that the RFC allows (Unity Catalog OSS's
newest-first listing, a conflict without a number, a catalog that keeps only staged locations);
the self-test asserts that it is certified, so lakecert is seen not to raise false alarms.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Side = Literal["catalog", "client", "engine", "iceberg-catalog"]


@dataclass(frozen=True)
class Fault:
    name: str
    side: Side
    description: str
    breaks: tuple[str, ...]
    # For side="catalog": a subclass of ReferenceCatalog; "client": of ReferenceClient;
    # "engine": a callable taking the TargetEnv and returning an IcebergEngine;
    # "iceberg-catalog": a subclass of reference_impl.iceberg_rest.catalog.RestCatalogService.
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
