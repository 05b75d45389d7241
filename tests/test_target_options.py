"""Every way of setting a target's option reaches the target (issue 33): the YAML file under the
target's name or its underscore spelling, the environment with the underscore spelling (a variable
name cannot hold a hyphen), and the options of the target named by ``catalog_target``; an option
the adapter class does not take is refused with its key path."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.config import ConfigError, load_config
from conformance.registry import build_target
from conformance.run_context import _catalog_side


def _hold(yaml: str, tmp_path: Path, environ: dict[str, str] | None = None) -> float:
    (tmp_path / "c.yaml").write_text(yaml)
    cfg = load_config(tmp_path / "c.yaml", environ=environ or {})
    target = build_target("delta-rs-engine", cfg)
    return float(target.hold_timeout_s)  # type: ignore[attr-defined]


def test_yaml_under_either_spelling_and_the_environment_reach_the_target(tmp_path: Path) -> None:
    assert _hold("targets: {delta-rs-engine: {options: {hold_timeout_s: 7}}}", tmp_path) == 7
    assert _hold("targets: {delta_rs_engine: {options: {hold_timeout_s: 8}}}", tmp_path) == 8
    env = {"LAKECERT__targets__delta_rs_engine__options__hold_timeout_s": "9"}
    assert _hold("targets: {delta-rs-engine: {options: {hold_timeout_s: 7}}}", tmp_path, env) == 9  # env wins


def test_the_catalog_targets_options_reach_it(tmp_path: Path) -> None:
    env = {"LAKECERT__targets__uc__options__url": "http://127.0.0.1:9", "LAKECERT__targets__uc__options__schema": "s"}
    cfg = load_config(None, environ=env).with_overrides(target="delta-kernel", catalog_target="uc")
    side = _catalog_side(cfg)
    assert side is not None and side.uc_endpoint().schema == "s"  # type: ignore[attr-defined]
    assert side.uc_endpoint().url == "http://127.0.0.1:9"  # type: ignore[attr-defined]


@pytest.mark.parametrize("spelling", ["delta-rs-engine", "delta_rs_engine"])
def test_an_option_the_target_does_not_take_is_refused_with_its_key_path(tmp_path: Path, spelling: str) -> None:
    (tmp_path / "c.yaml").write_text(f"targets: {{{spelling}: {{options: {{hold_timeout: 7}}}}}}")
    with pytest.raises(ConfigError, match=r"targets\.delta-rs-engine\.options\.hold_timeout: not an option"):
        build_target("delta-rs-engine", load_config(tmp_path / "c.yaml", environ={}))


def test_the_spark_driver_address_is_a_target_option_and_fixed_once_the_session_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``driver_host`` (issue 32): where executors on other machines reach lakecert's driver;
    loopback unless asked, and never changed under a running session (one JVM per run)."""
    from conformance.adapters.spark_iceberg import session

    monkeypatch.setattr(session, "_driver_host", session.LOOPBACK)
    (tmp_path / "c.yaml").write_text("targets: {spark-iceberg: {options: {driver_host: 10.1.2.3}}}")
    build_target("spark-iceberg", load_config(tmp_path / "c.yaml", environ={}))
    assert session._driver_host == "10.1.2.3"
    monkeypatch.setattr(session, "_session", object())  # as if the session had started
    with pytest.raises(session.SparkUnavailable):
        session.use_driver_host(session.LOOPBACK)
    session.use_driver_host("10.1.2.3")  # the same address: nothing to change
