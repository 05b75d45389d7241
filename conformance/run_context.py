"""One run of the suite: configuration, target, profiles and the shared environment."""

from __future__ import annotations

import platform
import shutil
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.report.results import RunSummary
from conformance.requirements import load_all, profiles
from conformance.targets.config import Config, ConfigError
from conformance.targets.contract import Catalog, Storage
from conformance.targets.reference import make_reference_catalog
from conformance.targets.registry import build_target
from conformance.targets.target import Target, TargetEnv
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.storage import S3Settings, make_storage

SUITE_VERSION = "0.1.0"
SIDE_OF_PROFILE = {
    "delta-cm-catalog": "catalog",
    "delta-cm-writer": "client",
    "delta-cm-reader": "client",
    "delta-cm-path-access": "client",
    "iceberg-row-delta": "engine",
    "delta-row-conflicts": "engine",
}
# An engine target serves an engine profile only with that profile's factory method.
ENGINE_FACTORY = {"iceberg-row-delta": "make_engine", "delta-row-conflicts": "make_delta_engine"}


def _has_factory(target: Target, profile: str) -> bool:
    return callable(getattr(target, ENGINE_FACTORY.get(profile, "version"), None))


def select_profiles(target: Target, wanted: list[str] | None) -> list[str]:
    """The profiles to run: the asked ones (validated) or every one the target has a side for.

    A target may narrow that with a ``profiles`` attribute: the only profiles it can be judged on
    (e.g. clients without catalog support, which only have ``delta-cm-path-access``)."""
    known = profiles()
    supported = getattr(target, "profiles", None)
    if wanted:
        unknown = [p for p in wanted if p not in known]
        if unknown:
            raise ConfigError(f"unknown profile(s) {unknown}; known: {sorted(known)}")
        missing = [p for p in wanted if SIDE_OF_PROFILE.get(p) not in target.sides or not _has_factory(target, p)]
        if missing:
            raise ConfigError(f"target {target.name} has no side for profile(s) {missing}")
        unsupported = [p for p in wanted if supported is not None and p not in supported]
        if supported is not None and unsupported:
            raise ConfigError(f"target {target.name} supports only profile(s) {sorted(supported)}, not {unsupported}")
        return list(dict.fromkeys(wanted))
    return [
        p
        for p in known
        if SIDE_OF_PROFILE.get(p) in target.sides and (supported is None or p in supported) and _has_factory(target, p)
    ]


def _warehouse(cfg: Config, workdir: Path) -> tuple[str, Storage, S3Settings | None]:
    s = cfg.data["storage"]
    if s["kind"] == "s3":
        bucket = s.get("bucket")
        if not bucket or not s.get("endpoint_url"):
            raise ConfigError("storage.kind=s3 needs `bucket` and `endpoint_url`")
        s3 = S3Settings(
            s["endpoint_url"], s.get("region", "us-east-1"), s.get("access_key_id"), s.get("secret_access_key")
        )
        storage = make_storage(
            s3.endpoint_url,
            region_name=s3.region,
            aws_access_key_id=s3.access_key_id,
            aws_secret_access_key=s3.secret_access_key,
        )
        return f"s3://{bucket}/{s.get('prefix', 'lakecert')}/{uuid.uuid4().hex[:12]}", storage, s3
    root = workdir / "warehouse"
    root.mkdir(parents=True, exist_ok=True)
    return root.as_uri(), make_storage(), None


@dataclass
class RunContext:
    config: Config
    out: Path
    target: Target
    profiles: list[str]
    env: TargetEnv
    started: float = field(default_factory=time.time)
    summary: RunSummary | None = None
    _target_catalog: Catalog | None = None
    _reference_catalog: ReferenceCatalog | None = None

    @classmethod
    def open(cls, cfg: Config, out: Path) -> RunContext:
        target = build_target(cfg.target, cfg)
        chosen = select_profiles(target, cfg.data.get("profiles"))
        workdir = out / "work"
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
        warehouse, storage, s3 = _warehouse(cfg, workdir)
        options = (cfg.data["targets"].get(cfg.target) or {}).get("options") or {}
        env = TargetEnv(workdir, warehouse, storage, options, s3)
        return cls(cfg, out, target, chosen, env)

    def target_catalog(self) -> Catalog:
        if self._target_catalog is None:
            self._target_catalog = self.target.make_catalog(self.env)
        return self._target_catalog

    def reference_catalog(self) -> ReferenceCatalog:
        """The trusted catalog that client targets are bound to (its own database)."""
        if self._reference_catalog is None:
            ref_dir = self.env.workdir / "reference"
            ref_dir.mkdir(exist_ok=True)
            self._reference_catalog = make_reference_catalog(
                TargetEnv(ref_dir, self.env.warehouse_uri, self.env.storage, s3=self.env.s3)
            )
        return self._reference_catalog

    def run_info(self) -> dict[str, Any]:
        reqs = load_all()
        spec_revisions = sorted({reqs[r.id].spec.revision for p in self.profiles for r in profiles()[p]})
        return {
            "target": self.config.target,  # as selected, so reruns and baselines key on it
            "target_label": self.target.name,
            "target_kind": self.target.kind,
            "target_version": self.target.version(),
            "profiles": self.profiles,
            "seed": self.config.seed,
            "config_source": self.config.source,
            "config": self.config.redacted(),
            "suite_version": SUITE_VERSION,
            "spec_revisions": spec_revisions,
            "warehouse": self.env.warehouse_uri,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "duration_s": round(time.time() - self.started, 3),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
        }

    def close(self) -> None:
        for part in (self._target_catalog, self._reference_catalog):
            close = getattr(part, "close", None)
            if callable(close):
                close()
        self.target.close()
