"""The reports as a person sees them: the matrix page and the Allure report in headless Chromium.

Chromium and ChromeDriver come from the operating system's packages (`.ci/run` installs them);
screenshots are kept under reports/test-artifacts/.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urldefrag

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conformance.requirements import load_all
from tests.helpers import REPO, lakecert
from tests.tooling.allure_report import result_cases

pytestmark = pytest.mark.slow  # minutes: started first (tests/conftest.py)

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARTIFACTS = REPO / "reports" / "test-artifacts"

if not (Path(CHROMIUM).exists() and Path(DRIVER).exists()) and not os.environ.get("CI"):
    pytest.skip("Debian's chromium and chromium-driver are not installed here", allow_module_level=True)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1200",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
    ):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(DRIVER))
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("reports")
    faulty, reference, earlier = base / "faulty", base / "reference", base / "faulty-earlier"
    # An earlier run of the same target in the same root, reported first: the trend has two points.
    assert lakecert("run", "--target", "faulty:ratify-twice", "--seed", "7", "--out", str(earlier)).returncode == 1
    assert lakecert("report", str(earlier)).returncode == 0
    assert lakecert("run", "--target", "faulty:ratify-twice", "--out", str(faulty)).returncode == 1
    assert lakecert("run", "--profile", "delta-cm-catalog", "--out", str(reference)).returncode == 0
    assert lakecert("report", str(faulty), str(reference), "--out", str(base / "matrix")).returncode == 0
    return base / "matrix" / "matrix.html"


def _script_errors(driver: webdriver.Chrome) -> list[str]:
    entries: list[dict[str, str]] = driver.get_log("browser")  # type: ignore[no-untyped-call]
    return [e["message"] for e in entries if e["level"] == "SEVERE"]


def test_matrix_shows_failing_requirements_and_links_resolve(browser: webdriver.Chrome, matrix: Path) -> None:
    browser.get(matrix.as_uri())
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "matrix.png"))
    failing_rows = [c.find_element(By.XPATH, "./..") for c in browser.find_elements(By.CSS_SELECTOR, "td.s-FAIL")]
    failing = {row.find_element(By.CSS_SELECTOR, "td:first-child").text for row in failing_rows}
    assert "CAT-RATIFY-ONCE" in failing
    assert all(c.is_displayed() for c in browser.find_elements(By.CSS_SELECTOR, "td.s-FAIL"))
    links = [a.get_attribute("href") or "" for a in browser.find_elements(By.CSS_SELECTOR, "td a")]
    local = [h for h in links if h.startswith("file://")]
    assert local and all(h.startswith(("file://", "https://github.com/delta-io/delta/")) for h in links)
    for href in local:
        target = Path(urldefrag(href).url.removeprefix("file://"))
        assert target.exists(), f"broken link {href}"
    assert not _script_errors(browser)


def test_allure_report_opens_on_the_failing_check(browser: webdriver.Chrome, matrix: Path) -> None:
    browser.get(matrix.as_uri())
    cell = browser.find_element(
        By.XPATH, "//tr[td[1][normalize-space()='CAT-RATIFY-ONCE']]/td[contains(@class,'s-FAIL')]/a"
    )
    browser.get(cell.get_attribute("href") or "")
    # The result's title is the rule in words (its statement) and the check's name; which of the rule's
    # checks the cell opens is the first that failed.
    statement = load_all()["CAT-RATIFY-ONCE"].statement
    WebDriverWait(browser, 20).until(lambda d: statement.split(";")[0] in d.page_source)
    WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.XPATH, "//*[normalize-space()='Failed']"))
    browser.save_screenshot(str(ARTIFACTS / "allure-failing-check.png"))
    assert "CAT-RATIFY-ONCE" in browser.page_source
    assert not _script_errors(browser)


def test_matrix_grid_legend_and_failures_only_filter(browser: webdriver.Chrome, matrix: Path) -> None:
    browser.get(matrix.as_uri())
    grid = browser.find_element(By.CSS_SELECTOR, "table.grid")
    assert grid.is_displayed() and "NOT CERTIFIED" in grid.text and "CERTIFIED" in grid.text
    assert browser.find_element(By.CSS_SELECTOR, "ul.legend").is_displayed()
    rows_ok = browser.find_elements(By.CSS_SELECTOR, "section tr.ok")
    assert rows_ok and all(r.is_displayed() for r in rows_ok)
    browser.find_element(By.ID, "failures-only").click()
    assert not any(r.is_displayed() for r in rows_ok)
    assert all(r.is_displayed() for r in browser.find_elements(By.CSS_SELECTOR, "section tr.bad"))
    browser.save_screenshot(str(ARTIFACTS / "matrix-failures-only.png"))


def test_allure_report_shows_run_metadata(browser: webdriver.Chrome, matrix: Path) -> None:
    report = matrix.parent.parent / "faulty" / "allure-report" / "index.html"
    browser.get(report.as_uri())
    WebDriverWait(browser, 30).until(lambda d: "faulty:ratify-twice" in d.page_source)
    WebDriverWait(browser, 30).until(lambda d: "Product defect: delta-cm-catalog" in d.page_source)
    # The trend chart draws the earlier report of the same target: one slice per report, two.
    WebDriverWait(browser, 30).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-id=history-trend] svg .slice")) == 2
    )
    # The verdict is what the eye lands on (issue 30): a red bar above the overview's donut, which
    # counts checks that passed and reads as success on a run that fails a few rules of many.
    bar = browser.find_element(By.ID, "lakecert-verdict")
    assert bar.is_displayed() and bar.location["y"] < 50, "the verdict bar is not at the top of the page"
    assert bar.text.startswith("lakecert verdict: NOT CERTIFIED") and "CAT-RATIFY-ONCE" in bar.text, bar.text
    browser.save_screenshot(str(ARTIFACTS / "allure-overview.png"))
    assert not _script_errors(browser)


SWIMLANE_CHECK = "checks/iceberg/test_abort.py::test_aborted_writes_leave_no_trace[upd-cow-del-cow-snapshot-v2]"


@pytest.fixture(scope="module")
def iceberg_failure(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("iceberg") / "run"
    proc = lakecert(
        "run",
        "--target",
        "faulty:abort-after-swap",
        "--profile",
        "iceberg-row-delta",
        "--select",
        SWIMLANE_CHECK,
        "--out",
        str(out),
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert lakecert("report", str(out)).returncode == 0
    return out


def test_allure_report_shows_the_schedule_swimlanes(browser: webdriver.Chrome, iceberg_failure: Path) -> None:
    index = iceberg_failure / "allure-report" / "index.html"
    case = next(c for c in result_cases(index) if c["status"] == "failed")
    browser.get(f"{index.as_uri()}#testresult/{case['uid']}")
    WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.XPATH, "//*[text()='schedule (swimlanes)']"))
    browser.find_element(By.XPATH, "//*[text()='schedule (swimlanes)']").click()
    # The SVG opens inline as a picture (an <img> or an embedded document), with the writers' lanes.
    WebDriverWait(browser, 30).until(
        lambda d: [
            e
            for e in d.find_elements(By.CSS_SELECTOR, ".attachment img, .attachment object, .attachment iframe")
            if e.size["height"] > 50
        ]
    )
    browser.save_screenshot(str(ARTIFACTS / "allure-swimlanes.png"))
    assert not _script_errors(browser)
