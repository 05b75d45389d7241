"""The copy-paste command that reruns one check with the run's settings.

A rerun must reach the same target with the same options, so it repeats the ``LAKECERT``
environment variables the run was given (``LAKECERT__targets__uc__options__url=...``) and the
configuration file (as an absolute path). Secrets are never written out: a secret variable is
repeated as a reference to a shell variable the user sets first (``...__token="$UC_TOKEN"``).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from conformance.config import Config, is_secret


def secret_variable(name: str) -> str:
    """The shell variable that stands for the secret set by ``name``: the target and the key for a
    target option (``LAKECERT__targets__uc__options__token`` -> ``UC_TOKEN``), else the key path."""
    parts = [p for p in name.removeprefix("LAKECERT__").removeprefix("LAKECERT_").split("__") if p]
    if len(parts) == 4 and parts[0].lower() == "targets" and parts[2].lower() == "options":
        parts = [parts[1], parts[3]]
    return re.sub(r"[^A-Za-z0-9]+", "_", "_".join(parts)).strip("_").upper() or "LAKECERT_SECRET"


def environment_prefix(config: Config) -> list[str]:
    """``NAME=value`` words for the variables the run was given; secrets as ``NAME="$VAR"``."""
    words = []
    for name, raw in _relevant(config):
        key = name.rsplit("__", 1)[-1]
        if is_secret(key):
            words.append(f'{name}="${secret_variable(name)}"')
        else:
            words.append(f"{name}={shlex.quote(raw)}")
    return words


def _relevant(config: Config) -> list[tuple[str, str]]:
    """The run's variables, leaving out the options of targets other than those that ran (the
    target, and the catalog target of an interop run)."""
    prefix = "lakecert__targets__"
    ran = [config.target, *([config.settings.catalog_target] if config.settings.catalog_target else [])]
    own = tuple(f"{prefix}{name.lower()}__".replace("-", "_") for name in ran)
    return [
        (n, raw)
        for n, raw in config.environment
        if not n.lower().startswith(prefix) or n.lower().replace("-", "_").startswith(own)
    ]


def secrets_to_set(config: Config) -> list[str]:
    """The shell variables a rerun expects to be set (the secrets' stand-ins)."""
    return [secret_variable(n) for n, _ in _relevant(config) if is_secret(n.rsplit("__", 1)[-1])]


def rerun_command(config: Config, profiles: list[str], select: list[str]) -> str:
    """One shell line: the run's variables, then ``lakecert run`` with target, catalog target, seed,
    profiles and config."""
    argv = ["lakecert", "run", "--target", config.target, "--seed", str(config.seed)]
    if config.settings.catalog_target:  # interop: without it the rerun judges the client elsewhere
        argv += ["--catalog-target", config.settings.catalog_target]
    if profiles:
        argv += ["--profile", ",".join(profiles)]
    if config.source != "defaults":
        argv += ["--config", str(Path(config.source).resolve())]
    for node in select:
        argv += ["--select", node]
    return " ".join([*environment_prefix(config), shlex.join(argv)])
