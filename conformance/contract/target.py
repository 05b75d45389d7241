"""What a target is: the system under test, able to build a catalog, a client, an engine, or several.

``Target`` lists what every target has. ``TargetBase`` declares, with their defaults, the optional
members lakecert also looks for; an adapter may subclass it or simply define the members it needs
(structural typing). lakecert reads the optional members only through the functions at the end of
this module, so their names and types are written down once."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, runtime_checkable

from conformance.contract.delta import Catalog, DeltaClient, NotSupported, Storage

if TYPE_CHECKING:
    from conformance.contract.delta_engine import DeltaEngine
    from conformance.contract.iceberg import IcebergEngine
    from conformance.contract.iceberg_catalog import RestCatalogEndpoint


@dataclass(frozen=True)
class S3Settings:
    """How to reach an S3-compatible store; what a client in another process (a JVM) needs as well."""

    endpoint_url: str
    region: str = "us-east-1"
    access_key_id: str | None = None
    secret_access_key: str | None = None


@dataclass(frozen=True)
class UCEndpoint:
    """Where a client reaches a catalog over Unity Catalog's API, and where its tables are named.

    Given to a client target (``TargetEnv.catalog_endpoint``) when its client is bound to such a
    catalog (interop profile), so a client that talks to catalogs over HTTP itself (a JVM) goes
    to that server rather than to the Python ``Catalog`` object it is handed."""

    url: str
    token: str | None = None
    catalog: str = "unity"
    schema: str = "default"
    name_suffix: str = ""  # appended to every table name (run-scoped names of the ``uc`` target)

    def full_name(self, name: str) -> tuple[str, str, str]:
        """The three-part UC name of a check's table ``name``."""
        return self.catalog, self.schema, name + self.name_suffix


Kind = Literal["reference", "faulty", "third-party"]
Side = Literal["catalog", "client", "engine", "iceberg-catalog"]


@dataclass
class TargetEnv:
    """What lakecert hands a target when it builds its parts."""

    workdir: Path  # private scratch space for this run (e.g. an embedded database)
    warehouse_uri: str  # where tables of this run live (file:// or s3://)
    storage: Storage  # the object store lakecert observes; clients should use it
    options: dict[str, Any] = field(default_factory=dict)  # the target's `options` from the config
    s3: S3Settings | None = None  # the store's settings when the warehouse is on S3, for clients in other processes
    seed: int = 0  # the run's seed: a target that generates names or UUIDs should derive them from it
    # Interop: the client is bound to a catalog reachable over UC's API at this endpoint (None: use
    # the ``Catalog`` object ``make_client`` is given, e.g. the reference catalog).
    catalog_endpoint: UCEndpoint | None = None


class TargetUnavailable(Exception):
    """Raised by ``preflight`` when the system under test cannot be reached or does not speak the API.

    The run stops before any check with one line naming what was tried and why it failed (exit 2):
    an unreachable target says nothing about conformance."""


class IcebergBudget(TypedDict):
    """How much of the Iceberg profile a run explores by default (see docs/certify.md)."""

    matrix: Literal["full", "core"]  # 16 table configurations, or one mode for UPDATE and DELETE (8)
    exhaustive: bool  # every interleaving of every operation pair, and the generated schedules


@runtime_checkable
class Target(Protocol):
    """A third-party adapter implements this; built-in targets do too.

    ``sides`` says what the target provides. For a side it lacks, lakecert uses
    its reference implementation as the counterpart (e.g. a client target is
    bound to the reference catalog, which records what the client does).
    """

    name: str
    kind: Kind
    sides: frozenset[Side]

    def version(self) -> str: ...

    def make_catalog(self, env: TargetEnv) -> Catalog:
        """Called once per run when "catalog" is in ``sides``."""

    def make_client(self, catalog: Catalog, env: TargetEnv) -> DeltaClient:
        """Called once per check when "client" is in ``sides``; bind the client to ``catalog``."""

    def close(self) -> None: ...


class TargetBase:
    """Every optional member of a target, with the default lakecert assumes when it is absent."""

    #: The only profiles the target can be judged on (None: every profile it has a side for), e.g.
    #: clients without catalog support, which only have ``delta-cm-path-access``.
    profiles: frozenset[str] | None = None
    #: The Iceberg budget when the configuration says ``auto`` (None: the full budget).
    iceberg_budget: IcebergBudget | None = None
    #: Whether ``delta-row-conflicts`` runs its exhaustive and generated schedules (a slow real engine
    #: may say no: the directed checks only).
    delta_exhaustive: bool = True

    #: A faulty variant of one side stands for a product that ships both (its other side correct):
    #: True makes it judged on the interop profile too, its client through its own catalog.
    interop_pair: bool = False

    #: Every part of the target is built in the process that uses it, and nothing it builds is shared
    #: with another process (no server, JVM or store outside it): lakecert may then share a run's
    #: checks among processes of its own, each building the target anew (``jobs``).
    in_process: bool = False

    def uc_endpoint(self) -> UCEndpoint | None:
        """Catalog targets speaking Unity Catalog's API: where clients in other processes reach them."""
        return None

    def preflight(self) -> None:
        """One cheap call before any check (network targets): raise ``TargetUnavailable`` if the
        system cannot be reached or does not speak the expected API."""

    def make_engine(self, env: TargetEnv) -> IcebergEngine:
        """Targets with the ``engine`` side build the Iceberg engine under test, once per run."""
        raise NotSupported("this target has no Iceberg engine")

    def make_delta_engine(self, env: TargetEnv) -> DeltaEngine:
        """Targets judged on ``delta-row-conflicts`` build the Delta engine under test, once per run."""
        raise NotSupported("this target has no Delta engine")

    def make_iceberg_catalog(self, env: TargetEnv) -> RestCatalogEndpoint:
        """Targets with the ``iceberg-catalog`` side hand over their REST catalog, once per run."""
        raise NotSupported("this target has no Iceberg REST catalog")


FULL_BUDGET: IcebergBudget = {"matrix": "full", "exhaustive": True}


def declared_profiles(target: Target) -> frozenset[str] | None:
    found = getattr(target, "profiles", None)
    return None if found is None else frozenset(found)


def declared_iceberg_budget(target: Target) -> IcebergBudget:
    found: IcebergBudget | None = getattr(target, "iceberg_budget", None)
    return found or FULL_BUDGET


def declared_delta_exhaustive(target: Target) -> bool:
    return bool(getattr(target, "delta_exhaustive", True))


def make_delta_engine(target: Target, env: TargetEnv) -> DeltaEngine:
    if "engine" not in target.sides or not offers(target, "make_delta_engine"):
        raise TypeError(f"target {target.name} has no make_delta_engine(env) for delta-row-conflicts")
    engine: DeltaEngine = target.make_delta_engine(env)  # type: ignore[attr-defined]
    return engine


def declared_uc_endpoint(target: Target) -> UCEndpoint | None:
    found = getattr(target, "uc_endpoint", None)
    endpoint = found() if callable(found) else None
    return endpoint if isinstance(endpoint, UCEndpoint) else None


def pairs_itself(target: Target) -> bool:
    """Whether the target is judged as a pair, its client through its own catalog (interop)."""
    return {"catalog", "client"} <= target.sides or bool(getattr(target, "interop_pair", False))


def run_preflight(target: Target) -> None:
    check = getattr(target, "preflight", None)
    if callable(check):
        check()


def offers(target: Target, member: str) -> bool:
    """Whether the target really implements an optional method (not ``TargetBase``'s refusal)."""
    own = getattr(type(target), member, None)
    return callable(getattr(target, member, None)) and own is not getattr(TargetBase, member, None)


# The engine profiles, and the method a target with the ``engine`` side needs for each.
ENGINE_FACTORIES = {"iceberg-row-delta": "make_engine", "delta-row-conflicts": "make_delta_engine"}


def has_engine(target: Target) -> bool:
    return "engine" in target.sides and offers(target, "make_engine")


def make_engine(target: Target, env: TargetEnv) -> IcebergEngine:
    if not has_engine(target):
        raise TypeError(f"target {target.name} has the engine side but no make_engine(env)")
    engine: IcebergEngine = target.make_engine(env)  # type: ignore[attr-defined]
    return engine


def make_iceberg_catalog(target: Target, env: TargetEnv) -> RestCatalogEndpoint:
    build = getattr(target, "make_iceberg_catalog", None)
    if "iceberg-catalog" not in target.sides or not callable(build):
        raise TypeError(f"target {target.name} has the iceberg-catalog side but no make_iceberg_catalog(env)")
    endpoint: RestCatalogEndpoint = build(env)
    return endpoint
