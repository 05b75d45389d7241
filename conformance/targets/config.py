"""The run configuration: one YAML file, overridable from the environment.

Environment overrides follow ``LAKECERT__<key>__<key>=<yaml value>`` (double
underscore separates nesting levels; ``-`` and ``_`` in keys are equivalent),
plus the short forms ``LAKECERT_TARGET``, ``LAKECERT_SEED`` and ``LAKECERT_PROFILES``.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

DEFAULTS: dict[str, Any] = {
    "target": "reference",
    "profiles": None,  # None: every Delta profile the target has sides for
    "seed": 20261122,
    "race": {"proposers": 8, "repeats": 5},
    "model": {"examples": 20, "steps": 20},
    "storage": {"kind": "local"},
    # Iceberg profile budget. matrix: "full" (update mode x delete mode x isolation x format, 16 tables)
    # or "core" (one mode for both, 8); exhaustive: also every interleaving of every pair of operations
    # and the generated schedules. "auto": the target's own default (full for the model, core for Spark).
    "iceberg": {"matrix": "auto", "exhaustive": "auto"},
    "targets": {},
}
SHORT_FORMS = {"LAKECERT_TARGET": "target", "LAKECERT_SEED": "seed", "LAKECERT_PROFILES": "profiles"}
SECRET_WORDS = ("token", "secret", "password", "credential", "access_key")


class ConfigError(ValueError):
    """The configuration is unusable; the CLI reports it and exits with 2."""


@dataclass(frozen=True)
class Config:
    data: dict[str, Any]
    source: str  # the file it came from, or "defaults"

    @property
    def target(self) -> str:
        return str(self.data["target"])

    @property
    def seed(self) -> int:
        return int(self.data["seed"])

    def redacted(self) -> dict[str, Any]:
        """The configuration with secrets masked, for reports and reproducers."""
        redacted: dict[str, Any] = _redact(self.data)
        return redacted


def _norm(key: str) -> str:
    return key.lower().replace("-", "_")


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), dict) else v
    return out


def _set_path(data: dict[str, Any], path: list[str], value: Any) -> None:
    node = data
    for i, part in enumerate(path):
        key = next((k for k in node if _norm(k) == _norm(part)), part)
        if i == len(path) - 1:
            node[key] = value
        else:
            child = node.setdefault(key, {})
            if not isinstance(child, dict):
                raise ConfigError(f"environment override {'__'.join(path)} goes through a non-mapping")
            node = child


def _redact(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _redact(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v) for v in value]
    if any(w in _norm(key) for w in SECRET_WORDS) and value not in (None, ""):
        return "***"
    return value


def _validate(data: dict[str, Any]) -> None:
    if not isinstance(data.get("target"), str) or not data["target"]:
        raise ConfigError("`target` must be a non-empty string")
    try:
        int(data["seed"])
    except (TypeError, ValueError) as e:
        raise ConfigError("`seed` must be an integer") from e
    profiles = data.get("profiles")
    if profiles is not None and not (isinstance(profiles, list) and all(isinstance(p, str) for p in profiles)):
        raise ConfigError("`profiles` must be a list of profile names")
    if not isinstance(data.get("targets"), dict):
        raise ConfigError("`targets` must be a mapping of name -> {adapter, options}")
    if data["storage"].get("kind") not in ("local", "s3"):
        raise ConfigError("`storage.kind` must be `local` or `s3`")
    if data["iceberg"].get("matrix") not in ("auto", "full", "core"):
        raise ConfigError("`iceberg.matrix` must be auto, full or core")
    if data["iceberg"].get("exhaustive") not in ("auto", True, False):
        raise ConfigError("`iceberg.exhaustive` must be auto, true or false")
    race, model = data["race"], data["model"]
    for section, keys in ((race, ("proposers", "repeats")), (model, ("examples", "steps"))):
        for k in keys:
            if not isinstance(section.get(k), int) or section[k] < 1:
                raise ConfigError(f"`{k}` must be a positive integer")


def load_config(path: Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Defaults, then the YAML file, then environment overrides; validated."""
    env = os.environ if environ is None else environ
    data = copy.deepcopy(DEFAULTS)
    source = "defaults"
    if path is not None:
        try:
            loaded = yaml.safe_load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as e:
            raise ConfigError(f"cannot read config {path}: {e}") from e
        if not isinstance(loaded, dict):
            raise ConfigError(f"config {path} must be a YAML mapping")
        unknown = set(loaded) - set(DEFAULTS)
        if unknown:
            raise ConfigError(f"unknown config keys: {sorted(unknown)}")
        data = _merge(data, loaded)
        source = str(path)
    for name, value in sorted(env.items()):
        if name in SHORT_FORMS:
            parsed = yaml.safe_load(value)
            if SHORT_FORMS[name] == "profiles" and isinstance(parsed, str):
                parsed = [p.strip() for p in parsed.split(",") if p.strip()]
            _set_path(data, [SHORT_FORMS[name]], parsed)
        elif name.startswith("LAKECERT__"):
            _set_path(data, name[len("LAKECERT__") :].split("__"), yaml.safe_load(value))
    _validate(data)
    return Config(data, source)
