"""The clean-room target: the catalog and the client of this package, loaded as ``module:Class``."""

from __future__ import annotations

from typing import ClassVar

from conformance.contract.delta import Catalog, DeltaClient
from conformance.contract.target import Side, TargetEnv
from tests.cleanroom.catalog import CleanCatalog
from tests.cleanroom.client import CleanClient


class CleanRoomTarget:
    """Both sides; a variant swaps ``catalog_cls`` or ``client_cls`` for a faulty subclass."""

    name = "cleanroom"
    kind = "third-party"
    sides: frozenset[Side] = frozenset({"catalog", "client"})
    catalog_cls: ClassVar[type[CleanCatalog]] = CleanCatalog
    client_cls: ClassVar[type[CleanClient]] = CleanClient

    def version(self) -> str:
        return f"cleanroom 0.1 ({self.catalog_cls.__name__}, {self.client_cls.__name__})"

    def make_catalog(self, env: TargetEnv) -> Catalog:
        return self.catalog_cls(env.warehouse_uri, env.storage)

    def make_client(self, catalog: Catalog, env: TargetEnv) -> DeltaClient:
        return self.client_cls(catalog, env.storage)

    def close(self) -> None:
        pass
