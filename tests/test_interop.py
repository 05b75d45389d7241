"""Profile delta-cm-interop: a client judged through a catalog that is not lakecert's recording
reference. A target with both sides is paired with its own catalog; ``--catalog-target`` binds any
client target to another target's catalog, e.g. any Unity Catalog API server through ``uc``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.config import Config, ConfigError, Settings
from conformance.registry import build_target
from conformance.run_context import INTEROP_PROFILE, select_profiles
from tests.helpers import lakecert, results
from tests.tooling.server import served

INTEROP_RULES = {
    "INT-ROUNDTRIP",
    "INT-RATIFIED-READABLE",
    "INT-NO-LOST-COMMIT",
    "INT-CONCURRENT-REBASE",
    "INT-PUBLISH-PATH-READABLE",
}


def _statuses(res: dict[str, Any]) -> dict[str, str]:
    return {rid: r["status"] for rid, r in res["requirements"].items()}


def _uc_env(url: str) -> dict[str, str]:
    return {"LAKECERT__targets__uc__options__url": url}


def _target(name: str) -> Any:
    return build_target(name, Config(Settings(), "defaults"))


def test_a_target_with_both_sides_is_paired_with_its_own_catalog() -> None:
    assert INTEROP_PROFILE in select_profiles(_target("reference"), None)
    # A client alone has no catalog of its own: only a binding pairs it.
    kernel = _target("delta-kernel")
    assert INTEROP_PROFILE not in select_profiles(kernel, None)
    assert select_profiles(kernel, None, bound=True) == [INTEROP_PROFILE]
    with pytest.raises(ConfigError):
        select_profiles(kernel, ["delta-cm-writer"], bound=True)  # writer checks need the recording reference
    with pytest.raises(ConfigError):
        select_profiles(_target("uc"), None, bound=True)  # a catalog has no client to bind
    with pytest.raises(ConfigError):
        select_profiles(_target("delta-rs"), None, bound=True)  # a path-only client declares no interop


def test_a_faulty_variant_is_paired_only_when_it_breaks_an_interop_rule() -> None:
    assert INTEROP_PROFILE in select_profiles(_target("faulty:publish-drops-commit-info"), None)
    assert INTEROP_PROFILE not in select_profiles(_target("faulty:missing-txnid"), None)


def test_bad_bindings_are_usage_errors_that_write_nothing(tmp_path: Path) -> None:
    for args in (
        ["--target", "delta-kernel", "--catalog-target", "delta-rs"],  # no catalog side
        ["--target", "reference", "--catalog-target", "uc", "--profile", "delta-cm-reader"],
    ):
        out = tmp_path / "out"
        proc = lakecert("run", *args, "--out", str(out))
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert not (out / "results.json").exists()


def test_reference_client_through_its_own_catalog_is_certified(tmp_path: Path) -> None:
    proc = lakecert("run", "--profile", INTEROP_PROFILE, "--out", str(tmp_path))
    res = results(tmp_path)
    assert res["profiles"][INTEROP_PROFILE]["verdict"] == "CERTIFIED", proc.stdout
    assert set(_statuses(res)) == INTEROP_RULES and set(_statuses(res).values()) == {"PASS"}
    assert res["run_info"]["catalog_target"] is None
    assert proc.returncode == 0


def test_a_faulty_catalog_served_over_uc_is_caught_through_the_binding(tmp_path: Path) -> None:
    """The reference client through `lakecert serve --fault ratify-twice`, reached by the `uc` target:
    the rival's published commit is overwritten by the client's stale proposal."""
    with served("--db", str(tmp_path / "catalog.sqlite"), "--fault", "ratify-twice") as (url, _):
        proc = lakecert(
            "run", "--target", "reference", "--catalog-target", "uc", "--out", str(tmp_path / "out"), env=_uc_env(url)
        )
    res = results(tmp_path / "out")
    assert _statuses(res)["INT-NO-LOST-COMMIT"] == "FAIL", proc.stdout
    assert res["run_info"]["catalog_target"] == "uc"
    assert proc.returncode == 1


@pytest.mark.slow
def test_delta_kernel_through_lakecert_serve_via_the_uc_binding(tmp_path: Path) -> None:
    """Delta Kernel 4.4.0 (one JVM) talks to `lakecert serve` itself, over UC's API: its writes read back,
    its versions are contiguous and readable, it rebases over a published rival, its publication
    leaves a log a path reader replays."""
    with served("--db", str(tmp_path / "catalog.sqlite")) as (url, _):
        proc = lakecert(
            "run",
            "--target",
            "delta-kernel",
            "--catalog-target",
            "uc",
            "--out",
            str(tmp_path / "out"),
            env=_uc_env(url),
        )
    res = results(tmp_path / "out")
    assert res["run_info"]["profiles"] == [INTEROP_PROFILE]
    assert _statuses(res) == dict.fromkeys(INTEROP_RULES, "PASS"), proc.stdout
    assert res["profiles"][INTEROP_PROFILE]["verdict"] == "CERTIFIED"
    certificate = json.loads((tmp_path / "out" / "certificate.json").read_text())
    assert certificate["target"]["catalog_target"] == "uc"  # the certificate says whose catalog it went through
    assert proc.returncode == 0
