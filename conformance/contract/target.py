"""What a target is: the system under test, able to build a catalog, a client, an engine, or several.

``Target`` lists what every target has. ``TargetBase`` declares, with their defaults, the optional
members lakecert also looks for; an adapter may subclass it or simply define the members it needs
(structural typing). lakecert reads the optional members only through the functions at the end of
this module, so their names and types are written down once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol, TypedDict, runtime_checkable

from conformance.contract.delta import Catalog, CatalogLimits, DeltaClient, NotSupported
from conformance.contract.delta_engine import DeltaEngine

# TargetEnv, S3Settings and UCEndpoint live in ``env`` (below every contract module); they stay
# importable from here, where adapters have always found them.
from conformance.contract.env import S3Settings as S3Settings
from conformance.contract.env import TargetEnv as TargetEnv
from conformance.contract.env import UCEndpoint as UCEndpoint
from conformance.contract.iceberg import IcebergEngine
from conformance.contract.iceberg_catalog import RestCatalogEndpoint

Kind = Literal["reference", "faulty", "third-party"]
Side = Literal["catalog", "client", "engine", "iceberg-catalog"]


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

    #: Optional packages a profile needs for this target (profile -> (modules, the pip extra that
    #: provides them)): on an install without them the profile is left out of a default run with one
    #: line naming the extra, and refused when asked for by name (the reference's Iceberg REST
    #: catalog needs pyiceberg and FastAPI, which a core install lacks).
    profile_needs: dict[str, tuple[tuple[str, ...], str]] = {}

    def uc_endpoint(self) -> UCEndpoint | None:
        """Catalog targets speaking Unity Catalog's API: where clients in other processes reach them."""
        return None

    def observed_versions(self) -> dict[str, str]:
        """What really ran, part by part (``{"delta-kernel-api": "4.4.1", ...}``), asked of the
        running system or read from the artifacts it loaded, never a constant of the adapter's.
        Asked once, at the run's end; empty when nothing can be observed. Recorded in results.json,
        the certificate, the Allure environment and the gate's baseline."""
        return {}

    def catalog_limits(self) -> CatalogLimits:
        """The limits of the catalog side (name length, inline size, unpublished cap, page size,
        actions per commit); undeclared ones (``None``) are discovered by the suite."""
        return CatalogLimits()

    # ``restart_catalog(self, catalog: Catalog, env: TargetEnv) -> Catalog`` (optional, no default):
    # stop the catalog side and start it again from its own durable state, and return the catalog
    # object to use from then on (the same object for a server behind a URL). Targets without it are
    # NOT_APPLICABLE on the restart checks, which verify first that it is really absent. lakecert reads
    # it through ``restart_hook`` below; None counts as absent (docs/certify.md "The nemesis").

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


def declared_profile_needs(target: Target) -> dict[str, tuple[tuple[str, ...], str]]:
    found = getattr(target, "profile_needs", None)
    return dict(found) if isinstance(found, dict) else {}


def declared_limits(target: Target) -> CatalogLimits:
    found = getattr(target, "catalog_limits", None)
    limits = found() if callable(found) else None
    return limits if isinstance(limits, CatalogLimits) else CatalogLimits()


RestartHook = Callable[[Catalog, TargetEnv], Catalog]


def restart_hook(target: Target) -> RestartHook | None:
    """The target's optional ``restart_catalog(catalog, env) -> Catalog``, or None when it has none (an
    adapter may set the member to None when its configuration gives no way to restart, as ``uc``
    without ``restart_command``)."""
    found = getattr(target, "restart_catalog", None)
    return found if callable(found) else None


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


def observed_versions(target: Target) -> dict[str, str]:
    found = getattr(target, "observed_versions", None)
    seen = found() if callable(found) else {}
    return {str(k): str(v) for k, v in seen.items()} if isinstance(seen, dict) else {}


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
