"""The matrix a vendor reads in 30 seconds: a target x profile verdict grid, a legend, a
failures-only filter, full names, every status counted, and working links for parametrized checks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.report.matrix import LEGEND, STATUSES
from tests.helpers import lakecert, results

GOLDEN = "RDR-GOLDEN-TABLES"  # checked by a parametrized check (one case per golden table)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    base = tmp_path_factory.mktemp("matrix")
    faulty, reference = base / "faulty", base / "reference"
    assert (
        lakecert(
            "run", "--target", "faulty:prefer-published", "--profile", "delta-cm-reader", "--out", str(faulty)
        ).returncode
        == 1
    )
    assert lakecert("run", "--profile", "delta-cm-reader", "--out", str(reference)).returncode == 0
    proc = lakecert("report", str(faulty), str(reference), "--out", str(base / "m"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return faulty, reference, base / "m" / "matrix.html"


# The module-scoped runs are made once: with xdist the tests stay on one worker.
pytestmark = pytest.mark.xdist_group("matrix-ux")


def test_verdict_grid_and_legend(runs: tuple[Path, Path, Path]) -> None:
    _, _, matrix = runs
    page = matrix.read_text()
    grid = re.search(r"<table class=grid>(.*?)</table>", page, re.S)
    assert grid is not None
    rows = re.findall(r"<tr><th>([^<]+)<br>.*?</th>(.*?)</tr>", grid.group(1), re.S)
    verdicts = {name: re.findall(r'class="v v-([A-Z_a-z ]+)"', cells) for name, cells in rows}
    assert verdicts == {"faulty:prefer-published": ["NOT_CERTIFIED"], "reference": ["CERTIFIED"]}
    for status in LEGEND:
        assert f'<span class="s-{status} sw">' in page
    assert set(LEGEND) == set(STATUSES)


def test_failures_only_filter_hides_rows_that_held_everywhere(runs: tuple[Path, Path, Path]) -> None:
    faulty, _, matrix = runs
    page = matrix.read_text()
    assert "<input type=checkbox id=failures-only>" in page and "#failures-only:checked ~ section tr.ok" in page
    broken = {rid for rid, r in results(faulty)["requirements"].items() if r["status"] not in ("PASS", "UNTESTABLE")}
    bad_rows = set(re.findall(r'<tr class=bad><td><a href="[^"]+">([A-Z0-9-]+)</a>', page))
    ok_rows = set(re.findall(r'<tr class=ok><td><a href="[^"]+">([A-Z0-9-]+)</a>', page))
    assert broken and bad_rows == broken
    assert ok_rows and not ok_rows & broken


def test_parametrized_failure_links_into_the_allure_report(runs: tuple[Path, Path, Path]) -> None:
    _, _, matrix = runs
    page = matrix.read_text()
    row = re.search(rf'<tr class=bad><td><a href="[^"]+">{GOLDEN}</a>(.*?)</tr>', page, re.S)
    assert row is not None
    cell = re.search(r'<td class="s-FAIL" title="[^"]*"><a href="([^"]+)">FAIL</a><small>([^<]+)</small>', row.group(1))
    assert cell is not None, row.group(1)
    href = cell.group(1)
    assert "allure-report/index.html#testresult/" in href, href  # not the raw reproducer JSON
    assert (matrix.parent / href.split("#")[0]).exists()
    uid = href.split("#testresult/")[1]
    assert uid in (matrix.parent / href.split("#")[0]).read_text()


def test_full_target_names_and_every_status_counted(runs: tuple[Path, Path, Path]) -> None:
    _, _, matrix = runs
    page = matrix.read_text()
    assert ">faulty:prefer-published<title>" in page  # the chart label is not cut
    header = re.search(r"<table class=counts><tr>(.*?)</tr>", page, re.S)
    assert header is not None
    assert re.findall(r"<th>([^<]+)</th>", header.group(1))[2:] == [s.replace("_", " ") for s in STATUSES]
