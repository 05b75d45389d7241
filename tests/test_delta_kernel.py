"""The delta-kernel target end to end: Delta Kernel 4.4.0 (a real JVM, the jars `make setup` fetched)
through the reference catalog served over UC's HTTP API, judged by the writer, reader and path-access
profiles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.delta_kernel.jvm import KernelProcess, KernelSetupError
from tests.helpers import lakecert, results

# One run (one JVM) for the module's tests.
pytestmark = [pytest.mark.slow(seconds=230), pytest.mark.xdist_group("delta-kernel")]


def test_missing_driver_is_a_setup_error(tmp_path: Path) -> None:
    with pytest.raises(KernelSetupError):
        KernelProcess("http://127.0.0.1:9", jars=tmp_path, classes=tmp_path)


@pytest.fixture(scope="module")
def kernel_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    """One `lakecert run --target delta-kernel` (one JVM) for every test of the module: its client
    profiles (its engine profile, delta-row-conflicts, is tests/test_delta_kernel_engine.py's)."""
    out = tmp_path_factory.mktemp("kernel")
    client_profiles = "delta-cm-writer,delta-cm-reader,delta-cm-path-access"
    proc = lakecert("run", "--target", "delta-kernel", "--profile", client_profiles, "--out", str(out))
    assert (out / "results.json").is_file(), proc.stdout + proc.stderr
    return proc.returncode, results(out), out


def _status(res: dict[str, Any], requirement: str) -> str:
    status: str = res["requirements"][requirement]["status"]
    return status


@pytest.mark.slow
def test_kernel_gets_a_verdict_for_writer_and_reader(kernel_run: tuple[int, dict[str, Any], Path]) -> None:
    code, res, _ = kernel_run
    assert set(res["run_info"]["profiles"]) == {"delta-cm-writer", "delta-cm-reader", "delta-cm-path-access"}
    assert res["counts"]["ERROR"] == 0
    # Issue 27: no FAIL that Kernel's maintainers could not act on. The catalog's maintenance policy
    # cannot reach a client over UC's API (verified NOT_APPLICABLE), and the suite, as the creator of
    # the table it seeds, makes its staging folder as Kernel and delta-spark do (docs/compatibility.md).
    assert res["counts"]["FAIL"] == 0
    # A SHOULD (session 19): a log compaction made from published files is read in place of the
    # catalog's commits of those versions, a published commit file never is
    # (docs/reproducers/kernel-compaction-precedence.md).
    assert _status(res, "RDR-COMPACTION-PRECEDENCE") == "WARN"
    assert _status(res, "RDR-CATALOG-PRECEDENCE") == "PASS"
    assert _status(res, "WRT-MAINTENANCE-POLICY") == "NOT_APPLICABLE"
    assert _status(res, "WRT-DISCOVERY") == "PASS"
    # A SHOULD: another writer's commit without a final newline is published with one (the default
    # engine copies through its log store, which rewrites lines); the actions are the same.
    assert _status(res, "WRT-PUBLISH-BYTES") == "WARN"
    assert res["profiles"]["delta-cm-writer"]["verdict"] == "CERTIFIED"
    assert res["profiles"]["delta-cm-reader"]["verdict"] == "CERTIFIED"
    # Given only the path, Kernel refuses the catalog-managed table (no max catalog version).
    assert res["profiles"]["delta-cm-path-access"]["verdict"] == "CERTIFIED"
    assert code == 0


@pytest.mark.slow
def test_kernel_storage_evidence_is_ordered(kernel_run: tuple[int, dict[str, Any], Path]) -> None:
    """The checks that judge the order of Kernel's own file writes against the catalog's calls pass
    on evidence (not for want of it): publication order and no published file before ratification."""
    _, res, _ = kernel_run
    for requirement in ("WRT-PUBLISH-ORDER", "WRT-PUBLISH-IDENTICAL", "WRT-NO-FILESYSTEM-COMMIT", "WRT-STAGED-NAME"):
        assert _status(res, requirement) == "PASS", requirement
    # Kernel declines to checkpoint a snapshot with unpublished commits and writes nothing (the directed
    # check is NOT_APPLICABLE); the long histories see it checkpoint published versions only.
    directed = [r for r in res["results"] if r["test"].endswith("::test_checkpoints_only_published_versions")]
    assert [r["status"] for r in directed] == ["NOT_APPLICABLE"]
    assert _status(res, "WRT-CHECKPOINT-PUBLISHED") == "PASS"


@pytest.mark.slow
def test_kernel_fails_safe_on_an_unpublished_winner(kernel_run: tuple[int, dict[str, Any], Path]) -> None:
    _, res, out = kernel_run
    assert _status(res, "WRT-REBASE-UNPUBLISHED") == "WARN"
    warned = [r for r in res["results"] if r["requirements"] == ["WRT-REBASE-UNPUBLISHED"]]
    reproducer = json.loads((out / warned[0]["reproducer"]).read_text())
    commits = [e for e in reproducer["transcript"]["events"] if e["actor"] == "catalog" and e["op"] == "commit"]
    # v1 by Kernel, v2 by the rival (recorded by the suite's own catalog), then Kernel's losing v2.
    assert [(e["args"]["version"], e["ok"]) for e in commits][-1] == (2, False)
    puts = [e for e in reproducer["transcript"]["events"] if e["actor"] == "storage" and e["op"] == "put"]
    staged_v2 = [e["seq"] for e in puts if "/_staged_commits/00000000000000000002." in e["args"]["uri"]]
    assert staged_v2 and staged_v2[0] < commits[-1]["seq"], "the staged file is recorded before its proposal"


@pytest.mark.slow
def test_kernel_reproducer_carries_its_http_transcript(kernel_run: tuple[int, dict[str, Any], Path]) -> None:
    """Kernel's own requests to the served catalog, recorded at the proxy in front of it, are in the
    reproducer in order, with a curl script that replays them."""
    _, res, out = kernel_run
    warned = [r for r in res["results"] if r["requirements"] == ["WRT-REBASE-UNPUBLISHED"]]
    reproducer = out / warned[0]["reproducer"]
    http = json.loads(reproducer.read_text())["http"]
    proposals = [e for e in http["exchanges"] if e["method"] == "POST" and e["target"].endswith("/commits")]
    # Kernel's v1 ratified, then its losing v2 refused as a conflict (409), in that order.
    assert [e["status"] for e in proposals][:1] == [200] and proposals[-1]["status"] == 409
    assert [e["seq"] for e in http["exchanges"]] == list(range(len(http["exchanges"])))
    script = (reproducer.parent / http["replay"]).read_text()
    assert script.count("curl ") == len(http["exchanges"]) and "--data-binary" in script
