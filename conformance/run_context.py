"""One run of the suite: configuration, target, profiles and the shared environment."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from conformance import fixtures_dir
from conformance.config import Config, ConfigError
from conformance.contract.delta import Catalog, CatalogError, DeltaClient, NotSupported, Storage
from conformance.contract.delta_engine import DeltaEngine
from conformance.contract.iceberg import IcebergEngine
from conformance.contract.iceberg_catalog import RestCatalogEndpoint
from conformance.contract.target import (
    ENGINE_FACTORIES,
    Target,
    TargetEnv,
    UCEndpoint,
    declared_profile_needs,
    declared_profiles,
    declared_uc_endpoint,
    make_delta_engine,
    make_engine,
    make_iceberg_catalog,
    observed_versions,
    offers,
    pairs_itself,
)
from conformance.extras import missing_modules
from conformance.observe.deadline import DeadlineExceeded, deadline
from conformance.observe.holding import HoldingStorage
from conformance.registry import build_target
from conformance.report.outcomes import req_ids
from conformance.report.results import RunSummary
from conformance.requirements import load_all, profiles
from conformance.version import SUITE_VERSION
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.storage import S3Settings, make_storage
from reference_impl.target import make_reference_catalog

T = TypeVar("T")
SIDE_OF_PROFILE = {
    "delta-cm-catalog": "catalog",
    "delta-cm-writer": "client",
    "delta-cm-reader": "client",
    "delta-cm-path-access": "client",
    "iceberg-row-delta": "engine",
    "iceberg-catalog-commit": "iceberg-catalog",
    "delta-row-conflicts": "engine",
    "delta-cm-interop": "interop",  # a client through a catalog that is not lakecert's reference
}
INTEROP_PROFILE = "delta-cm-interop"


def _observed(target: Target, call_s: float) -> dict[str, str]:
    """The target's ``observed_versions`` under the call deadline; a failure is recorded, not raised
    (the version record must not break a run's verdict)."""
    try:
        with deadline(call_s, "the target's observed_versions()"):
            return observed_versions(target)
    except (Exception, DeadlineExceeded) as e:
        return {"error": f"the versions could not be observed: {type(e).__name__}: {e}"}


def _has_factory(target: Target, profile: str) -> bool:
    """An engine target serves an engine profile only with that profile's factory method."""
    return profile not in ENGINE_FACTORIES or offers(target, ENGINE_FACTORIES[profile])


class TargetBuildError(Exception):
    """The target's adapter failed to build a part (``make_catalog``, ``make_client``, ``make_engine``)."""


def _has_side(target: Target, profile: str, bound: bool) -> bool:
    """Interop needs a pair: a client bound to another target's catalog, or a target pairing itself."""
    side = SIDE_OF_PROFILE.get(profile)
    if side == "interop":
        return ("client" in target.sides) if bound else pairs_itself(target)
    return side in target.sides


def without_missing_extras(target: Target, chosen: list[str], *, asked: bool) -> tuple[list[str], dict[str, str]]:
    """``chosen`` less the profiles whose optional packages this install lacks, and why each was
    left out (with the pip command). A profile asked for by name that cannot run is a
    ``ConfigError``; so is a default run left with nothing."""
    left_out: dict[str, str] = {}
    for profile, (modules, extra) in declared_profile_needs(target).items():
        missing = missing_modules(modules) if profile in chosen else []
        if missing:
            left_out[profile] = (
                f"it needs {', '.join(missing)}, which this install lacks: pip install 'lakecert[{extra}]'"
            )
    if left_out and asked:
        raise ConfigError("; ".join(f"profile {p} cannot run: {why}" for p, why in left_out.items()))
    kept = [p for p in chosen if p not in left_out]
    if not kept:
        raise ConfigError("no profile can run on this install: " + "; ".join(left_out.values()))
    return kept, left_out


def select_profiles(target: Target, wanted: list[str] | None, *, bound: bool = False) -> list[str]:
    """The profiles to run: the asked ones (validated) or every one the target has a side for.

    A target may narrow that with its optional ``profiles`` member (``contract.TargetBase``). With
    a catalog binding (``bound``, ``catalog_target``) only the interop profile can run: the other
    client profiles bind the client to lakecert's recording reference catalog."""
    known = profiles()
    supported = declared_profiles(target)
    if bound:
        if "client" not in target.sides:
            raise ConfigError(f"catalog_target binds a client, and target {target.name} has no client side")
        if supported is not None and INTEROP_PROFILE not in supported:
            raise ConfigError(
                f"target {target.name} supports only profile(s) {sorted(supported)}, not {INTEROP_PROFILE}"
            )
        others = [p for p in wanted or [] if p != INTEROP_PROFILE]
        if others:
            raise ConfigError(f"with catalog_target only {INTEROP_PROFILE} runs, not {others}")
        return [INTEROP_PROFILE]
    if wanted:
        unknown = [p for p in wanted if p not in known]
        if unknown:
            raise ConfigError(f"unknown profile(s) {unknown}; known: {sorted(known)}")
        missing = [p for p in wanted if not _has_side(target, p, bound) or not _has_factory(target, p)]
        if missing:
            needs = "; ".join(
                f"{p} tests a client through a catalog (a target with both sides, or --catalog-target)"
                if SIDE_OF_PROFILE.get(p) == "interop"
                else f"{p} tests a {SIDE_OF_PROFILE.get(p)}"
                for p in missing
            )
            offers = ", ".join(sorted(target.sides)) or "nothing"
            raise ConfigError(
                f"target {target.name} cannot be judged on {', '.join(missing)}: {needs}, and it offers: {offers}"
            )
        unsupported = [p for p in wanted if supported is not None and p not in supported]
        if supported is not None and unsupported:
            raise ConfigError(f"target {target.name} supports only profile(s) {sorted(supported)}, not {unsupported}")
        return list(dict.fromkeys(wanted))
    return [
        p
        for p in known
        if _has_side(target, p, bound) and (supported is None or p in supported) and _has_factory(target, p)
    ]


def _warehouse(cfg: Config, workdir: Path) -> tuple[str, Storage, S3Settings | None]:
    s = cfg.settings.storage
    if s.kind == "s3":
        if not s.bucket or not s.endpoint_url:
            raise ConfigError("storage.kind=s3 needs `bucket` and `endpoint_url`")
        s3 = S3Settings(s.endpoint_url, s.region, s.access_key_id, s.secret_access_key)
        storage = make_storage(
            s3.endpoint_url,
            region_name=s3.region,
            aws_access_key_id=s3.access_key_id,
            aws_secret_access_key=s3.secret_access_key,
        )
        return f"s3://{s.bucket}/{s.prefix}/{uuid.uuid4().hex[:12]}", HoldingStorage(storage), s3
    root = workdir / "warehouse"
    root.mkdir(parents=True, exist_ok=True)
    # Holding: the race checks may hold racers at their first read of an object (observe/holding.py).
    return root.as_uri(), HoldingStorage(make_storage()), None


def _catalog_side(cfg: Config) -> Target | None:
    """The target named by ``catalog_target`` (interop), which must offer a catalog."""
    name = cfg.settings.catalog_target
    if name is None:
        return None
    side = build_target(name, cfg)
    if "catalog" not in side.sides:
        raise ConfigError(f"catalog_target {name!r} has no catalog side (it offers: {', '.join(sorted(side.sides))})")
    return side


RUN_KEY: pytest.StashKey[RunContext] = pytest.StashKey()


class _Provide:
    """Hands the run, built once by ``lakecert run``, to pytest: the plugins read it from the stash."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        config.stash[RUN_KEY] = self.ctx


@dataclass
class RunContext:
    config: Config
    out: Path
    target: Target
    profiles: list[str]
    env: TargetEnv
    partial: bool = False  # only some checks were selected (``--select``, ``--requirement``)
    requirements: frozenset[str] | None = None  # ``--requirement``: only checks naming one of these
    started: float = field(default_factory=time.time)
    summary: RunSummary | None = None
    collected: int | None = None  # checks selected, once collection is done
    interrupted: bool = False
    stopped_at: str | None = None  # fail-fast: the check whose FAIL stopped the run
    # The concurrency explorer's counts per format (checks/explorer/runner.py): schedules the checks
    # asked for and engine runs made, with the model's plan or without
    held_schedules: dict[str, dict[str, object]] = field(default_factory=dict)
    # Profiles a default run left out because this install lacks their optional packages, and why.
    profiles_not_installed: dict[str, str] = field(default_factory=dict)
    # Rules whose every check the budget deselected, and how to run them (``note_left_out``): the
    # profile is certified without them, and says so.
    budget_left_out: dict[str, str] = field(default_factory=dict)
    # ``--shard K/N``: this run's part of a split run (``plugin.split``), recorded for ``lakecert merge``.
    shard: dict[str, Any] | None = None
    _target_catalog: Catalog | None = None
    _reference_catalog: ReferenceCatalog | None = None
    _target_version: str | None = None
    _target_versions: dict[str, str] | None = None
    catalog_side: Target | None = None  # interop: the target whose catalog the client is bound to
    _pair_catalog: Catalog | None = None

    @classmethod
    def open(
        cls,
        cfg: Config,
        out: Path,
        *,
        partial: bool = False,
        requirements: frozenset[str] | None = None,
        workdir: Path | None = None,
    ) -> RunContext:
        """The run's context; its target's parts live in ``workdir`` (default ``out/work``, emptied
        first)."""
        fixtures_dir.configure(cfg.settings.paths.fixtures)
        if cfg.settings.paths.jars is not None:  # for adapters, and the engines they start in other processes
            os.environ["LAKECERT_JARS"] = str(cfg.settings.paths.jars)
        if cfg.settings.paths.cache is not None:  # where adapters fetch the releases they are asked for
            os.environ["LAKECERT_CACHE"] = str(cfg.settings.paths.cache)
        target = build_target(cfg.target, cfg)
        catalog_side = _catalog_side(cfg)
        chosen = select_profiles(target, cfg.settings.profiles, bound=catalog_side is not None)
        chosen, not_installed = without_missing_extras(target, chosen, asked=bool(cfg.settings.profiles))
        workdir = workdir or out / "work"
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
        warehouse, storage, s3 = _warehouse(cfg, workdir)
        env = TargetEnv(workdir, warehouse, storage, cfg.target_options(), s3, seed=cfg.seed)
        return cls(
            cfg,
            out,
            target,
            chosen,
            env,
            partial,
            requirements,
            catalog_side=catalog_side,
            profiles_not_installed=not_installed,
        )

    @staticmethod
    def of(config: pytest.Config) -> RunContext:
        """The run a pytest session belongs to."""
        try:
            return config.stash[RUN_KEY]
        except KeyError:
            raise pytest.UsageError("the lakecert plugin runs under `lakecert run`, which builds the run") from None

    def plugin(self) -> object:
        return _Provide(self)

    def note_left_out(self, kept: list[pytest.Item], dropped: list[pytest.Item], how: dict[str, str]) -> None:
        """The budget deselected ``dropped``: each rule none of ``kept`` speaks for is left out, with
        how to run it (``how``: a dropped check's name -> the setting that runs it)."""
        judged = {rid for item in kept for rid in req_ids(item)}
        for item in dropped:
            for rid in set(req_ids(item)) - judged:
                hints = self.budget_left_out.get(rid, "")
                hint = how[item.nodeid]
                if hint not in hints:
                    self.budget_left_out[rid] = f"{hints}; or {hint}" if hints else hint

    def derived_seed(self, salt: str) -> int:
        """A seed for one part of the run (a check, a client), the same in every run with this seed."""
        return int(hashlib.sha256(f"{self.config.seed}:{salt}".encode()).hexdigest()[:8], 16)

    @property
    def target_version(self) -> str:
        """Asked once, under the call deadline."""
        if self._target_version is None:
            try:
                with deadline(self.config.settings.deadlines.call_s, "the target's version()"):
                    self._target_version = self.target.version()
            except (Exception, DeadlineExceeded) as e:  # the version line must not break a run
                self._target_version = f"unknown ({type(e).__name__})"
        return self._target_version

    @property
    def target_versions(self) -> dict[str, str]:
        """What really ran, part by part, as the target observed it (``observed_versions``)."""
        if self._target_versions is None:
            self._target_versions = _observed(self.target, self.config.settings.deadlines.call_s)
        return self._target_versions

    def _catalog_side_version(self) -> str | None:
        side = self.catalog_side
        if side is None:
            return None
        try:
            with deadline(self.config.settings.deadlines.call_s, "the catalog target's version()"):
                return side.version()
        except (Exception, DeadlineExceeded) as e:  # the version line must not break a run
            return f"unknown ({type(e).__name__})"

    def target_catalog(self) -> Catalog:
        if self._target_catalog is None:
            self._target_catalog = self._built("make_catalog", lambda: self.target.make_catalog(self.env))
        return self._target_catalog

    def restart_target_catalog(self, hook: Callable[[Catalog, TargetEnv], Catalog]) -> Catalog:
        """The nemesis: restart the catalog under test through the target's ``restart_catalog`` hook
        and use the catalog it returns from then on (conformance/nemesis/restart.py)."""
        restarted = self._built("restart_catalog", lambda: hook(self.target_catalog(), self.env))
        self._target_catalog = restarted
        return restarted

    def pair_catalog(self) -> Catalog:
        """Interop: the catalog the target's client is bound to, the catalog side of
        ``catalog_target`` or the target's own; built once per run."""
        if self.catalog_side is None:
            return self.target_catalog()
        if self._pair_catalog is None:
            side = self.catalog_side
            self._pair_catalog = self._built("make_catalog", lambda: side.make_catalog(self.env))
        return self._pair_catalog

    def pair_endpoint(self) -> UCEndpoint | None:
        """Interop: where the pair's catalog is reachable over UC's API, for clients in other processes."""
        return declared_uc_endpoint(self.catalog_side or self.target)

    def engine(self) -> IcebergEngine:
        """The target's Iceberg engine (side ``engine``), built once by the session fixture."""
        return self._built("make_engine", lambda: make_engine(self.target, self.env))

    def delta_engine(self) -> DeltaEngine:
        """The target's Delta engine (profile ``delta-row-conflicts``), once per run."""
        return self._built("make_delta_engine", lambda: make_delta_engine(self.target, self.env))

    def iceberg_catalog(self) -> RestCatalogEndpoint:
        """The target's Iceberg REST catalog (side ``iceberg-catalog``), once per run."""
        return self._built("make_iceberg_catalog", lambda: make_iceberg_catalog(self.target, self.env))

    def build_client(self, catalog: Catalog, env: TargetEnv) -> DeltaClient:
        return self._built("make_client", lambda: self.target.make_client(catalog, env))

    def _built(self, what: str, build: Callable[[], T]) -> T:
        """A part of the target, built by its adapter; a failure there is the adapter's, not a verdict."""
        try:
            with deadline(self.config.settings.deadlines.call_s, f"the target's {what}"):
                return build()
        except (CatalogError, NotSupported, DeadlineExceeded):
            raise
        except Exception as e:
            raise TargetBuildError(f"the target's {what} failed: {type(e).__name__}: {e}") from e

    def reference_catalog(self) -> ReferenceCatalog:
        """The trusted catalog that client targets are bound to (its own database)."""
        if self._reference_catalog is None:
            ref_dir = self.env.workdir / "reference"
            ref_dir.mkdir(exist_ok=True)
            self._reference_catalog = make_reference_catalog(
                TargetEnv(ref_dir, self.env.warehouse_uri, self.env.storage, s3=self.env.s3, seed=self.env.seed)
            )
        return self._reference_catalog

    def label(self) -> str:
        """What the run tested: ``--label``, else the target and the URL it was pointed at."""
        if self.config.settings.label:
            return self.config.settings.label
        url = self.config.target_options().get("url")
        return f"{self.config.target} @ {url}" if isinstance(url, str) and url else self.config.target

    def run_info(self) -> dict[str, Any]:
        reqs = load_all()
        spec_revisions = sorted({reqs[r.id].spec.revision for p in self.profiles for r in profiles()[p]})
        return {
            "target": self.config.target,  # as selected, so reruns and baselines key on it
            "label": self.label(),
            "target_label": self.target.name,
            "target_kind": self.target.kind,
            "target_version": self.target_version,
            "catalog_target": self.config.settings.catalog_target,  # interop: whose catalog the client went through
            "target_versions": self.target_versions,
            "target_options": self.config.redacted_target_options(),
            "catalog_target_version": self._catalog_side_version(),
            "catalog_target_versions": _observed(self.catalog_side, self.config.settings.deadlines.call_s)
            if self.catalog_side is not None
            else None,
            "profiles": self.profiles,
            "profiles_not_installed": self.profiles_not_installed,  # left out of a default run, and why
            "seed": self.config.seed,
            "config_source": self.config.source,
            "config": self.config.redacted(),
            "suite_version": SUITE_VERSION,
            "spec_revisions": spec_revisions,
            "warehouse": self.env.warehouse_uri,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "duration_s": round(time.time() - self.started, 3),
            "stopped_at_first_fail": self.stopped_at,
            "held_schedules": self.held_schedules,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            **({"shard": self.shard} if self.shard is not None else {}),
        }

    def close(self) -> None:
        for part in (self._target_catalog, self._pair_catalog, self._reference_catalog):
            close = getattr(part, "close", None)
            if callable(close):
                close()
        self.target.close()
        if self.catalog_side is not None:
            self.catalog_side.close()
