"""Built-in targets: the reference implementation and its faulty variants."""

from __future__ import annotations

from conformance.contract.delta import Catalog, CatalogLimits, DeltaClient
from conformance.contract.delta_engine import DeltaEngine
from conformance.contract.iceberg import IcebergEngine
from conformance.contract.iceberg_catalog import RestCatalogEndpoint
from conformance.contract.target import Kind, Side, TargetEnv
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta_conflicts import DeltaModelEngine
from reference_impl.faults.registry import Fault
from reference_impl.iceberg import ModelEngine

VERSION = "lakecert-reference-0.1"


def make_reference_catalog(env: TargetEnv, cls: type[ReferenceCatalog] = ReferenceCatalog) -> ReferenceCatalog:
    """A run's catalog, in its work folder: scratch, so SQLite does not wait for the disk at each
    commit (a thousand waits per default run, a fifth of its time on a VM disk; docs/benchmarks.md)."""
    return cls(env.workdir / "catalog.sqlite", env.warehouse_uri, env.storage, durable=False)


class ReferenceTarget:
    """The correct reference catalog and client, or one faulty variant of either side."""

    def __init__(self, fault: Fault | None = None) -> None:
        self.fault = fault
        self.name = f"faulty:{fault.name}" if fault else "reference"
        self.kind: Kind = "faulty" if fault else "reference"
        # A faulty variant only stands for the side it breaks; the other side stays correct.
        every: frozenset[Side] = frozenset({"catalog", "client", "engine", "iceberg-catalog"})
        self.sides: frozenset[Side] = frozenset({fault.side}) if fault else every
        # A catalog or client variant whose breaks name an interop rule is also judged as a pair,
        # its client through its own catalog (profile delta-cm-interop; the other side correct).
        self.interop_pair = bool(
            fault and fault.side in ("catalog", "client") and any(r.startswith("INT-") for r in fault.breaks)
        )
        # The reference Iceberg REST catalog is built on pyiceberg's models and served by FastAPI.
        self.profile_needs = {"iceberg-catalog-commit": (("pyiceberg", "fastapi", "uvicorn"), "iceberg")}

    def version(self) -> str:
        return VERSION

    def make_catalog(self, env: TargetEnv) -> Catalog:
        if self.fault and self.fault.side == "catalog":
            return make_reference_catalog(env, self.fault.cls)  # type: ignore[arg-type]
        return make_reference_catalog(env)

    def catalog_limits(self) -> CatalogLimits:
        """What the catalog side declares (issue 28, envelope): its class's ``declared_limits``, so
        that a faulty catalog variant may declare limits other than the reference's."""
        cls = self.fault.cls if self.fault and self.fault.side == "catalog" else ReferenceCatalog
        declared = getattr(cls, "declared_limits", ReferenceCatalog.declared_limits)
        limits = declared()
        assert isinstance(limits, CatalogLimits)
        return limits

    def restart_catalog(self, catalog: Catalog, env: TargetEnv) -> Catalog:
        """The nemesis's restart: close the catalog and open a new one on the same database, so that
        only what it stored there survives (nothing of the old object is reused)."""
        if not isinstance(catalog, ReferenceCatalog):
            raise TypeError(f"not a catalog of this target: {type(catalog).__name__}")
        catalog.close()
        return make_reference_catalog(env, type(catalog))

    def make_client(self, catalog: Catalog, env: TargetEnv) -> DeltaClient:
        cls = self.fault.cls if self.fault and self.fault.side == "client" else ReferenceClient
        client = cls(catalog, env.storage, seed=env.seed)
        assert isinstance(client, ReferenceClient)
        return client

    def make_engine(self, env: TargetEnv) -> IcebergEngine:
        """The executable Iceberg model with the corrected validations, or a faulty preset."""
        if self.fault and self.fault.side == "engine":
            engine = self.fault.cls(env)
            if isinstance(engine, ModelEngine):  # else a Delta engine variant: Iceberg stays correct
                return engine
        return ModelEngine()

    def make_iceberg_catalog(self, env: TargetEnv) -> RestCatalogEndpoint:
        """The reference Iceberg REST catalog, or its faulty variant, served for this run."""
        from reference_impl.iceberg_rest.endpoint import start_reference  # the iceberg extra: only when asked

        faulty = self.fault.cls if self.fault and self.fault.side == "iceberg-catalog" else None
        return start_reference(env, faulty)  # type: ignore[arg-type]

    def make_delta_engine(self, env: TargetEnv) -> DeltaEngine:
        """The executable Delta conflict model with the corrected preset, or a faulty preset."""
        if self.fault and self.fault.side == "engine":
            engine = self.fault.cls(env)
            if isinstance(engine, DeltaModelEngine):  # else an Iceberg engine variant: Delta stays correct
                return engine
        return DeltaModelEngine()

    def close(self) -> None:
        return None
