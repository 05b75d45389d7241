"""What the nemesis's catalogs share: an object between a client under test and its catalog.

``Between`` forwards every call to the catalog it wraps and counts them: a client that never calls it
(an engine in another process talking to its catalog by itself) leaves ``calls`` at 0, which the
checks read as "could not reach this client", never as a pass. Its subclasses (``NemesisCatalog``,
``ShapedCatalog``) change what some calls do; the rest pass through as here."""

from __future__ import annotations

from conformance.contract.delta import Catalog, MaintenancePolicy, StagingTable, TableInfo


class Between:
    def __init__(self, inner: Catalog) -> None:
        self._inner = inner
        self.calls = 0  # every call the client made through this object

    @property
    def inner(self) -> Catalog:
        """The catalog behind this object and its recorder (adapters find the reference's database
        through one ``.inner``)."""
        behind: Catalog = getattr(self._inner, "inner", self._inner)
        return behind

    @property
    def over_http(self) -> Catalog:
        """What an adapter serving the catalog to a client in another process serves instead of this
        object (``delta_kernel/target.py``): here the catalog as it is. A lost answer raised here
        would reach such a client as a server error after the catalog acted, which is not a lost
        answer, so ``NemesisCatalog`` keeps this and such a client makes no call through it;
        ``ShapedCatalog``, whose answers UC's API carries, serves itself."""
        return self._inner

    def create_staging_table(self) -> StagingTable:
        self.calls += 1
        return self._inner.create_staging_table()

    def register_table(self, name: str, table_id: str) -> TableInfo:
        self.calls += 1
        return self._inner.register_table(name, table_id)

    def resolve(self, name: str) -> TableInfo:
        self.calls += 1
        return self._inner.resolve(name)

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        self.calls += 1
        return self._inner.maintenance_policy(table_id)
