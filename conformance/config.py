"""The run configuration: one YAML file, overridable from the environment, typed and strict.

Sources, later ones winning: the defaults below, the YAML file (``--config``), then environment
variables: ``LAKECERT__<key>__<key>=<yaml value>`` for any key (double underscore between levels;
``-`` and ``_`` in keys are equivalent) and the short forms in ``SHORT_FORMS``. Every level refuses
unknown keys, and an unknown ``LAKECERT_*`` variable is an error too: a typo never runs silently
with the default. Errors name the key path and the source that set it. ``lakecert config-schema``
prints the JSON Schema (docs/config.schema.json).
"""

from __future__ import annotations

import copy
import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, ValidationError


class ConfigError(ValueError):
    """The configuration is unusable; the CLI reports it and exits with 2."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)


class Race(_Strict):
    """Races of proposals to the catalog (``delta-cm-catalog``)."""

    proposers: PositiveInt = 8
    repeats: PositiveInt = 5


class ModelBudget(_Strict):
    """Generated schedules (hypothesis state machines and Iceberg generated schedules)."""

    examples: PositiveInt = 20
    steps: PositiveInt = 20
    shrink: bool = True  # shrink a failing schedule to a short reproducer (the self-test turns it off)


class StorageSettings(_Strict):
    """Where the run's tables live: a local folder, or an S3 bucket (``endpoint_url`` and ``bucket``)."""

    kind: Literal["local", "s3"] = "local"
    bucket: str | None = None
    endpoint_url: str | None = None
    region: str = "us-east-1"
    prefix: str = "lakecert"
    access_key_id: str | None = None
    secret_access_key: str | None = None


class IcebergSettings(_Strict):
    """The Iceberg budget: "full" (16 table configurations) or "core" (8); exhaustive schedules or
    not; "auto" takes the target's own default (``iceberg_budget``)."""

    matrix: Literal["auto", "full", "core"] = "auto"
    exhaustive: Literal["auto"] | bool = "auto"
    # The model's plan for a real engine (conformance/checks/iceberg/plan.py): checks it predicts to
    # fail first, one engine run per class of equivalent schedules, runs started ahead. "auto": on
    # when the target names its engine's preset (``model_preset``).
    model_guided: Literal["auto"] | bool = "auto"


class DeltaSettings(_Strict):
    """The Delta profiles: ``delta-row-conflicts`` on a real engine, and the catalog-managed ones."""

    # The model's plan (conformance/checks/explorer/plan.py), as for Iceberg: checks it predicts to
    # fail first, one engine run per class of equivalent schedules. "auto": on when the target names
    # its engine's preset (``model_preset``).
    model_guided: Literal["auto"] | bool = "auto"
    # The catalog-managed profiles' generated histories, nemesis and envelope: "default" fits a
    # vendor's CI (the Delta profiles in under a minute); "deep" runs longer histories and more of them;
    # "quick" shortens the histories to just past the boundaries they place, for a target or storage
    # where one step costs a good part of a second (docs/certify.md, section 4b).
    budget: Literal["quick", "default", "deep"] = "default"


class Deadlines(_Strict):
    """Hang guards, generous by default: a check or a call into the target that takes longer ends
    the check in ERROR with the stack of the stuck call."""

    call_s: PositiveFloat = 300.0
    check_s: PositiveFloat = 1800.0


class Paths(_Strict):
    """Files lakecert needs besides its code (defaults: inside the installed package or the checkout)."""

    fixtures: Path | None = None  # the golden tables (``golden/``, ``rfc-worked-example/``)
    jars: Path | None = None  # the Spark/Iceberg jars ``make setup`` fetches
    # Releases fetched on first use, one folder per version (``conformance/artifacts``); default the
    # checkout's ``.cache/versions``, else ``~/.cache/lakecert``.
    cache: Path | None = None


class TargetSpec(_Strict):
    adapter: str | None = None  # ``package.module:Class``; built-in names need none
    options: dict[str, Any] = Field(default_factory=dict)  # keyword arguments of the adapter class


class Settings(_Strict):
    target: str = Field(default="reference", min_length=1)
    profiles: list[str] | None = None  # None: every profile the target has a side for
    # Interop (profile delta-cm-interop): the target whose catalog the target's client is bound to
    # (e.g. ``uc``); None: a target with both sides is paired with its own catalog.
    catalog_target: str | None = Field(default=None, min_length=1)
    seed: int = 20261122
    # What the run tested, in the matrix, Allure's reports and trend, and the certificate (``--label``);
    # default: the target and the URL its options name, if any (runs against two servers differ).
    label: str | None = Field(default=None, min_length=1, max_length=200)
    fail_fast: bool = False  # stop at the first FAIL: a partial run, never certified (``--fail-fast``)
    race: Race = Race()
    model: ModelBudget = ModelBudget()
    storage: StorageSettings = StorageSettings()
    iceberg: IcebergSettings = IcebergSettings()
    delta: DeltaSettings = DeltaSettings()
    deadlines: Deadlines = Deadlines()
    paths: Paths = Paths()
    targets: dict[str, TargetSpec] = Field(default_factory=dict)


SHORT_FORMS = {
    "LAKECERT_TARGET": "target",
    "LAKECERT_SEED": "seed",
    "LAKECERT_LABEL": "label",
    "LAKECERT_PROFILES": "profiles",
    "LAKECERT_CATALOG_TARGET": "catalog_target",
    "LAKECERT_FIXTURES": "paths__fixtures",
    "LAKECERT_JARS": "paths__jars",
    "LAKECERT_CACHE": "paths__cache",
}
# Read outside the run's settings: by ``lakecert report`` (the Allure command line) and by the
# delta-rs-engine and delta-spark adapters (the engine version a client project gates on).
OTHER_VARIABLES = {
    "LAKECERT_ALLURE",
    "LAKECERT_DELTALAKE_VERSION",
    "LAKECERT_DELTA_SPARK_VERSION",
    "LAKECERT_MAVEN_REPO",  # a Maven mirror to fetch releases from (conformance/artifacts/maven.py)
}
SECRET_WORDS = ("token", "secret", "password", "credential", "access_key")


@dataclass(frozen=True)
class Config:
    settings: Settings
    source: str  # the file it came from, or "defaults"
    # The LAKECERT variables that set values, in order (name, raw text): a rerun command repeats them.
    environment: tuple[tuple[str, str], ...] = ()

    @property
    def data(self) -> dict[str, Any]:
        """The settings as plain data (for results.json and reproducers)."""
        dumped: dict[str, Any] = self.settings.model_dump(mode="json")
        return dumped

    @property
    def target(self) -> str:
        return self.settings.target

    @property
    def seed(self) -> int:
        return self.settings.seed

    def target_spec(self, name: str | None = None) -> TargetSpec | None:
        """The configuration of a target, under either spelling of a hyphenated name: an environment
        variable cannot hold a hyphen, so ``LAKECERT__targets__delta_kernel__options__...`` sets
        ``targets.delta_kernel``, which is target ``delta-kernel``'s (its options win over the
        file's ``delta-kernel`` entry, as the environment wins everywhere)."""
        wanted = name or self.target
        found = [
            s for key in dict.fromkeys((wanted, wanted.replace("-", "_"))) if (s := self.settings.targets.get(key))
        ]
        if not found:
            return None
        adapter = next((s.adapter for s in found if s.adapter), None)
        return TargetSpec(adapter=adapter, options={k: v for s in found for k, v in s.options.items()})

    def target_options(self, name: str | None = None) -> dict[str, Any]:
        spec = self.target_spec(name)
        return dict(spec.options) if spec else {}

    def with_overrides(self, **values: Any) -> Config:
        """A copy with top-level settings replaced (the command line's ``--target``, ``--seed``...)."""
        given = {k: v for k, v in values.items() if v is not None}
        if not given:
            return self
        data = {**self.settings.model_dump(), **given}
        return Config(_validate(data, "the command line"), self.source, self.environment)

    def redacted(self) -> dict[str, Any]:
        """The configuration with secrets masked, for reports and reproducers."""
        redacted: dict[str, Any] = _redact(self.data)
        return redacted

    def redacted_target_options(self) -> dict[str, Any]:
        """The options the target was built with (both spellings merged), secrets masked: what tells
        two runs of one target apart (the gate and ``lakecert diff`` compare them)."""
        redacted: dict[str, Any] = _redact(self.target_options())
        return redacted


def _norm(key: str) -> str:
    return key.lower().replace("-", "_")


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), dict) else v
    return out


def _set_path(data: dict[str, Any], path: list[str], value: Any, source: str) -> None:
    node = data
    for i, part in enumerate(path):
        key = next((k for k in node if _norm(k) == _norm(part)), _norm(part))
        if i == len(path) - 1:
            node[key] = value
        else:
            child = node.setdefault(key, {})
            if child is None:
                child = node[key] = {}
            if not isinstance(child, dict):
                raise ConfigError(f"{source}: {'.'.join(path[: i + 1])} is not a mapping")
            node = child


def _redact(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _redact(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v) for v in value]
    if is_secret(key) and value not in (None, ""):
        return "***"
    return value


def _explain(e: ValidationError, source: str) -> str:
    parts = []
    for err in e.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        what = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        parts.append(f"{where}: {what}")
    return f"{source}: " + "; ".join(parts)


def _validate(data: Mapping[str, Any], source: str) -> Settings:
    try:
        return Settings.model_validate(data)
    except ValidationError as e:
        raise ConfigError(_explain(e, source)) from None


def _env_overrides(env: Mapping[str, str]) -> list[tuple[str, list[str], Any]]:
    """(variable, key path, value) of every ``LAKECERT`` variable; unknown ones are errors."""
    found = []
    for name, raw in sorted(env.items()):
        if not name.startswith("LAKECERT_") or name in OTHER_VARIABLES:
            continue
        if name.startswith("LAKECERT__"):
            path = name[len("LAKECERT__") :].split("__")
        elif name in SHORT_FORMS:
            path = SHORT_FORMS[name].split("__")
        else:
            close = difflib.get_close_matches(name, [*SHORT_FORMS, *OTHER_VARIABLES], n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigError(f"unknown environment variable {name}{hint}; nested keys use LAKECERT__<key>__<key>")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as e:
            raise ConfigError(f"{name}: not a YAML value: {e}") from None
        if path == ["profiles"] and isinstance(value, str):
            value = [p.strip() for p in value.split(",") if p.strip()]
        found.append((name, path, value))
    return found


def load_config(path: Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Defaults, then the YAML file, then environment overrides; each source validated as it lands."""
    env = os.environ if environ is None else environ
    data: dict[str, Any] = Settings().model_dump()
    source = "defaults"
    if path is not None:
        try:
            loaded = yaml.safe_load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as e:
            raise ConfigError(f"cannot read config {path}: {e}") from e
        if not isinstance(loaded, dict):
            raise ConfigError(f"config {path} must be a YAML mapping")
        source = str(path)
        _validate(loaded, source)  # errors name the file, before defaults are merged in
        data = _merge(data, loaded)
    settings = _validate(data, source)
    used = []
    for name, key_path, value in _env_overrides(env):
        _set_path(data, key_path, value, name)
        settings = _validate(data, f"environment variable {name}")
        used.append((name, env[name]))
    return Config(settings, source, tuple(used))


def is_secret(key: str) -> bool:
    """A key whose value must never be printed or saved (tokens, passwords, secret keys)."""
    norm = _norm(key)
    return any(w in norm for w in SECRET_WORDS) or norm.endswith("key")  # api_key, private_key, ...


def json_schema() -> dict[str, Any]:
    return Settings.model_json_schema()
