"""Configuration: file, environment overrides, validation, redaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.config import ConfigError, load_config


def test_defaults_without_file() -> None:
    cfg = load_config(None, environ={})
    assert cfg.target == "reference" and cfg.source == "defaults"


def test_environment_overrides_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("target: mine\nseed: 1\ntargets:\n  mine:\n    adapter: a.b:C\n    options: {token: abc, url: x}\n")
    cfg = load_config(
        path,
        environ={
            "LAKECERT_SEED": "7",
            "LAKECERT__targets__mine__options__url": "y",
            "LAKECERT__race__proposers": "3",
            "LAKECERT_PROFILES": "p1, p2",
        },
    )
    assert cfg.seed == 7
    assert cfg.data["targets"]["mine"]["options"]["url"] == "y"
    assert cfg.data["race"] == {"proposers": 3, "repeats": 5}
    assert cfg.data["profiles"] == ["p1", "p2"]


def test_secrets_are_masked(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("targets:\n  m:\n    adapter: a.b:C\n    options: {token: abc, secret_access_key: s, url: u}\n")
    redacted = load_config(path, environ={}).redacted()["targets"]["m"]["options"]
    assert redacted == {"token": "***", "secret_access_key": "***", "url": "u"}


@pytest.mark.parametrize(
    "text",
    [
        "seed: x\n",
        "profiles: 5\n",
        "race: {proposers: 0}\n",
        "storage: {kind: ftp}\n",
        "targets: []\n",
        "- a list\n",
        "unknown: 1\n",
    ],
)
def test_invalid_config_is_rejected(tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError):
        load_config(path, environ={})


def test_a_hyphenated_targets_options_reach_it_under_either_spelling(tmp_path: Path) -> None:
    # Issues 27 and 29: a variable cannot hold a hyphen, so LAKECERT__targets__delta_kernel__...
    # names target delta-kernel; it was accepted, recorded and silently not used.
    cfg_file = tmp_path / "lakecert.yaml"
    cfg_file.write_text("targets:\n  delta-kernel:\n    options: {jars: /from/file, classes: /c}\n")
    env = {"LAKECERT__targets__delta_kernel__options__jars": "/from/env"}
    cfg = load_config(cfg_file, env)
    assert cfg.target_options("delta-kernel") == {"jars": "/from/env", "classes": "/c"}
    assert load_config(None, env).target_options("delta-kernel") == {"jars": "/from/env"}
    assert load_config(None, env).target_options("uc") == {}


def test_an_option_set_by_the_environment_reaches_the_hyphenated_target(tmp_path: Path) -> None:
    from tests.helpers import lakecert

    env = {"LAKECERT__targets__delta_kernel__options__no_such_option": "1"}
    proc = lakecert("run", "--target", "delta-kernel", "--out", str(tmp_path / "out"), env=env)
    assert proc.returncode == 2 and "no_such_option" in proc.stdout + proc.stderr
