"""The clean-room regression set (issue 18, item 2; docs/mutation.md "Clean-room variants").

``tests/cleanroom`` is a catalog and a Delta client written from lakecert's public docs alone, plus
faulty variants that each break one rule. Each variant runs once through the CLI's entry point,
only on the profile it targets (all runs in one child process, tests/cleanroom/measure.py): a MUST
variant must not certify and must FAIL the requirement it breaks; a SHOULD variant must WARN on it
(SHOULD breaks do not block certification, docs/results.md).
Variants lakecert misses today are strict xfails, so this file turns red when a check starts
catching one: then drop its entry from ``MISSED``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cleanroom.variants import VARIANTS, Variant
from tests.helpers import REPO, lakecert, results

pytestmark = pytest.mark.xdist_group("cleanroom")  # one worker, so the variants run once

SEED = "1"
_ENV = {"PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}

# Missed with seed 1 at the time of writing: the reason names the blind spot (docs/mutation.md).
MISSED: dict[str, str] = {
    "FirstCommitOverGap": "the gap checks propose gaps after a first commit; a gap straight after creation only "
    "comes up in some generated schedules (caught with seeds 2 and 3, missed with seed 1)",
    "StagedNameOtherVersion": "the catalog profile sends only well-formed proposals",
    "StagedPathEscapes": "the catalog profile sends only well-formed proposals",
    "ListTextOrder": "the ascending-listing check lists fewer than 10 commits",
    "ReratifyForgotten": "only some seeds' generated schedules (4 of 1-5) re-propose a published, forgotten version",
    "InlineTrimmed": "changed inline content is judged by the MAY rule CAT-INLINE-COMMITS (WARN), "
    "not by CAT-RETAIN-UNPUBLISHED",
    "IctWallClock": "commits in a check are rarely in one millisecond; no check controls the writer's clock",
    "IctClockSkew": "no check has two clients with different clocks commit to one table",
    "RetryKeepsStaleCommit": "the retry check looks at staged file names, not at whether the content was rebuilt",
    "StagedNameMultiDigit": "no writer check reaches version 10",
    "PublishTextOrder": "no publishing check publishes across version 9 to 10",
    "CompactionEndUnpublished": "no compaction is asked over a range whose only unpublished version is the last",
    "ReadAboveLatestAnswers": "no read asks for a version above the latest",
    "TimeTravelByCommitInfoTimestamp": "commitInfo.timestamp equals inCommitTimestamp in every table the checks build",
    "ReplayTextOrder": "only some seeds' generated sequences (4 of 1-5) delete after version 9 a row added before 10",
    "TrustLastCheckpoint": "caught only by RDR-GOLDEN-TABLES (published-beyond-latest), "
    "not charged to RDR-IGNORE-ABOVE-LATEST",
    "StagedFilesPreferred": "caught only by RDR-GOLDEN-TABLES (rejected-and-partial-staged), not charged to "
    "RDR-IGNORE-UNRATIFIED",
}


def _param(v: Variant) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=MISSED[v.name])] if v.name in MISSED else []
    return pytest.param(v, id=v.name, marks=marks)


@pytest.fixture(scope="module")
def variant_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every variant's ``lakecert run`` (its profile only), in one child process; the directory of the outputs."""
    out = tmp_path_factory.mktemp("cleanroom")
    cmd = [sys.executable, "-m", "tests.cleanroom.measure", str(out), "--seed", SEED]
    proc = subprocess.run(cmd, cwd=REPO, env={**os.environ, **_ENV}, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_every_missed_name_is_a_variant() -> None:
    assert set(MISSED) <= {v.name for v in VARIANTS}


@pytest.mark.slow
def test_the_clean_room_target_is_certified(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = lakecert(
        "run", "--target", "tests.cleanroom.target:CleanRoomTarget", "--out", str(out), "--seed", SEED, env=_ENV
    )
    assert (proc.returncode, results(out)["verdict"]) == (0, "CERTIFIED"), proc.stdout[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("variant", [_param(v) for v in VARIANTS])
def test_variant_is_caught_on_the_rule_it_breaks(variant: Variant, variant_runs: Path) -> None:
    code = json.loads((variant_runs / "exit_codes.json").read_text())[variant.name]
    data = results(variant_runs / variant.name)
    assert data["run_info"]["profiles"] == [variant.profile]
    requirements = data["requirements"]
    statuses = {r: requirements[r]["status"] for r in variant.expected}
    if variant.level == "MUST":
        assert code != 0
        assert data["verdict"] == "NOT_CERTIFIED"
        assert "FAIL" in statuses.values(), statuses
    else:
        assert {"WARN", "FAIL"} & set(statuses.values()), statuses
