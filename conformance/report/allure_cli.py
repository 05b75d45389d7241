"""The pinned Allure command line, installed by the project's set-up (`make setup`).

It lives in ``.cache/allure`` of the repository (npm ``allure-commandline``, needs Java), or
wherever ``LAKECERT_ALLURE`` points.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ALLURE_VERSION = "2.46.1"  # keep in step with the Makefile
DEFAULT = Path(__file__).resolve().parents[2] / ".cache" / "allure" / "node_modules" / "allure-commandline" / "dist"


class AllureMissing(RuntimeError):
    """No Allure command line where the set-up installs it."""


def allure_bin() -> Path:
    path = Path(os.environ.get("LAKECERT_ALLURE") or DEFAULT / "bin" / "allure")
    if not path.exists():
        raise AllureMissing(
            f"Allure {ALLURE_VERSION} not found at {path}: in a checkout run make setup; otherwise install it"
            f" (npm install allure-commandline@{ALLURE_VERSION}, runs on Java) and set LAKECERT_ALLURE to its"
            " bin/allure; --no-allure skips the HTML report"
        )
    return path


def generate(results_dir: Path, report_dir: Path) -> Path:
    """A single-file HTML report (opens from disk); returns its index.html."""
    # ALLURE_NO_ANALYTICS=true keeps the page from loading an analytics script: reports open offline.
    subprocess.run(
        [str(allure_bin()), "generate", "--single-file", "--clean", "-o", str(report_dir), str(results_dir)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "ALLURE_NO_ANALYTICS": "true"},
    )
    return report_dir / "index.html"
