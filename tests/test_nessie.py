"""Project Nessie 0.99 as the built-in ``nessie`` target, judged on profile iceberg-catalog-commit.

One ``lakecert run`` starts one Nessie (Java 21+, moto S3, loopback, in-memory) and stops it at the
end. Its verdicts are pinned here and recorded in docs/compatibility.md: Nessie applies exactly one
of racing commits and a refused commit leaves no trace, but it answers a failed requirement with 409
and an empty error type (AlreadyExistsException for assert-create), and it serves only the current
snapshot (and only ``main``) after commits, so the rules asking for CommitFailedException and for
snapshots kept as committed fail. The start-up failures are cheap cases without Nessie.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.nessie.java import MIN_JAVA, JavaNotFound, find_java, has_java, major_version
from conformance.adapters.nessie.server import JAR, jar_path
from tests.helpers import lakecert, results

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("nessie"),
    pytest.mark.skipif(not jar_path().is_file(), reason="the Nessie runner jar is fetched by `make setup`"),
    pytest.mark.skipif(not has_java(), reason="Nessie needs a Java 21+ (none found)"),
]
PROFILE = "iceberg-catalog-commit"


def run(out: Path, config: str) -> tuple[int, dict[str, Any]]:
    path = out.parent / f"{out.name}.yaml"
    path.write_text(config)
    proc = lakecert("run", "--config", str(path), "--profile", PROFILE, "--out", str(out))
    assert proc.returncode in (0, 1, 2), proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.returncode, (results(out) if (out / "results.json").exists() else {})


@pytest.fixture(scope="module")
def nessie_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("nessie") / "run"
    code, res = run(out, "target: nessie\n")
    return code, res, out


def _by_test(res: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["test"].split("::", 1)[1]: r for r in res["results"]}


def test_nessie_is_judged_and_its_verdicts_are_the_recorded_ones(nessie_run: tuple[int, dict[str, Any], Path]) -> None:
    code, res, _ = nessie_run
    assert res["run_info"]["target_kind"] == "third-party"
    assert res["run_info"]["target_version"].startswith("Project Nessie 0.99.0")
    statuses = {rid: r["status"] for rid, r in res["requirements"].items()}
    assert statuses == {
        "ICE-CAT-ATOMIC-REQUIREMENTS": "PASS",
        "ICE-CAT-CONFLICT-TYPE": "WARN",
        "ICE-CAT-REFUSAL-NO-TRACE": "PASS",
        "ICE-CAT-REQUIREMENT-TYPES": "FAIL",
        "ICE-CAT-SNAPSHOTS-KEPT": "FAIL",
    }, statuses
    assert code == 1 and res["verdict"] == "NOT_CERTIFIED"
    checks = _by_test(res)
    assert all(r["status"] in ("PASS", "FAIL", "WARN") for r in checks.values()), "no check ended in ERROR"
    # Atomicity held (one winner, every loser 409); only the refusals' error type differs (a SHOULD).
    assert checks["test_one_of_racing_commits_on_a_branch_wins"]["status"] == "PASS"
    # Every requirement type is enforced; what fails is the create transaction (a 500, as for pyiceberg's).
    assert all(r["status"] == "PASS" for n, r in checks.items() if n.startswith("test_requirement_is_enforced"))
    create = checks["test_assert_create_refuses_an_existing_table_and_creates_a_new_one"]
    assert create["status"] == "FAIL"
    typed = [r for name, r in checks.items() if name.startswith("test_refused_commit_is_named_commit_failed")]
    assert typed and all(r["status"] == "WARN" for r in typed)
    kept = checks["test_snapshots_and_refs_are_served_as_committed"]
    assert kept["status"] == "FAIL" and kept["violated"] == ["ICE-CAT-SNAPSHOTS-KEPT"]


def test_nessie_is_stopped_at_the_end_of_the_run(nessie_run: tuple[int, dict[str, Any], Path]) -> None:
    _, _, out = nessie_run
    log = out / "work" / "nessie" / "nessie.log"
    assert "Listening on: http://127.0.0.1:" in log.read_text(), "Nessie bound loopback only"
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    running = []
    for pid in pids:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(str(out).encode() in part for part in cmdline) or (
            any(JAR.encode() in part for part in cmdline)
            and any(b"quarkus" in part for part in cmdline)
            and Path(f"/proc/{pid}/cwd").resolve() == (out / "work" / "nessie").resolve()
        ):
            running.append(pid)
    for pid in running:  # never leave one behind, even when the assertion fails
        os.kill(pid, signal.SIGKILL)
    assert running == []


def test_a_nessie_that_dies_while_starting_is_an_error_naming_its_log(tmp_path: Path) -> None:
    jars = tmp_path / "jars"
    jars.mkdir()
    (jars / JAR).write_bytes(b"not a jar")  # java refuses it at once
    code, res = run(tmp_path / "run", f"target: nessie\ntargets:\n  nessie:\n    options: {{jars: '{jars}'}}\n")
    assert code == 2 and res["verdict"] == "NOT_CERTIFIED"
    assert {r["status"] for r in res["results"]} == {"ERROR"}
    assert all("nessie.log" in r["message"] for r in res["results"])


def test_a_missing_jar_or_java_stops_the_run_before_any_check(tmp_path: Path) -> None:
    code, _ = run(tmp_path / "nojar", f"target: nessie\ntargets:\n  nessie:\n    options: {{jars: '{tmp_path}'}}\n")
    assert code == 2
    old = Path("/usr/lib/jvm/java-17-openjdk-amd64")
    if (old / "bin" / "java").is_file():  # an explicit Java that is too old is refused, not passed over
        with pytest.raises(JavaNotFound):
            find_java(str(old))
    assert (major_version(find_java()) or 0) >= MIN_JAVA
