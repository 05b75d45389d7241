"""The delta-kernel target with its tables on S3 (moto's server), reached through the recording
object-store proxy: Kernel's verdicts there, and the proxy's own record of the wire confirms the
order the transcript judged (each version staged before it is published, published in order)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.observe.object_proxy import ProxyEvent, RecordingProxy
from reference_impl.storage.s3 import S3Settings
from tests.helpers import lakecert, results
from tests.moto_s3 import moto_s3, storage_config

pytestmark = [pytest.mark.slow(seconds=60), pytest.mark.xdist_group("delta-kernel-s3")]  # one run (one JVM)
STAGED = re.compile(r"/tables/([^/]+)/_delta_log/_staged_commits/(\d{20})\.[^/]+\.json$")
PUBLISHED = re.compile(r"/tables/([^/]+)/_delta_log/(\d{20})\.json$")
# Publication order and no published file before ratification are confirmed on S3 from the proxy's
# record (test_the_wire_agrees_with_the_transcript). The writer's long history (120 versions of Kernel
# commits with maintenance, 145 s of the 170 s this run took alone, over 300 s inside `make test`) is
# judged on file:// by tests/test_delta_kernel.py; here the three-digit versions carry the wire's
# record past v99.
S3_RULES = (
    "WRT-DISCOVERY",
    "WRT-STAGED-NAME",
    "WRT-PUBLISH-IDENTICAL",
    "WRT-MAINTENANCE-POLICY",
    "WRT-REBASE-UNPUBLISHED",
)
S3_CHECKS = (
    "staging.py::test_writer_uses_the_resolved_location",
    "staging.py::test_writer_follows_a_name_given_to_a_new_table",
    "staging.py::test_writer_finds_a_long_named_table_beside_its_prefixes",
    "staging.py::test_staged_files_are_named_for_their_version",
    "long_history.py::test_three_digit_versions_are_named_and_published_in_order",
    "publishing.py::test_published_files_equal_the_ratified_commits",
    "maintenance.py::test_maintenance_obeys_every_policy_combination",
    "maintenance.py::test_forbidden_maintenance_is_not_run",
    "rebase.py::test_writer_rebases_over_an_unpublished_winner",
)


@pytest.fixture(scope="module")
def s3_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, dict[str, Any], list[ProxyEvent]]]:
    """One run (one JVM), every request of the suite and of Kernel through one proxy."""
    out = tmp_path_factory.mktemp("kernel-s3")
    with moto_s3() as store, RecordingProxy(store.endpoint_url) as proxy:
        config = Path(out / "lakecert.yaml")
        via_proxy = S3Settings(proxy.url, store.region, store.access_key_id, store.secret_access_key)
        config.write_text(storage_config(via_proxy))
        # The writer rules the wire can confirm, and those whose verdict differs from a local
        # warehouse where S3 could change it (the policy, the rebase); the whole writer and reader
        # profiles are judged on file:// by tests/test_delta_kernel.py. These checks took 27 s alone.
        selected = [arg for check in S3_CHECKS for arg in ("--select", f"checks/delta/writer/test_{check}")]
        run = ("run", "--target", "delta-kernel", "--profile", "delta-cm-writer", *selected, "--config", str(config))
        proc = lakecert(*run, "--out", str(out / "run"))
        assert (out / "run" / "results.json").is_file(), proc.stdout + proc.stderr
        yield proc.returncode, results(out / "run"), proxy.events()


@pytest.mark.slow
def test_kernel_on_s3_gets_its_verdicts(s3_run: tuple[int, dict[str, Any], list[ProxyEvent]]) -> None:
    code, res, _ = s3_run
    assert res["run_info"]["warehouse"].startswith("s3://")
    assert res["counts"]["ERROR"] == 0
    statuses = {rid: r["status"] for rid, r in res["requirements"].items()}
    # As on file://: no FAIL; the policy UC's API cannot carry is NOT_APPLICABLE; the MAY warns.
    assert [rid for rid, s in statuses.items() if s == "FAIL"] == []
    assert statuses["WRT-MAINTENANCE-POLICY"] == "NOT_APPLICABLE"
    assert statuses["WRT-REBASE-UNPUBLISHED"] == "WARN"
    assert statuses["WRT-DISCOVERY"] == statuses["WRT-PUBLISH-IDENTICAL"] == "PASS"
    assert {rid for rid, s in statuses.items() if s != "NOT_RUN"} >= set(S3_RULES)  # each one judged
    assert code == 0  # a partial run in which every selected check passed


@pytest.mark.slow
def test_the_wire_agrees_with_the_transcript(s3_run: tuple[int, dict[str, Any], list[ProxyEvent]]) -> None:
    """From the proxy's record alone: a published version was staged earlier, and each table's
    versions were published in increasing order."""
    _, _, events = s3_run
    staged: dict[tuple[str, int], int] = {}
    published: dict[str, list[int]] = {}
    for e in events:
        if e.method != "PUT" or e.status != 200:
            continue
        if m := STAGED.search(e.path):
            staged.setdefault((m.group(1), int(m.group(2))), e.seq)
        elif (m := PUBLISHED.search(e.path)) and int(m.group(2)) > 0:
            table, version = m.group(1), int(m.group(2))
            assert (table, version) in staged and staged[(table, version)] < e.seq, f"{e.path} published unstaged"
            published.setdefault(table, []).append(version)
    assert published, "no publication went through the proxy"
    for table, versions in published.items():
        assert versions == sorted(versions), f"{table} published out of order: {versions}"
